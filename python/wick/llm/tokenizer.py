"""The tokenizer inside the file: a HuggingFace ``tokenizers`` BPE tokenizer packed into the
``wick_tokenizer`` metadata entry, so that the C runtime (include/wick/llm.h: wick_tokenizer,
``wick generate --prompt``) encodes and decodes text with the file alone, as ``tokenizers``
does. ``wick.llm.convert(..., tokenizer=tok)`` writes it when ``tok`` (a fast tokenizer of
transformers, or a ``tokenizers.Tokenizer``) is one of:

* byte-level BPE with GPT-2's split (SmolLM2, GPT-2): pre-tokenizer
  ``ByteLevel`` (GPT-2's regex, no prefix space), optionally after ``Digits(individual_digits)``;
* byte-level BPE with Llama 3's or Qwen2's split: ``Sequence[Split(Regex(LLAMA3_PATTERN or
  QWEN2_PATTERN), "isolated"), ByteLevel(use_regex=False)]`` as their tokenizer.json has it
  (the pattern must be one of the two strings exactly; the C runtime matches it by hand, its
  letter, number and space classes exact for all of Unicode as tokenizers' regex engine has
  them), with or without an ``NFC`` normalizer before it (Qwen2's, Qwen2.5's and Qwen3's own
  tokenizer.json: ``transformers.Qwen2Tokenizer`` packs as it is). The C runtime's NFC is
  tokenizers' NFC exactly: the tables of Unicode 9.0, which tokenizers' normalization crate
  (unicode-normalization-alignments 0.1.12) has, so marks assigned after Unicode 9 stay
  unordered there and in wick (src/llm/unicode_nfc.h, scripts/gen_unicode_nfc.py);
  likewise ``NFD``, ``NFKD`` and ``NFKC`` (Unicode 9.0 too: src/llm/unicode_compat.h,
  scripts/gen_unicode_compat.py) and ``Lowercase`` (Rust's per-character lowercase of
  Unicode 17.0), alone or in a ``Sequence`` with the normalizers above, for any of the
  models here;
* SentencePiece-style BPE (Llama 2, TinyLlama, Mistral, Phi-3, Gemma): no byte-level mapping,
  ``"\u2581"`` for spaces through a normalizer (``Prepend`` / ``Replace``, e.g. Llama 2's
  ``Sequence[Prepend("\u2581"), Replace(" ", "\u2581")]``, Gemma's ``Replace``) or a
  ``Metaspace`` pre-tokenizer (any prepend scheme, split or not), or a ``Split`` on a string
  (Gemma's ``Split(" ", "merged_with_previous")``, any behavior), byte fallback to ``<0xNN>``
  tokens, an unknown token (fused or not);

with decoders among ``ByteLevel``, ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``,
``Metaspace`` (or none), and added tokens with their ``normalized``, ``lstrip``, ``rstrip`` and
``special`` flags. (A SentencePiece model given by scores, a tokenizer.model or a GGUF file,
reaches wick through transformers, which derives its merges from the scores.) Other
tokenizers (Unigram or WordPiece models; a Split on any other regex, or on Llama 3's / Qwen2's
not isolated or not before a ByteLevel without its own split; other normalizers (Strip,
StripAccents, BertNormalizer, a Replace on a regex, ...); BPE dropout or subword affixes;
``single_word`` added tokens) are not packed: :func:`pack` says why, and the file then takes
token ids.

Layout (little-endian; every count, length and id is checked by the C reader; a string is a
u32 byte length and its bytes; a record is u32 kind, string a, string b, u32 x, u32 y):

    "WTOK"  u32 version (2)  u32 flags (0)
    u32 V, then V strings (id order): the model's vocabulary (byte-level symbols for
        byte-level tokenizers), empty where the model has no token of that id
    u32 M, then M merges (rank order): u32 left id, u32 right id, u32 merged id
    u32 S, then S added tokens: u32 id, u32 flags (1 normalized, 2 lstrip, 4 rstrip,
        8 special), string: the text matched (a normalized token's normalized content)
    u32 N, then N normalizer records: 1 Prepend(a), 2 Replace(a -> b), 3 NFC, 4 NFD,
        5 NFKD, 6 NFKC, 7 Lowercase
    the pre-tokenizer record: 0 none, 1 byte-level (x: 1 = digits one by one),
        2 Metaspace (a: the replacement, x: prepend scheme 0 never / 1 always / 2 first,
        y: split), 3 Split (a: the string, x: behavior 0 removed / 1 isolated / 2 merged
        with previous / 3 merged with next / 4 contiguous), 4 a regex Split then ByteLevel
        (a: the pattern, x: 1 Llama 3's, 2 Qwen2's)
    u32 model flags (1 byte fallback, 2 fuse unknown, 4 ignore merges), u32 unknown id + 1
    u32 has a decoder, u32 D, then D decoder records: 1 ByteLevel, 2 Replace(a -> b),
        3 ByteFallback, 4 Fuse, 5 Strip(a, x start, y stop), 6 Metaspace(a, x scheme)

(Version 1, written before SentencePiece-style tokenizers, is byte-level only: the added
tokens' strings in the vocabulary, then their ids, nothing after; the C reader takes both.
Pre-tokenizer kind 4 and normalizer kinds 3-7 came later without a new version: files without
them read as before, and an older runtime refuses a file with them as "an unknown
pre-tokenizer" / "an unknown normalizer step".)
"""

from __future__ import annotations

import ctypes
import json
import struct
from collections.abc import Sequence

METADATA_NAME = "wick_tokenizer"
MAGIC = b"WTOK"
VERSION = 2
DIGITS_ONE_BY_ONE = 1
NORM_PREPEND, NORM_REPLACE, NORM_NFC, NORM_NFD, NORM_NFKD, NORM_NFKC, NORM_LOWERCASE = range(1, 8)
_FORMS = {
    "NFC": NORM_NFC,
    "NFD": NORM_NFD,
    "NFKD": NORM_NFKD,
    "NFKC": NORM_NFKC,
    "Lowercase": NORM_LOWERCASE,
}
PRE_NONE, PRE_BYTE_LEVEL, PRE_METASPACE, PRE_SPLIT, PRE_REGEX_BYTE_LEVEL = 0, 1, 2, 3, 4
# the Split regexes wick matches (by hand, src/llm/tokenizer.c regex_piece_end): the pattern
# string exactly as tokenizer.json has it -> the record's x
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
REGEX_PATTERNS = {LLAMA3_PATTERN: 1, QWEN2_PATTERN: 2}
SPLIT_BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
SCHEMES = {"never": 0, "always": 1, "first": 2}
MODEL_BYTE_FALLBACK, MODEL_FUSE_UNK, MODEL_IGNORE_MERGES = 1, 2, 4
DEC_BYTE_LEVEL, DEC_REPLACE, DEC_BYTE_FALLBACK, DEC_FUSE, DEC_STRIP, DEC_METASPACE = range(1, 7)
ADDED_NORMALIZED, ADDED_LSTRIP, ADDED_RSTRIP, ADDED_SPECIAL = 1, 2, 4, 8
SKIP_SPECIAL, CONTINUATION = 1, 2  # wick_tokenizer_decode_text's flags (include/wick/llm.h)
# what LLM.meta["tokenizer"] says of a packed tokenizer
KIND_BYTE_LEVEL, KIND_SENTENCEPIECE = "byte_level_bpe", "sentencepiece_bpe"


class _NotPacked(Exception):
    """Why a tokenizer is not packed."""


def _string(pattern) -> str:
    """The string of a Replace or Split pattern ({"String": s}); a regex is refused."""
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        return pattern["String"]
    raise _NotPacked(f"a regex pattern ({pattern}): wick matches strings only")


def _scheme(spec) -> int:
    """A Metaspace's prepend scheme (older files: add_prefix_space)."""
    if "prepend_scheme" in spec:
        return SCHEMES[spec["prepend_scheme"]]
    return SCHEMES["always" if spec.get("add_prefix_space", True) else "never"]


def _record(kind, a="", b="", x=0, y=0) -> bytes:
    a, b = a.encode(), b.encode()
    return (
        struct.pack("<II", kind, len(a))
        + a
        + struct.pack("<I", len(b))
        + b
        + struct.pack("<II", x, y)
    )


def _normalizer(spec) -> list[bytes]:
    if spec is None:
        return []
    kind = spec.get("type")
    if kind == "Sequence":
        return [r for part in spec.get("normalizers", []) for r in _normalizer(part)]
    if kind == "Prepend":
        return [_record(NORM_PREPEND, spec["prepend"])]
    if kind == "Replace":
        return [_record(NORM_REPLACE, _string(spec["pattern"]), spec["content"])]
    if kind in _FORMS:
        return [_record(_FORMS[kind])]
    raise _NotPacked(
        f"a {kind} normalizer (wick implements Prepend, Replace, NFC, NFD, NFKD, NFKC and "
        "Lowercase)"
    )


def _pre_tokenizer(spec) -> tuple[bytes, bool]:
    """(the record, whether byte-level)."""
    if spec is None:
        return _record(PRE_NONE), False
    kind = spec.get("type")
    if kind == "ByteLevel":
        if not spec.get("use_regex", True) or spec.get("add_prefix_space"):
            raise _NotPacked(
                "a ByteLevel pre-tokenizer without GPT-2's split or with a prefix space"
            )
        return _record(PRE_BYTE_LEVEL), True
    if kind == "Metaspace":
        replacement = spec.get("replacement", "\u2581")
        return _record(
            PRE_METASPACE, replacement, x=_scheme(spec), y=int(spec.get("split", True))
        ), False
    if kind == "Split":
        if spec.get("invert"):
            raise _NotPacked("an inverted Split pre-tokenizer")
        how = spec.get("behavior")
        if how not in SPLIT_BEHAVIORS:
            raise _NotPacked(f"a Split pre-tokenizer with behavior {how}")
        pattern = _string(spec["pattern"])
        if not pattern:
            raise _NotPacked("a Split pre-tokenizer on the empty string")
        return _record(PRE_SPLIT, pattern, x=SPLIT_BEHAVIORS.index(how)), False
    if kind == "Sequence":
        parts = spec.get("pretokenizers", [])
        if len(parts) == 1:
            return _pre_tokenizer(parts[0])
        if [p.get("type") for p in parts] == ["Split", "ByteLevel"]:
            return _regex_byte_level(*parts)
        if [p.get("type") for p in parts] == ["Digits", "ByteLevel"] and parts[0].get(
            "individual_digits"
        ):
            _pre_tokenizer(parts[1])  # (its checks)
            return _record(PRE_BYTE_LEVEL, x=DIGITS_ONE_BY_ONE), True
    raise _NotPacked(
        f"a {kind} pre-tokenizer (wick implements ByteLevel with GPT-2's split, Digits + "
        "ByteLevel, Split on Llama 3's or Qwen2's regex + ByteLevel, Metaspace, and Split on a "
        "string)"
    )


def _regex_byte_level(split, byte_level) -> tuple[bytes, bool]:
    """Llama 3's and Qwen2's pre-tokenizer: a Split on their regex (behavior Isolated), then
    ByteLevel without its own split and without a prefix space."""
    pattern = split.get("pattern") or {}
    regex = pattern.get("Regex") if isinstance(pattern, dict) else None
    if regex is None:
        raise _NotPacked(
            "a Split on a string before ByteLevel (wick implements Llama 3's and "
            "Qwen2's regex there)"
        )
    if regex not in REGEX_PATTERNS:
        raise _NotPacked(
            f"a Split on the regex {regex!r}: wick matches Llama 3's and Qwen2's patterns only"
        )
    if split.get("invert") or split.get("behavior") != "Isolated":
        raise _NotPacked("a regex Split that is inverted or not Isolated")
    if byte_level.get("use_regex", True) or byte_level.get("add_prefix_space"):
        raise _NotPacked("a ByteLevel after a regex Split with its own split or a prefix space")
    return _record(PRE_REGEX_BYTE_LEVEL, regex, x=REGEX_PATTERNS[regex]), True


def _decoder(spec) -> list[bytes]:
    kind = spec.get("type")
    if kind == "Sequence":
        return [r for part in spec.get("decoders", []) for r in _decoder(part)]
    if kind == "ByteLevel":
        return [_record(DEC_BYTE_LEVEL)]
    if kind == "Replace":
        return [_record(DEC_REPLACE, _string(spec["pattern"]), spec["content"])]
    if kind == "ByteFallback":
        return [_record(DEC_BYTE_FALLBACK)]
    if kind == "Fuse":
        return [_record(DEC_FUSE)]
    if kind == "Strip":
        return [_record(DEC_STRIP, spec["content"], x=spec["start"], y=spec["stop"])]
    if kind == "Metaspace":
        return [_record(DEC_METASPACE, spec.get("replacement", "\u2581"), x=_scheme(spec))]
    raise _NotPacked(f"a {kind} decoder")


def _backend(tokenizer):
    """The ``tokenizers.Tokenizer`` behind a transformers tokenizer (or the thing itself)."""
    if hasattr(tokenizer, "to_str") and hasattr(tokenizer, "encode_batch"):
        return tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise _NotPacked("not a HuggingFace fast tokenizer (no backend_tokenizer)")
    return backend


def pack(tokenizer) -> tuple[bytes | None, str]:
    """(the packed tokenizer (see the module docstring), its kind: KIND_BYTE_LEVEL or
    KIND_SENTENCEPIECE), or (None, why it cannot be packed)."""
    try:
        return _pack(_backend(tokenizer))
    except _NotPacked as e:
        return None, str(e)


def _pack(backend) -> tuple[bytes, str]:
    spec = json.loads(backend.to_str())
    model = spec.get("model") or {}
    if model.get("type") != "BPE":
        raise _NotPacked(f"a {model.get('type')} model, not BPE")
    if (
        model.get("dropout")
        or model.get("continuing_subword_prefix")
        or model.get("end_of_word_suffix")
    ):
        raise _NotPacked("BPE options wick does not implement (dropout, subword affixes)")
    normalizer = _normalizer(spec.get("normalizer"))
    pre, byte_level = _pre_tokenizer(spec.get("pre_tokenizer"))
    decoder = spec.get("decoder")
    decoder_steps = [] if decoder is None else _decoder(decoder)
    vocab: dict[str, int] = dict(model["vocab"])
    added = spec.get("added_tokens") or []
    if any(a.get("single_word") for a in added):
        raise _NotPacked("an added token with single_word (wick does not implement it)")
    size = max([*vocab.values(), *(int(a["id"]) for a in added)]) + 1
    strings = [b""] * size
    for s, i in vocab.items():
        strings[i] = s.encode("utf-8")
    merges = []
    for m in model.get("merges", []):
        left, right = m.split(" ", 1) if isinstance(m, str) else m
        merged = vocab.get(left + right)
        if left in vocab and right in vocab and merged is not None:
            merges.append((vocab[left], vocab[right], merged))
    out = [MAGIC, struct.pack("<III", VERSION, 0, size)]
    for s in strings:
        out += [struct.pack("<I", len(s)), s]
    out.append(struct.pack("<I", len(merges)))
    out += [struct.pack("<III", *m) for m in merges]
    out.append(struct.pack("<I", len(added)))
    for a in added:
        flags = (
            ADDED_NORMALIZED * bool(a.get("normalized"))
            | ADDED_LSTRIP * bool(a.get("lstrip"))
            | ADDED_RSTRIP * bool(a.get("rstrip"))
            | ADDED_SPECIAL * bool(a.get("special"))
        )
        text = a["content"]
        if a.get("normalized") and backend.normalizer is not None:
            text = backend.normalizer.normalize_str(text)  # matched in the normalized text
        raw = text.encode("utf-8")
        out.append(struct.pack("<III", int(a["id"]), flags, len(raw)) + raw)
    out.append(struct.pack("<I", len(normalizer)))
    out += normalizer
    out.append(pre)
    unk = model.get("unk_token")
    flags = (
        MODEL_BYTE_FALLBACK * bool(model.get("byte_fallback"))
        | MODEL_FUSE_UNK * bool(model.get("fuse_unk"))
        | MODEL_IGNORE_MERGES * bool(model.get("ignore_merges"))
    )
    out.append(struct.pack("<II", flags, vocab[unk] + 1 if unk in vocab else 0))
    out.append(struct.pack("<II", decoder is not None, len(decoder_steps)))
    out += decoder_steps
    return b"".join(out), KIND_BYTE_LEVEL if byte_level else KIND_SENTENCEPIECE


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
        st = self._lib.wick_tokenizer_encode(self._handle, raw, len(raw), None, 0, count)
        ids = (ctypes.c_int32 * max(count.value, 1))()
        if st == 0:
            st = self._lib.wick_tokenizer_encode(
                self._handle, raw, len(raw), ids, count.value, count
            )
        if st:
            raise MemoryError("wick_tokenizer_encode: out of memory")
        return list(ids[: count.value])

    def token_bytes(self, token: int) -> bytes:
        n = self._lib.wick_tokenizer_decode(self._handle, int(token), None, 0)
        buf = ctypes.create_string_buffer(max(n, 1))
        self._lib.wick_tokenizer_decode(self._handle, int(token), buf, n)
        return buf.raw[:n]

    def is_added(self, token: int) -> bool:
        return bool(self._lib.wick_tokenizer_is_added(self._handle, int(token)))

    def is_special(self, token: int) -> bool:
        return bool(self._lib.wick_tokenizer_is_special(self._handle, int(token)))

    def is_byte(self, token: int) -> bool:
        """Whether the decoder turns ``token`` into one byte of a run (<0xNN>, ByteFallback)."""
        return bool(self._lib.wick_tokenizer_is_byte(self._handle, int(token)))

    def decode(
        self, ids: Sequence[int], skip_special_tokens: bool = True, *, continuation: bool = False
    ) -> str:
        """The text of ``ids``, as HuggingFace's ``decode(ids, skip_special_tokens)``
        (wick_tokenizer_decode_text; ``continuation``: the ids continue a text decoded before,
        WICK_TOKENIZER_CONTINUATION)."""
        flags = SKIP_SPECIAL * bool(skip_special_tokens) | CONTINUATION * bool(continuation)
        count, size = len(ids), ctypes.c_size_t()
        ids = (ctypes.c_int32 * max(count, 1))(*[int(t) for t in ids])
        st = self._lib.wick_tokenizer_decode_text(self._handle, ids, count, flags, None, 0, size)
        buf = ctypes.create_string_buffer(max(size.value, 1))
        if st == 0:
            st = self._lib.wick_tokenizer_decode_text(
                self._handle, ids, count, flags, buf, size.value, size
            )
        if st:
            raise MemoryError("wick_tokenizer_decode_text: out of memory")
        return buf.raw[: size.value].decode("utf-8")
