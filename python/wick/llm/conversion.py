"""``wick.llm.convert(model, *, max_seq_len, prefill_lengths, quantize)`` -> :class:`LLM`.

One .tflite file, standard TFLite throughout:

    signature prefill_<n>  (tokens int32 [1, n], input_pos int32 [1]) -> logits float32 [1, V]
    signature decode       (tokens int32 [1, 1], input_pos int32 [1]) -> logits float32 [1, V]
    subgraph  init         CALL_ONCE body: zeroes the cache variables
    metadata  "wick_llm"   JSON: the facts generation needs (see model.py)

Every signature is the same HuggingFace model traced by step.py for its number of tokens and
lowered by wick's converter (torch.export, ATen passes, lowering, layout and fusion passes);
state.py then moves the KV cache into resource variables. The signatures' weights are the same
tensors, so the writer stores them once (constants are deduplicated by content).

Next: step.py, state.py, model.py.
"""

from __future__ import annotations

import json

from .model import LLM, METADATA_NAME
from .state import cache_names, caches_to_variables, init_graph, rename_inputs
from .step import (
    CausalLMStep,
    cache_shapes,
    check_length,
    describe,
    example_inputs,
    wick_attention,
)

QUANTIZE_MODES = {None: "float32", "int8": "int8", "int4": "int4_llm"}


def _check_lengths(max_seq_len, prefill_lengths) -> tuple[int, tuple[int, ...]]:
    if not isinstance(max_seq_len, int) or max_seq_len < 2:
        raise ValueError(f"max_seq_len must be an int >= 2, not {max_seq_len!r}")
    lengths = tuple(sorted(set(prefill_lengths)))
    for n in lengths:
        if not isinstance(n, int) or not 1 < n <= max_seq_len:
            raise ValueError(
                f"prefill lengths must be ints in 2..max_seq_len ({max_seq_len}), not {n!r} "
                "(one token is the decode signature)"
            )
    return max_seq_len, lengths


def convert(
    model,
    *,
    max_seq_len: int,
    prefill_lengths=(8, 32),
    quantize: str | None = None,
    tokenizer=None,
    progress: bool | None = None,
) -> LLM:
    """Convert a HuggingFace causal LM (the families of step.FAMILIES: Llama, Qwen2/3, Gemma 2/3,
    Phi-3, GPT-2, Qwen2-MoE, Mixtral) to one .tflite file with
    ``prefill_<n>`` signatures (one per ``prefill_lengths``), a ``decode`` signature and the KV
    cache (``max_seq_len`` positions) in resource variables shared by all of them.

    ``quantize``: None (float32 weights), ``"int8"`` (fully connected weights int8 per output
    channel, TFLite's dynamic-range hybrid kernels) or ``"int4"`` (fully connected weights int4
    in blocks of 32 with float16 scales, TFLite's blockwise quantization, except the LM head,
    the feed-forward down projections and the first two and last decoder layers, which are
    int8 as above: converter/passes/weights.py; the embedding table stays float32 in both). ``tokenizer``: a HuggingFace tokenizer kept
    with the result so that ``generate`` takes and returns text; a BPE one, byte-level with GPT-2's
    split (SmolLM2) or SentencePiece style (Llama 2, TinyLlama, Gemma), is also packed into the
    file (tokenizer.py) for the C runtime's ``wick_tokenizer`` and ``wick generate --prompt``.
    ``progress``: stage lines on stderr as for ``wick.convert``."""
    from ..convert import _convert_graph, _Progress, _return_freed_memory, _Stages
    from ..converter.serialize import serialize

    if quantize not in QUANTIZE_MODES:
        raise ValueError(f"quantize must be None, 'int8' or 'int4', not {quantize!r}")
    info = describe(model)
    max_seq_len, lengths = _check_lengths(max_seq_len, prefill_lengths)
    check_length(model.config, max_seq_len)
    names = cache_names(info["num_layers"])
    keys_shape, values_shape = cache_shapes(info, max_seq_len)
    init = init_graph([(n, keys_shape if n[0] == "k" else values_shape) for n in names])
    keys = [(f"prefill_{n}", n) for n in lengths] + [("decode", 1)]
    say = _Progress(progress)
    graphs = []
    was_training = model.training
    model.eval()
    try:
        import torch

        with wick_attention(model), torch.no_grad():
            for key, n in keys:
                step = CausalLMStep(model, n, max_seq_len).eval()
                args = example_inputs(info, n, max_seq_len)
                tg, _ = _convert_graph(
                    step,
                    args,
                    None,
                    None,
                    False,
                    _Stages(None),
                    f"{key}: ",
                    say,
                    QUANTIZE_MODES[quantize],
                )
                del args
                caches_to_variables(tg, names, init)
                rename_inputs(tg, ["tokens", "input_pos"])
                graphs.append((key, tg))
                _return_freed_memory()
        graphs[0][1].subgraphs.append(init)  # written once; every CALL_ONCE names it
        meta = dict(
            info,
            format=1,
            max_seq_len=max_seq_len,
            prefill_lengths=list(lengths),
            quantize=quantize,
            cache=dict(names=names, keys_shape=keys_shape, values_shape=values_shape),
        )
        metadata = {}
        if tokenizer is not None:
            from .tokenizer import METADATA_NAME as TOKENIZER
            from .tokenizer import pack

            packed, kind = pack(tokenizer)
            meta["tokenizer"] = kind if packed else None
            if packed:
                metadata[TOKENIZER] = packed
            else:
                say(f"the tokenizer is not stored in the file: {kind}")
        metadata[METADATA_NAME] = json.dumps(meta).encode()
        say(f"writing {len(graphs)} signatures")
        data = serialize(graphs, "wick.llm", consume=True, metadata=metadata)
        del graphs
        _return_freed_memory()
        say(f"done: {len(data) / 2**20:.1f} MB")
    finally:
        say.close()
        model.train(was_training)
    return LLM(data, meta, tokenizer=tokenizer)
