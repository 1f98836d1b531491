"""The tokenizer packed into an LLM file (python/wick/llm/tokenizer.py) and run by the C runtime
(src/llm/tokenizer.c: wick_tokenizer) against HuggingFace ``tokenizers`` itself, on
SentencePiece-style BPE tokenizers built here offline: pieces learned by BPE on a few
paragraphs, then laid out as Llama 2's tokenizer.json lays them out
(``<unk>``, ``<s>``, ``</s>``, the 256 ``<0xNN>`` byte tokens, then the pieces; the merges) and
put behind each style's normalizer, pre-tokenizer and decoder:

* ``llama``: Llama 2 / TinyLlama / Mistral — ``Sequence[Prepend("▁"), Replace(" ", "▁")]``, no
  pre-tokenizer, decoder ``Replace, ByteFallback, Fuse, Strip(" ", 1, 0)``; plus a normalized
  added token with a space in it and an lstrip/rstrip one;
* ``metaspace``: transformers' non-legacy Llama — ``Metaspace(prepend_scheme="first",
  split=False)``;
* ``gemma``: ``Replace(" ", "▁")``, then ``Split(" ", "merged_with_previous")`` (as
  transformers' GemmaConverter writes it), decoder without Strip, Gemma's turn tokens;
* ``split``: ``Metaspace(always, split=True)`` and its decoder, byte tokens for ASCII only
  (other characters outside the pieces become unknown tokens, not fused), ``ignore_merges``.

Each is compared on fixed texts (Unicode, emoji, whitespace runs, added tokens in and around
words, "▁" and "<0x41>" written out) and 300 seeded random ones, encoding and decoding (with and
without the special tokens, and random id sequences, byte tokens that are not UTF-8 included),
through the C API from Python. test_llm.py runs a converted Llama with such a tokenizer end to
end (``wick generate --prompt``).
"""

from __future__ import annotations

import json
import os
import random
import struct
from collections import Counter

import pytest

tokenizers = pytest.importorskip("tokenizers")

import wick  # noqa: E402
from tests.python.llm._bpe import assert_same_as_huggingface, merge_pair  # noqa: E402
from wick.llm.tokenizer import KIND_BYTE_LEVEL, KIND_SENTENCEPIECE, FileTokenizer, pack  # noqa: E402
from wick.tflite.writer import ModelWriter  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog. What is the capital of France? Paris.",
    "I'm sure you've heard it's 12345 dollars; they'll say we'd done it.  Tabs\tand\n\n",
    "café naïve résumé — “quotes” … 日本語 😀 the theory of everything, then there",
] * 20

STYLES = ["llama", "metaspace", "gemma", "split"]

# (as in test_llm.py: with libasan preloaded, a process that trains HuggingFace's tokenizer
# may abort without a report)
trains_huggingface = pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="trains a HuggingFace tokenizer, which may abort with libasan preloaded (make asan); "
    "the SentencePiece-style tests here train none and run there",
)

TEXTS = [
    "Hello world",
    "What is the capital of France?",
    " leading space",
    "  two leading spaces and trailing  ",
    "a  b   c\td\n\ne",
    "café naïve résumé — “quotes” … 日本語のテキスト 😀🦀 ½ ²\u00a0nbsp\u2003emsp",
    "<s>Hi</s> there<s> again",
    "<s> <s>  </s>",
    "▁already▁metaspace ▁ ▁▁",
    "literal <0x41> byte token",
    "<extra>word my token here <|tool|>  tool  <|tool|>end",
    "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
    "ß Ω ǅ \u0301combining e\u0301",
    "",
    " ",
    "\n",
    "theory",
]


def _pieces():
    """Pieces and merges learned on CORPUS's words with "▁" in front (as SentencePiece's are) by
    plain BPE written out here (the most frequent pair first, ties by the pair): no trainer of
    HuggingFace's runs, so that these tests also run with libasan preloaded (`make asan`)."""
    words = Counter("▁" + w for text in CORPUS[:3] for w in text.split())
    split = {w: list(w) for w in words}
    vocab = {c: 0 for w in words for c in w}
    merges = []
    for _ in range(150):
        pairs = Counter()
        for w, n in words.items():
            for pair in zip(split[w], split[w][1:], strict=False):
                pairs[pair] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        vocab[a + b] = 0
        for w, parts in split.items():
            split[w] = merge_pair(parts, a, b)
    return {p: i for i, p in enumerate(vocab)}, merges


def sentencepiece_tokenizer(style: str):
    """A SentencePiece-style BPE tokenizer (``tokenizers.Tokenizer``) of the given style (the
    module docstring)."""
    from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers

    pieces, merges = _pieces()
    vocab = {s: i for i, s in enumerate(["<unk>", "<s>", "</s>"])}
    for b in range(128 if style == "split" else 256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in sorted(pieces, key=pieces.get):
        vocab.setdefault(piece, len(vocab))
    tok = tokenizers.Tokenizer(
        models.BPE(
            vocab,
            merges,
            unk_token="<unk>",
            byte_fallback=True,
            fuse_unk=style != "split",
            ignore_merges=style == "split",
        )
    )
    strip_decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    if style == "llama":
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
        )
        tok.decoder = strip_decoder
    elif style == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
        tok.decoder = strip_decoder
    elif style == "gemma":  # as transformers' GemmaConverter
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
        tok.decoder = decoders.Metaspace(prepend_scheme="always")
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    if style == "llama":
        tok.add_tokens(
            [AddedToken("<extra>", normalized=True), AddedToken("my token", normalized=True)]
        )
        tok.add_special_tokens([AddedToken("<|tool|>", lstrip=True, rstrip=True, normalized=False)])
    if style == "gemma":
        tok.add_special_tokens(["<start_of_turn>", "<end_of_turn>"])
    return tok


def file_tokenizer(packed: bytes) -> FileTokenizer:
    """The C runtime's tokenizer over a minimal .tflite file (one RELU) carrying ``packed``."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x, y = sg.add_tensor("x", [1], "float32"), sg.add_tensor("y", [1], "float32")
    sg.add_operator("RELU", [x], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    w.add_metadata("wick_tokenizer", packed)
    return FileTokenizer(wick.load(w.finish()))


def _random_texts(count: int, seed: int) -> list[str]:
    atoms = list("abcdefghijklmnopqrstuvwxyz ABCTH.,!?'-0123456789\n\t")
    atoms += [
        "  ",
        "   ",
        "é",
        "ü",
        "ß",
        "日",
        "本",
        "語",
        "😀",
        "🦀",
        "\u00a0",
        "\u2003",
        "▁",
        "the",
    ]
    atoms += ["<s>", "</s>", "<unk>", "<0x41>", "<extra>", "my token", "<|tool|>", "<end_of_turn>"]
    rng = random.Random(seed)
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, 30))) for _ in range(count)]


@pytest.fixture(scope="module", params=STYLES)
def style_pair(request):
    hf = sentencepiece_tokenizer(request.param)
    packed, kind = pack(hf)
    assert packed is not None, kind
    assert kind == KIND_SENTENCEPIECE
    return request.param, hf, file_tokenizer(packed)


def test_encode_equals_huggingface(style_pair):
    """The ids of every text are HuggingFace's (encode without added BOS), and decoding them
    gives HuggingFace's text, with and without the special tokens."""
    style, hf, ours = style_pair
    for text in TEXTS + _random_texts(300, seed=STYLES.index(style)):
        assert_same_as_huggingface(hf, ours, text, style)


def test_decode_equals_huggingface(style_pair):
    """Random id sequences (byte tokens whose runs are not UTF-8, special and added tokens,
    pieces) decode to HuggingFace's text; an id out of range is left out."""
    style, hf, ours = style_pair
    rng = random.Random(7)
    size = hf.get_vocab_size()
    for _ in range(300):
        ids = [rng.randrange(size) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.5:  # runs of byte tokens: UTF-8 or not
            ids[rng.randint(0, len(ids)) :] = [3 + b for b in "é日".encode()[rng.randint(0, 2) :]]
        for skip in (False, True):
            assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(
                ids, skip_special_tokens=skip
            ), (style, ids, skip)
    assert ours.decode([5, size + 10, 6]) == hf.decode([5, 6])


def stream(ours: FileTokenizer, ids: list[int]) -> list[str]:
    """The pieces of text `wick generate` streams for ``ids`` (as llm.h advises): the tokens
    since the last piece decoded together, with WICK_TOKENIZER_CONTINUATION once a token that
    is not left out was decoded, held while the last one not left out is a byte token or the
    text ends in U+FFFD (an incomplete character), up to 64 tokens."""
    pieces, window, started = [], [], False
    for i, t in enumerate(ids):
        window.append(t)
        text = ours.decode(window, continuation=started)
        kept = [w for w in window if not ours.is_special(w)]  # (special ones are left out)
        held = text.endswith("\ufffd") or (kept and ours.is_byte(kept[-1]))
        if held and len(window) < 64 and i + 1 < len(ids):
            continue
        pieces.append(text)
        started = started or any(not ours.is_special(w) for w in window)
        window = []
    return pieces


def test_streamed_pieces_add_up_to_the_text(style_pair):
    """Decoding as `wick generate` streams concatenates to the whole text's decoding, for the
    ids of texts and for random ids (runs of byte tokens that are not UTF-8 included)."""
    style, hf, ours = style_pair
    for text in TEXTS + _random_texts(100, seed=11):
        ids = hf.encode(text, add_special_tokens=False).ids
        assert "".join(stream(ours, ids)) == hf.decode(ids), (style, text)
    rng = random.Random(13)
    for _ in range(200):
        ids = [rng.randrange(hf.get_vocab_size()) for _ in range(rng.randint(0, 16))]
        ids[rng.randint(0, len(ids)) : rng.randint(0, len(ids))] = [3 + rng.randrange(256)] * 3
        assert "".join(stream(ours, ids)) == hf.decode(ids), (style, ids)


def test_invalid_utf8_bytes_fall_back_to_byte_tokens():
    """Bytes that are not UTF-8 (which HuggingFace's str cannot hold) are characters of their
    own: their <0xNN> tokens."""
    hf = sentencepiece_tokenizer("gemma")
    ours = file_tokenizer(pack(hf)[0])
    raw = b"ab\xff\xe6\x97c"
    count = __import__("ctypes").c_size_t()
    ids = (__import__("ctypes").c_int32 * 16)()
    assert ours._lib.wick_tokenizer_encode(ours._handle, raw, len(raw), ids, 16, count) == 0
    got = list(ids[: count.value])
    assert got[-4:-1] == [3 + 0xFF, 3 + 0xE6, 3 + 0x97], [hf.id_to_token(i) for i in got]
    assert ours.token_bytes(3 + 0xE6) == b"\xe6"


def test_transformers_fast_tokenizer_is_packed_the_same():
    """A transformers fast tokenizer around the same backend packs to the same bytes; a
    tokenizer wick does not implement is refused with the reason."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import models, normalizers

    hf = sentencepiece_tokenizer("llama")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=hf)
    assert pack(fast) == pack(hf)
    unigram = tokenizers.Tokenizer(models.Unigram([("a", -1.0), ("<unk>", -2.0)], 1))
    assert pack(unigram) == (None, "a Unigram model, not BPE")
    strip = sentencepiece_tokenizer("gemma")
    strip.normalizer = normalizers.StripAccents()
    packed, why = pack(strip)
    assert packed is None and "StripAccents normalizer" in why


@trains_huggingface
def test_byte_level_tokenizers_still_pack_as_byte_level():
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=320,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    packed, kind = pack(tok)
    assert kind == KIND_BYTE_LEVEL
    ours = file_tokenizer(packed)
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ids, text
        assert ours.decode(ids) == tok.decode(ids) == text


def test_damaged_entries_are_refused_or_harmless():
    """A damaged wick_tokenizer entry (version 2: the added tokens' flags and texts, the
    normalizer, pre-tokenizer, model and decoder records) cut short anywhere or with bytes
    changed is refused with a message naming the entry, or, where the damage still parses,
    encodes and decodes (to UTF-8 text) without reading out of bounds (run under ASan by
    `make asan`) or growing without bound (a Replace step's output is capped: out of
    memory)."""
    hf = sentencepiece_tokenizer("llama")
    packed = pack(hf)[0]
    tail = 16  # the added tokens' count: after the header, the vocabulary and the merges
    for _ in range(struct.unpack_from("<I", packed, 12)[0]):
        tail += 4 + struct.unpack_from("<I", packed, tail)[0]
    tail += 4 + 12 * struct.unpack_from("<I", packed, tail)[0]
    assert struct.unpack_from("<I", packed, tail)[0] == len(hf.get_added_tokens_decoder())
    rng = random.Random(5)
    cuts = sorted(
        {len(packed) - 1 - i for i in range(len(packed) - tail)}
        | {rng.randrange(tail) for _ in range(40)}
    )
    damaged = [packed[:cut] for cut in cuts]
    for _ in range(300):
        bad = bytearray(packed)
        at = rng.randrange(tail if rng.random() < 0.7 else 16, len(packed))
        bad[at] = rng.choice([0, 1, 2, 7, 0x7F, 0xFF, bad[at] ^ 0x10])
        damaged.append(bytes(bad))
    refused = 0
    for entry in damaged:
        try:
            ours = file_tokenizer(entry)
        except wick.WickError as e:
            assert "wick_tokenizer" in str(e), e
            refused += 1
            continue
        for text in TEXTS[:8]:
            try:
                ids = ours.encode(text)
                ours.decode(ids + [0, 5, 300, 2], skip_special_tokens=False)
            except MemoryError:
                pass
    assert refused >= len(cuts) - 1


def _version_1(tok) -> bytes:
    """The layout wick wrote before SentencePiece-style tokenizers (version 1: byte-level only,
    the added tokens' text in the vocabulary, then their ids)."""
    spec = json.loads(tok.to_str())
    vocab = dict(spec["model"]["vocab"])
    added = spec["added_tokens"]
    vocab.update({a["content"]: a["id"] for a in added})
    strings = [b""] * (max(vocab.values()) + 1)
    for s, i in vocab.items():
        strings[i] = s.encode()
    out = [b"WTOK", struct.pack("<III", 1, 0, len(strings))]
    out += [struct.pack("<I", len(s)) + s for s in strings]
    merges = [m.split(" ", 1) if isinstance(m, str) else m for m in spec["model"]["merges"]]
    out.append(struct.pack("<I", len(merges)))
    out += [struct.pack("<III", vocab[a], vocab[b], vocab[a + b]) for a, b in merges]
    out.append(struct.pack("<I", len(added)) + b"".join(struct.pack("<I", a["id"]) for a in added))
    return b"".join(out)


@trains_huggingface
def test_version_1_entries_still_read():
    """Files written before version 2 (byte-level tokenizers) encode and decode as before."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=320,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|endoftext|>", "<|im_start|>"],
            show_progress=False,
        ),
    )
    ours = file_tokenizer(_version_1(tok))
    for text in TEXTS + ["<|im_start|>user\nHi<|endoftext|>"]:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ids, text
        assert ours.decode(ids, skip_special_tokens=False) == tok.decode(
            ids, skip_special_tokens=False
        )
        assert ours.decode(ids) == tok.decode(ids)


@pytest.mark.parametrize(
    "behavior", ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
)
def test_split_on_a_string(behavior):
    """A Split pre-tokenizer on a string ("▁", after Gemma's normalizer), every behavior: the
    ids are HuggingFace's."""
    from tokenizers import pre_tokenizers

    hf = sentencepiece_tokenizer("gemma")
    hf.pre_tokenizer = pre_tokenizers.Split("▁", behavior)
    ours = file_tokenizer(pack(hf)[0])
    for text in TEXTS + _random_texts(100, seed=21):
        want = hf.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == want, (behavior, text, [hf.id_to_token(i) for i in want])


def test_llama_tokenizer_from_scores():
    """A SentencePiece BPE model given as pieces with scores (as a tokenizer.model or a GGUF
    file gives it, without merges): transformers derives the merges from the scores
    (generate_merges, what its slow-to-fast converter and GGUF loader do) and builds its own
    LlamaTokenizer (Metaspace "first", byte fallback, Strip); packed, it encodes and decodes as
    that tokenizer."""
    transformers = pytest.importorskip("transformers")
    from transformers.tokenization_utils_base import generate_merges

    pieces, merges = _pieces()
    vocab = {s: i for i, s in enumerate(["<unk>", "<s>", "</s>"])}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in sorted(pieces, key=pieces.get):
        vocab.setdefault(piece, len(vocab))
    # SentencePiece's scores: a merged piece ranks by when it was learned, the rest score 0
    scores = {piece: 0.0 for piece in vocab}
    for rank, (left, right) in enumerate(merges):
        scores[left + right] = -float(rank + 1)
    tok = transformers.LlamaTokenizer(vocab=vocab, merges=generate_merges(vocab, scores))
    packed, kind = pack(tok)
    assert kind == KIND_SENTENCEPIECE, kind
    ours = file_tokenizer(packed)
    for text in TEXTS + _random_texts(200, seed=31):
        want = tok(text, add_special_tokens=False)["input_ids"]
        assert ours.encode(text) == want, text
        assert ours.decode(want) == tok.decode(want, skip_special_tokens=True), text
