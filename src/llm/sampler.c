/*
 * sampler.c — wick_sampler (include/wick/llm.h): greedy, or seeded sampling
 * with temperature, top-k and top-p, after HuggingFace's repetition penalty
 * on the token ids seen so far, exactly as llm.h defines it (and as
 * python/wick/llm/sampling.py repeats it), with splitmix64 for the random
 * numbers.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "llm/internal.h"
#include "wick/llm.h"

struct wick_sampler {
  wick_sampler_options o;
  size_t vocab;
  uint64_t state;
  int32_t *order;      /* candidates */
  unsigned char *seen; /* vocab flags: the history of the repetition penalty */
  float *penalized;    /* vocab logits after the penalty (when it is on) */
};

wick_sampler_options wick_sampler_options_default(void) {
  wick_sampler_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.top_p = 1.0f;
  o.repetition_penalty = 1.0f;
  return o;
}

size_t wick_sampler_vocab_size(const wick_sampler *s) { return s ? s->vocab : 0; }

wick_status wick_sampler_create(const wick_sampler_options *options, size_t vocab_size,
                                wick_sampler **sampler_out) {
  if (sampler_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *sampler_out = NULL;
  wick_sampler_options o = wick_sampler_options_default();
  if (options != NULL) {
    const size_t before_penalty = offsetof(wick_sampler_options, repetition_penalty);
    if (options->struct_size != sizeof o && options->struct_size != before_penalty)
      return WICK_ERR_INVALID_ARGUMENT;
    memcpy(&o, options, options->struct_size); /* the older struct keeps the default penalty */
  }
  if (vocab_size == 0 || vocab_size > INT32_MAX || o.temperature != o.temperature ||
      o.top_p != o.top_p || o.top_k < 0 || !(o.repetition_penalty > 0.0f) ||
      !isfinite(o.repetition_penalty))
    return WICK_ERR_INVALID_ARGUMENT;
  wick_sampler *s = calloc(1, sizeof *s);
  if (s == NULL) return WICK_ERR_OUT_OF_MEMORY;
  s->order = malloc(vocab_size * sizeof *s->order);
  s->seen = calloc(vocab_size, 1);
  if (o.repetition_penalty != 1.0f) s->penalized = malloc(vocab_size * sizeof *s->penalized);
  if (s->order == NULL || s->seen == NULL ||
      (o.repetition_penalty != 1.0f && s->penalized == NULL)) {
    wick_sampler_destroy(s);
    return WICK_ERR_OUT_OF_MEMORY;
  }
  s->o = o;
  s->vocab = vocab_size;
  s->state = o.seed;
  *sampler_out = s;
  return WICK_OK;
}

void wick_sampler_destroy(wick_sampler *s) {
  if (s == NULL) return;
  free(s->order);
  free(s->seen);
  free(s->penalized);
  free(s);
}

wick_status wick_sampler_observe(wick_sampler *s, const int32_t *tokens, size_t count) {
  if (s == NULL || (count > 0 && tokens == NULL)) return WICK_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < count; i++)
    if (tokens[i] < 0 || (size_t)tokens[i] >= s->vocab) return WICK_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < count; i++) s->seen[tokens[i]] = 1;
  return WICK_OK;
}

void wick_sampler_forget(wick_sampler *s) {
  if (s != NULL) memset(s->seen, 0, s->vocab);
}

/* Step 0 of llm.h: the logits with the penalty on the history (HuggingFace's
 * RepetitionPenaltyLogitsProcessor, in float32), or `l` itself when it is off. */
static const float *apply_penalty(wick_sampler *s, const float *l) {
  const float p = s->o.repetition_penalty;
  if (p == 1.0f) return l;
  for (size_t i = 0; i < s->vocab; i++) {
    const float x = l[i];
    s->penalized[i] = !s->seen[i] ? x : x < 0.0f ? x * p : x / p;
  }
  return s->penalized;
}

/* splitmix64: the next double in [0, 1). */
static double next_uniform(wick_sampler *s) {
  uint64_t z = (s->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1p-53;
}

static float logit(const float *l, int32_t i) { return l[i] != l[i] ? -INFINITY : l[i]; }

/* Larger logit first, then lower index. */
static bool before(const float *l, int32_t a, int32_t b) {
  const float x = logit(l, a), y = logit(l, b);
  return x > y || (x == y && a < b);
}

/* Sift-down of a min-heap (the worst candidate at the root) over order[0, n). */
static void sift(const float *l, int32_t *h, size_t n, size_t i) {
  for (;;) {
    size_t w = i, a = 2 * i + 1, b = a + 1;
    if (a < n && before(l, h[w], h[a])) w = a;
    if (b < n && before(l, h[w], h[b])) w = b;
    if (w == i) return;
    int32_t t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

/* The k best indices of l, best first, into order[0, k): a heap of the k best, then sorted. */
static void top(const float *l, size_t vocab, int32_t *order, size_t k) {
  for (size_t i = 0; i < k; i++) order[i] = (int32_t)i;
  for (size_t i = k / 2; i-- > 0;) sift(l, order, k, i);
  for (size_t i = k; i < vocab; i++)
    if (before(l, (int32_t)i, order[0])) {
      order[0] = (int32_t)i;
      sift(l, order, k, 0);
    }
  for (size_t n = k; n > 1; n--) { /* heap sort: the worst goes to the end */
    int32_t t = order[0];
    order[0] = order[n - 1];
    order[n - 1] = t;
    sift(l, order, n - 1, 0);
  }
}

/* Steps 1-5 of llm.h on logits l. */
static int32_t pick_token(wick_sampler *s, const float *l) {
  /* the first largest logit, NaN as -inf (a NaN x fails x > best_logit like -inf does); the best
   * value kept in a register: a decode step's greedy pick over 49152 logits was ~1 % of it */
  size_t best = 0;
  float best_logit = logit(l, 0);
  for (size_t i = 1; i < s->vocab; i++) {
    const float x = l[i];
    if (x > best_logit) {
      best_logit = x;
      best = i;
    }
  }
  if (!(s->o.temperature > 0.0f)) return (int32_t)best;
  const bool nucleus = s->o.top_p > 0.0f && s->o.top_p < 1.0f;
  size_t n = s->vocab;
  if (s->o.top_k > 0 && (size_t)s->o.top_k < n) n = (size_t)s->o.top_k;
  if (n < s->vocab || nucleus)
    top(l, s->vocab, s->order, n);
  else
    for (size_t i = 0; i < n; i++) s->order[i] = (int32_t)i;
  const double lmax = (double)logit(l, (int32_t)best), t = (double)s->o.temperature;
  double total = 0.0;
  for (size_t i = 0; i < n; i++) total += exp(((double)logit(l, s->order[i]) - lmax) / t);
  if (nucleus) {
    const double want = (double)s->o.top_p * total;
    double run = 0.0;
    size_t keep = 0;
    while (keep < n) {
      run += exp(((double)logit(l, s->order[keep]) - lmax) / t);
      keep++;
      if (run >= want) break;
    }
    n = keep;
    total = run;
  }
  const double u = next_uniform(s) * total;
  double run = 0.0;
  for (size_t i = 0; i < n; i++) {
    run += exp(((double)logit(l, s->order[i]) - lmax) / t);
    if (run > u) return s->order[i];
  }
  return s->order[n - 1];
}

int32_t wick_sampler_sample(wick_sampler *s, const float *raw) {
  if (s == NULL || raw == NULL) return -1;
  const int32_t pick = pick_token(s, apply_penalty(s, raw));
  s->seen[pick] = 1;
  return pick;
}
