"""The real-model corpus and its conformance check (see sources.py and check.py).

    .venv/bin/python -m tests.corpus                 # the CI subset: build, check, print
    .venv/bin/python -m tests.corpus --all --write   # every file; writes docs/conformance.md

CI runs the subset through tests/python/models/test_corpus.py.
"""
