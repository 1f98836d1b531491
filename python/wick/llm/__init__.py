"""wick.llm — HuggingFace causal LMs to one standard .tflite file with a KV cache, and
generation (greedy or sampled) on wick's runtime.

    import wick.llm
    llm = wick.llm.convert(hf_model, max_seq_len=512, prefill_lengths=(8, 32))
    new_ids = llm.generate(prompt_ids, max_new_tokens=16)
    llm.export("model.tflite")
    llm = wick.llm.load("model.tflite", tokenizer=hf_tokenizer)

Files by concept: step.py (one signature as a torch module over the HF model's own layers),
attention.py (the attention core), cache.py (the cache update op and its lowering), state.py
(the cache in resource variables), conversion.py (the driver), model.py (the LLM object, load,
generation), sampling.py (greedy / temperature / top-k / top-p, as the C runtime picks).
docs/llm.md has the design and its costs.

Loading and generating need only the runtime (numpy): torch and transformers are imported by
``convert`` alone.
"""

from .model import LLM, load
from .sampling import Sampler

__all__ = ["convert", "load", "LLM", "Sampler"]


def convert(model, **options) -> LLM:
    """Convert a HuggingFace causal LM to an :class:`LLM` (wick.llm.conversion.convert: keyword
    options max_seq_len, prefill_lengths, quantize, tokenizer, progress)."""
    from .._optional import require

    require("torch", "wick.llm.convert")
    from .conversion import convert as run

    return run(model, **options)
