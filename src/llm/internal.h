/*
 * internal.h — what the files of src/llm share beyond include/wick/llm.h.
 */
#ifndef WICK_LLM_INTERNAL_H
#define WICK_LLM_INTERNAL_H

#include "llm/json.h"
#include "wick/llm.h"

/* The vocabulary size a sampler was made for (0 for NULL). */
WICK_LLM_INTERNAL size_t wick_sampler_vocab_size(const wick_sampler *s);

#endif /* WICK_LLM_INTERNAL_H */
