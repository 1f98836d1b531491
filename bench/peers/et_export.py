"""Lowers torch.export programs (.pt2, written by the harness in wick's .venv) to ExecuTorch
programs with the XNNPACK backend (.pte).  Runs in ``.venv-executorch``
(bench/peers/setup_executorch.sh), which pins the same torch as .venv so the .pt2 files load
as they are.

    .venv-executorch/bin/python -m bench.peers.et_export A.pt2 A.pte [B.pt2 B.pte ...]

The standard ExecuTorch recipe: ``to_edge_transform_and_lower(ep, partitioner=[
XnnpackPartitioner()])`` then ``to_executorch()``.  All models go through one process (the
imports alone take 10-40 s); for each, one JSON line on stdout: ``{"pte", "s", "delegation"}``
(how many XNNPACK delegate calls, which ops stayed outside on ExecuTorch's portable kernels)
or ``{"pte", "error"}``.
"""

from __future__ import annotations

import json
import sys
import time
import warnings


def lower(src: str, dst: str) -> str:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    ep = torch.export.load(src)
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    gm = edge.exported_program().graph_module
    calls = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    delegated = sum("executorch_call_delegate" in c for c in calls)
    others = sorted(
        {c.split(">: schema")[0].replace("<EdgeOpOverload: ", "") for c in calls}
        - {"<built-in function getitem>"}
        - {c for c in calls if "call_delegate" in c}
    )
    prog = edge.to_executorch()
    with open(dst, "wb") as f:
        f.write(prog.buffer)
    return f"{delegated} XNNPACK delegate call(s), outside it: {', '.join(others) or 'nothing'}"


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    for src, dst in zip(argv[::2], argv[1::2], strict=True):
        t = time.perf_counter()
        try:
            msg = {"pte": dst, "delegation": lower(src, dst)}
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            msg = {"pte": dst, "error": f"{type(e).__name__}: {first}"[:400]}
        msg["s"] = time.perf_counter() - t
        print(json.dumps(msg), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
