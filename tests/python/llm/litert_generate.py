"""Child process for test_llm.py: greedy tokens of a wick.llm file on stock LiteRT.

    python -m tests.python.llm.litert_generate FILE '[prompt ids]' NEW_TOKENS ['[stop ids]']

prints one JSON line: {"tokens": [...]} — or {"error": "..."} when LiteRT cannot load or
run the file. It runs in its own process because LiteRT and wick (or torch) in one process
may disagree about shared libraries, and a LiteRT crash must not take the test run down.
The generation loop is wick.llm's own (model.greedy) over LiteRT's signature runners, which
share the interpreter's resource variables (the KV cache)."""

from __future__ import annotations

import json
import sys

import numpy as np


def main() -> None:
    path, prompt, new_tokens = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    stop_ids = json.loads(sys.argv[4]) if len(sys.argv) > 4 else []
    from wick.llm.model import greedy, read_metadata

    meta = json.loads(read_metadata(path))
    try:
        from ai_edge_litert.interpreter import Interpreter

        interpreter = Interpreter(model_path=path, num_threads=1)
        runners = {}

        def step(n, tokens, position):
            key = "decode" if n == 1 else f"prefill_{n}"
            if key not in runners:
                runners[key] = interpreter.get_signature_runner(key)
            out = runners[key](tokens=tokens, input_pos=np.asarray([position], np.int32))
            return out["logits"]

        tokens = greedy(
            step,
            prompt,
            new_tokens,
            prefill_lengths=meta["prefill_lengths"],
            max_seq_len=meta["max_seq_len"],
            stop_ids=stop_ids,
        )
    except Exception as e:  # reported to the test, which shows it
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return
    print(json.dumps({"tokens": tokens}))


if __name__ == "__main__":
    main()
