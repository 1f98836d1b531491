"""Grouped-query attention over the whole cache, laid out for the runtime's kernels.

HuggingFace's eager attention expands every key/value head to its query heads (``repeat_kv``: a
BROADCAST_TO copying the whole cache ``num_heads / num_kv_heads`` times per layer per step) and
multiplies by ``key.transpose(2, 3)`` (a TRANSPOSE of the whole expanded cache). This function is
registered with transformers' ``AttentionInterface`` as ``"wick_llm"`` and used while tracing (the
layers' projections, RoPE and output projection stay HF's). It computes the same thing without
either copy:

    query   [1, H, n, d] * scaling  -> reshape [1, KV, R*n, d]   (R = H / KV query heads per
                                                                 key/value head; row r*n + i is
                                                                 head g*R + r at token i)
    scores = query @ keys_t          [1, KV, R*n, S]             keys_t: the key cache stored
                                                                 transposed, [1, KV, d, S]
             (softcap * tanh(scores / softcap) where the layer soft-caps: Gemma 2)
             + mask                  [1, 1, R*n, S]              (step.py builds it in this row
                                                                 order: 0 where visible, else
                                                                 float32 min; per layer: full
                                                                 or sliding window)
    out    = softmax(scores) @ values  [1, KV, R*n, d] -> [1, H, n, d] -> [1, n, H, d]

Two BATCH_MATMULs over the cache in its stored layout, nothing copied. The key cache is kept
transposed for this (cache.py writes new keys as columns).

Next: cache.py (the cache layout), step.py (the mask).
"""

from __future__ import annotations

import torch

NAME = "wick_llm"


def grouped_attention(
    module, query, keys_t, values, attention_mask, scaling=None, dropout=0.0, softcap=None, **_
):
    b, heads, n, d = query.shape
    kv_heads = values.shape[1]
    if scaling is None:  # (every HF attention passes its own; this is eager attention's default)
        scaling = d**-0.5
    q = (query * scaling).reshape(b, kv_heads, (heads // kv_heads) * n, d)
    scores = torch.matmul(q, keys_t)
    if softcap is not None:  # Gemma 2's attention logit soft-capping, before the mask
        scores = torch.tanh(scores / softcap) * softcap
    scores = scores + attention_mask
    probs = torch.softmax(scores, dim=-1)
    out = torch.matmul(probs, values)
    return out.reshape(b, heads, n, d).transpose(1, 2), None


def register() -> None:
    """Makes ``config._attn_implementation = "wick_llm"`` select :func:`grouped_attention`."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, grouped_attention)
