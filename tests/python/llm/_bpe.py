"""Helpers the tokenizer tests share: the merge step of the BPE learners for the tokenizers they
build offline, and the check of one text against HuggingFace."""

from __future__ import annotations


def merge_pair(parts: list[str], a: str, b: str) -> list[str]:
    """``parts`` with every adjacent (a, b), left to right, joined into one symbol."""
    i, out = 0, []
    while i < len(parts):
        if i + 1 < len(parts) and (parts[i], parts[i + 1]) == (a, b):
            out.append(a + b)
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def assert_same_as_huggingface(hf, ours, text: str, label) -> None:
    """``ours`` encodes ``text`` to HuggingFace's ids (no added BOS), and decodes those ids to
    HuggingFace's text with and without the special tokens."""
    want = hf.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == want, (label, text, [hf.id_to_token(i) for i in want])
    for skip in (False, True):
        got = ours.decode(want, skip_special_tokens=skip)
        assert got == hf.decode(want, skip_special_tokens=skip), (label, text, skip)
