"""Checks on the machine code of the built library (libwick.so) that no C test can see.

On x86-64, a function that leaves the upper halves of the YMM/ZMM registers dirty when it returns
makes the SSE code after it stall (measured: a GEMM whose last panel ran in such a function was
several times slower on an AMD EPYC). GCC omits VZEROUPPER at the return of a function that takes
256-bit arguments, so the kernels must not have such helpers; this test disassembles the library
and fails on any function that uses YMM/ZMM registers and returns without a VZEROUPPER.
"""

import platform
import re
import shutil
import subprocess

import pytest

from wick import runtime


def _functions_returning_dirty(disassembly: str) -> list[str]:
    bad, name, wide, returns, cleared = [], None, False, 0, 0

    def close():
        if name and wide and returns and not cleared:
            bad.append(name)

    for line in disassembly.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:", line)
        if m:
            close()
            name, wide, returns, cleared = m.group(1), False, 0, 0
            continue
        wide |= "%ymm" in line or "%zmm" in line
        returns += "\tret" in line
        cleared += "vzeroupper" in line
    close()
    return bad


def test_wide_vector_functions_clear_the_upper_halves():
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"x86-64 only (this machine: {platform.machine()})")
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    path = runtime.library_path()
    text = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "<wick_" in text, f"no wick symbols in the disassembly of {path}"
    assert _functions_returning_dirty(text) == []
