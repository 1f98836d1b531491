"""One coverage-matrix row through litert-torch (the peer), in its own venv.

    .venv-litert-torch/bin/python bench/coverage/litert_torch_peer.py tv/resnet18 --result r.json

(``bench/coverage/setup_litert_torch.sh`` creates that venv.)  The row is built exactly as the
wick side builds it (``bench.coverage.models.build``: same seeds, same realistic init), converted
with ``litert_torch.convert(module, args)``, and its bytes run on LiteRT's ``Interpreter``
against PyTorch eager with the same bar as wick's rows (matrix.compare).  Writes a JSON result:
status (pass / fail / export-fail / convert-fail / error), convert_s, convert_rss_mb (peak RSS
beyond the RSS right before converting), err, transposes, file size, error's first line.
Needs only this venv's packages plus the repository on PYTHONPATH; never imports wick's
converter or runtime.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from bench.coverage.matrix import (  # noqa: E402  (torch/numpy/flatbuffers only)
    _first_line,
    _write_json,
    builtin_op_codes,
    compare,
    flat_outputs,
    peak_mb,
    release_heap,
    reset_peak,
    rss_mb,
    run_litert,
    transpose_counts,
)


def run(name: str, result: str) -> dict:
    import numpy as np
    import torch
    from bench.coverage import models

    torch.set_num_threads(1)
    row = models.get_row(name)
    res = {"name": name, "status": "error", "stage": "build"}
    _write_json(result, res)
    module, args = models.build(row)
    with torch.no_grad():
        ref = [t.detach().numpy().copy() for t in flat_outputs(module(*args))]
    feed = [a.numpy() for a in args]
    res["stage"] = "import"
    _write_json(result, res)
    import litert_torch

    res["stage"] = "convert"
    _write_json(result, res)
    gc.collect()
    release_heap()
    base = rss_mb()
    res["rss_exact"] = reset_peak()
    t0 = time.perf_counter()
    try:
        edge = litert_torch.convert(module, args)
    except Exception as e:
        res["convert_s"] = round(time.perf_counter() - t0, 2)
        msg = _first_line(e)
        res["error"] = msg
        low = msg.lower()
        res["status"] = "export-fail" if "export" in low and "lower" not in low else "convert-fail"
        res["stage"] = "done"
        return res
    res["convert_s"] = round(time.perf_counter() - t0, 2)
    res["convert_rss_mb"] = round(peak_mb() - base, 1)
    res["base_rss_mb"] = round(base, 1)
    data = edge.model_content
    data = bytes(data() if callable(data) else data)
    del edge, module
    gc.collect()
    res["file_mb"] = round(len(data) / 2**20, 2)
    codes = builtin_op_codes(data)
    res["n_ops"] = len(codes)
    res["transposes"], res["layout_transposes"] = transpose_counts(data)
    res["stage"] = "litert"
    _write_json(result, res)
    try:
        got = run_litert(data, feed, None)
        c = compare([np.asarray(g) for g in got], ref, row.classifier)
        res["err"], res["ok"], res["argmax_ok"] = c["err"], c["ok"], c.get("argmax_ok")
        res["status"] = "pass" if c["ok"] else "fail"
        if not c["ok"]:
            res["why"] = c["why"]
    except Exception as e:
        res["status"] = "fail"
        res["why"] = _first_line(e)
    res["stage"] = "done"
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--result", required=True)
    a = ap.parse_args()
    try:
        res = run(a.name, a.result)
    except Exception as e:
        res = json.load(open(a.result)) if os.path.exists(a.result) else {"name": a.name}
        res["status"] = "error"
        res["error"] = _first_line(e)
        res["traceback"] = traceback.format_exc()[-2000:]
    _write_json(a.result, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
