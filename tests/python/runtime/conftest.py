"""Fixtures shared by the runtime tests.

``runtime_counters``: the test NNAPI implementation's counters (tests/nnapi/test_nnapi.c:
rejected calls, calls its feature level lacks, the last error), reset, for the NNAPI delegate's
tests (test_nnapi.py, test_nnapi_control_flow.py, test_nnapi_detection.py); it skips when the
library is not built (test_nnapi.LIB).
"""

from __future__ import annotations

import ctypes

import pytest


@pytest.fixture
def runtime_counters():
    """The test runtime's counters (rejected calls, calls its level lacks), reset."""
    from tests.python.runtime.test_nnapi import LIB  # where the library is found, or None

    if LIB is None:
        pytest.skip("no libwick_test_nnapi.so next to libwick.so (build the C tests)")
    lib = ctypes.CDLL(str(LIB))
    lib.wick_test_nnapi_rejections.restype = ctypes.c_long
    lib.wick_test_nnapi_misuses.restype = ctypes.c_long
    lib.wick_test_nnapi_last_error.restype = ctypes.c_char_p
    lib.wick_test_nnapi_reset_counters()
    return lib
