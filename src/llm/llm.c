/*
 * llm.c — the generator of include/wick/llm.h over the public runtime API:
 * reading the "wick_llm" metadata (untrusted JSON), one interpreter per
 * signature sharing the decode interpreter's cache variables, the append
 * schedule (exact chunks, an overlapping last chunk, decode steps), and the
 * generate loop. The sampler is in sampler.c.
 *
 * This layer uses only the public headers (scripts/check_layers.py).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/internal.h"

#define MAX_PREFILL 64 /* prefill signatures read (more are ignored) */
#define MAX_EOS 64

typedef struct runner {
  wick_interpreter *it;
  size_t n;                  /* tokens per call */
  wick_tensor *tokens, *pos; /* inputs */
  const wick_tensor *logits; /* output */
} runner;

struct wick_llm {
  const wick_model *model;
  runner decode;
  runner prefill[MAX_PREFILL]; /* longest first */
  size_t num_prefill;
  size_t max_seq_len, vocab, position;
  int32_t eos[MAX_EOS];
  size_t num_eos;
  const float *logits; /* the last append's, or NULL */
  _Atomic(wick_interpreter *) running;
  atomic_bool cancel;
  char error[512];
};

static wick_status failf(wick_llm *llm, wick_error_info *error, wick_status st, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
static wick_status failf(wick_llm *llm, wick_error_info *error, wick_status st, const char *fmt,
                         ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (llm != NULL) memcpy(llm->error, buf, sizeof buf);
  if (error != NULL) memcpy(error->message, buf, sizeof buf);
  return st;
}

wick_llm_options wick_llm_options_default(void) {
  wick_llm_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = 1;
  return o;
}

/* The facts of the metadata generation needs. */
typedef struct llm_meta {
  int64_t max_seq_len, vocab_size; /* -1: absent */
  int64_t eos[MAX_EOS];
  size_t num_eos;
} llm_meta;

static bool read_meta(const char *text, size_t size, llm_meta *m, char *why, size_t why_size) {
  m->max_seq_len = m->vocab_size = -1;
  m->num_eos = 0;
  wick_json j;
  wick_json_init(&j, text, size);
  if (!wick_json_object_begin(&j)) {
    snprintf(why, why_size, "the wick_llm metadata is not a JSON object");
    return false;
  }
  const char *key;
  size_t key_len;
  int more;
  while ((more = wick_json_object_next(&j, &key, &key_len)) > 0) {
    bool ok;
    if (key_len == 11 && memcmp(key, "max_seq_len", 11) == 0)
      ok = wick_json_int(&j, &m->max_seq_len);
    else if (key_len == 10 && memcmp(key, "vocab_size", 10) == 0)
      ok = wick_json_int(&j, &m->vocab_size);
    else if (key_len == 13 && memcmp(key, "eos_token_ids", 13) == 0)
      ok = wick_json_int_array(&j, m->eos, MAX_EOS, &m->num_eos);
    else
      ok = wick_json_skip(&j);
    if (!ok) {
      snprintf(why, why_size, "the wick_llm metadata: value of \"%.*s\" is malformed",
               (int)(key_len < 40 ? key_len : 40), key);
      return false;
    }
  }
  if (more < 0) {
    snprintf(why, why_size, "the wick_llm metadata is malformed JSON (at byte %zu)",
             wick_json_offset(&j));
    return false;
  }
  return true;
}

static wick_status make_runner(wick_llm *llm, const char *key, size_t n, const wick_llm_options *o,
                               wick_error_info *error, runner *r) {
  wick_interpreter_options io = wick_interpreter_options_default();
  io.num_threads = o->num_threads;
  io.share_variables_with = llm->decode.it; /* NULL for decode itself: it owns the cache */
  wick_error_info e;
  wick_status st = wick_interpreter_create(llm->model, key, &io, &e, &r->it);
  if (st != WICK_OK) return failf(llm, error, st, "signature %s: %s", key, e.message);
  int t = wick_interpreter_input_index(r->it, "tokens");
  int p = wick_interpreter_input_index(r->it, "input_pos");
  int l = wick_interpreter_output_index(r->it, "logits");
  if (t < 0 || p < 0 || l < 0)
    return failf(llm, error, WICK_ERR_MALFORMED_MODEL,
                 "signature %s lacks input tokens / input_pos or output logits", key);
  r->tokens = wick_interpreter_input(r->it, (size_t)t);
  r->pos = wick_interpreter_input(r->it, (size_t)p);
  r->logits = wick_interpreter_output(r->it, (size_t)l);
  r->n = n;
  const size_t rank = wick_tensor_rank(r->logits);
  if (wick_tensor_dtype(r->tokens) != WICK_DTYPE_INT32 ||
      wick_tensor_byte_size(r->tokens) != n * sizeof(int32_t) ||
      wick_tensor_dtype(r->pos) != WICK_DTYPE_INT32 ||
      wick_tensor_byte_size(r->pos) != sizeof(int32_t) ||
      wick_tensor_dtype(r->logits) != WICK_DTYPE_FLOAT32 || rank == 0 ||
      wick_tensor_byte_size(r->logits) != (size_t)wick_tensor_dim(r->logits, rank - 1) * 4)
    return failf(llm, error, WICK_ERR_MALFORMED_MODEL,
                 "signature %s: expected tokens int32 [1, %zu], input_pos int32 [1] and "
                 "logits float32 [1, V]",
                 key, n);
  return WICK_OK;
}

/* n of a "prefill_<n>" key, or 0. */
static size_t prefill_length(const char *key) {
  if (strncmp(key, "prefill_", 8) != 0 || key[8] < '1' || key[8] > '9') return 0;
  size_t n = 0;
  for (const char *c = key + 8; *c; c++) {
    if (*c < '0' || *c > '9' || n > 1000000) return 0;
    n = n * 10 + (size_t)(*c - '0');
  }
  return n;
}

static int by_length_desc(const void *a, const void *b) {
  const runner *x = a, *y = b;
  return x->n < y->n ? 1 : (x->n > y->n ? -1 : 0);
}

wick_status wick_llm_create(const wick_model *model, const wick_llm_options *options,
                            wick_error_info *error, wick_llm **llm_out) {
  if (error != NULL) error->message[0] = '\0';
  if (llm_out == NULL || model == NULL)
    return failf(NULL, error, WICK_ERR_INVALID_ARGUMENT, "NULL model or llm_out");
  *llm_out = NULL;
  wick_llm_options o = wick_llm_options_default();
  if (options != NULL) {
    if (options->struct_size != sizeof o)
      return failf(NULL, error, WICK_ERR_INVALID_ARGUMENT,
                   "wick_llm_options.struct_size %zu is not %zu", options->struct_size, sizeof o);
    o = *options;
  }
  size_t size;
  const char *text = wick_model_metadata(model, "wick_llm", &size);
  if (text == NULL)
    return failf(NULL, error, WICK_ERR_INVALID_ARGUMENT,
                 "the model has no \"wick_llm\" metadata: not a file written by wick.llm.convert");
  llm_meta meta;
  char why[256];
  if (!read_meta(text, size, &meta, why, sizeof why))
    return failf(NULL, error, WICK_ERR_MALFORMED_MODEL, "%s", why);
  if (meta.max_seq_len < 2 || meta.max_seq_len > INT32_MAX)
    return failf(NULL, error, WICK_ERR_MALFORMED_MODEL,
                 "the wick_llm metadata has no valid max_seq_len (%" PRId64 ")", meta.max_seq_len);
  wick_llm *llm = calloc(1, sizeof *llm);
  if (llm == NULL) return failf(NULL, error, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  llm->model = model;
  llm->max_seq_len = (size_t)meta.max_seq_len;
  wick_status st = WICK_OK;
  bool have_decode = false;
  for (size_t i = 0; i < wick_model_signature_count(model); i++)
    have_decode = have_decode || strcmp(wick_model_signature_key(model, i), "decode") == 0;
  if (!have_decode) {
    st = failf(llm, error, WICK_ERR_INVALID_ARGUMENT, "the model has no decode signature");
    goto fail;
  }
  if ((st = make_runner(llm, "decode", 1, &o, error, &llm->decode)) != WICK_OK) goto fail;
  for (size_t i = 0; i < wick_model_signature_count(model) && llm->num_prefill < MAX_PREFILL; i++) {
    const char *key = wick_model_signature_key(model, i);
    size_t n = prefill_length(key);
    if (n < 2 || n > llm->max_seq_len) continue;
    if ((st = make_runner(llm, key, n, &o, error, &llm->prefill[llm->num_prefill])) != WICK_OK)
      goto fail;
    llm->num_prefill++;
  }
  qsort(llm->prefill, llm->num_prefill, sizeof llm->prefill[0], by_length_desc);
  const size_t rank = wick_tensor_rank(llm->decode.logits);
  llm->vocab = (size_t)wick_tensor_dim(llm->decode.logits, rank - 1);
  for (size_t i = 0; i < llm->num_prefill; i++) {
    const runner *r = &llm->prefill[i];
    if ((size_t)wick_tensor_dim(r->logits, wick_tensor_rank(r->logits) - 1) != llm->vocab) {
      st = failf(llm, error, WICK_ERR_MALFORMED_MODEL,
                 "prefill_%zu's logits differ in size from decode's (%zu)", r->n, llm->vocab);
      goto fail;
    }
  }
  if (llm->vocab == 0 || (meta.vocab_size >= 0 && (size_t)meta.vocab_size != llm->vocab)) {
    st = failf(llm, error, WICK_ERR_MALFORMED_MODEL,
               "the metadata's vocab_size %" PRId64 " is not the logits' size %zu", meta.vocab_size,
               llm->vocab);
    goto fail;
  }
  for (size_t i = 0; i < meta.num_eos; i++)
    if (meta.eos[i] >= 0 && (size_t)meta.eos[i] < llm->vocab)
      llm->eos[llm->num_eos++] = (int32_t)meta.eos[i];
  *llm_out = llm;
  return WICK_OK;
fail:
  wick_llm_destroy(llm);
  return st;
}

void wick_llm_destroy(wick_llm *llm) {
  if (llm == NULL) return;
  for (size_t i = 0; i < llm->num_prefill; i++) wick_interpreter_destroy(llm->prefill[i].it);
  wick_interpreter_destroy(llm->decode.it); /* last: the others share its state */
  free(llm);
}

const char *wick_llm_last_error(const wick_llm *llm) { return llm ? llm->error : ""; }
size_t wick_llm_max_seq_len(const wick_llm *llm) { return llm ? llm->max_seq_len : 0; }
size_t wick_llm_vocab_size(const wick_llm *llm) { return llm ? llm->vocab : 0; }
size_t wick_llm_position(const wick_llm *llm) { return llm ? llm->position : 0; }
size_t wick_llm_eos_count(const wick_llm *llm) { return llm ? llm->num_eos : 0; }
int32_t wick_llm_eos_token(const wick_llm *llm, size_t i) {
  return llm && i < llm->num_eos ? llm->eos[i] : -1;
}
const float *wick_llm_logits(const wick_llm *llm) { return llm ? llm->logits : NULL; }

wick_status wick_llm_reset(wick_llm *llm) {
  if (llm == NULL) return WICK_ERR_INVALID_ARGUMENT;
  wick_status st = wick_interpreter_reset_variables(llm->decode.it);
  llm->position = 0;
  llm->logits = NULL;
  return st;
}

void wick_llm_cancel(wick_llm *llm) {
  if (llm == NULL) return;
  atomic_store(&llm->cancel, true);
  wick_interpreter *it = atomic_load(&llm->running);
  if (it != NULL) wick_interpreter_cancel(it);
}

/* One signature call: `r->n` tokens written at cache position `pos`. */
static wick_status run(wick_llm *llm, runner *r, const int32_t *tokens, size_t pos) {
  int32_t p = (int32_t)pos;
  wick_status st = wick_tensor_copy_from(r->tokens, tokens, r->n * sizeof(int32_t));
  if (st == WICK_OK) st = wick_tensor_copy_from(r->pos, &p, sizeof p);
  if (st != WICK_OK) return failf(llm, NULL, st, "cannot set the inputs of a %zu-token call", r->n);
  atomic_store(&llm->running, r->it);
  st = atomic_load(&llm->cancel) ? WICK_ERR_CANCELLED : wick_interpreter_invoke(r->it);
  /* Cancelled with no cancel pending: a wick_llm_cancel that raced the end of an earlier
   * append reached this interpreter after that append was done (the interpreter keeps a
   * cancel for its next invoke, and clears it when that invoke returns). Not meant for this
   * call: run it again (it rewrites the same keys and values at the same positions). */
  if (st == WICK_ERR_CANCELLED && !atomic_load(&llm->cancel)) st = wick_interpreter_invoke(r->it);
  atomic_store(&llm->running, NULL);
  if (st == WICK_ERR_CANCELLED) return failf(llm, NULL, st, "cancelled");
  if (st != WICK_OK)
    return failf(llm, NULL, st, "%zu-token call at position %zu: %s", r->n, pos,
                 wick_interpreter_last_error(r->it));
  llm->logits = wick_tensor_data(r->logits);
  return WICK_OK;
}

/* wick_llm_append without clearing a pending cancel (generate clears it once, at its start). */
static wick_status append(wick_llm *llm, const int32_t *tokens, size_t count) {
  if (tokens == NULL || count == 0)
    return failf(llm, NULL, WICK_ERR_INVALID_ARGUMENT, "append needs at least one token");
  if (count > llm->max_seq_len - llm->position)
    return failf(llm, NULL, WICK_ERR_INVALID_ARGUMENT,
                 "%zu tokens at position %zu do not fit the %zu-position cache", count,
                 llm->position, llm->max_seq_len);
  for (size_t i = 0; i < count; i++)
    if (tokens[i] < 0 || (size_t)tokens[i] >= llm->vocab)
      return failf(llm, NULL, WICK_ERR_INVALID_INPUT,
                   "token %zu is %" PRId32 ", outside the vocabulary [0, %zu)", i, tokens[i],
                   llm->vocab);
  const size_t base = llm->position;
  size_t done = 0;
  wick_status st;
  for (size_t k = 0; k < llm->num_prefill; k++) { /* longest first */
    runner *r = &llm->prefill[k];
    while (count - done >= r->n) {
      if ((st = run(llm, r, tokens + done, base + done)) != WICK_OK) return st;
      done += r->n;
      llm->position = base + done;
    }
  }
  if (done == count) return WICK_OK;
  /* the shortest prefill length that covers the rest, ending at the last token */
  runner *cover = NULL;
  for (size_t k = 0; k < llm->num_prefill; k++)
    if (llm->prefill[k].n >= count - done && llm->prefill[k].n <= count) cover = &llm->prefill[k];
  if (cover != NULL) {
    if ((st = run(llm, cover, tokens + count - cover->n, base + count - cover->n)) != WICK_OK)
      return st;
    llm->position = base + count;
    return WICK_OK;
  }
  for (; done < count; done++) {
    if ((st = run(llm, &llm->decode, tokens + done, base + done)) != WICK_OK) return st;
    llm->position = base + done + 1;
  }
  return WICK_OK;
}

wick_status wick_llm_append(wick_llm *llm, const int32_t *tokens, size_t count) {
  if (llm == NULL) return WICK_ERR_INVALID_ARGUMENT;
  atomic_store(&llm->cancel, false);
  return append(llm, tokens, count);
}

wick_status wick_llm_generate(wick_llm *llm, const int32_t *prompt, size_t prompt_len,
                              size_t max_new, wick_sampler *sampler, const int32_t *stop,
                              size_t num_stop, wick_llm_token_fn on_token, void *user, int32_t *out,
                              size_t *num_out) {
  if (num_out != NULL) *num_out = 0;
  if (llm == NULL) return WICK_ERR_INVALID_ARGUMENT;
  if (sampler == NULL || num_out == NULL || (max_new > 0 && out == NULL) ||
      (num_stop > 0 && stop == NULL))
    return failf(llm, NULL, WICK_ERR_INVALID_ARGUMENT, "NULL sampler, out, stop or num_out");
  if (wick_sampler_vocab_size(sampler) != llm->vocab)
    return failf(llm, NULL, WICK_ERR_INVALID_ARGUMENT,
                 "the sampler is for %zu logits, the model has %zu",
                 wick_sampler_vocab_size(sampler), llm->vocab);
  const size_t room = llm->max_seq_len - llm->position;
  if (prompt_len > room || (max_new > 0 && max_new - 1 > room - prompt_len))
    return failf(llm, NULL, WICK_ERR_INVALID_ARGUMENT,
                 "%zu prompt tokens + %zu new tokens at position %zu do not fit the "
                 "%zu-position cache",
                 prompt_len, max_new, llm->position, llm->max_seq_len);
  atomic_store(&llm->cancel, false);
  wick_status st = append(llm, prompt, prompt_len);
  if (st != WICK_OK) return st;
  (void)wick_sampler_observe(sampler, prompt, prompt_len); /* ids checked by append */
  for (size_t i = 0; i < max_new; i++) {
    if (i > 0 && (st = append(llm, &out[i - 1], 1)) != WICK_OK) return st;
    const int32_t token = wick_sampler_sample(sampler, llm->logits);
    out[i] = token;
    *num_out = i + 1;
    bool end = on_token != NULL && on_token(user, token) != 0;
    for (size_t s = 0; s < num_stop && !end; s++) end = stop[s] == token;
    if (end) break;
  }
  return WICK_OK;
}
