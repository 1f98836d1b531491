"""wick.llm — HuggingFace causal LMs to one standard .tflite file with a KV cache, and greedy
generation on wick's runtime.

    import wick.llm
    llm = wick.llm.convert(hf_model, max_seq_len=512, prefill_lengths=(8, 32))
    new_ids = llm.generate(prompt_ids, max_new_tokens=16)
    llm.export("model.tflite")
    llm = wick.llm.load("model.tflite", tokenizer=hf_tokenizer)

Files by concept: step.py (one signature as a torch module over the HF model's own layers),
cache.py (the cache update op and its lowering), state.py (the cache in resource variables),
convert.py (the driver), model.py (the LLM object, load, generation). docs/llm.md has the
design and its costs.
"""

from .convert import convert
from .model import LLM, load

__all__ = ["convert", "load", "LLM"]
