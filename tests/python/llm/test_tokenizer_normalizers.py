"""The NFD, NFKD, NFKC and Lowercase normalizers of the C tokenizer (src/llm/tokenizer.c, tables
src/llm/unicode_nfc.h and src/llm/unicode_compat.h from scripts/gen_unicode_*.py) against
HuggingFace ``tokenizers``' own normalizers, alone and in a ``Sequence``.

As in test_tokenizer_nfc.py, a normalizer is read through a tokenizer that changes nothing else
(GPT-2's byte-level split, the 256 byte symbols, no merges, a ByteLevel decoder), so
decode(encode(text)) is the normalized text: compared on every code point alone, on every
character with a decomposition or a lowercase mapping between combining marks, on fixed texts
(accents, compatibility characters such as "ﬁ", "①", full-width letters, Hangul syllables and
compatibility jamo, mixed case with "İ", "ß", "Σ") and on seeded random sequences. Then the
token ids of a SentencePiece-style tokenizer with merges and added tokens whose normalizer is a
Sequence of them (test_tokenizer.py's "llama" tokenizer).
"""

from __future__ import annotations

import random
import unicodedata

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tests.python.llm._bpe import assert_same_as_huggingface  # noqa: E402
from wick.llm.tokenizer import pack  # noqa: E402

from .test_tokenizer import file_tokenizer, sentencepiece_tokenizer  # noqa: E402
from .test_tokenizer_nfc import _marks, _random_sequences  # noqa: E402

POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
KINDS = ["NFD", "NFKD", "NFKC", "Lowercase"]

FIXED_TEXTS = [
    "Café cafe\u0301 NAÏVE naïve Ångström A\u030a \u212b \u2126 e\u0301\u0301 o\u0328\u0304",
    "ﬁnance ﬂow ﬀ ﬃ ① ⑳ ⑴ ⒜ ㈱ ㎏ ℡ ™ ½ ¼ x² H₂O ſ ẛ̣ \u1e9b\u0323 …",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ ｘｙｚ ０１２ ！？ ｶﾀｶﾅ ｶﾞ ﾊﾟ ﾞ ・",
    "한국어 \uac00\u11a8 \u1100\u1161\u11a8 ㄱㅏ ㄲ ﾡ ᄀ\u0301ᅡ 가나다",
    "İstanbul İİ i\u0307 ß SS ẞ ΣΑΣ ΌΣΟΣ σς Ω Ω K DŽ ǅ ǆ Ǉ ﬀ ΐ \u0130\u0301",
    "MiXeD CaSe ÀÉÎÕÜ ÇÑ ĞŞ ŁŒ Æ Ø ÞÐ ΑΒΓ ДЖЯ ԱԲ ႠႡ Ᏸ Ａ \U00010400 \U0001e900 Ⰰ \ua7cb \u1c89",
    "\u0958 \u0915\u093c \u0f73 \u0f71\u0f72 \u0f75 \u0f81 \u0344 \u0340 \u0343 \u2adc \u0374",
    "\U0001d15e \U0001d157\U0001d165 \u05e9\u05bc\u05c1 \ufb2c \ufdfa \ufdfb \u3300 \u32ff",
    "日本語 中文 😀👍🏽 👨‍👩‍👧 \u0915\u094d\u0937 \u0627\u0653 \uf900 \u2f800 \U0002f800",
    "\u0301leading mark \u0316\u0301 \u00a0nbsp\u2003em\u3000ideographic \u00a8\u00af\u00b4",
    "",
]


def _identity_tokenizer(normalizer):
    """A byte-level tokenizer that only normalizes, packed, and the C runtime's tokenizer over
    it as a function of str."""
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = tokenizers.Tokenizer(models.BPE(vocab, []))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    packed, why = pack(tok)
    assert packed is not None, why
    ours = file_tokenizer(packed)
    return lambda text: ours.decode(ours.encode(text))


def _normalizer(kind: str):
    from tokenizers import normalizers

    return getattr(normalizers, kind)()


@pytest.fixture(scope="module", params=KINDS)
def pair(request):
    """(tokenizers' normalizer, wick's as a function of str)."""
    hf = _normalizer(request.param)
    return hf, _identity_tokenizer(_normalizer(request.param))


def test_every_code_point_alone(pair):
    """Each code point on its own (newlines between: nothing composes, reorders or changes case
    across them) normalizes as tokenizers' normalizer does."""
    hf, ours = pair
    for start in range(0, len(POINTS), 0x40000):
        chunk = POINTS[start : start + 0x40000]
        text = "\n".join(map(chr, chunk))
        if ours(text) != hf.normalize_str(text):
            bad = [hex(c) for c in chunk if ours(chr(c)) != hf.normalize_str(chr(c))]
            pytest.fail(f"code points normalized differently: {bad[:20]}")


def test_changed_characters_between_marks(pair):
    """Every character that decomposes or changes case (Python's unicodedata, Unicode 14, and
    the Hangul jamo), after a base and before and after marks of several classes (ordering,
    blocking and composition across what it became)."""
    hf, ours = pair
    marks = _marks()[::3] + ["\u0301", "\u0316", "\u3099", "\u05bc"]
    pieces = [
        f"a{x}{m}\n{m}{x}\u0301\n{x}{x}\n"
        for c in POINTS
        if unicodedata.decomposition(chr(c))
        or chr(c).lower() != chr(c)
        or 0x1100 <= c < 0x1200
        or 0x3130 <= c < 0x3190
        or 0xFFA0 <= c < 0xFFE0
        for x in (chr(c),)
        for m in marks
    ]
    for start in range(0, len(pieces), 100000):
        text = "".join(pieces[start : start + 100000])
        assert ours(text) == hf.normalize_str(text), start


def test_fixed_texts(pair):
    hf, ours = pair
    for text in FIXED_TEXTS:
        assert ours(text) == hf.normalize_str(text), text


def test_random_sequences(pair):
    hf, ours = pair
    rng = random.Random(3)
    compat = [chr(c) for c in range(0xA0, 0x10000) if unicodedata.decomposition(chr(c))[:1] == "<"]
    cased = [chr(c) for c in range(0xA0, 0x2D00) if chr(c).lower() != chr(c)]
    for i, text in enumerate(_random_sequences(300, 7)):
        extra = "".join(rng.choice(compat + cased) for _ in range(rng.randint(0, 6)))
        cut = rng.randint(0, len(text))
        text = text[:cut] + extra + text[cut:]
        assert ours(text) == hf.normalize_str(text), (i, [hex(ord(c)) for c in text])


def test_long_texts_that_grow():
    """NFKD of U+FDFA is 18 code points (33 bytes from 3): a long run of it is normalized, not
    refused as a hostile entry's growth."""
    hf = _normalizer("NFKD")
    ours = _identity_tokenizer(_normalizer("NFKD"))
    text = "\ufdfa" * 3000 + "\u3300" * 1000
    assert ours(text) == hf.normalize_str(text)


def test_tokenizers_normalization_is_unicode_9_and_lowercase_unicode_17():
    """Why the versions of unicode_compat.h: tokenizers decomposes U+1F16A (Unicode 6.1, <super>
    M C) and not U+1F16C (Unicode 12.0, <super> M R), and lowercases U+A7CB (Unicode 16.0) to
    U+0264 and U+A7CE (Unicode 17.0) to U+A7CF; wick does the same."""
    nfkd = _identity_tokenizer(_normalizer("NFKD"))
    lower = _identity_tokenizer(_normalizer("Lowercase"))
    for hf, ours, text, want in [
        (_normalizer("NFKD"), nfkd, "\U0001f16a\U0001f16c", "MC\U0001f16c"),
        (_normalizer("Lowercase"), lower, "\ua7cb\ua7ce\U00016ea0", "\u0264\ua7cf\U00016ebb"),
    ]:
        assert hf.normalize_str(text) == want
        assert ours(text) == want


SEQUENCES = {
    "nfkc+lower": ["NFKC", "Lowercase"],
    "lower+nfd": ["Lowercase", "NFD"],
    "nfkd+nfc": ["NFKD", "NFC"],
}


@pytest.mark.parametrize("kinds", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_sequences_in_a_sentencepiece_tokenizer(kinds):
    """Token ids (and decoded text) of a SentencePiece-style tokenizer with merges, byte
    fallback and added tokens whose normalizer is a Sequence of these steps before its Prepend
    and Replace, as tokenizers' own."""
    from tokenizers import AddedToken, normalizers

    hf = sentencepiece_tokenizer("llama")
    steps = [_normalizer(k) for k in kinds]
    hf.normalizer = normalizers.Sequence(
        steps + [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    hf.add_tokens([AddedToken("ＭＡＲＫ", normalized=True), AddedToken("<Keep>", normalized=False)])
    packed, why = pack(hf)
    assert packed is not None, why
    ours = file_tokenizer(packed)
    texts = FIXED_TEXTS + [
        "the ＭＡＲＫ and mark <Keep> THE END",
        "Hello World, THIS is a Test of the tokenizer. ①② ﬁne",
    ]
    for text in texts:
        assert_same_as_huggingface(hf, ours, text, kinds)
