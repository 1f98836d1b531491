"""The packed-weight cache (wick_interpreter_options.weight_cache_path, ``wick.load(...,
weight_cache=)``, ``wick bench/run --weight-cache``): the first load packs and writes the file,
a later load reads the packed weights from it, and the outputs are bit-identical to a load
without any cache. A damaged, truncated or mismatched file is never used: the load packs as
usual, reports "rejected" and rewrites the file, which the next load then reads.

The oracle is wick itself without a cache (the cache changes where packed bytes come from,
never what they are); the converted models are checked against LiteRT elsewhere.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import wick

torch.manual_seed(0)


class ConvNet(torch.nn.Module):
    """Every float packed layout: 3x3 conv (indirect GEMM), depthwise, 1x1 conv, linear."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = torch.nn.Conv2d(16, 24, 1)
        self.fc = torch.nn.Linear(24, 10)

    def forward(self, x):
        y = torch.relu(self.pw(torch.relu(self.dw(torch.relu(self.conv(x))))))
        return self.fc(y.mean(dim=(2, 3)))


X = np.random.default_rng(7).standard_normal((1, 3, 12, 12)).astype(np.float32)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("wc") / "convnet.tflite"
    path.write_bytes(wick.convert(ConvNet().eval(), (torch.from_numpy(X),)).tflite_bytes)
    return path


def run(path, cache=None, **kw):
    m = wick.load(path, weight_cache=cache, **kw)
    return m(X)[0], m.weight_cache


def test_round_trip_is_bit_identical_and_the_second_load_reads_the_file(model_path, tmp_path):
    want, report = run(model_path)
    assert report == ("unused", 0, "")
    cache = tmp_path / "w.cache"
    got, (state, hits, _) = run(model_path, cache)
    assert (state, hits) == ("written", 0) and cache.stat().st_size > 0
    np.testing.assert_array_equal(got, want)
    got, (state, hits, message) = run(model_path, cache)
    assert state == "loaded", message
    assert hits >= 4  # conv, depthwise, 1x1 conv, fully connected
    np.testing.assert_array_equal(got, want)


def damage(data: bytes, how: str) -> bytes:
    b = bytearray(data)
    if how == "empty":
        return b""
    if how == "truncated":
        return bytes(b[: len(b) // 2])
    if how == "one byte short":
        return bytes(b[:-1])
    if how == "header byte":
        b[5] ^= 0x40  # inside the format version
    elif how == "build id":
        b[8 + 4] ^= 1  # the build id hash (the header checksum catches it first)
    elif how == "table byte":
        b[128 + 8] ^= 1  # the first entry's slot
    elif how == "data byte":
        b[-100] ^= 0x10  # inside the last packed buffer
    elif how == "garbage":
        return bytes(np.random.default_rng(1).integers(0, 256, len(b), dtype=np.uint8))
    return bytes(b)


@pytest.mark.parametrize(
    "how",
    [
        "empty",
        "truncated",
        "one byte short",
        "header byte",
        "build id",
        "table byte",
        "data byte",
        "garbage",
    ],
)
def test_a_damaged_file_is_rejected_packed_and_rewritten(model_path, tmp_path, how):
    want, _ = run(model_path)
    cache = tmp_path / "w.cache"
    run(model_path, cache)
    cache.write_bytes(damage(cache.read_bytes(), how))
    got, (state, hits, message) = run(model_path, cache)
    assert (state, hits) == ("rejected", 0), message
    assert "rejected" in message
    np.testing.assert_array_equal(got, want)
    got, (state, hits, message) = run(model_path, cache)  # rewritten: valid again
    assert state == "loaded" and hits > 0, message
    np.testing.assert_array_equal(got, want)


def test_every_byte_of_header_and_table_is_checked(model_path, tmp_path):
    """A change to any single byte before the packed data (header, entry table) rejects the
    file; the model still runs and its outputs do not change."""
    want, _ = run(model_path)
    cache = tmp_path / "w.cache"
    run(model_path, cache)
    good = cache.read_bytes()
    count = int.from_bytes(good[40:44], "little")  # cache_header.entry_count
    for at in range(128 + 40 * count):
        b = bytearray(good)
        b[at] ^= 0x01 if at % 2 else 0x80
        cache.write_bytes(bytes(b))
        got, (state, hits, message) = run(model_path, cache)
        assert (state, hits) == ("rejected", 0), f"byte {at}: {message}"
        np.testing.assert_array_equal(got, want)


def test_a_cache_of_another_model_is_rejected(model_path, tmp_path):
    other = tmp_path / "other.tflite"
    torch.manual_seed(1)  # same graph, other weights: only the content differs
    other.write_bytes(wick.convert(ConvNet().eval(), (torch.from_numpy(X),)).tflite_bytes)
    cache = tmp_path / "w.cache"
    run(other, cache)
    want, _ = run(model_path)
    got, (state, hits, message) = run(model_path, cache)
    assert (state, hits) == ("rejected", 0) and "another model" in message
    np.testing.assert_array_equal(got, want)


def test_a_cache_for_other_kernels_is_rejected(model_path, tmp_path):
    cache = tmp_path / "w.cache"
    run(model_path, cache, reference=True)  # the reference kernels pack nothing
    want, _ = run(model_path)
    got, (state, hits, message) = run(model_path, cache)
    assert (state, hits) == ("rejected", 0) and "other kernels" in message
    np.testing.assert_array_equal(got, want)


def test_an_unwritable_path_fails_softly(model_path, tmp_path):
    want, _ = run(model_path)
    got, (state, hits, message) = run(model_path, tmp_path / "no such dir" / "w.cache")
    assert (state, hits) == ("failed", 0) and "could not write" in message
    np.testing.assert_array_equal(got, want)


def test_a_memory_cap_below_the_mapping_keeps_the_cache_out(model_path, tmp_path):
    """The mapping counts against memory_limit: a cap that fits the packed weights once but
    not twice still loads (the file is refused, not the model)."""
    cache = tmp_path / "w.cache"
    run(model_path, cache)
    size = cache.stat().st_size
    m = wick.load(model_path)
    # arena + persistent (the packed weights, about the file's size) + a little room
    cap = m.signature(None).arena_bytes + 2 * size + (1 << 20)
    got, (state, _, message) = run(model_path, cache, memory_limit=cap)
    assert state in ("loaded", "rejected"), message
    np.testing.assert_array_equal(got, run(model_path)[0])


def test_interpreters_of_one_process_share_the_file(model_path, tmp_path):
    cache = tmp_path / "w.cache"
    run(model_path, cache)
    a, b = wick.load(model_path, weight_cache=cache), wick.load(model_path, weight_cache=cache)
    assert a.weight_cache[0] == b.weight_cache[0] == "loaded"
    np.testing.assert_array_equal(a(X)[0], b(X)[0])


def test_cli_bench_and_run_report_the_cache(model_path, tmp_path):
    cache = tmp_path / "w.cache"
    cli = [sys.executable, "-m", "wick.cli"]
    first = subprocess.run(
        [*cli, "bench", str(model_path), "--runs", "1", "--weight-cache", str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "no file yet; wrote" in first.stdout
    second = subprocess.run(
        [*cli, "run", str(model_path), "--weight-cache", str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "packed buffers loaded" in second.stderr
