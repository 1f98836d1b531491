"""``python -m bench.peers``: see harness.py."""

import sys

from .harness import main

sys.exit(main())
