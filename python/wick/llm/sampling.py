"""Picking the next token: greedy, or seeded sampling with temperature, top-k and top-p — the
same picks as the C runtime's ``wick_sampler`` (include/wick/llm.h) for the same seed.

    pick = Sampler(temperature=0.8, top_k=40, top_p=0.95, seed=1)
    token = pick(logits)                      # logits: V floats (or [1, V])

The definition (llm.h states it too), in the C code's arithmetic:

1. greedy (temperature <= 0): the first index of the largest logit (NaN reads as -inf);
2. candidates: the ``top_k`` (> 0) largest logits, or all; ordered by logit, largest first,
   ties by index (only when top_k or top_p is on; else in index order);
3. weights ``exp((l_i - l_max) / temperature)`` in double precision, summed in candidate order;
4. ``top_p`` in (0, 1): the shortest prefix whose running sum reaches ``top_p * total``;
5. ``u`` = the next random double in [0, 1) times the (kept) total; the pick is the first
   candidate whose running sum exceeds ``u`` (the last one if none does).

Random doubles: splitmix64's outputs >> 11, times 2^-53, the state starting at ``seed``;
temperature and top_p are float32 values (as the C options hold them).
"""

from __future__ import annotations

import math

import numpy as np

_MASK = (1 << 64) - 1


class Sampler:
    """A seeded sampler (see the module docstring); ``temperature <= 0`` is greedy."""

    def __init__(self, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0):
        if temperature != temperature or top_p != top_p or int(top_k) < 0:
            raise ValueError("temperature and top_p must be numbers and top_k >= 0")
        self.temperature = float(np.float32(temperature))
        self.top_k = int(top_k)
        self.top_p = float(np.float32(top_p))
        self.state = int(seed) & _MASK

    @property
    def greedy(self) -> bool:
        return not self.temperature > 0.0

    def uniform(self) -> float:
        """The next random double in [0, 1) (splitmix64)."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        return (z >> 11) * 2.0**-53

    def __call__(self, logits) -> int:
        values = np.asarray(logits, np.float32).reshape(-1)
        values = np.where(np.isnan(values), np.float32(-np.inf), values)
        best = int(np.argmax(values))
        if self.greedy:
            return best
        vocab = values.size
        nucleus = 0.0 < self.top_p < 1.0
        n = self.top_k if 0 < self.top_k < vocab else vocab
        if n < vocab or nucleus:
            order = np.argsort(-values, kind="stable")[:n]
        else:
            order = np.arange(vocab)
        lmax, t = float(values[best]), self.temperature
        weights = [math.exp((float(values[i]) - lmax) / t) for i in order]
        total = 0.0
        for w in weights:
            total += w
        if nucleus:
            want, run, keep = self.top_p * total, 0.0, 0
            while keep < n:
                run += weights[keep]
                keep += 1
                if run >= want:
                    break
            n, total = keep, run
        u = self.uniform() * total
        run = 0.0
        for i in range(n):
            run += weights[i]
            if run > u:
                return int(order[i])
        return int(order[n - 1])
