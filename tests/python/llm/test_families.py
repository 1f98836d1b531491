"""wick.llm on small random-weight configs of each HuggingFace family it converts beyond Llama
and Qwen2 (test_llm.py): Qwen3, Gemma 2, Gemma 3, Phi-3, GPT-2 and two mixtures of experts
(Qwen2-MoE, Mixtral). Per family, the float file's 32 greedy tokens equal transformers' own
greedy generate on wick's runtime and on stock LiteRT's signature runners, and an int8 file's
teacher-forced logits stay close to transformers' float ones.

Every config is tiny (hidden 64, 2 layers, vocabulary 320, max_seq_len 64) and exercises what
the family adds: Qwen3's q/k norms; Gemma's scaled embedding, GeGLU, pre/post feed-forward
norms, attention and final logit soft-capping, sliding-window layers alternating with global
ones (window 5: the 13-token prompt and the 32 new tokens run far past it), Gemma 3's per-layer-
type RoPE; Phi-3's fused qkv and gate_up projections with partial rotary and sliding layers,
and its longrope variant (Phi-3-128k, Phi-3.5); GPT-2's learned
positions, fused c_attn Conv1D, LayerNorm and GELU; the experts' routing. Weights are random
with a large initializer range (greedy ties would make token equality a coin toss), and the
one-dimensional parameters (norm weights, biases) are moved off their identity initialization
so that a norm or bias used wrongly shows.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

import wick.llm  # noqa: E402
from wick.converter.errors import ConversionError  # noqa: E402

from .test_llm import _hf_greedy, _litert_tokens  # noqa: E402

# Eight families, two conversions each (~2.5 min in all): slow, so the sanitizer run skips this
# module; test_llm.py keeps the LLM runtime paths under ASan.
pytestmark = pytest.mark.slow

STEPS = 32
MAX_SEQ_LEN = 64
PREFILL = (8,)
WINDOW = 5
# 13 tokens: prefill_8 at 0, then prefill_8 over positions 5-12 (overlapping)
PROMPT = [8, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13]

COMMON = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    initializer_range=0.3,
    bos_token_id=None,
    eos_token_id=None,
    pad_token_id=None,
)


def _qwen3():
    # head_dim 32 (not hidden / heads = 16): Qwen3 sets it apart; q/k RMSNorms per head
    return transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**COMMON, head_dim=32))


def _gemma2():
    # untied LM head: with Gemma's embedding scale (sqrt(hidden)) a random tied model only
    # repeats the last prompt token
    config = transformers.Gemma2Config(
        **COMMON,
        tie_word_embeddings=False,
        head_dim=16,
        sliding_window=WINDOW,
        attn_logit_softcapping=5.0,
        final_logit_softcapping=8.0,
        query_pre_attn_scalar=24,
    )
    return transformers.Gemma2ForCausalLM(config)


def _gemma3():
    config = transformers.Gemma3TextConfig(
        **COMMON,
        tie_word_embeddings=False,
        head_dim=16,
        sliding_window=WINDOW,
        sliding_window_pattern=2,
        query_pre_attn_scalar=24,
        final_logit_softcapping=8.0,
        rope_parameters={
            "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
    )
    return transformers.Gemma3ForCausalLM(config)


def _phi3():
    # Phi-3's configs slide every layer (Phi-3-mini: sliding_window 2047)
    config = transformers.Phi3Config(
        **COMMON,
        sliding_window=WINDOW,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
        },
    )
    return transformers.Phi3ForCausalLM(config)


def _phi3_longrope():
    # Phi-3-128k / Phi-3.5's RoPE: short factors up to original_max_position_embeddings (the
    # whole cache here), long ones beyond it; the attention factor from 256 / 64
    config = transformers.Phi3Config(
        **{**COMMON, "max_position_embeddings": 256},
        original_max_position_embeddings=MAX_SEQ_LEN,  # (Phi3Config copies it into the RoPE's)
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "short_factor": [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0],
            "long_factor": [1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0],
        },
    )
    return transformers.Phi3ForCausalLM(config)


def _gpt2():
    config = transformers.GPT2Config(
        vocab_size=320,
        n_embd=64,
        n_layer=2,
        n_head=4,
        n_positions=128,
        initializer_range=0.3,
        bos_token_id=None,
        eos_token_id=None,
    )
    return transformers.GPT2LMHeadModel(config)


def _qwen2_moe():
    config = transformers.Qwen2MoeConfig(
        **COMMON,
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=48,
    )
    return transformers.Qwen2MoeForCausalLM(config)


def _mixtral():
    config = transformers.MixtralConfig(**COMMON, num_local_experts=4, num_experts_per_tok=2)
    return transformers.MixtralForCausalLM(config)


FAMILIES = {
    "qwen3": _qwen3,
    "gemma2": _gemma2,
    "gemma3": _gemma3,
    "phi3": _phi3,
    "phi3_longrope": _phi3_longrope,
    "gpt2": _gpt2,
    "qwen2_moe": _qwen2_moe,
    "mixtral": _mixtral,
}


def _build(name: str):
    torch.manual_seed(0)
    model = FAMILIES[name]().eval()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:  # norm weights, biases
                p.add_(torch.randn(p.shape, generator=g) * 0.3)
    return model


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tmp_path_factory):
    """(name, model, float file path, transformers' greedy tokens)."""
    name = request.param
    model = _build(name)
    ref = _hf_greedy(model, PROMPT, STEPS)
    assert len(set(ref)) > 4, f"{name}: degenerate random model, tokens {ref}"
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL)
    path = tmp_path_factory.mktemp(name) / f"{name}.tflite"
    llm.export(path)
    return name, model, llm, path, ref


def test_greedy_tokens_equal_transformers(family):
    """32 greedy tokens on wick's runtime: prefill chunks (one overlapping), then decode."""
    name, _, llm, _, ref = family
    assert llm.generate(PROMPT, STEPS) == ref, name


def test_litert_gives_the_same_tokens(family):
    """The same file on stock LiteRT's signature runners (child process): the same tokens."""
    name, _, _, path, ref = family
    assert _litert_tokens(path, PROMPT, STEPS) == ref, name


def test_attention_runs_fused_and_bit_identical(family, monkeypatch):
    """Every layer's attention (soft-capped, sliding, without grouped queries, ...) runs as
    one kernel over the filled cache positions (src/ops/attention.c) in prefill_8 and decode,
    and the logits of a teacher-forced run are the bytes of the unfused nodes
    (WICK_NO_ATTENTION_FUSION=1)."""
    name, model, _, path, ref = family
    layers = model.config.num_hidden_layers
    tokens = PROMPT + ref[:12]

    def run():
        llm = wick.llm.load(path)
        out = [llm.step(8, tokens[:8], 0)]
        out += [llm.step(1, tokens[i : i + 1], i) for i in range(8, len(tokens))]
        runtime = llm.runtime()
        fused = [
            sum(k[1].startswith("attention") for k in runtime.signature(s).op_kernels())
            for s in ("prefill_8", "decode")
        ]
        return np.stack(out), fused

    got, fused = run()
    assert fused == [layers, layers], (name, fused)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_ATTENTION_FUSION", "1")
        want, unfused = run()
    assert unfused == [0, 0], (name, unfused)
    assert got.tobytes() == want.tobytes(), (name, np.abs(got - want).max())


def _teacher_forced(llm, tokens) -> np.ndarray:
    llm.reset()
    out = [llm.step(1, tokens[i : i + 1], i)[0] for i in range(len(tokens))]
    llm.reset()
    return np.stack(out)


def test_int8_stays_close(family):
    """quantize="int8" (a decode-only file): along the prompt and the greedy continuation,
    teacher-forced, the logits stay within a few percent of transformers' float logits and
    pick the same token at nearly every position."""
    name, model, _, _, ref = family
    # (the bar is the tiny random Llama's own in test_llm.py's config, measured the same way:
    # median 0.06-0.07, agreement 0.82-0.93; a mixture of experts can route a token to another
    # expert under int8, so single positions may be far off: the median is the measure)
    tokens = PROMPT + ref
    with torch.no_grad():
        expected = model(torch.tensor([tokens])).logits[0].numpy()
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=(), quantize="int8")
    got = _teacher_forced(llm, tokens)
    scale = np.maximum(1.0, np.abs(expected).max(axis=1))
    errors = np.abs(got - expected).max(axis=1) / scale
    error = float(np.median(errors))
    agree = float((got.argmax(1) == expected.argmax(1)).mean())
    print(
        f"{name} int8: relative logit error median {error:.4f} max {errors.max():.4f}, argmax agreement {agree:.3f}"
    )
    assert error < 0.1 and agree >= 0.8, (name, error, agree)


def test_sliding_window_is_what_gemma2_needs():
    """The window matters in the Gemma 2 test above: with every layer global instead, the
    tokens differ (so equality there is not the full-attention answer by chance)."""
    model = _build("gemma2")
    ref = _hf_greedy(model, PROMPT, STEPS)
    model.config.layer_types = ["full_attention"] * model.config.num_hidden_layers
    for layer in model.model.layers:
        layer.self_attn.sliding_window = None
    assert _hf_greedy(model, PROMPT, STEPS) != ref


def test_dynamic_rope_within_max_position_embeddings():
    """NTK "dynamic" RoPE: within max_position_embeddings (all a cache may hold) its
    frequencies are the initial ones; a decode-only file gives transformers' tokens."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        **{**COMMON, "max_position_embeddings": MAX_SEQ_LEN},
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 4.0},
    )
    model = transformers.LlamaForCausalLM(config).eval()
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=())
    assert llm.generate(PROMPT, STEPS) == _hf_greedy(model, PROMPT, STEPS)


def test_unsupported_config_fields_are_named():
    """A longrope cache beyond original_max_position_embeddings, an unknown layer type, GPT-2
    with cross-attention: each refused with a message naming the config field."""
    model = _build("phi3_longrope")
    with pytest.raises(ConversionError, match="original_max_position_embeddings"):
        wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN + 1)
    model = _build("qwen3")
    model.config.layer_types = ["full_attention", "chunked_attention"]
    with pytest.raises(ConversionError, match=r"config.layer_types\[1\] is 'chunked_attention'"):
        wick.llm.convert(model, max_seq_len=16)
    gpt2 = _build("gpt2")
    gpt2.config.add_cross_attention = True
    with pytest.raises(ConversionError, match="add_cross_attention"):
        wick.llm.convert(gpt2, max_seq_len=16)
