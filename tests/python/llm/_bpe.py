"""A helper the tokenizer tests share to learn BPE merges for the tokenizers they build offline."""

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
