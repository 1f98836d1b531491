"""``wick demo``: the main job on a built-in model, end to end.

Builds torchvision's MobileNetV2 with random weights (no downloads; normalisation
layers randomised so outputs have a realistic scale, see ``wick.zoo``), converts
it with ``wick.convert``, runs the .tflite on the wick runtime, and prints its
agreement with PyTorch eager and with LiteRT (when ``ai-edge-litert`` is
installed) and the latency of each, as medians over a few runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np


def _median_ms(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="wick demo", description=__doc__.splitlines()[0])
    p.add_argument("--model", default="mobilenet_v2", help="a torchvision classification builder")
    p.add_argument("--size", type=int, default=224, help="input height and width")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--out", default="out", help="directory for the .tflite file")
    args = p.parse_args(argv)

    from wick._optional import require

    torch = require("torch", "wick demo")
    require("torchvision", "wick demo")
    import wick
    from wick.zoo import torchvision_model

    model = torchvision_model(args.model, seed=0)
    x = torch.randn(1, 3, args.size, args.size, generator=torch.Generator().manual_seed(1))
    t0 = time.perf_counter()
    converted = wick.convert(model, (x,))
    convert_s = time.perf_counter() - t0
    Path(args.out).mkdir(parents=True, exist_ok=True)
    path = Path(args.out) / f"{args.model}.tflite"
    converted.export(path)
    print(
        f"converted torchvision {args.model} (random weights) in {convert_s:.1f} s -> {path} "
        f"({path.stat().st_size / 1e6:.1f} MB)"
    )

    with torch.no_grad():
        ref = model(x).numpy()
    runtime = wick.load(path)
    xn = x.numpy()
    got = runtime(xn)[0]
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got - ref).max())
    same_top1 = int(got.argmax()) == int(ref.argmax())
    print(f"output: {ref.shape[-1]} logits, max |logit| {np.abs(ref).max():.3g}")
    print(
        f"wick   vs PyTorch: max abs error {err:.2e} (bar {1e-4 * scale:.1e}), "
        f"top-1 {'agrees' if same_top1 else 'DIFFERS'}"
    )
    ok = err <= 1e-4 * scale and same_top1

    wick_ms = _median_ms(lambda: runtime(xn), args.runs)
    with torch.no_grad():
        torch_ms = _median_ms(lambda: model(x), args.runs)
    line = f"latency (median of {args.runs}, 1 thread): wick {wick_ms:.1f} ms, PyTorch {torch_ms:.1f} ms"
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        print("LiteRT not installed (pip install ai-edge-litert): skipping the LiteRT comparison")
    else:
        interp = Interpreter(model_path=str(path), num_threads=1)
        interp.allocate_tensors()
        inp = interp.get_input_details()[0]
        out = interp.get_output_details()[0]

        def run_litert():
            interp.set_tensor(inp["index"], xn)
            interp.invoke()
            return interp.get_tensor(out["index"])

        lit = run_litert()
        err_l = float(np.abs(got - lit).max())
        err_lt = float(np.abs(lit - ref).max())
        print(f"wick   vs LiteRT:  max abs error {err_l:.2e}; LiteRT vs PyTorch {err_lt:.2e}")
        ok = ok and err_l <= 1e-4 * scale
        line += f", LiteRT {_median_ms(run_litert, args.runs):.1f} ms"
    print(line)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1
