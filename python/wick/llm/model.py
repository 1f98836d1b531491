"""A converted LLM: the file, its facts, and generation (greedy or sampled) on wick's runtime.

    llm = wick.llm.convert(hf_model, max_seq_len=512, prefill_lengths=(8, 32))
    ids = llm.generate([1, 2, 3], max_new_tokens=16)       # token ids in, new ids out
    llm.export("model.tflite"); llm = wick.llm.load("model.tflite", tokenizer=tok)
    text = llm.generate("What is...", max_new_tokens=32)    # text in, text out (tokenizer)

The file's "wick_llm" metadata (JSON) holds what generation needs: max_seq_len, the prefill
lengths, vocabulary size, end-of-sequence ids, the cache layout. The signatures run on wick's
C runtime, all interpreters sharing the one set of cache variables
(``wick.load(..., shared_variables=True)``).

Prompt schedule (:func:`plan`): a prompt of m tokens runs as exact chunks (no padding) — the
longest prefill length that fits in what is left, then the next; a remainder shorter than every
prefill length runs as the shortest prefill length that covers it, ending at the prompt's last
token and overlapping the chunk before (it writes the same tokens' keys and values at the same
positions again), or as single decode steps when the whole prompt is shorter than that. The
last chunk's logits are the prompt's last token's.

Next: conversion.py (makes the file), state.py (the cache variables).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections.abc import Callable, Sequence

import numpy as np

METADATA_NAME = "wick_llm"


def plan(num_tokens: int, prefill_lengths: Sequence[int]) -> list[tuple[int, int]]:
    """(start position, length) of each chunk of a ``num_tokens`` prompt (see the module
    docstring); length 1 is the decode signature."""
    lengths = sorted(prefill_lengths, reverse=True)
    chunks, pos = [], 0
    for n in lengths:
        while num_tokens - pos >= n:
            chunks.append((pos, n))
            pos += n
    left = num_tokens - pos
    if left:
        cover = [n for n in lengths if left <= n <= num_tokens]
        if cover:
            n = min(cover)
            chunks.append((num_tokens - n, n))
        else:
            chunks += [(p, 1) for p in range(pos, num_tokens)]
    return chunks


def greedy(
    step: Callable[[int, np.ndarray, int], np.ndarray],
    prompt: Sequence[int],
    max_new_tokens: int,
    *,
    prefill_lengths: Sequence[int],
    max_seq_len: int,
    stop_ids: Sequence[int] = (),
    sampler: Callable[[np.ndarray], int] | None = None,
    vocab_size: int | None = None,
) -> list[int]:
    """Greedy decoding (or ``sampler(logits) -> token``, e.g. a :class:`Sampler`) over any
    runtime: ``step(n, tokens int32 [1, n], position) -> logits [1, V]`` runs signature
    prefill_<n> (decode for n = 1) from an empty cache onwards. Returns the new tokens
    (stopping after one in ``stop_ids``). A prompt token outside ``[0, vocab_size)`` is
    refused before anything runs."""
    prompt = [int(t) for t in prompt]
    if not prompt:
        raise ValueError("the prompt is empty: give at least one token")
    if vocab_size is not None:
        bad = [(i, t) for i, t in enumerate(prompt) if not 0 <= t < vocab_size]
        if bad:
            raise ValueError(
                f"prompt token {bad[0][0]} is {bad[0][1]}, outside the vocabulary [0, {vocab_size})"
            )
    if len(prompt) + max_new_tokens > max_seq_len:
        raise ValueError(
            f"{len(prompt)} prompt tokens + {max_new_tokens} new tokens do not fit the "
            f"{max_seq_len}-position cache of this model"
        )
    logits = None
    for start, n in plan(len(prompt), prefill_lengths):
        logits = step(n, np.asarray([prompt[start : start + n]], np.int32), start)
    pos = len(prompt)
    out: list[int] = []
    for _ in range(max_new_tokens):
        token = int(np.argmax(logits[0])) if sampler is None else int(sampler(logits[0]))
        out.append(token)
        if token in stop_ids or len(out) == max_new_tokens:
            break
        logits = step(1, np.asarray([[token]], np.int32), pos)
        pos += 1
    return out


def read_metadata(path: str | os.PathLike, name: str = METADATA_NAME) -> bytes | None:
    """The bytes of metadata entry ``name`` of a .tflite file (None when absent), read through
    a memory map (the weights are not read)."""
    from ..graph.tflite_reader import _Tab
    from ..tflite import schema as S

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if len(data) < 8 or data[4:8] != S.FILE_IDENTIFIER:
            raise ValueError(f"{os.fspath(path)} is not a .tflite file")
        root = _Tab(data, struct.unpack_from("<I", data, 0)[0])
        F, FM, FB = S.CORE_FIELDS["Model"], S.CORE_FIELDS["Metadata"], S.CORE_FIELDS["Buffer"]
        for m in root.tables(F["metadata"]):
            if m.string(FM["name"]) != name:
                continue
            buffers = root.tables(F["buffers"])
            b = m.scalar(FM["buffer"], "uint32")
            if b >= len(buffers):
                return None
            span = buffers[b].byte_span(FB["data"])
            if span is None:
                off, size = (
                    buffers[b].scalar(FB["offset"], "uint64"),
                    buffers[b].scalar(FB["size"], "uint64"),
                )
                span = (off, size) if off > 1 else None
            return bytes(data[span[0] : span[0] + span[1]]) if span else None
    return None


class LLM:
    """A converted causal LM (see the module docstring). ``num_threads``: the runtime's threads
    (taking effect at the next call)."""

    def __init__(self, model: bytes | str | os.PathLike, meta: dict, *, tokenizer=None):
        self._source = model
        self.meta = dict(meta)
        self.tokenizer = tokenizer
        self._runtime = None
        self._file_tokenizer = None
        self._num_threads = 1

    # ---- facts -------------------------------------------------------------------------------
    @property
    def max_seq_len(self) -> int:
        return int(self.meta["max_seq_len"])

    @property
    def prefill_lengths(self) -> list[int]:
        return [int(n) for n in self.meta["prefill_lengths"]]

    @property
    def eos_token_ids(self) -> list[int]:
        return [int(e) for e in self.meta.get("eos_token_ids", [])]

    @property
    def signatures(self) -> list[str]:
        return [f"prefill_{n}" for n in self.prefill_lengths] + ["decode"]

    @property
    def tflite_bytes(self) -> bytes:
        if isinstance(self._source, bytes):
            return self._source
        with open(self._source, "rb") as f:
            return f.read()

    @property
    def size(self) -> int:
        if isinstance(self._source, bytes):
            return len(self._source)
        return os.path.getsize(self._source)

    def export(self, path: str | os.PathLike) -> None:
        """Writes the .tflite file (standard TFLite: LiteRT's signature runners run it)."""
        with open(path, "wb") as f:
            f.write(self.tflite_bytes)

    # ---- running -----------------------------------------------------------------------------
    @property
    def num_threads(self) -> int:
        return self._num_threads

    @num_threads.setter
    def num_threads(self, n: int) -> None:
        if n != self._num_threads:
            self._num_threads = int(n)
            self._runtime = None
            self._file_tokenizer = None

    def runtime(self):
        """The wick runtime over the file: one interpreter per signature, one shared cache."""
        if self._runtime is None:
            from .. import runtime

            self._runtime = runtime.load(
                self._source,
                num_threads=self._num_threads,
                signature="decode",
                shared_variables=True,
            )
        return self._runtime

    def reset(self) -> None:
        """Empties the cache (the next call starts a new sequence)."""
        if self._runtime is not None:
            self._runtime.reset_variables()

    def step(self, num_tokens: int, tokens, position: int) -> np.ndarray:
        """Runs prefill_<num_tokens> (decode for 1) on ``tokens`` ``[1, num_tokens]`` written at
        cache positions ``position ...``; returns the last position's logits ``[1, V]``."""
        key = "decode" if num_tokens == 1 else f"prefill_{num_tokens}"
        if key not in self.signatures:
            raise ValueError(f"no signature for {num_tokens} tokens; have {self.signatures}")
        runner = self.runtime().signature(key)
        tokens = np.asarray(tokens, np.int32).reshape(1, num_tokens)
        return runner(tokens=tokens, input_pos=np.asarray([position], np.int32))[0]

    def generate(
        self,
        prompt,
        max_new_tokens: int = 32,
        *,
        stop_at_eos: bool = True,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int = 0,
        repetition_penalty: float = 1.0,
    ):
        """Continuation of ``prompt`` from an empty cache: greedy, or sampled with
        ``temperature`` > 0, ``top_k``, ``top_p`` and ``seed``, after HuggingFace's
        ``repetition_penalty`` (> 0; 1 is off) on the ids of the prompt and of the new tokens
        (sampling.py: the same tokens as the C runtime's wick_sampler and ``wick generate``
        for the same options). Token ids in (a sequence of ints): the new token ids out. Text
        in (needs ``tokenizer``): the new text out."""
        from .sampling import Sampler

        sampler = Sampler(temperature, top_k, top_p, seed, repetition_penalty)
        text = isinstance(prompt, str)
        if text:
            tokenizer = self.text_tokenizer()
            if tokenizer is self.tokenizer:
                ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            else:
                ids = tokenizer.encode(prompt)
        else:
            ids = [int(t) for t in prompt]
        sampler.observe(ids)
        self.reset()
        out = greedy(
            self.step,
            ids,
            max_new_tokens,
            prefill_lengths=self.prefill_lengths,
            max_seq_len=self.max_seq_len,
            stop_ids=self.eos_token_ids if stop_at_eos else (),
            sampler=None if sampler.greedy and not sampler.penalized else sampler,
            vocab_size=self.meta.get("vocab_size"),
        )
        self.reset()
        if text:
            return tokenizer.decode(out, skip_special_tokens=True)
        return out

    def text_tokenizer(self):
        """The tokenizer for text: the one given (HuggingFace), else the one in the file
        (tokenizer.FileTokenizer, run by the C runtime)."""
        if self.tokenizer is not None:
            return self.tokenizer
        if self.meta.get("tokenizer"):  # packed (tokenizer.py): byte-level or SentencePiece BPE
            if self._file_tokenizer is None:
                from .tokenizer import FileTokenizer

                self._file_tokenizer = FileTokenizer(self.runtime())
            return self._file_tokenizer
        raise ValueError(
            "a text prompt needs a tokenizer: the file has none (convert with tokenizer=) — "
            "pass one: wick.llm.load(path, tokenizer=)"
        )

    def __repr__(self) -> str:
        return (
            f"<wick.llm.LLM {self.meta.get('model_type')} {self.meta.get('num_layers')} layers, "
            f"max_seq_len {self.max_seq_len}, signatures {self.signatures}, {self.size} bytes>"
        )


def load(path: str | os.PathLike, *, tokenizer=None) -> LLM:
    """An LLM file written by ``wick.llm.convert(...).export(path)``."""
    raw = read_metadata(path)
    if raw is None:
        raise ValueError(
            f"{os.fspath(path)} has no {METADATA_NAME!r} metadata: not written by wick.llm.convert"
        )
    return LLM(os.fspath(path), json.loads(raw), tokenizer=tokenizer)
