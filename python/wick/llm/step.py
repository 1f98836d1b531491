"""One signature of an LLM as a torch module: n tokens in, the last position's logits out.

:class:`CausalLMStep` wraps an unmodified HuggingFace causal LM (LlamaForCausalLM and
Qwen2ForCausalLM: ``model.model.embed_tokens / layers / norm / rotary_emb``, ``model.lm_head``)
and runs *its own modules* — the embedding, the decoder layers with their projections, RoPE (from
the config), MLP and norms, the LM head — for ``n`` tokens starting at a run-time position.
Ours are only the loop over the layers (LlamaModel.forward would build a DynamicCache and a
mask from the cache's contents, neither of which exports to a fixed-shape graph), the cache
object the layers write to (cache.py) and the attention core they call (attention.py, selected
through transformers' AttentionInterface while tracing: grouped-query attention over the cache
without HF's per-head copies of it):

    forward(tokens int32 [1, n], input_pos int32 [1], k_0, v_0, k_1, v_1, ...)
        -> (logits float32 [1, vocab], k_0', v_0', ...)

with the caches in cache.py's layout (keys transposed). Position ``input_pos + i`` of the
batch is written into the caches and attends to every cache position up to itself (an additive
mask over all ``max_seq_len`` positions: the attention always spans the whole cache, the mask
hides what is not written yet or is stale). Logits are computed for the last position only.
The decode signature is this module with n = 1.

Next: cache.py, attention.py, state.py.
"""

from __future__ import annotations

import contextlib

import torch

from . import attention
from .cache import SignatureCache

# HF model_type values whose structure and attention this module reproduces and that the tests
# check against transformers' own generate.
SUPPORTED_MODEL_TYPES = ("llama", "qwen2")


def describe(model) -> dict:
    """The facts about ``model`` that the file and the generator need."""
    from ..converter.errors import ConversionError

    config = model.config
    model_type = getattr(config, "model_type", type(model).__name__)
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ConversionError(
            f"wick.llm converts {', '.join(SUPPORTED_MODEL_TYPES)} models so far, not "
            f"{model_type!r} ({type(model).__name__})",
            hint="other HuggingFace families (Qwen, Gemma, Phi, GPT-2) are planned (issue 20)",
        )
    for attr in ("model", "lm_head"):
        if not hasattr(model, attr):
            raise ConversionError(f"{type(model).__name__} has no .{attr}: not a causal LM")
    if "sliding_attention" in (getattr(config, "layer_types", None) or ()):
        raise ConversionError(
            f"{model_type!r} with sliding-window attention layers is not supported yet",
            hint="configs with use_sliding_window=False (the default) convert",
        )
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    eos = config.eos_token_id
    return {
        "model_type": model_type,
        "num_layers": int(config.num_hidden_layers),
        "num_heads": int(heads),
        "num_kv_heads": int(getattr(config, "num_key_value_heads", None) or heads),
        "head_dim": int(head_dim),
        "vocab_size": int(config.vocab_size),
        "eos_token_ids": [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]
        if eos is not None
        else [],
    }


@contextlib.contextmanager
def wick_attention(model):
    """attention.py's attention while tracing (and in eager checks), the model's own choice
    restored afterwards."""
    attention.register()
    config = model.config
    before = config._attn_implementation
    config._attn_implementation = attention.NAME
    try:
        yield
    finally:
        config._attn_implementation = before


class CausalLMStep(torch.nn.Module):
    def __init__(self, model, num_tokens: int, max_seq_len: int):
        super().__init__()
        self.lm = model
        self.num_tokens = int(num_tokens)
        self.max_seq_len = int(max_seq_len)

    def forward(self, tokens, input_pos, *caches):
        base = self.lm.model
        config = self.lm.config
        n, seq = self.num_tokens, self.max_seq_len
        group = config.num_attention_heads // (config.num_key_value_heads or 1)
        positions = input_pos + torch.arange(n, dtype=torch.int32)  # [n]
        position_ids = positions.unsqueeze(0)  # [1, n]
        # attention.py's score rows are (query head in its group, token): row r*n + i sees
        # the cache positions up to input_pos + i
        rows = positions.repeat(group)  # [group * n]
        visible = torch.arange(seq, dtype=torch.int32).unsqueeze(0) <= rows.unsqueeze(1)
        low = torch.finfo(torch.float32).min
        mask = torch.where(visible, 0.0, low).to(torch.float32)[None, None]  # [1,1,group*n,seq]
        cache = SignatureCache(caches[0::2], caches[1::2], input_pos)

        hidden = base.embed_tokens(tokens)
        position_embeddings = base.rotary_emb(hidden, position_ids)
        for layer in base.layers:
            hidden = layer(
                hidden,
                attention_mask=mask,
                position_ids=position_ids,
                past_key_values=cache,
                use_cache=True,
                position_embeddings=position_embeddings,
            )
            if isinstance(hidden, tuple):  # (older transformers return (hidden, ...))
                hidden = hidden[0]
        last = base.norm(hidden[:, -1, :])  # [1, hidden]: logits for the last position only
        logits = self.lm.lm_head(last)
        out = [logits]
        for k, v in zip(cache.keys, cache.values, strict=True):
            out += [k, v]
        return tuple(out)


def example_inputs(info: dict, num_tokens: int, max_seq_len: int) -> tuple:
    """Inputs of the right shapes and types for tracing (zero caches, position 0)."""
    keys_shape, values_shape = cache_shapes(info, max_seq_len)
    caches = []
    for _ in range(info["num_layers"]):
        caches += [torch.zeros(keys_shape), torch.zeros(values_shape)]
    return (
        torch.zeros(1, num_tokens, dtype=torch.int32),
        torch.zeros(1, dtype=torch.int32),
        *caches,
    )


def cache_shapes(info: dict, max_seq_len: int) -> tuple[list[int], list[int]]:
    """(key cache shape, value cache shape) of one layer: keys transposed (cache.py)."""
    kv, d = info["num_kv_heads"], info["head_dim"]
    return [1, kv, d, max_seq_len], [1, kv, max_seq_len, d]
