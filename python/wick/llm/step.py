"""One signature of an LLM as a torch module: n tokens in, the last position's logits out.

:class:`CausalLMStep` wraps an unmodified HuggingFace causal LM and runs *its own modules* —
the embedding (scaled, as Gemma's, or plus learned positions, as GPT-2's), the decoder layers
with their projections (fused or not), norms, MLP or mixture of experts, RoPE from the config
(per layer type, as Gemma 3's), the final norm and the LM head — for ``n`` tokens starting at a
run-time position. Ours are only the loop over the layers (the HF model's forward would build a
DynamicCache and masks from the cache's contents, neither of which exports to a fixed-shape
graph), the masks, the cache object the layers write to (cache.py), the attention core they call
(attention.py, selected through transformers' AttentionInterface while tracing: grouped-query
attention over the cache without HF's per-head copies of it) and the final logit soft-capping
that the HF ``...ForCausalLM.forward`` applies after its LM head (Gemma 2/3). RoPE types that
transformers recomputes from the sequence length in every forward (NTK "dynamic", "longrope")
run as the fixed frequencies they have below their limits, which :func:`check_length` holds the
cache to:

    forward(tokens int32 [1, n], input_pos int32 [1], k_0, v_0, k_1, v_1, ...)
        -> (logits float32 [1, vocab], k_0', v_0', ...)

with the caches in cache.py's layout (keys transposed). Position ``input_pos + i`` of the
batch is written into the caches and attends, through an additive mask over all ``max_seq_len``
positions, to every cache position up to itself — or, in a sliding-window layer of window w,
to the positions p with ``input_pos + i - w < p <= input_pos + i`` (transformers' own
definition): the attention always spans the whole cache, the mask hides what is not written
yet, stale or outside the window. Logits are computed for the last position only. The decode
signature is this module with n = 1.

:data:`FAMILIES` lists the HF model types this reproduces (each checked against transformers'
own generate by tests/python/llm/test_families.py); :func:`describe` refuses anything else, and
the config fields of a listed family that change the computation in a way not reproduced here,
with a message naming the field.

Next: cache.py, attention.py, state.py.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import torch

from . import attention
from .cache import SignatureCache

# HF model_type -> the family's name in messages and docs/llm.md
FAMILIES = {
    "llama": "Llama",
    "qwen2": "Qwen2",
    "qwen3": "Qwen3",
    "gemma2": "Gemma 2",
    "gemma3_text": "Gemma 3",
    "phi3": "Phi-3",
    "gpt2": "GPT-2",
    "qwen2_moe": "Qwen2-MoE",
    "mixtral": "Mixtral",
}
SUPPORTED_MODEL_TYPES = tuple(FAMILIES)


def _refuse(message: str, hint: str | None = None):
    from ..converter.errors import ConversionError

    raise ConversionError(message, hint=hint)


def _backbone(model):
    """The decoder stack (LlamaModel, GPT2Model, ...) of a ...ForCausalLM."""
    for attr in ("model", "transformer"):
        base = getattr(model, attr, None)
        if isinstance(base, torch.nn.Module):
            return base
    _refuse(f"{type(model).__name__} has no .model or .transformer: not a causal LM")


def _layers(base):
    return base.h if hasattr(base, "h") else base.layers


def _final_norm(base):
    return base.ln_f if hasattr(base, "ln_f") else base.norm


def layer_windows(config, num_layers: int) -> list[int | None]:
    """Per decoder layer: its sliding window (the number of positions a token sees, itself
    included) or None for full attention — as the HF models choose their masks: by
    ``config.layer_types`` where the config has them (Qwen2/3, Gemma 2/3), else every layer
    slides when ``config.sliding_window`` is set (Phi-3, Mixtral, Mistral)."""
    window = getattr(config, "sliding_window", None)
    types = getattr(config, "layer_types", None)
    if types is not None:
        types = list(types)[:num_layers]
        out = []
        for i, t in enumerate(types):
            if t == "full_attention":
                out.append(None)
            elif t == "sliding_attention":
                if not isinstance(window, int) or window < 1:
                    _refuse(
                        f"config.layer_types[{i}] is 'sliding_attention' but config."
                        f"sliding_window is {window!r}, not a positive number of positions"
                    )
                out.append(int(window))
            else:
                _refuse(
                    f"config.layer_types[{i}] is {t!r}: wick.llm converts 'full_attention' and "
                    "'sliding_attention' layers"
                )
        return out
    if window:
        return [int(window)] * num_layers
    return [None] * num_layers


def _length_dependent(rope_type: str) -> bool:
    """RoPE types whose frequencies transformers' ``dynamic_rope_update`` recomputes from the
    current sequence length in every forward (a run-time branch and a buffer update, which do
    not export): NTK "dynamic" (the base grows beyond max_position_embeddings) and "longrope"
    (Phi-3-128k, Phi-3.5: the long factors beyond original_max_position_embeddings). Below those
    lengths both use the frequencies the rotary embedding was built with (original_inv_freq),
    so :func:`check_length` keeps the cache below them and :class:`CausalLMStep` calls the
    rotary embedding's forward without the update."""
    return "dynamic" in rope_type or rope_type == "longrope"


def check_length(config, max_seq_len: int) -> None:
    """Refuse a cache longer than the model's positions (config.max_position_embeddings) or,
    for longrope, longer than config.rope_parameters original_max_position_embeddings (beyond
    it transformers switches to the long factors: see :func:`_length_dependent`)."""
    limit = getattr(config, "max_position_embeddings", None)
    if limit is not None and max_seq_len > limit:
        _refuse(
            f"max_seq_len {max_seq_len} is beyond the model's max_position_embeddings ({limit})"
        )
    rope = getattr(config, "rope_parameters", None)
    if isinstance(rope, dict) and rope.get("rope_type") == "longrope":
        original = rope.get("original_max_position_embeddings")
        if original is not None and max_seq_len > original:
            _refuse(
                f"max_seq_len {max_seq_len} is beyond config.rope_parameters "
                f"original_max_position_embeddings ({original}): longrope switches to its long "
                "factors there at run time, which is not supported yet",
                hint=f"max_seq_len up to {original} converts",
            )


def _check_config(model_type: str, config) -> None:
    """Refuse config fields that change the computation in ways this module does not
    reproduce (each message names the field)."""
    rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None)
    ropes = []
    if isinstance(rope, dict):
        nested = [v for v in rope.values() if isinstance(v, dict)]
        ropes = nested if nested else [rope]
    kinds = [str(r.get("rope_type", r.get("type", "default"))) for r in ropes]
    if len(ropes) > 1 and any(_length_dependent(k) for k in kinds):
        _refuse(
            f"config.rope_parameters per layer type with rope_type {kinds}: a rope_type whose "
            "frequencies change with the sequence length is supported for one RoPE only"
        )
    if getattr(config, "use_bidirectional_attention", False):
        _refuse("config.use_bidirectional_attention=True is not a causal LM: not supported")
    if model_type == "gpt2" and getattr(config, "add_cross_attention", False):
        _refuse("config.add_cross_attention=True (GPT-2 with cross-attention) is not supported")


def describe(model) -> dict:
    """The facts about ``model`` that the file and the generator need."""
    config = model.config
    model_type = getattr(config, "model_type", type(model).__name__)
    if model_type not in FAMILIES:
        _refuse(
            f"wick.llm converts {', '.join(SUPPORTED_MODEL_TYPES)} models, not "
            f"{model_type!r} ({type(model).__name__})",
            hint="docs/llm.md lists the families and what each needed",
        )
    base = _backbone(model)
    if not hasattr(model, "lm_head"):
        _refuse(f"{type(model).__name__} has no .lm_head: not a causal LM")
    _check_config(model_type, config)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    num_layers = len(_layers(base))
    eos = config.eos_token_id
    windows = layer_windows(config, num_layers)
    return {
        "model_type": model_type,
        "num_layers": int(num_layers),
        "num_heads": int(heads),
        "num_kv_heads": int(getattr(config, "num_key_value_heads", None) or heads),
        "head_dim": int(head_dim),
        "vocab_size": int(config.vocab_size),
        "sliding_windows": windows,
        "eos_token_ids": [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]
        if eos is not None
        else [],
    }


@contextlib.contextmanager
def wick_attention(model):
    """attention.py's attention while tracing (and in eager checks), and transformers' batched
    experts (every token's chosen experts' weights gathered, one batched matmul: no
    data-dependent loop over the experts hit) for mixture-of-experts models; the model's own
    choices restored afterwards."""
    attention.register()
    config = model.config
    before = config._attn_implementation
    experts_before = getattr(config, "_experts_implementation", None)
    config._attn_implementation = attention.NAME
    if experts_before is not None:
        config._experts_implementation = "batched_mm"
    try:
        yield
    finally:
        config._attn_implementation = before
        if experts_before is not None:
            config._experts_implementation = experts_before


def _additive_mask(rows: torch.Tensor, seq: int, window: int | None) -> torch.Tensor:
    """[1, 1, len(rows), seq]: 0 where cache position p is visible to the token at position
    ``rows[r]`` (p <= rows[r], and p > rows[r] - window in a sliding layer), else float32
    min."""
    cols = torch.arange(seq, dtype=torch.int32).unsqueeze(0)
    at = rows.unsqueeze(1)
    visible = cols <= at
    if window is not None:
        visible = visible & (cols > at - window)
    low = torch.finfo(torch.float32).min
    return torch.where(visible, 0.0, low).to(torch.float32)[None, None]


class CausalLMStep(torch.nn.Module):
    def __init__(self, model, num_tokens: int, max_seq_len: int):
        super().__init__()
        self.lm = model
        self.num_tokens = int(num_tokens)
        self.max_seq_len = int(max_seq_len)
        config = model.config
        self.base = _backbone(model)
        self.layers = _layers(self.base)
        self.windows = layer_windows(config, len(self.layers))
        self.learned_positions = getattr(self.base, "wpe", None)  # GPT-2
        rotary = getattr(self.base, "rotary_emb", None)
        rope = rotary  # (cos, sin) = rope(hidden, position_ids[, layer_type])
        if rotary is not None and _length_dependent(str(getattr(rotary, "rope_type", ""))):
            # the frequencies of sequences below the limits check_length enforces, as
            # dynamic_rope_update sets them; its forward without that update
            with torch.no_grad():
                rotary.inv_freq.copy_(rotary.original_inv_freq)
            rope = functools.partial(inspect.unwrap(type(rotary).forward), rotary)
        self.rope = rope
        self.rotary_per_type = rotary is not None and (
            "layer_type" in inspect.signature(type(rotary).forward).parameters
        )
        types = getattr(config, "layer_types", None)
        self.layer_types = list(types) if types is not None else None
        self.final_softcap = getattr(config, "final_logit_softcapping", None)

    def forward(self, tokens, input_pos, *caches):
        base = self.base
        config = self.lm.config
        n, seq = self.num_tokens, self.max_seq_len
        kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        group = config.num_attention_heads // kv_heads
        positions = input_pos + torch.arange(n, dtype=torch.int32)  # [n]
        position_ids = positions.unsqueeze(0)  # [1, n]
        # attention.py's score rows are (query head in its group, token): row r*n + i is the
        # token at input_pos + i
        rows = positions.repeat(group)  # [group * n]
        masks = {w: _additive_mask(rows, seq, w) for w in set(self.windows)}
        cache = SignatureCache(caches[0::2], caches[1::2], input_pos)

        if self.learned_positions is not None:  # GPT-2: token + learned position embeddings
            hidden = base.wte(tokens) + self.learned_positions(position_ids)
            hidden = base.drop(hidden)
        else:
            hidden = base.embed_tokens(tokens)
        cos_sin = {}
        if self.rope is not None:
            if self.rotary_per_type:
                for t in sorted(set(self.layer_types)):
                    cos_sin[t] = self.rope(hidden, position_ids, t)
            else:
                cos_sin[None] = self.rope(hidden, position_ids)
        for i, layer in enumerate(self.layers):
            kwargs = dict(
                attention_mask=masks[self.windows[i]],
                position_ids=position_ids,
                past_key_values=cache,
                use_cache=True,
            )
            if cos_sin:
                kwargs["position_embeddings"] = cos_sin[
                    self.layer_types[i] if self.rotary_per_type else None
                ]
            hidden = layer(hidden, **kwargs)
            if isinstance(hidden, tuple):  # (older transformers return (hidden, ...))
                hidden = hidden[0]
        last = _final_norm(base)(hidden[:, -1, :])  # [1, hidden]: the last position only
        logits = self.lm.lm_head(last)
        if self.final_softcap is not None:  # as Gemma2ForCausalLM.forward after its LM head
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
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
