"""The tokenizer inside the file: a HuggingFace byte-level BPE tokenizer (GPT-2 style:
SmolLM2, Llama 3, Qwen2) packed into the ``wick_tokenizer`` metadata entry, so that the C
runtime (include/wick/llm.h: wick_tokenizer, ``wick generate --prompt``) encodes and decodes
text with the file alone. ``wick.llm.convert(..., tokenizer=tok)`` writes it when ``tok`` is
such a tokenizer; other tokenizers (SentencePiece-style) are not packed yet.

Layout (little-endian; every count and length is checked by the C reader):

    "WTOK"  u32 version (1)  u32 flags (bit 0: digits are split one by one)
    u32 V, then V tokens (id order): u32 byte length, the token's string (UTF-8: byte-level
        characters for vocabulary tokens, the literal text for added tokens)
    u32 M, then M merges (rank order): u32 left id, u32 right id, u32 merged id
    u32 S, then S ids of added tokens, matched literally in the text before pre-tokenization
"""

from __future__ import annotations

import ctypes
import json
import struct
from collections.abc import Sequence

METADATA_NAME = "wick_tokenizer"
MAGIC = b"WTOK"
VERSION = 1
DIGITS_ONE_BY_ONE = 1


def _byte_level(pre) -> tuple[bool, bool]:
    """(is a byte-level pre-tokenizer with the GPT-2 regex, splits digits one by one)."""
    if pre is None:
        return False, False
    if pre.get("type") == "ByteLevel":
        return bool(pre.get("use_regex", True)) and not pre.get("add_prefix_space"), False
    if pre.get("type") == "Sequence":
        parts = pre.get("pretokenizers", [])
        kinds = [p.get("type") for p in parts]
        if kinds == ["Digits", "ByteLevel"] and parts[0].get("individual_digits"):
            ok, _ = _byte_level(parts[1])
            return ok, True
    return False, False


def pack(tokenizer) -> tuple[bytes | None, str]:
    """The packed tokenizer (see the module docstring), or (None, why it cannot be packed)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None, "not a HuggingFace fast tokenizer (no backend_tokenizer)"
    spec = json.loads(backend.to_str())
    model = spec.get("model") or {}
    if model.get("type") != "BPE":
        return None, f"a {model.get('type')} model, not BPE"
    if spec.get("normalizer") is not None:
        return None, "a normalizer (wick packs byte-level BPE without one)"
    ok, digits = _byte_level(spec.get("pre_tokenizer"))
    if not ok:
        return None, "not a byte-level pre-tokenizer with the GPT-2 split"
    if (
        model.get("byte_fallback")
        or model.get("continuing_subword_prefix")
        or model.get("end_of_word_suffix")
    ):
        return None, "BPE options wick does not implement (byte fallback, affixes)"
    vocab: dict[str, int] = dict(model["vocab"])
    added = spec.get("added_tokens") or []
    for a in added:
        vocab[a["content"]] = int(a["id"])
    size = max(vocab.values()) + 1
    strings = [b""] * size
    for s, i in vocab.items():
        strings[i] = s.encode("utf-8")
    merges = []
    for m in model.get("merges", []):
        left, right = m.split(" ", 1) if isinstance(m, str) else m
        merged = vocab.get(left + right)
        if left in vocab and right in vocab and merged is not None:
            merges.append((vocab[left], vocab[right], merged))
    out = [MAGIC, struct.pack("<II", VERSION, DIGITS_ONE_BY_ONE if digits else 0)]
    out.append(struct.pack("<I", size))
    for s in strings:
        out += [struct.pack("<I", len(s)), s]
    out.append(struct.pack("<I", len(merges)))
    out += [struct.pack("<III", *m) for m in merges]
    out.append(struct.pack("<I", len(added)))
    out += [struct.pack("<I", int(a["id"])) for a in added]
    return b"".join(out), ""


class FileTokenizer:
    """The tokenizer packed in a file, run by the C runtime (wick_tokenizer): what
    ``wick generate --prompt`` uses. ``runtime``: a ``wick.load`` result of the file (its
    model stays alive as long as this object)."""

    def __init__(self, runtime):
        from ..runtime import WickError, _ErrorInfo

        self._lib = runtime._lib
        self._owner = runtime._owner  # keeps the model (and the entry's bytes) alive
        err = _ErrorInfo()
        handle = ctypes.c_void_p()
        st = self._lib.wick_tokenizer_create(runtime._model, err, ctypes.byref(handle))
        if st:
            raise WickError(st, err.message.decode(errors="replace"))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.wick_tokenizer_destroy(self._handle)
            self._handle = None

    @property
    def vocab_size(self) -> int:
        return int(self._lib.wick_tokenizer_vocab_size(self._handle))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (added tokens such as <|im_start|> matched literally)."""
        raw = text.encode("utf-8")
        count = ctypes.c_size_t()
        self._lib.wick_tokenizer_encode(self._handle, raw, len(raw), None, 0, count)
        ids = (ctypes.c_int32 * max(count.value, 1))()
        self._lib.wick_tokenizer_encode(self._handle, raw, len(raw), ids, count.value, count)
        return list(ids[: count.value])

    def token_bytes(self, token: int) -> bytes:
        n = self._lib.wick_tokenizer_decode(self._handle, int(token), None, 0)
        buf = ctypes.create_string_buffer(max(n, 1))
        self._lib.wick_tokenizer_decode(self._handle, int(token), buf, n)
        return buf.raw[:n]

    def is_added(self, token: int) -> bool:
        return bool(self._lib.wick_tokenizer_is_added(self._handle, int(token)))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of ``ids`` (added tokens left out with ``skip_special_tokens``)."""
        data = b"".join(
            self.token_bytes(t) for t in ids if not (skip_special_tokens and self.is_added(t))
        )
        return data.decode("utf-8", errors="replace")
