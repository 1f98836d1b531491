/*
 * llm.h — text generation with the LLM files wick.llm.convert writes: a
 * standard .tflite file with signatures prefill_<n> and decode,
 *     (tokens int32 [1, n], input_pos int32 [1]) -> logits float32 [1, V],
 * a KV cache in resource variables shared by all of them, and a "wick_llm"
 * metadata entry (JSON: max_seq_len, vocab_size, eos_token_ids, ...).
 * docs/llm.md describes the file.
 *
 * A wick_llm holds one interpreter per signature, all sharing one cache, and
 * the sequence so far (its length is the position the next token is written
 * at). Tokens are appended in exact chunks — the longest prefill length that
 * fits, then the next; a remainder shorter than every prefill length runs as
 * the shortest one that covers it, ending at the last token and overlapping
 * the chunk before; an append shorter than every prefill length runs as
 * decode steps — and the logits of the last appended token are kept.
 * wick_llm_reset empties the cache; without it the next append continues the
 * sequence (the next turn of a chat reuses the cache).
 *
 * A wick_sampler picks the next token from logits: greedy (temperature <= 0)
 * or seeded random sampling with temperature, top-k and top-p, after an
 * optional repetition penalty, defined exactly below so that any
 * implementation (wick.llm's Python one included) picks the same tokens for
 * the same seed:
 *   0. repetition penalty p != 1 (HuggingFace transformers'
 *      RepetitionPenaltyLogitsProcessor): the logit l of every token id in
 *      the sampler's history becomes l * p if l < 0, else l / p (float32
 *      arithmetic); the steps below read these logits, greedy included.
 *   1. greedy: the first index of the largest logit.
 *   2. candidates: the top_k (> 0) largest logits, or all of them; ordered by
 *      logit, largest first, equal logits by index (only when top_k > 0 or
 *      top_p is on; else in index order).
 *   3. weights w_i = exp((l_i - l_max) / temperature) in double precision,
 *      summed in candidate order: total.
 *   4. top_p in (0, 1): the shortest prefix of the candidates whose running
 *      sum reaches top_p * total; total becomes that prefix's sum.
 *   5. u = the next random double in [0, 1) * total; the pick is the first
 *      candidate whose running sum exceeds u (the last one if none does).
 * The random doubles are splitmix64's outputs >> 11, times 2^-53; the state
 * starts at the seed and every sample draws one.
 * The history is the set of token ids shown with wick_sampler_observe plus
 * every token the sampler picked, until wick_sampler_forget. The prompt counts,
 * as in HuggingFace's generate (whose penalty looks at the whole input_ids):
 * wick_llm_generate shows the sampler its prompt, so a sampler kept across
 * the turns of a chat (with the cache reused) penalizes every token of the
 * conversation so far; forget when the cache is reset.
 *
 * Threading: a wick_llm and a wick_sampler are used by one thread at a time.
 * Errors: as in wick.h; a wick_llm keeps its last message
 * (wick_llm_last_error).
 */
#ifndef WICK_LLM_H
#define WICK_LLM_H

#include "wick/wick.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wick_llm wick_llm;

typedef struct wick_llm_options {
  size_t struct_size; /* sizeof(wick_llm_options) */
  int num_threads;    /* threads of each interpreter, as wick_interpreter_options (default 1) */
} wick_llm_options;

WICK_API wick_llm_options wick_llm_options_default(void);

/* Creates the generator over a model written by wick.llm.convert (the model must outlive
 * it); options may be NULL. Errors: WICK_ERR_INVALID_ARGUMENT (NULL arguments, a model
 * without "wick_llm" metadata or without a decode signature, options of an unknown
 * struct_size), WICK_ERR_MALFORMED_MODEL (metadata that do not parse or disagree with the
 * signatures), and those of wick_interpreter_create. On failure *llm_out is NULL. */
WICK_API wick_status wick_llm_create(const wick_model *model, const wick_llm_options *options,
                                     wick_error_info *error, wick_llm **llm_out);
/* NULL is a no-op. */
WICK_API void wick_llm_destroy(wick_llm *llm);
/* The message of the last failed call ("" if none); owned by the llm. */
WICK_API const char *wick_llm_last_error(const wick_llm *llm);

WICK_API size_t wick_llm_max_seq_len(const wick_llm *llm);
WICK_API size_t wick_llm_vocab_size(const wick_llm *llm);
/* Tokens in the cache: where the next appended token goes. */
WICK_API size_t wick_llm_position(const wick_llm *llm);
/* The file's end-of-sequence ids: count, and id i (-1 when out of range). */
WICK_API size_t wick_llm_eos_count(const wick_llm *llm);
WICK_API int32_t wick_llm_eos_token(const wick_llm *llm, size_t i);

/* Empties the cache (position 0). */
WICK_API wick_status wick_llm_reset(wick_llm *llm);
/* Appends `count` tokens (count >= 1) to the sequence; afterwards wick_llm_logits holds the
 * logits of the last. Errors: WICK_ERR_INVALID_ARGUMENT (NULL, count 0, the cache would
 * overflow: position + count > max_seq_len — nothing is run then), WICK_ERR_INVALID_INPUT
 * (a token id outside [0, vocab_size) — nothing is run), WICK_ERR_CANCELLED
 * (wick_llm_cancel; the sequence then ends at the last chunk that completed), and invoke's. */
WICK_API wick_status wick_llm_append(wick_llm *llm, const int32_t *tokens, size_t count);
/* The vocab_size logits of the last appended token, NULL before the first append (and after a
 * reset). Valid until the next append or reset. */
WICK_API const float *wick_llm_logits(const wick_llm *llm);
/* Asks a running append (or generate) to stop; callable from any thread. */
WICK_API void wick_llm_cancel(wick_llm *llm);

typedef struct wick_sampler_options {
  size_t struct_size; /* sizeof(wick_sampler_options) */
  float temperature;  /* <= 0: greedy (the default) */
  int top_k;          /* > 0: sample among the top_k most likely tokens only; 0: all */
  float top_p;        /* in (0, 1): nucleus sampling; otherwise (1, the default) off */
  uint64_t seed;
  /* HuggingFace's repetition_penalty (step 0 above): > 1 makes tokens of the history less
   * likely, < 1 more; 1 (the default) is off. Must be a finite number > 0. A struct_size of
   * offsetof(wick_sampler_options, repetition_penalty) (the struct before this field) reads
   * as 1. */
  float repetition_penalty;
} wick_sampler_options;

WICK_API wick_sampler_options wick_sampler_options_default(void);

typedef struct wick_sampler wick_sampler;

/* A sampler for logits of `vocab_size` values, with an empty history. Errors:
 * WICK_ERR_INVALID_ARGUMENT (NULL out, vocab_size 0, an unknown struct_size, a NaN temperature
 * or top_p, top_k < 0, a repetition_penalty that is not a finite number > 0),
 * WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_sampler_create(const wick_sampler_options *options, size_t vocab_size,
                                         wick_sampler **sampler_out);
WICK_API void wick_sampler_destroy(wick_sampler *sampler);
/* The next token for `logits` (vocab_size values, not modified; NaN reads as -infinity),
 * which joins the history; -1 for NULL arguments. Draws one random number unless greedy. */
WICK_API int32_t wick_sampler_sample(wick_sampler *sampler, const float *logits);
/* Adds `count` token ids (a prompt, tokens appended without sampling) to the history the
 * repetition penalty looks at. Errors: WICK_ERR_INVALID_ARGUMENT (NULL sampler, NULL tokens
 * with count > 0, an id outside [0, vocab_size): nothing is added). */
WICK_API wick_status wick_sampler_observe(wick_sampler *sampler, const int32_t *tokens,
                                          size_t count);
/* Empties the history (a new conversation); NULL is a no-op. */
WICK_API void wick_sampler_forget(wick_sampler *sampler);

/* Called with each new token as generation produces it (streaming); return nonzero to stop. */
typedef int (*wick_llm_token_fn)(void *user, int32_t token);

/* Appends the prompt (prompt_len >= 1), adds it to the sampler's history
 * (wick_sampler_observe) and then samples up to max_new tokens, appending each
 * before sampling the next, stopping after a token in `stop` (num_stop ids; may be NULL/0 —
 * pass the file's eos ids to stop at the end of a turn) or when on_token returns nonzero.
 * Writes the new tokens to out (room for max_new) and their count to *num_out. The last new
 * token is not appended (append it to continue the sequence). Errors: those of
 * wick_llm_append (the prompt, or position + prompt_len + max_new - 1 > max_seq_len:
 * WICK_ERR_INVALID_ARGUMENT before anything runs); *num_out counts the tokens made so far. */
WICK_API wick_status wick_llm_generate(wick_llm *llm, const int32_t *prompt, size_t prompt_len,
                                       size_t max_new, wick_sampler *sampler, const int32_t *stop,
                                       size_t num_stop, wick_llm_token_fn on_token, void *user,
                                       int32_t *out, size_t *num_out);

/* ---------------------------------------------------------------- the tokenizer in the file
 *
 * wick.llm.convert(..., tokenizer=) packs a HuggingFace BPE tokenizer into the
 * "wick_tokenizer" metadata (python/wick/llm/tokenizer.py has the layout and what it
 * accepts): byte-level ones with GPT-2's split (SmolLM2, GPT-2) and SentencePiece-style
 * ones (a "\u2581" metaspace, byte fallback to <0xNN> tokens, no byte-level mapping: Llama 2,
 * TinyLlama, Mistral, Gemma). Encoding is HuggingFace tokenizers' encode(text,
 * add_special_tokens=False): the added tokens (<|im_start|>, <s>, ...) are matched literally
 * (leftmost, longest; with the whitespace their lstrip / rstrip take), the text between
 * them is normalized (Prepend, Replace, NFC, NFD, NFKD, NFKC, Lowercase), pre-tokenized (none;
 * GPT-2's split, with digits one by one when the tokenizer says so; Metaspace; Split on a string)
 * and each word's characters — bytes as byte-level symbols, or vocabulary characters, else <0xNN>
 * byte tokens, else the unknown token — merged by BPE, lowest merge rank first (leftmost on ties).
 * GPT-2's split is exact for ASCII text; beyond ASCII its letter / digit / punctuation / space
 * classes come from a small table (Latin-1, general and CJK punctuation, symbol blocks, Unicode
 * spaces; every other code point is a letter), so rare characters may split differently from
 * HuggingFace's tokenizer. No beginning-of-sequence token is added: the chat template is the
 * caller's to render (as text with the added tokens, <s> included, in it). */
typedef struct wick_tokenizer wick_tokenizer;

/* The tokenizer of a model written with one (the model must outlive it). Errors:
 * WICK_ERR_INVALID_ARGUMENT (NULL arguments; no "wick_tokenizer" metadata: the message says
 * so), WICK_ERR_MALFORMED_MODEL (the entry does not parse: counts, lengths or ids out of
 * range), WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_tokenizer_create(const wick_model *model, wick_error_info *error,
                                           wick_tokenizer **tokenizer_out);
WICK_API void wick_tokenizer_destroy(wick_tokenizer *tokenizer);
WICK_API size_t wick_tokenizer_vocab_size(const wick_tokenizer *tokenizer);
/* Encodes `size` bytes of UTF-8 text (an invalid byte is a character of its own: its
 * byte-level symbol, or its <0xNN> token).
 * Writes up to `capacity` ids and the number the text needs to *count (call with capacity 0
 * to size the buffer). Errors: WICK_ERR_INVALID_ARGUMENT (NULL arguments), WICK_ERR_OUT_OF_MEMORY.
 * No error when the ids do not fit: compare *count with capacity. */
WICK_API wick_status wick_tokenizer_encode(const wick_tokenizer *tokenizer, const char *text,
                                           size_t size, int32_t *ids, size_t capacity,
                                           size_t *count);
/* The bytes token `id` stands for (an added token's text, or a vocabulary token's bytes: its
 * byte-level symbols' bytes, or its string through the decoder's Replace / Metaspace steps,
 * a <0xNN> token its byte; a token may end inside a UTF-8 character that the next
 * completes): writes up to `capacity` bytes (not terminated) and returns the number of bytes;
 * 0 for an id out of range. */
WICK_API size_t wick_tokenizer_decode(const wick_tokenizer *tokenizer, int32_t id, char *bytes,
                                      size_t capacity);
/* Whether `id` is an added token (<|im_end|>, ...): generation output usually hides them. */
WICK_API int wick_tokenizer_is_added(const wick_tokenizer *tokenizer, int32_t id);

/* Flags of wick_tokenizer_decode_text. */
#define WICK_TOKENIZER_SKIP_SPECIAL 1u /* leave the special added tokens out */
#define WICK_TOKENIZER_CONTINUATION                      \
  2u /* the ids continue a text already decoded (up to a \
      * token that is not left out): no stripping of the \
      * text's first space (Strip, Metaspace decoders) */

/* The text of `count` ids as HuggingFace tokenizers' decode(ids, skip_special_tokens) gives
 * it: each token's string through the tokenizer's decoder (byte-level symbols back to bytes;
 * "\u2581" to spaces, <0xNN> runs to their bytes — one U+FFFD per byte when they are not
 * UTF-8 — and the first space stripped, as the decoder says); ids out of range are left out.
 * Writes up to `capacity` bytes (not terminated) and the text's size to *size (call with
 * capacity 0 to size the buffer). To stream text as tokens come, decode the tokens since the
 * last piece printed together, with WICK_TOKENIZER_CONTINUATION once a token that is not
 * left out was decoded, and hold them while the last one not left out is a byte token
 * (wick_tokenizer_is_byte: a run of them decodes as a whole) or their text ends in U+FFFD
 * (an incomplete character of byte-level symbols): the pieces then add up to the text of all the
 * ids (`wick generate` does so, holding at most 64 tokens). Errors: WICK_ERR_INVALID_ARGUMENT (NULL
 * arguments), WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_tokenizer_decode_text(const wick_tokenizer *tokenizer, const int32_t *ids,
                                                size_t count, unsigned flags, char *text,
                                                size_t capacity, size_t *size);
/* Whether `id` is a special added token (<s>, </s>, <|im_end|>, ...: the ones
 * WICK_TOKENIZER_SKIP_SPECIAL leaves out). */
WICK_API int wick_tokenizer_is_special(const wick_tokenizer *tokenizer, int32_t id);
/* Whether the decoder turns `id` into one byte of a run (a <0xNN> token under ByteFallback). */
WICK_API int wick_tokenizer_is_byte(const wick_tokenizer *tokenizer, int32_t id);

#ifdef __cplusplus
}
#endif

#endif /* WICK_LLM_H */
