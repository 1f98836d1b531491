"""Byte-level BPE tokenizers packed into an LLM file (python/wick/llm/tokenizer.py) and run by
the C runtime (src/llm/tokenizer.c) against HuggingFace ``tokenizers`` itself, for the three
pre-tokenizers of byte-level models:

* ``gpt2``: ``ByteLevel(add_prefix_space=False)`` with GPT-2's own split (SmolLM2, GPT-2);
* ``llama3``: ``Split(Regex(<Llama 3's pattern>), "isolated")`` then ``ByteLevel(use_regex=False)``
  (Llama 3's tokenizer.json, with its ``ignore_merges``);
* ``qwen2``: the same with Qwen2's pattern (one digit at a time), no normalizer (Qwen2's own
  tokenizer.json adds NFC: test_transformers_qwen2_tokenizer_packs_with_its_nfc).

The vocabulary is GPT-2's 256 byte symbols plus pieces learned here by plain BPE (no trainer
of HuggingFace's runs, so that these tests also run with libasan preloaded, `make asan`) on a
small multilingual corpus taken whole, and a merge for every pair of adjacent bytes in the
texts compared: merges reach across every place where a split may cut, so a piece cut
differently from HuggingFace's changes the ids.
Compared on fixed texts (contractions in mixed case, digit runs of 1-7, newline and \\r\\n
runs, tabs, trailing spaces, CJK, combining marks, emoji, Arabic, Hindi, NBSP and the other
Unicode spaces), on the code points at both ends of every range of the generated class table,
and on seeded random Unicode strings; and the class table itself against the regex engine of
tokenizers on every code point. transformers' own Qwen2Tokenizer, NFC normalizer included, packs
and encodes as HuggingFace (NFC_TEXTS; the NFC itself: test_tokenizer_nfc.py).
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tests.python.llm._bpe import assert_same_as_huggingface, merge_pair  # noqa: E402
from wick.llm.tokenizer import (  # noqa: E402
    KIND_BYTE_LEVEL,
    LLAMA3_PATTERN,
    QWEN2_PATTERN,
    pack,
)

from .test_tokenizer import file_tokenizer  # noqa: E402

STYLES = ["gpt2", "llama3", "qwen2"]
RANDOM_TEXTS = 120  # per style (the tests also run under ASan)
REPO = Path(__file__).resolve().parents[3]

CORPUS = [
    "The quick brown fox jumps over the lazy dog. What is the capital of France? Paris.",
    "I'm sure you've heard it's 12345 dollars; they'll say we'd done it.  Tabs\tand\n\n",
    "café naïve résumé — “quotes” … 日本語のテキストです 😀 the theory of everything, then",
    "Ελληνικά и русский текст; العربية مكتوبة هنا; हिन्दी में लिखा है; 한국어 문장",
    "def main():\r\n    return x + 1  # comment\r\n\r\n",
]

TEXTS = [
    "Hello world",
    "What is the capital of France?",
    "I'm, you're, he's, THEY'RE, We'Ve, I'LL, she'D, it'S, don'T, 'M, 'x, 'ſ '\u017fx",
    "'s's 'll'll 're're ''s '",
    "1 22 333 4444 55555 666666 7777777 a1b22c333 ½ ² ٣٤٥ १२३",
    "a\nb\n\nc\r\nd\r\n\r\ne\r\r\n\n f \n\n g\t\n",
    "  two leading spaces and trailing  ",
    "tabs\tand\t\ttabs \t x\t",
    "trailing spaces   ",
    "   ",
    "\n",
    "\r\n",
    " \n \n ",
    "日本語のテキスト、中文文本。한국어",
    "e\u0301 cafe\u0301 n\u0303o \u0301\u0301x a\u0308\u0308",
    "😀🦀 👍🏽 👨‍👩‍👧 🇫🇷!",
    "العربية: مرحبا بالعالم ١٢٣",
    "हिन्दी में लिखा है।",
    "nbsp\u00a0here \u00a0\u00a0x\u2003em\u2009thin\u3000ideo\u202fnarrow\u205f\u1680ogham\u0085nel",
    "\u2028line sep\u2029para sep\x0bvt\x0cff\x1cfs\x1f",
    "!!! ?? ...\n\n --- x!\r\n y!?\n",
    " 's  'T x'Re y'VE",
    "ß Ω ǅ ᾈ ﬁ ℌ ⅷ Ⅻ ⓐ",
    "<|im_start|>user\nHi there<|endoftext|>",
    "",
]

# decomposed and precomposed accents, Hangul syllables and jamo (L V, L V T, LV T), marks in
# both orders (NFC reorders them by class), singletons and composition exclusions
NFC_TEXTS = [
    "cafe\u0301 caf\u00e9 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m \u212b \u2126",
    "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165 \ud55c\uad6d\uc5b4 "
    "\uac00\u11a8 \u1100\u1161",
    "a\u0301\u0316 a\u0316\u0301 q\u0307\u0323 \u1e0b\u0323 o\u0328\u0304 e\u0301\u0301",
    "\u0958 \u0915\u093c \u0f73 \u0344 \u0340 \u2adc \u05e9\u05bc\u05c1 \U0001d15e",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \u4e2d\u6587 \U0001f600\U0001f44d\U0001f3fd "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u0301leading mark, <|im_start|>e\u0301 and \u00e9<|endoftext|>\u0301",
]

ATOMS = list("abcXYZ 019.,!?'-\n\r\t") + [
    "  ",
    "\r\n",
    "'s",
    "'LL",
    "'Re",
    "é",
    "e\u0301",
    "\u0301",
    "\u0316",
    "\u0323",
    "\u1100",
    "\u1161",
    "\u11a8",
    "\uac00",
    "\u212b",
    "\u0958",
    "日",
    "語",
    "😀",
    "👍🏽",
    "\u00a0",
    "\u2003",
    "\u3000",
    "ع",
    "١",
    "ह",
    "ि",
    "½",
    "Ⅻ",
    "<|im_start|>",
]


def _random_texts(count: int, seed: int) -> list[str]:
    """Seeded strings of atoms and random code points (any plane, surrogates left out)."""
    rng = random.Random(seed)

    def one():
        if rng.random() < 0.3:
            c = rng.randrange(0x110000)
            return "x" if 0xD800 <= c <= 0xDFFF else chr(c)
        if rng.random() < 0.2:  # the BMP's scripts
            return chr(rng.randrange(0x80, 0x3100))
        return rng.choice(ATOMS)

    return ["".join(one() for _ in range(rng.randint(0, 25))) for _ in range(count)]


def _pre_tokenizer(style: str):
    from tokenizers import Regex, pre_tokenizers

    if style == "gpt2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False)
    pattern = LLAMA3_PATTERN if style == "llama3" else QWEN2_PATTERN
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def _symbols(text: str) -> list[str]:
    """text's bytes as GPT-2's byte symbols."""
    from tokenizers import pre_tokenizers

    whole = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return list("".join(piece for piece, _ in whole.pre_tokenize_str(text)))


@functools.cache
def _vocab_and_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The 256 byte symbols; merges learned by plain BPE (most frequent pair first, ties by
    the pair) on CORPUS's texts taken whole, not pre-tokenized; then a merge for every pair of
    adjacent byte symbols in the texts compared. So merges reach across every place a
    pre-tokenizer may cut, and a piece cut elsewhere than HuggingFace cuts it shows in the
    ids."""
    from tokenizers import pre_tokenizers

    vocab = {c: 0 for c in sorted(pre_tokenizers.ByteLevel.alphabet())}
    split = [_symbols(text) for text in CORPUS]
    merges = []
    for _ in range(300):
        pairs = Counter(p for parts in split for p in zip(parts, parts[1:], strict=False))
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        vocab[a + b] = 0
        for k, parts in enumerate(split):
            split[k] = merge_pair(parts, a, b)
    texts = TEXTS + NFC_TEXTS + _boundary_texts()
    texts += [t for seed in [*range(len(STYLES)), 7] for t in _random_texts(RANDOM_TEXTS, seed)]
    texts += [unicodedata.normalize("NFC", t) for t in texts]  # (the pieces after NFC)
    for text in texts:
        symbols = _symbols(text)
        for a, b in zip(symbols, symbols[1:], strict=False):
            if a + b not in vocab:
                merges.append((a, b))
                vocab[a + b] = 0
    return {s: i for i, s in enumerate(vocab)}, merges


def byte_level_tokenizer(style: str):
    """A byte-level BPE tokenizer of the given style (_vocab_and_merges); <|endoftext|> and
    <|im_start|> as special tokens."""
    from tokenizers import decoders, models

    vocab, merges = _vocab_and_merges()
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, ignore_merges=style == "llama3"))
    tok.pre_tokenizer = _pre_tokenizer(style)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>"])
    return tok


@pytest.fixture(scope="module", params=STYLES)
def style_pair(request):
    hf = byte_level_tokenizer(request.param)
    packed, kind = pack(hf)
    assert packed is not None, kind
    assert kind == KIND_BYTE_LEVEL
    return request.param, hf, file_tokenizer(packed)


def _class_table() -> list[tuple[int, int, str]]:
    text = (REPO / "src/llm/unicode_classes.h").read_text()
    return [
        (int(a, 16), int(b, 16), k)
        for a, b, k in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+), (UC_\w+)\}", text)
    ]


def _boundary_texts() -> list[str]:
    """The code points at both ends of every range of the class table and just outside it,
    each between a letter and a digit (their class decides the pieces), 100 to a text."""
    chars = sorted(
        {c for a, b, _ in _class_table() for c in (a - 1, a, b, b + 1)}
        - set(range(0xD800, 0xE000))
        - {-1, 0x110000}
    )
    pieces = [f" a{chr(c)}1{chr(c)}" for c in chars]
    return ["".join(pieces[i : i + 100]) for i in range(0, len(pieces), 100)]


def test_encode_and_decode_equal_huggingface(style_pair):
    """The ids of every text are HuggingFace's (encode without special tokens added), and
    decoding them gives HuggingFace's text, with and without the special tokens."""
    style, hf, ours = style_pair
    seed = STYLES.index(style)
    for text in TEXTS + _boundary_texts() + _random_texts(RANDOM_TEXTS, seed):
        assert_same_as_huggingface(hf, ours, text, style)


def test_random_ids_decode_as_huggingface(style_pair):
    """Random id sequences (bytes that do not make UTF-8 included) decode to HuggingFace's
    text."""
    style, hf, ours = style_pair
    rng = random.Random(3)
    size = hf.get_vocab_size()
    for _ in range(100):
        ids = [rng.randrange(size) for _ in range(rng.randint(0, 12))]
        for skip in (False, True):
            assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(
                ids, skip_special_tokens=skip
            ), (style, ids)


def test_unicode_classes_match_tokenizers_regex_engine():
    """src/llm/unicode_classes.h (scripts/gen_unicode_classes.py) gives \\p{L}, \\p{N} and \\s
    exactly as the regex engine inside tokenizers does, on every code point."""
    from tokenizers import Regex, pre_tokenizers

    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, points))

    def matched(pattern: str) -> set[int]:
        kept = pre_tokenizers.Split(Regex(pattern), "removed").pre_tokenize_str(text)
        return set(points) - {ord(c) for piece, _ in kept for c in piece}

    table = {"UC_LETTER": set(), "UC_NUMBER": set(), "UC_SPACE": set()}
    for a, b, k in _class_table():
        table[k].update(range(a, b + 1))
    assert table["UC_LETTER"] == matched(r"\p{L}")
    assert table["UC_NUMBER"] == matched(r"\p{N}")
    assert table["UC_SPACE"] == matched(r"\s")


def test_other_regex_splits_are_refused_with_the_reason():
    """A Split regex other than Llama 3's and Qwen2's, or theirs not isolated or before a
    ByteLevel with its own split, is refused and says why."""
    from tokenizers import Regex, pre_tokenizers

    tok = byte_level_tokenizer("qwen2")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    cases = {
        "only": pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}"), "isolated"),
        "Qwen2's patterns only": pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(QWEN2_PATTERN + "|x"), "isolated"), byte_level]
        ),
        "not Isolated": pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(LLAMA3_PATTERN), "merged_with_previous"), byte_level]
        ),
        "its own split": pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_PATTERN), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False),
            ]
        ),
    }
    for why, pre in cases.items():
        tok.pre_tokenizer = pre
        packed, reason = pack(tok)
        assert packed is None and why in reason, (why, reason)


def test_transformers_qwen2_tokenizer_packs_with_its_nfc():
    """transformers' own Qwen2Tokenizer (NFC, then Qwen2's regex split and ByteLevel) packs as
    it is and encodes as HuggingFace: texts with decomposed and precomposed accents, Hangul
    jamo, marks to reorder, CJK and emoji, and seeded random ones."""
    transformers = pytest.importorskip("transformers")

    vocab, merges = _vocab_and_merges()
    vocab = {**vocab, "<|endoftext|>": len(vocab)}
    tok = transformers.Qwen2Tokenizer(vocab=vocab, merges=merges)
    assert "NFC" in repr(tok.backend_tokenizer.normalizer)
    packed, kind = pack(tok)
    assert kind == KIND_BYTE_LEVEL, kind
    ours = file_tokenizer(packed)
    for text in TEXTS + NFC_TEXTS + _random_texts(RANDOM_TEXTS, 7):
        want = tok(text, add_special_tokens=False)["input_ids"]
        assert ours.encode(text) == want, text
        assert ours.decode(want) == tok.decode(want, skip_special_tokens=True), text
