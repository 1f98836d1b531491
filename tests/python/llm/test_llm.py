"""wick.llm on small random-weight Llama (and Qwen2) configs: the converted file's greedy tokens
equal transformers' own greedy generate, on wick's runtime and on stock LiteRT's signature
runners.

The config has grouped-query attention (4 query heads over 2 key/value heads), RoPE, tied
embeddings and a larger initializer range than the default so that random logits are far apart
(greedy ties would make token equality a coin toss). The end-of-sequence id is unset so that
transformers generates every step (with an eos id and min_new_tokens it would suppress that
token and the comparison would be with a constrained search).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

import wick.llm  # noqa: E402
from wick.converter.errors import ConversionError  # noqa: E402
from wick.graph.tflite_reader import read_tflite  # noqa: E402
from wick.llm.model import plan  # noqa: E402

STEPS = 16
MAX_SEQ_LEN = 64
PREFILL = (4, 8)
ROOT = Path(__file__).resolve().parents[3]


def _config(**overrides):
    kw = dict(
        vocab_size=320,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        tie_word_embeddings=True,
        initializer_range=0.3,
        rope_theta=10000.0,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )
    kw.update(overrides)
    return transformers.LlamaConfig(**kw)


def _c_generate(path, text, ids, steps_flag):
    """`wick generate FILE --prompt TEXT STEPS_FLAG STEPS`: checks that it encoded the prompt
    as `ids` (its "prompt: N tokens" line); returns the new token ids and the streamed text."""
    from wick.cli import _c_tool

    proc = subprocess.run(
        [str(_c_tool()), "generate", str(path), "--prompt", text, steps_flag, str(STEPS)],
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split(b"\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith(b"prompt: "))
    assert lines[at] == f"prompt: {len(ids)} tokens".encode()
    new = [int(t) for t in lines[at + 1][len(b"tokens: ") :].split(b",")]
    return new, b"\n".join(lines[:at])


def _hf_greedy(model, prompt: list[int], steps: int) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=steps, do_sample=False, eos_token_id=None
        )
    return out[0, len(prompt) :].tolist()


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_config()).eval()
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL)
    path = tmp_path_factory.mktemp("llm") / "llama.tflite"
    llm.export(path)
    return model, llm, path


# 11 tokens: prefill_8, then prefill_4 over positions 7-10 (overlapping); 4: one prefill_4;
# 13: prefill_8, prefill_4, then prefill_4 over 9-12; 3: three decode steps
PROMPTS = [
    [5, 17, 301, 42, 7, 99, 3, 250, 18, 64, 11],
    [9, 200, 31, 77],
    [8, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13],
    [123, 4, 56],
]


@pytest.mark.parametrize(
    "prompt", PROMPTS, ids=["prefill8+overlap4", "prefill4", "8+4+overlap4", "decode-only"]
)
def test_greedy_tokens_equal_transformers(converted, prompt):
    model, llm, _ = converted
    assert llm.generate(prompt, STEPS) == _hf_greedy(model, prompt, STEPS)


def test_file_layout(converted):
    """Signatures prefill_4, prefill_8, decode over (tokens, input_pos) -> logits [1, V]; the
    cache in resource variables; the weights stored once, not once per signature."""
    model, llm, path = converted
    f = read_tflite(path.read_bytes(), stats=False)
    sigs = {s.key: s for s in f.signatures}
    assert list(sigs) == ["prefill_4", "prefill_8", "decode"]
    for s in sigs.values():
        assert sorted(s.inputs) == ["input_pos", "tokens"] and list(s.outputs) == ["logits"]
    ops = {op.op for sg in f.subgraphs for op in sg.operators}
    assert {"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE"} <= ops
    assert "DYNAMIC_UPDATE_SLICE" in ops
    weights = sum(p.numel() * 4 for p in model.parameters())  # (tied: counted once)
    stored = {t.offset: t.nbytes for sg in f.subgraphs for t in sg.tensors if t.constant}
    assert sum(stored.values()) < 1.02 * weights, (sum(stored.values()), weights)
    assert "wick_llm" in f.metadata


def _litert_tokens(path, prompt, steps):
    """Greedy tokens of the file on stock LiteRT (child process), or a skip saying why not."""
    pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert) is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.python.llm.litert_generate",
            str(path),
            json.dumps(prompt),
            str(steps),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if "error" in result:
        pytest.skip(f"LiteRT cannot run the file: {result['error']}")
    return result["tokens"]


def test_qwen2_untied_with_biases(tmp_path):
    """Qwen2 (biases on q/k/v, untied LM head): the same tokens as transformers, on wick and on
    LiteRT."""
    torch.manual_seed(1)
    config = transformers.Qwen2Config(**{**_config().to_dict(), "tie_word_embeddings": False})
    config.model_type = "qwen2"
    model = transformers.Qwen2ForCausalLM(config).eval()
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL)
    prompt = PROMPTS[2]
    ref = _hf_greedy(model, prompt, STEPS)
    assert llm.generate(prompt, STEPS) == ref
    llm.export(tmp_path / "qwen2.tflite")
    assert _litert_tokens(tmp_path / "qwen2.tflite", prompt, STEPS) == ref


def test_qwen2_sliding_window_layers():
    """Qwen2 with use_sliding_window (layers from max_window_layers on slide over 5 positions;
    the 13-token prompt and the new tokens run past the window): the same tokens as
    transformers."""
    torch.manual_seed(2)
    config = transformers.Qwen2Config(
        **{
            **_config().to_dict(),
            "use_sliding_window": True,
            "sliding_window": 5,
            "max_window_layers": 1,
        }
    )
    config.model_type = "qwen2"
    model = transformers.Qwen2ForCausalLM(config).eval()
    assert model.config.layer_types == ["full_attention"] + ["sliding_attention"] * 2
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL)
    assert llm.meta["sliding_windows"] == [None, 5, 5]
    prompt = PROMPTS[2]
    assert llm.generate(prompt, STEPS) == _hf_greedy(model, prompt, STEPS)


def test_load_and_state(converted):
    """A loaded file generates the same tokens; each generate starts from an empty cache."""
    _, llm, path = converted
    loaded = wick.llm.load(path)
    assert loaded.max_seq_len == MAX_SEQ_LEN and loaded.prefill_lengths == list(PREFILL)
    first = loaded.generate(PROMPTS[0], 8)
    assert loaded.generate(PROMPTS[0], 8) == first == llm.generate(PROMPTS[0], 8)


def test_litert_signature_runners_give_the_same_tokens(converted):
    """The same file on stock LiteRT (in a child process): same greedy tokens."""
    model, _, path = converted
    prompt = PROMPTS[0]
    assert _litert_tokens(path, prompt, STEPS) == _hf_greedy(model, prompt, STEPS)


def test_prompt_schedule():
    assert plan(11, (4, 8)) == [(0, 8), (7, 4)]
    assert plan(21, (4, 8)) == [(0, 8), (8, 8), (16, 4), (17, 4)]
    assert plan(16, (4, 8)) == [(0, 8), (8, 8)]
    assert plan(37, (8, 32)) == [(0, 32), (29, 8)]
    assert plan(3, (4, 8)) == [(0, 1), (1, 1), (2, 1)]
    assert plan(6, (8,)) == [(p, 1) for p in range(6)]


def test_bad_inputs(converted):
    _, llm, _ = converted
    with pytest.raises(ValueError, match="do not fit"):
        llm.generate(list(range(60)), 8)
    with pytest.raises(ValueError, match="empty"):
        llm.generate([], 4)
    with pytest.raises(ValueError, match="needs a tokenizer"):
        llm.generate("hello", 4)
    with pytest.raises(ValueError, match="prefill lengths"):
        wick.llm.convert(converted[0], max_seq_len=16, prefill_lengths=(32,))
    with pytest.raises(ValueError, match="quantize"):
        wick.llm.convert(converted[0], max_seq_len=16, quantize="int3")


def test_unsupported_family_is_refused():
    opt = transformers.OPTForCausalLM(
        transformers.OPTConfig(
            vocab_size=64, hidden_size=32, num_hidden_layers=1, ffn_dim=32, num_attention_heads=2
        )
    )
    with pytest.raises(ConversionError, match="not 'opt'"):
        wick.llm.convert(opt, max_seq_len=16)


def test_logits_match_transformers_along_the_sequence(converted):
    """Teacher-forced: every position's logits from the file (prefill_8, then decode steps) are
    within float32 rounding of transformers' full forward."""
    model, llm, _ = converted
    tokens = PROMPTS[0] + [1, 2, 3, 4, 5]
    with torch.no_grad():
        ref = model(torch.tensor([tokens])).logits[0].numpy()
    llm.reset()
    got = {7: llm.step(8, tokens[:8], 0)}
    for i in range(8, len(tokens)):
        got[i] = llm.step(1, tokens[i : i + 1], i)
    llm.reset()
    for i, logits in got.items():
        scale = max(1.0, float(np.abs(ref[i]).max()))
        assert np.abs(logits[0] - ref[i]).max() / scale < 1e-4, i


def _teacher_forced(path, tokens, num_threads):
    """Logits of every step of a teacher-forced run on wick: prefill_8 at 0, an overlapping
    prefill_4, then decode steps."""
    llm = wick.llm.load(path)
    llm.num_threads = num_threads
    out = [llm.step(8, tokens[:8], 0), llm.step(4, tokens[6:10], 6)]
    out += [llm.step(1, tokens[i : i + 1], i) for i in range(10, len(tokens))]
    return out


def test_attention_fusion_is_bit_identical(converted, monkeypatch):
    """The attention runs as one kernel over the filled cache positions (src/ops/attention.c):
    every step's logits are the bytes the unfused nodes give (WICK_NO_ATTENTION_FUSION=1), at
    1 and 2 threads."""
    _, _, path = converted
    tokens = PROMPTS[2] + list(range(40, 80))
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_ATTENTION_FUSION", "1")
        want = _teacher_forced(path, tokens, 1)
    for threads in (1, 2):
        got = _teacher_forced(path, tokens, threads)
        for step, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g.tobytes() == w.tobytes(), (threads, step, np.abs(g - w).max())


def test_decode_attention_work_follows_the_position(converted):
    """Each decode step's attention covers the cache positions written so far (rounded up to a
    GEMM panel: at most 32 more), not all max_seq_len: the multiply-accumulates the fused
    attention nodes report (wick_interpreter_op_macs, the last call's) — a count, not a
    timing."""
    model, _, path = converted
    loaded = wick.llm.load(path)
    config = model.config
    kv, heads = config.num_key_value_heads, config.num_attention_heads
    head_dim = config.hidden_size // heads
    per_position = kv * (heads // kv) * 2 * head_dim  # rows x (d + dv) per cache position
    runner = loaded.runtime().signature("decode")
    tokens = PROMPTS[0] + list(range(100, 150))
    loaded.step(8, tokens[:8], 0)
    for pos in range(8, len(tokens)):
        loaded.step(1, tokens[pos : pos + 1], pos)
        kernels, macs = runner.op_kernels(), runner.op_macs()
        attention = [macs[i] for i, k in enumerate(kernels) if k[1].startswith("attention")]
        assert len(attention) == config.num_hidden_layers, kernels
        for work in attention:
            positions = work / per_position
            assert pos + 1 <= positions <= min(MAX_SEQ_LEN, pos + 32), (pos, positions)


_WITHOUT_TORCH = """
import json, sys
for name in ("torch", "torchao", "torchvision", "transformers"):
    sys.modules[name] = None
import wick.llm
llm = wick.llm.load(sys.argv[1])
print(json.dumps(llm.generate(json.loads(sys.argv[2]), 8)))
try:
    wick.llm.convert(None, max_seq_len=8)
except ModuleNotFoundError as e:
    assert e.name == "torch" and 'pip install "wick[convert]"' in str(e), e
else:
    raise AssertionError("converted without torch")
"""


def test_load_and_generate_need_no_torch(converted):
    """A device-side process: wick.llm.load + generate with torch and transformers absent give
    the same tokens; convert says how to install what it needs."""
    _, llm, path = converted
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, str(path), json.dumps(PROMPTS[0])],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == llm.generate(PROMPTS[0], 8)


@pytest.fixture(scope="module")
def converted_int4(converted, tmp_path_factory):
    model = converted[0]
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL, quantize="int4")
    path = tmp_path_factory.mktemp("llm4") / "llama_int4.tflite"
    llm.export(path)
    return llm, path


def test_int4_file_is_blockwise_and_runs_as_on_litert(converted, converted_int4):
    """quantize="int4": the fully connected weights are int4 with TFLite's blockwise details
    (block 32, float16 scales) except the LM head and the feed-forward down projections, which
    are int8 per channel (the recipe of converter/passes/weights.py; with three layers the
    outer-layer rule does not apply); the file is under 0.6 of the float one (the int8 head and
    down projections are most of this tiny model's weights), and wick's greedy
    tokens equal stock LiteRT's (its XNNPACK blockwise kernel, which wick's follows bit for
    bit)."""
    llm, path = converted_int4
    cfg = converted[0].config
    f = read_tflite(path.read_bytes(), stats=False)
    weights = [
        sg.tensors[op.inputs[1]]
        for sg in f.subgraphs
        for op in sg.operators
        if op.op == "FULLY_CONNECTED"
    ]
    assert weights
    for t in weights:
        int8 = t.shape[0] == cfg.vocab_size or t.shape[1] == cfg.intermediate_size
        assert t.dtype.lower() == ("int8" if int8 else "int4"), (t.name, t.shape, t.dtype)
    assert llm.size < 0.6 * converted[1].size, (llm.size, converted[1].size)
    prompt = PROMPTS[0]
    assert llm.generate(prompt, STEPS) == _litert_tokens(path, prompt, STEPS)


def test_int4_recipe_keeps_the_sensitive_layers_int8():
    """The int4 recipe's choice on a 6-layer decoder's fully connected layers in graph order
    (q, k, v, o, gate, up, down per layer, then the LM head): int8 for the head, every down
    projection and all of layers 0, 1 and 5; int4 for the other layers' q..up."""
    from types import SimpleNamespace

    from wick.converter.passes.weights import _llm_int8_layers

    hidden, kv, inter, vocab = 64, 32, 96, 320
    shapes = [(hidden, hidden), (kv, hidden), (kv, hidden), (hidden, hidden)]
    shapes += [(inter, hidden), (inter, hidden), (hidden, inter)]
    fcs = []
    for layer in range(6):
        for n, k in shapes:
            fcs.append(SimpleNamespace(inputs=[None, SimpleNamespace(shape=[n, k])], layer=layer))
    fcs.append(SimpleNamespace(inputs=[None, SimpleNamespace(shape=[vocab, hidden])], layer=None))
    keep = _llm_int8_layers(fcs)
    for op in fcs:
        expected = op.layer in (None, 0, 1, 5) or op.inputs[1].shape[1] == inter
        assert (id(op) in keep) == expected, (op.layer, op.inputs[1].shape)


def _blockwise_fields(data: bytes):
    """Byte positions of (scales, block_size) of every BlockwiseQuantization table."""
    from ai_edge_litert import schema_py_generated as schema

    m = schema.Model.GetRootAs(data, 0)
    spots = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for t in range(sg.TensorsLength()):
            q = sg.Tensors(t).Quantization()
            if q is None or q.DetailsType() != schema.QuantizationDetails.BlockwiseQuantization:
                continue
            tab = q.Details()
            spots.append((tab.Pos + tab.Offset(4), tab.Pos + tab.Offset(8)))
    return spots


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("block_size", 0, "block_size 0 is not positive"),
        ("block_size", 48, "does not divide"),
        ("block_size", -32, "not positive"),
        ("scales", 100000, "out of range"),
        ("scales", -3, "out of range"),
        ("scales", 0, "float16 or float32 constant"),
    ],
)
def test_hostile_blockwise_details_are_refused(converted_int4, field, value, message):
    """Untrusted blockwise details (block size, scales tensor index) are refused at load with a
    message naming the tensor, never read out of bounds."""
    pytest.importorskip("ai_edge_litert", reason="the schema module of ai-edge-litert")
    data = bytearray(converted_int4[1].read_bytes())
    spots = _blockwise_fields(bytes(data))
    assert spots
    scales_at, size_at = spots[0]
    struct.pack_into("<i", data, scales_at if field == "scales" else size_at, value)
    with pytest.raises(wick.WickError, match=message):
        wick.load(bytes(data), signature="decode")


def _cli_generate(path, prompt, max_new, *options) -> list[int]:
    """`wick generate` (the C tool next to the loaded library): its new token ids."""
    from wick.cli import _c_tool

    proc = subprocess.run(
        [str(_c_tool()), "generate", str(path), "--tokens", ",".join(map(str, prompt))]
        + ["--max-new", str(max_new), *map(str, options)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("tokens: ") and any(ln.startswith("decode: ") for ln in lines)
    return [int(t) for t in lines[0][len("tokens: ") :].split(",")]


@pytest.mark.parametrize("prompt", PROMPTS[:2] + PROMPTS[3:], ids=["11", "4", "3"])
def test_cli_generate_greedy_equals_transformers(converted, prompt):
    """The C generation API through `wick generate`: greedy tokens identical to transformers'
    generate (prefill chunks, the overlapping chunk and decode-only prompts)."""
    model, _, path = converted
    assert _cli_generate(path, prompt, STEPS) == _hf_greedy(model, prompt, STEPS)


def _hf_greedy_penalized(model, prompt: list[int], steps: int, penalty: float) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]),
            max_new_tokens=steps,
            do_sample=False,
            eos_token_id=None,
            repetition_penalty=penalty,
        )
    return out[0, len(prompt) :].tolist()


@pytest.mark.parametrize("penalty", [1.3, 2.0, 0.8])
@pytest.mark.parametrize("prompt", PROMPTS[:2] + PROMPTS[3:], ids=["11", "4", "3"])
def test_repetition_penalty_greedy_equals_transformers(converted, prompt, penalty):
    """Greedy decoding after the repetition penalty (on the prompt's and the new tokens' ids):
    the same tokens as transformers' generate(repetition_penalty=, do_sample=False), in Python
    (LLM.generate) and in C (`wick generate --repetition-penalty`)."""
    model, llm, path = converted
    want = _hf_greedy_penalized(model, prompt, STEPS, penalty)
    assert llm.generate(prompt, STEPS, repetition_penalty=penalty) == want
    assert _cli_generate(path, prompt, STEPS, "--repetition-penalty", penalty) == want


def test_repetition_penalty_changes_the_tokens(converted):
    """The comparison above is not vacuous: on these prompts plain greedy decoding repeats
    tokens (of the prompt or its own) and the penalty changes what it picks."""
    model, _, _ = converted
    for prompt in PROMPTS[:2] + PROMPTS[3:]:
        plain = _hf_greedy(model, prompt, STEPS)
        assert len(set(prompt + plain)) < len(prompt) + len(plain)
        assert _hf_greedy_penalized(model, prompt, STEPS, 1.3) != plain


SAMPLING = [
    dict(temperature=0.8, top_k=20, top_p=0.9, seed=7),
    dict(temperature=1.0, seed=3),
    dict(temperature=0.7, top_p=0.5, seed=11),
    dict(temperature=1.5, top_k=5, seed=2**63 + 5),
    dict(temperature=0.9, top_k=40, seed=5, repetition_penalty=1.5),
]


@pytest.mark.parametrize("options", SAMPLING, ids=["k+p", "t", "p", "k", "k+penalty"])
def test_sampling_is_the_same_in_c_and_python(converted, options):
    """Seeded sampling picks the same tokens in `wick generate` (C, wick_sampler) as in
    LLM.generate (Python, wick.llm.Sampler); the same seed gives the same tokens again."""
    _, llm, path = converted
    flags = [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", v)]
    ours = llm.generate(PROMPTS[1], STEPS, **options)
    assert _cli_generate(path, PROMPTS[1], STEPS, *flags) == ours
    assert llm.generate(PROMPTS[1], STEPS, **options) == ours
    if options.get("top_k") != 1:
        other = dict(options, seed=options["seed"] + 1)
        assert llm.generate(PROMPTS[1], STEPS, **other) != ours


def test_sampler_definition():
    """The sampler's limits: temperature 0 and top_k 1 are greedy; top-k keeps to the k most
    likely; a tiny top_p keeps only the most likely; NaN reads as -inf."""
    logits = np.array([0.5, 3.0, 2.9, -1.0, np.nan, 3.0], np.float32)
    assert wick.llm.Sampler()(logits) == 1
    assert all(wick.llm.Sampler(1.0, top_k=1, seed=s)(logits) == 1 for s in range(20))
    assert all(wick.llm.Sampler(5.0, top_p=1e-6, seed=s)(logits) == 1 for s in range(20))
    picks = {wick.llm.Sampler(2.0, top_k=3, seed=s)(logits) for s in range(200)}
    assert picks == {1, 2, 5}
    assert 4 not in {wick.llm.Sampler(100.0, seed=s)(logits) for s in range(200)}
    with pytest.raises(ValueError):
        wick.llm.Sampler(top_k=-1)


def test_repetition_penalty_definition():
    """HuggingFace's rule on the history (the observed ids and every pick): a negative logit is
    multiplied by the penalty, any other divided; bad penalties are refused with the reason."""
    logits = np.array([2.0, 1.9, -0.1, -0.15, 0.0], np.float32)
    pick = wick.llm.Sampler(repetition_penalty=2.0)
    assert pick(logits) == 0  # the history is empty: plain greedy
    assert pick(logits) == 1  # 0 was picked: 2.0 / 2 = 1.0 < 1.9
    assert pick(logits) == 0  # 1.0 > 0.95
    pick.forget()
    pick.observe([0])
    assert pick(logits) == 1
    negative = np.array([-2.0, -1.9, -0.1, -0.15, -0.3], np.float32)
    pick.forget()
    assert pick(negative) == 2
    assert pick(negative) == 3  # -0.1 * 2 = -0.2 < -0.15
    boost = wick.llm.Sampler(repetition_penalty=0.5)  # < 1 favours the history
    boost.observe([1])
    assert boost(logits) == 1  # 1.9 / 0.5 = 3.8
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="repetition_penalty must be a finite number > 0"):
            wick.llm.Sampler(repetition_penalty=bad)


def test_cli_generate_refuses_bad_requests(converted, tmp_path):
    from wick.cli import _c_tool

    _, _, path = converted

    def run(*args):
        return subprocess.run(
            [str(_c_tool()), "generate", *map(str, args)], capture_output=True, text=True
        )

    long_prompt = ",".join(["1"] * (MAX_SEQ_LEN + 1))
    p = run(path, "--tokens", long_prompt)
    assert p.returncode == 2 and "do not fit" in p.stderr, p.stderr
    p = run(path, "--tokens", "1,2,99999")
    assert p.returncode == 2 and "outside the vocabulary" in p.stderr, p.stderr
    p = run(path, "--tokens", "1,x")
    assert p.returncode == 2 and "comma-separated" in p.stderr, p.stderr
    plain = tmp_path / "plain.tflite"
    plain.write_bytes(wick.convert(torch.nn.Linear(4, 2).eval(), (torch.zeros(1, 4),)).tflite_bytes)
    p = run(plain, "--tokens", "1")
    assert p.returncode == 1 and "wick_llm" in p.stderr, p.stderr
    # text on a file converted without a tokenizer
    p = run(path, "--prompt", "hello")
    assert p.returncode == 2 and "has no tokenizer" in p.stderr, p.stderr
    # --bench: the same checks, and its own
    p = run(path, "--tokens", long_prompt, "--bench")
    assert p.returncode == 2 and "do not fit" in p.stderr, p.stderr
    p = run(
        path, "--tokens", "1,2," + "1," * (MAX_SEQ_LEN - 4) + "1", "--max-tokens", "4", "--bench"
    )
    assert p.returncode == 2 and "do not fit" in p.stderr, p.stderr
    p = run(path, "--tokens", "1,2,99999", "--bench")
    assert p.returncode == 2 and "outside the vocabulary" in p.stderr, p.stderr
    p = run(path, "--tokens", "1", "--bench", "--max-tokens", "0")
    assert p.returncode == 2 and "at least 1" in p.stderr, p.stderr
    p = run(path, "--tokens", "1", "--bench", "--runs", "0")
    assert p.returncode == 2 and "--runs" in p.stderr, p.stderr
    for bad in ("0", "-1.5", "nan", "inf", "x", "1.2x"):
        p = run(path, "--tokens", "1", "--repetition-penalty", bad)
        assert p.returncode == 2 and "--repetition-penalty must be" in p.stderr, p.stderr


def test_file_without_tokenizer_and_unknown_tokens_are_refused(converted):
    """The C tokenizer of a file converted without one says so; a prompt token outside the
    vocabulary is refused by LLM.generate before anything runs (the C generator's check is
    test_cli_generate_refuses_bad_requests')."""
    from wick.llm.tokenizer import FileTokenizer

    _, llm, path = converted
    with pytest.raises(wick.WickError, match="has no tokenizer"):
        FileTokenizer(wick.load(path, signature="decode"))
    for bad in ([5, 320], [-1], [2**31 - 1]):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            llm.generate(bad, 4)
    assert llm.generate([5, 319], 4) == _hf_greedy(converted[0], [5, 319], 4)


_BENCH_LINES = {
    "bench": r"(\d+) runs \(medians\) after (\d+) warm-up, threads (-?\d+)",
    "prefill": r"(\d+) tokens in ([\d.]+) ms, ([\d.]+) tok/s \(CPU ([\d.]+) ms, ([\d.]+) tok/s\)",
    "time to first token": r"([\d.]+) ms \(CPU ([\d.]+) ms\)",
    "decode": r"(\d+) tokens in ([\d.]+) ms, ([\d.]+) tok/s, ([\d.]+) ms/token "
    r"\(CPU ([\d.]+) ms, ([\d.]+) tok/s\)",
    "load": r"([\d.]+) ms, create: ([\d.]+) ms",
    "peak rss": r"([\d.]+) MB",
}


def parse_bench(stdout: str) -> dict[str, tuple[float, ...]]:
    """The report of `wick generate --bench`: {key: the numbers of its line}, and "tokens"."""
    import re

    out: dict[str, tuple[float, ...]] = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(": ")
        if key == "tokens":
            out[key] = tuple(int(t) for t in value.split(","))
        elif key in _BENCH_LINES:
            m = re.fullmatch(_BENCH_LINES[key], value)
            assert m, line
            out[key] = tuple(float(g) for g in m.groups())
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_cli_generate_bench(converted, threads):
    """`wick generate --bench`: the tokens of a greedy run (transformers' own: exactly
    --max-tokens of them) and the medians of prefill, time to first token and decode, whose
    token counts, times and speeds agree with each other."""
    from wick.cli import _c_tool

    model, _, path = converted
    prompt, new = PROMPTS[2], 9
    proc = subprocess.run(
        [str(_c_tool()), "generate", str(path), "--tokens", ",".join(map(str, prompt))]
        + ["--max-tokens", str(new), "--bench", "--runs", "3", "--warmup", "1"]
        + ["--threads", str(threads)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    r = parse_bench(proc.stdout)
    assert set(r) == {"tokens", *_BENCH_LINES}, proc.stdout
    assert list(r["tokens"]) == _hf_greedy(model, prompt, new)
    assert r["bench"] == (3, 1, threads)
    n, ms, tps, cpu_ms, cpu_tps = r["prefill"]
    assert n == len(prompt) and ms > 0 and cpu_ms > 0

    def rel(printed_ms):
        # 2 %, plus the rounding of a time printed to 0.01 ms (this tiny model's prefill takes
        # ~0.15 ms: 3 % of it)
        return 0.02 + 0.005 / printed_ms

    assert tps == pytest.approx(n / ms * 1e3, rel=rel(ms))
    assert cpu_tps == pytest.approx(n / cpu_ms * 1e3, rel=rel(cpu_ms))
    first, _ = r["time to first token"]
    assert first >= ms
    n, ms, tps, per_token, cpu_ms, cpu_tps = r["decode"]
    assert n == new - 1 and ms > 0 and cpu_ms > 0
    assert tps == pytest.approx(n / ms * 1e3, rel=rel(ms))
    assert per_token == pytest.approx(ms / n, rel=rel(ms) + 0.0005 / per_token)
    assert r["peak rss"][0] > 1


class _CGenerator:
    """The C generator (include/wick/llm.h: wick_llm) over a file, through ctypes."""

    CANCELLED = 6

    def __init__(self, path):
        import ctypes

        from wick import runtime

        lib = runtime._library()
        P, S, I32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int32)

        class Options(ctypes.Structure):
            _fields_ = [("struct_size", S), ("num_threads", ctypes.c_int)]

        err = ctypes.POINTER(runtime._ErrorInfo)
        for name, args, res in [
            ("wick_llm_create", [P, ctypes.POINTER(Options), err, ctypes.POINTER(P)], ctypes.c_int),
            ("wick_llm_destroy", [P], None),
            ("wick_llm_last_error", [P], ctypes.c_char_p),
            ("wick_llm_vocab_size", [P], S),
            ("wick_llm_position", [P], S),
            ("wick_llm_reset", [P], ctypes.c_int),
            ("wick_llm_append", [P, I32, S], ctypes.c_int),
            ("wick_llm_logits", [P], ctypes.POINTER(ctypes.c_float)),
            ("wick_llm_cancel", [P], None),
        ]:
            getattr(lib, name).argtypes, getattr(lib, name).restype = args, res
        info = runtime._ErrorInfo()
        self._lib, self._model, self._llm = lib, P(), P()
        assert lib.wick_model_load_file(os.fsencode(path), None, info, self._model) == 0
        opts = Options(ctypes.sizeof(Options), 1)
        st = lib.wick_llm_create(self._model, opts, info, self._llm)
        assert st == 0, info.message
        self.vocab = lib.wick_llm_vocab_size(self._llm)
        self._i32 = I32

    def append(self, ids: np.ndarray) -> int:
        ids = np.ascontiguousarray(ids, np.int32)
        return self._lib.wick_llm_append(self._llm, ids.ctypes.data_as(self._i32), len(ids))

    def logits(self) -> np.ndarray:
        return np.ctypeslib.as_array(self._lib.wick_llm_logits(self._llm), (self.vocab,)).copy()

    def position(self) -> int:
        return self._lib.wick_llm_position(self._llm)

    def last_error(self) -> str:
        return self._lib.wick_llm_last_error(self._llm).decode()

    def reset(self) -> None:
        assert self._lib.wick_llm_reset(self._llm) == 0

    def cancel(self) -> None:
        self._lib.wick_llm_cancel(self._llm)

    def close(self) -> None:
        self._lib.wick_llm_destroy(self._llm)
        self._lib.wick_model_destroy(self._model)


def test_cancel_during_a_long_prefill_stops_cleanly(converted):
    """wick_llm_cancel from another thread while a prompt that fills the cache is written (8
    prefill_8 chunks): the append returns WICK_ERR_CANCELLED and the sequence ends at the last
    chunk that completed; appending the rest continues it to the logits of an uncancelled run,
    bit for bit (a cancel that raced the end of the cancelled append and reached an idle
    interpreter does not stop the next append)."""
    import threading

    _, _, path = converted
    prompt = np.array([(7 * i + 3) % 320 for i in range(MAX_SEQ_LEN)], np.int32)
    gen = _CGenerator(path)
    try:
        assert gen.append(prompt) == 0, gen.last_error()
        want = gen.logits()
        cancelled = 0
        # A cancel lands only while an append runs, and appends are short (a busy machine can
        # keep the canceller off the CPU for all of one): try until five have landed.
        for _ in range(500):
            if cancelled == 5:
                break
            gen.reset()
            stop, started = threading.Event(), threading.Event()

            def keep_cancelling(started, stop):
                started.set()
                while not stop.is_set():
                    gen.cancel()

            canceller = threading.Thread(target=keep_cancelling, args=(started, stop))
            canceller.start()
            started.wait()
            st = gen.append(prompt)
            stop.set()
            canceller.join()
            if st == 0:
                continue  # every chunk ran before a cancel landed: again
            assert st == _CGenerator.CANCELLED and gen.last_error() == "cancelled", st
            cancelled += 1
            pos = gen.position()
            assert pos < len(prompt) and pos % 8 == 0, pos
            assert gen.append(prompt[pos:]) == 0, gen.last_error()
            assert gen.position() == len(prompt)
            assert gen.logits().tobytes() == want.tobytes()
        assert cancelled > 0, "no append of 500 was cancelled"
    finally:
        gen.close()


def _byte_level_bpe(vocab_size: int, digits: bool = False):
    """A small GPT-2-style byte-level BPE tokenizer trained here (HuggingFace tokenizers),
    with ChatML's added tokens; optionally splitting digits one by one (SmolLM2's own)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        if digits
        else byte_level
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        show_progress=False,
    )
    corpus = [
        "The quick brown fox jumps over the lazy dog. What is the capital of France? Paris.",
        "I'm sure you've heard it's 12345 dollars; they'll say we'd done it.  Tabs\tand\n\n",
        "café naïve résumé — “quotes” … 日本語 😀",
    ] * 20
    tok.train_from_iterator(corpus, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok)


TEXTS = [
    "What is the capital of France?",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "I'm sure you've heard they'll say it's 12345 dollars!! ABC'S don'T",
    "  leading  spaces   and\ttabs\n\n\nnewlines  ",
    "café naïve résumé — “quotes” … 日本語のテキスト 😀 ½ ²\u00a0nbsp\u2003emsp",
    "def f(x):\n    return x**2  # 3.14159 and 1,000,000\n",
    "",
    " ",
    "a\n\tb",
]


@pytest.fixture(scope="module")
def converted_with_tokenizer(converted, tmp_path_factory):
    """The tiny Llama with a byte-level BPE tokenizer of its vocabulary size in the file."""
    model = converted[0]
    tok = _byte_level_bpe(model.config.vocab_size)
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL, tokenizer=tok)
    path = tmp_path_factory.mktemp("llmtok") / "llama_tok.tflite"
    llm.export(path)
    return tok, path


@pytest.mark.parametrize("digits", [False, True], ids=["gpt2", "digits-one-by-one"])
@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="with libasan preloaded (make asan) this process aborts without a report once "
    "HuggingFace's native tokenizer is trained; wick's tokenizer itself runs under ASan in test_llm.c",
)
def test_tokenizer_in_the_file_matches_huggingface(converted, tmp_path, digits):
    """The tokenizer packed in the file, run by the C runtime, gives HuggingFace's ids for
    ASCII, Unicode, whitespace runs, contractions, digits and added tokens, and decodes them
    back to the text."""
    tok = _byte_level_bpe(converted[0].config.vocab_size, digits)
    llm = wick.llm.convert(converted[0], max_seq_len=16, prefill_lengths=(4,), tokenizer=tok)
    llm.export(tmp_path / "t.tflite")
    loaded = wick.llm.load(tmp_path / "t.tflite")
    assert loaded.meta["tokenizer"] == "byte_level_bpe"
    ours = loaded.text_tokenizer()
    for text in TEXTS:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert ours.encode(text) == ids, text
        assert ours.decode(ids, skip_special_tokens=False) == text


def test_cli_generate_prompt_text(converted, converted_with_tokenizer):
    """`wick generate --prompt TEXT`: the file's tokenizer encodes the prompt as HuggingFace
    does, the new tokens are transformers' greedy ones, and the streamed text is their text."""
    model, _, _ = converted
    tok, path = converted_with_tokenizer
    text = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    new, streamed = _c_generate(path, text, ids, "--max-new")
    assert new == _hf_greedy(model, ids, STEPS)
    assert streamed.decode(errors="replace") == tok.decode(new, skip_special_tokens=True)
    # and the Python side takes text with the file's tokenizer alone
    assert wick.llm.load(path).generate(text, STEPS) == tok.decode(new, skip_special_tokens=True)


@pytest.fixture(scope="module")
def converted_sentencepiece(tmp_path_factory):
    """A random-weight Llama over the vocabulary of a SentencePiece-style tokenizer (Llama 2's
    layout, normalizer and decoder: test_tokenizer.py builds it offline), packed in the
    file."""
    from tests.python.llm.test_tokenizer import sentencepiece_tokenizer

    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=sentencepiece_tokenizer("llama"))
    torch.manual_seed(3)
    model = transformers.LlamaForCausalLM(_config(vocab_size=len(tok))).eval()
    llm = wick.llm.convert(model, max_seq_len=MAX_SEQ_LEN, prefill_lengths=PREFILL, tokenizer=tok)
    path = tmp_path_factory.mktemp("llmsp") / "llama_sp.tflite"
    llm.export(path)
    return model, tok, llm, path


def test_sentencepiece_tokenizer_end_to_end(converted_sentencepiece):
    """A Llama with a SentencePiece-style tokenizer in the file: `wick generate --prompt`
    encodes the prompt as HuggingFace does (metaspace, byte fallback for the characters
    outside the pieces, <s> matched literally), its greedy tokens are transformers' and the
    streamed text is HuggingFace's decoding of them; LLM.generate on the loaded file (the C
    tokenizer through Python) gives the same text."""
    model, tok, llm, path = converted_sentencepiece
    assert llm.meta["tokenizer"] == "sentencepiece_bpe"
    text = "<s>[INST] What is the capital of France?  日本語 😀 [/INST]"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert any(tok.convert_ids_to_tokens(i).startswith("<0x") for i in ids)
    new, streamed = _c_generate(path, text, ids, "--max-tokens")
    assert new == _hf_greedy(model, ids, STEPS)
    want = tok.decode(new, skip_special_tokens=True)
    assert streamed.decode() == want
    loaded = wick.llm.load(path)
    assert loaded.text_tokenizer().encode(text) == ids
    assert loaded.generate(text, STEPS) == want


def test_hostile_tokenizer_entries_are_refused(converted_with_tokenizer):
    """A damaged wick_tokenizer entry (counts, lengths, ids out of range) is refused with a
    message, never read out of bounds."""
    _, path = converted_with_tokenizer
    from wick.llm.tokenizer import FileTokenizer

    data = path.read_bytes()
    at = data.find(b"WTOK")
    assert at > 0
    # the version (after the magic), the vocabulary size, the first token's length
    for offset, value in [(4, 0), (4, 7), (12, 2**31), (16, 2**30)]:
        bad = bytearray(data)
        struct.pack_into("<I", bad, at + offset, value)
        runtime = wick.load(bytes(bad), signature="decode")
        with pytest.raises(wick.WickError, match="wick_tokenizer"):
            FileTokenizer(runtime)
