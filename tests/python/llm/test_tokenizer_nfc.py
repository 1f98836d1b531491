"""The NFC normalizer of the C tokenizer (src/llm/tokenizer.c, tables src/llm/unicode_nfc.h
from scripts/gen_unicode_nfc.py) against HuggingFace ``tokenizers``' own NFC normalizer and
against ``unicodedataplus`` (Unicode 16's data; skipped with the reason when it is not
installed: ``pip install --target DIR unicodedataplus==16.0.0.post1``, DIR on PYTHONPATH).

wick's NFC is read through a tokenizer that changes nothing else: NFC, GPT-2's byte-level split,
the 256 byte symbols and no merges, a ByteLevel decoder; so decode(encode(text)) is the
normalized text. Compared on every code point alone, on every combining mark before and after
marks of every class, on Hangul jamo sequences, and on seeded random sequences of marks, bases,
jamo, excluded and singleton characters. tokenizers' NFC has the tables of Unicode 9.0 (its
crate, unicode-normalization-alignments 0.1.12), so unicodedataplus is the reference for the
characters of Unicode 9.0 and earlier only; test_tokenizers_nfc_is_unicode_9 shows that.
"""

from __future__ import annotations

import random

import pytest

tokenizers = pytest.importorskip("tokenizers")

from wick.llm.tokenizer import pack  # noqa: E402

from .test_tokenizer import file_tokenizer  # noqa: E402

POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
RANDOM_SEQUENCES = 300  # (the tests also run under ASan)


@pytest.fixture(scope="module")
def nfc_pair():
    """(tokenizers' NFC normalizer, wick's NFC as a function of str)."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = tokenizers.Tokenizer(models.BPE(vocab, []))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    packed, why = pack(tok)
    assert packed is not None, why
    ours = file_tokenizer(packed)

    def wick_nfc(text: str) -> str:
        return ours.decode(ours.encode(text))

    return normalizers.NFC(), wick_nfc


def _unicodedataplus():
    try:
        import unicodedataplus
    except ImportError:
        pytest.skip("unicodedataplus (Unicode 16 with ages) is not installed")
    return unicodedataplus


def _marks() -> list[str]:
    """One combining mark of each class of Unicode 9.0 (tokenizers' tables)."""
    import unicodedata

    out: dict[int, str] = {}
    for c in range(0x300, 0x20000):
        k = unicodedata.combining(chr(c))
        if k and k not in out and unicodedata.normalize("NFD", chr(c)) == chr(c):
            out[k] = chr(c)
    return list(out.values())


def test_every_code_point_alone(nfc_pair):
    """Each code point on its own (newlines between: nothing composes or reorders across
    them) normalizes as tokenizers' NFC does."""
    hf, ours = nfc_pair
    for start in range(0, len(POINTS), 0x40000):
        text = "\n".join(map(chr, POINTS[start : start + 0x40000]))
        got, want = ours(text), hf.normalize_str(text)
        if got != want:
            bad = [
                hex(c)
                for c in POINTS[start : start + 0x40000]
                if ours(chr(c)) != hf.normalize_str(chr(c))
            ]
            pytest.fail(f"code points normalized differently: {bad[:20]}")


def test_every_code_point_between_marks(nfc_pair):
    """Every combining mark, composed character and jamo (Python's unicodedata, Unicode 14;
    and a sample of the rest) before and after a mark of each class, after a base letter
    (ordering, blocking and composition with every class)."""
    import unicodedata

    hf, ours = nfc_pair
    marks = _marks()
    pieces = [
        f"a{x}{m}\n{m}{x}\ne{m}{x}\u0301"
        for c in POINTS
        if unicodedata.combining(chr(c))
        or unicodedata.decomposition(chr(c))[:1] not in ("", "<")
        or 0x1100 <= c < 0x1200
        or 0x1DC0 <= c < 0x1E00
        or c > 0x10000
        and c % 61 == 0
        for x in (chr(c),)
        for m in marks
    ]
    for start in range(0, len(pieces), 200000):
        text = "\n".join(pieces[start : start + 200000])
        assert ours(text) == hf.normalize_str(text), start


def test_fixed_texts(nfc_pair):
    hf, ours = nfc_pair
    texts = [
        "cafe\u0301 caf\u00e9 n\u0303 A\u030a \u212b \u2126 e\u0301\u0301 o\u0328\u0304",
        "\u1100\u1161\u11a8 \u1100\u1161 \uac00\u11a8 \u1100\u1161\u11a8\u11a8 \u1112\u1175",
        "\u1100\u0301\u1161 \uac00\u0301\u11a8 \u115f\u1161 \u1100\u11a7",  # blocked / not
        "a\u0301\u0316 a\u0316\u0301 a\u0328\u0301\u0316 q\u0307\u0323 \u1e0b\u0323",
        "\u0958 \u0915\u093c \u0f73 \u0f71\u0f72 \u0344 \u0340 \u0343 \u2adc \u0374",
        "\U0001d15e \U0001d157\U0001d165 \u05e9\u05bc\u05c1 \ufb2c",
        "日本語 中文 😀👍🏽 👨‍👩‍👧 \u0915\u094d\u0937 \u0627\u0653",
        "\u0301leading mark \u0301\u0316 and \U00011938 \U00011935\U00011930",
        "",
    ]
    for text in texts:
        assert ours(text) == hf.normalize_str(text), text


def _random_sequences(count: int, seed: int) -> list[str]:
    import unicodedata

    rng = random.Random(seed)
    marks = _marks() + ["\u0301", "\u0300", "\u0308", "\u0323", "\u0316", "\u0345", "\u05bc"]
    bases = list("aeiouAEOUnNcsSzZ ") + ["\u03b1", "\u03c9", "\u0415", "\u05e9", "\u0915"]
    jamo = [
        chr(c) for c in (*range(0x1100, 0x1114), *range(0x1161, 0x1177), *range(0x11A7, 0x11C4))
    ]
    composed = [chr(c) for c in range(0xC0, 0x2000) if unicodedata.decomposition(chr(c))[:1] != "<"]
    odd = ["\u0958", "\u2126", "\u212b", "\u0344", "\u0f73", "\uac00", "\ud7a3", "\U0001d15e"]

    def one():
        pick = rng.random()
        if pick < 0.35:
            return rng.choice(marks)
        if pick < 0.55:
            return rng.choice(jamo)
        if pick < 0.75:
            return rng.choice(bases)
        if pick < 0.9:
            return rng.choice(composed)
        if pick < 0.97:
            return rng.choice(odd)
        c = rng.randrange(0x110000)
        return "x" if 0xD800 <= c <= 0xDFFF else chr(c)

    return ["".join(one() for _ in range(rng.randint(1, 20))) for _ in range(count)]


def test_random_sequences(nfc_pair):
    hf, ours = nfc_pair
    for text in _random_sequences(RANDOM_SEQUENCES, 0):
        assert ours(text) == hf.normalize_str(text), [hex(ord(c)) for c in text]


def test_long_runs_of_marks(nfc_pair):
    """Runs of thousands of marks of random classes (sorted by counting, not by insertion)
    after a base, and a run of 20 (the length where the two sorts meet)."""
    hf, ours = nfc_pair
    rng = random.Random(5)
    marks = _marks()
    for length in (17, 20, 5000):
        text = "a" + "".join(rng.choice(marks) for _ in range(length)) + "e\u0301"
        assert ours(text) == hf.normalize_str(text), length


def test_unicodedataplus_on_unicode_9_characters(nfc_pair):
    """unicodedataplus's NFC (Unicode 16) on every code point of Unicode 9.0 and earlier, alone
    and after a mark of each class, and on the random sequences made of them."""
    ud = _unicodedataplus()
    _, ours = nfc_pair

    def old(c: int) -> bool:
        age = ud.age(chr(c))
        return "." in age and tuple(map(int, age.split("."))) <= (9, 0)

    points = [c for c in POINTS if old(c)]
    text = "\n".join(map(chr, points))
    assert ours(text) == ud.normalize("NFC", text)
    marks = [m for m in _marks() if old(ord(m))]
    text = "\n".join(f"a{chr(c)}{m}" for c in points if ud.combining(chr(c)) for m in marks)
    assert ours(text) == ud.normalize("NFC", text)
    for s in _random_sequences(RANDOM_SEQUENCES, 1):
        if all(old(ord(c)) for c in s):
            assert ours(s) == ud.normalize("NFC", s), [hex(ord(c)) for c in s]


def test_tokenizers_nfc_is_unicode_9(nfc_pair):
    """Why the tables are Unicode 9.0's: tokenizers orders a mark assigned in Unicode 9 as
    Unicode 16 does (U+08D4, class 230), and leaves one from Unicode 10 (U+1DF6, class 232)
    where it is."""
    hf, _ = nfc_pair
    ud = _unicodedataplus()
    assert ud.age("\u08d4") == "9.0" and ud.age("\u1df6") == "10.0"
    for mark in ("\u08d4", "\u1df6"):
        text = f"a{mark}\u0316"
        assert ud.normalize("NFC", text) != text
        assert (hf.normalize_str(text) == text) == (mark == "\u1df6"), mark


def test_an_unknown_normalizer_step_is_refused_with_the_reason():
    """A normalizer record this runtime does not know (what an older runtime sees of NFC) is
    refused with the reason, not run without it."""
    import struct

    from tokenizers import models, normalizers, pre_tokenizers

    import wick.llm.tokenizer as wt

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = tokenizers.Tokenizer(models.BPE(vocab, []))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    packed, _ = pack(tok)
    record = struct.pack("<IIIII", wt.NORM_NFC, 0, 0, 0, 0)
    assert packed.count(record) == 1
    newer = packed.replace(record, struct.pack("<IIIII", 99, 0, 0, 0, 0))
    with pytest.raises(Exception, match="unknown normalizer step"):
        file_tokenizer(newer)
