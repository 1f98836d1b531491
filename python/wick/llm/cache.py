"""The KV cache as the torch graph sees it: explicit tensors updated by one custom op.

Each signature module (step.py) takes every layer's key and value cache as an input tensor
(layouts: :class:`SignatureCache`) and returns the updated caches as outputs. The
update is one operator, ``torch.ops.wick_llm.kv_update(cache, update, start)``: the cache with
``update`` written over the box that starts at ``start`` (int32, one index per dim) — exactly
TFLite's DYNAMIC_UPDATE_SLICE, which is what it lowers to (the rule is registered here, in the
converter's lowering table). After lowering, state.py turns the cache inputs and outputs into
resource variables, so the file keeps the cache in the runtime.

:class:`SignatureCache` is the object handed to HuggingFace's attention layers as
``past_key_values``: they call ``update(key, value, layer_idx)`` and hand what it returns (the
whole caches; the mask from step.py hides the positions not written yet) to attention.py.

Next: step.py (the modules per signature), state.py (inputs/outputs -> variables).
"""

from __future__ import annotations

import torch


@torch.library.custom_op("wick_llm::kv_update", mutates_args=())
def kv_update(cache: torch.Tensor, update: torch.Tensor, start: torch.Tensor) -> torch.Tensor:
    """``cache`` with ``update`` written at ``start`` (DYNAMIC_UPDATE_SLICE semantics: each start
    index is clamped so that the box fits). A new tensor; ``cache`` is not modified."""
    out = cache.clone()
    index = []
    for d, s in enumerate(start.tolist()):
        s = min(max(int(s), 0), cache.shape[d] - update.shape[d])
        index.append(slice(s, s + update.shape[d]))
    out[tuple(index)] = update
    return out


@kv_update.register_fake
def _kv_update_fake(cache, update, start):
    return torch.empty_like(cache)


def _lower_kv_update(ctx, node) -> None:
    """wick_llm.kv_update -> DYNAMIC_UPDATE_SLICE (the operand, the update, int32 starts)."""
    cache, update, start = node.args
    start_t = ctx.cast(ctx.t(start), "int32")
    out = ctx.emit(
        "DYNAMIC_UPDATE_SLICE",
        [ctx.t(cache), ctx.t(update), start_t],
        ctx.shape(node.out),
        ctx.dtype(node.out),
    )
    ctx.bind(node.out, out)


KV_UPDATE_OP = "wick_llm.kv_update.default"


def register_lowering() -> None:
    """Adds the kv_update rule to the converter's lowering table (idempotent)."""
    from ..converter.lower.table import LOWERINGS

    LOWERINGS.setdefault(KV_UPDATE_OP, _lower_kv_update)


register_lowering()


class SignatureCache:
    """``past_key_values`` for one traced step: the caches come in as tensors, each layer's
    ``update`` writes the new keys/values at the step's position and returns the full caches.

    Layout (chosen for attention.py's two matmuls): ``keys[i]`` is the key cache *transposed*,
    ``[1, kv_heads, head_dim, max_seq_len]`` (new keys are written as columns, at
    ``keys_start`` = (0, 0, 0, position)); ``values[i]`` is ``[1, kv_heads, max_seq_len,
    head_dim]`` (new rows at ``values_start`` = (0, 0, position, 0)). After the forward, ``keys``
    and ``values`` hold the updated caches."""

    is_compileable = True

    def __init__(self, keys: list, values: list, position: torch.Tensor):
        self.keys = list(keys)
        self.values = list(values)
        zero = torch.zeros(1, dtype=torch.int32)
        self.keys_start = torch.cat([zero, zero, zero, position])
        self.values_start = torch.cat([zero, zero, position, zero])

    def update(self, key_states, value_states, layer_idx: int, *args, **kwargs):
        keys_t = key_states.transpose(2, 3)
        self.keys[layer_idx] = kv_update(self.keys[layer_idx], keys_t, self.keys_start)
        self.values[layer_idx] = kv_update(self.values[layer_idx], value_states, self.values_start)
        return self.keys[layer_idx], self.values[layer_idx]

    # what HF may ask a cache besides update (none of it changes the computation here)
    def get_seq_length(self, layer_idx: int = 0) -> int:
        return 0

    def get_max_cache_shape(self, layer_idx: int = 0) -> int:
        return int(self.values[layer_idx].shape[2])

    def __len__(self) -> int:
        return len(self.keys)
