"""Picking the next token: greedy, or seeded sampling with temperature, top-k and top-p, after
an optional repetition penalty — the same picks as the C runtime's ``wick_sampler``
(include/wick/llm.h) for the same seed.

    pick = Sampler(temperature=0.8, top_k=40, top_p=0.95, seed=1, repetition_penalty=1.1)
    pick.observe(prompt_ids)                  # the history the penalty looks at
    token = pick(logits)                      # logits: V floats (or [1, V]); joins the history

The definition (llm.h states it too), in the C code's arithmetic:

0. ``repetition_penalty`` p != 1 (HuggingFace transformers' RepetitionPenaltyLogitsProcessor):
   the float32 logit l of every id in the history (ids given to :meth:`Sampler.observe` and
   every pick, until :meth:`Sampler.forget`) becomes ``l * p`` if ``l < 0``, else ``l / p``;
   the steps below read these logits, greedy included. The prompt counts, as in HuggingFace's
   generate (which penalizes the whole input_ids);
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

    def __init__(
        self,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int = 0,
        repetition_penalty: float = 1.0,
    ):
        if temperature != temperature or top_p != top_p or int(top_k) < 0:
            raise ValueError("temperature and top_p must be numbers and top_k >= 0")
        penalty = float(repetition_penalty)
        if not (penalty > 0.0 and math.isfinite(penalty)):
            raise ValueError(
                f"repetition_penalty must be a finite number > 0 (1: off), not {repetition_penalty!r}"
            )
        self.temperature = float(np.float32(temperature))
        self.top_k = int(top_k)
        self.top_p = float(np.float32(top_p))
        self.state = int(seed) & _MASK
        self.repetition_penalty = np.float32(penalty)
        self.seen: set[int] = set()

    @property
    def greedy(self) -> bool:
        return not self.temperature > 0.0

    @property
    def penalized(self) -> bool:
        """Whether the repetition penalty is on (p != 1)."""
        return self.repetition_penalty != np.float32(1.0)

    def observe(self, tokens) -> None:
        """Adds token ids (a prompt) to the history of the repetition penalty."""
        self.seen.update(int(t) for t in tokens)

    def forget(self) -> None:
        """Empties the history (a new conversation)."""
        self.seen.clear()

    def penalize(self, values: np.ndarray) -> np.ndarray:
        """Step 0: ``values`` (float32) with the repetition penalty on the history's ids."""
        if not self.penalized or not self.seen:
            return values
        out = values.copy()
        ids = np.fromiter(sorted(self.seen), np.int64)
        ids = ids[(ids >= 0) & (ids < out.size)]
        seen = out[ids]
        p = self.repetition_penalty
        out[ids] = np.where(seen < 0, seen * p, seen / p).astype(np.float32)
        return out

    def uniform(self) -> float:
        """The next random double in [0, 1) (splitmix64)."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        return (z >> 11) * 2.0**-53

    def __call__(self, logits) -> int:
        pick = self._pick(self.penalize(np.asarray(logits, np.float32).reshape(-1)))
        self.seen.add(pick)
        return pick

    def _pick(self, values: np.ndarray) -> int:
        """Steps 1-5 on float32 logits."""
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
