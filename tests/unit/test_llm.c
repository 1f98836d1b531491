/*
 * test_llm.c — the parts of the generation API (include/wick/llm.h) that need
 * no model: the sampler (greedy picks, seed determinism, top-k / top-p
 * limits, NaN logits, bad options, the repetition penalty) and the bounded JSON reader of the
 * "wick_llm" metadata on hostile text (truncated, deep nesting, huge
 * numbers, stray bytes). The generate loop on a converted model is tested
 * from Python (tests/python/llm/test_llm.py runs `wick generate`).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llm/json.h"
#include "wick/llm.h"

static int failures, checks;

#define CHECK(cond, ...)                    \
  do {                                      \
    checks++;                               \
    if (!(cond)) {                          \
      failures++;                           \
      fprintf(stderr, "FAIL " __VA_ARGS__); \
      fputc('\n', stderr);                  \
    }                                       \
  } while (0)

static wick_sampler *make(float temperature, int top_k, float top_p, uint64_t seed, size_t vocab) {
  wick_sampler_options o = wick_sampler_options_default();
  o.temperature = temperature, o.top_k = top_k, o.top_p = top_p, o.seed = seed;
  wick_sampler *s = NULL;
  CHECK(wick_sampler_create(&o, vocab, &s) == WICK_OK, "sampler_create");
  return s;
}

static void test_sampler(void) {
  const float logits[6] = {0.5f, 3.0f, 2.9f, -1.0f, NAN, 3.0f};
  wick_sampler *g = make(0.0f, 0, 1.0f, 0, 6);
  CHECK(wick_sampler_sample(g, logits) == 1, "greedy picks the first largest logit");
  wick_sampler_destroy(g);
  /* the same seed: the same sequence; another seed: another sequence */
  int32_t a[64], b[64], c[64];
  wick_sampler *sa = make(1.5f, 0, 1.0f, 42, 6), *sb = make(1.5f, 0, 1.0f, 42, 6),
               *sc = make(1.5f, 0, 1.0f, 43, 6);
  for (int i = 0; i < 64; i++) {
    a[i] = wick_sampler_sample(sa, logits);
    b[i] = wick_sampler_sample(sb, logits);
    c[i] = wick_sampler_sample(sc, logits);
    CHECK(a[i] >= 0 && a[i] < 6 && a[i] != 4, "sample %d is %d (NaN must never be picked)", i,
          a[i]);
  }
  CHECK(memcmp(a, b, sizeof a) == 0, "the same seed gives the same samples");
  CHECK(memcmp(a, c, sizeof a) != 0, "another seed gives other samples");
  wick_sampler_destroy(sa), wick_sampler_destroy(sb), wick_sampler_destroy(sc);
  /* top_k 1 and a tiny top_p are greedy; top_k 3 picks among the three largest only */
  wick_sampler *k1 = make(1.0f, 1, 1.0f, 5, 6), *p0 = make(5.0f, 0, 1e-6f, 5, 6),
               *k3 = make(2.0f, 3, 1.0f, 9, 6);
  bool seen[6] = {false};
  for (int i = 0; i < 200; i++) {
    CHECK(wick_sampler_sample(k1, logits) == 1, "top_k 1 is greedy");
    CHECK(wick_sampler_sample(p0, logits) == 1, "a tiny top_p keeps the most likely only");
    seen[wick_sampler_sample(k3, logits)] = true;
  }
  CHECK(seen[1] && seen[2] && seen[5] && !seen[0] && !seen[3] && !seen[4],
        "top_k 3 picks among tokens 1, 2 and 5 only");
  wick_sampler_destroy(k1), wick_sampler_destroy(p0), wick_sampler_destroy(k3);
  /* bad options */
  wick_sampler_options o = wick_sampler_options_default();
  wick_sampler *s = NULL;
  o.top_k = -1;
  CHECK(wick_sampler_create(&o, 6, &s) == WICK_ERR_INVALID_ARGUMENT && s == NULL, "top_k < 0");
  o = wick_sampler_options_default();
  o.temperature = NAN;
  CHECK(wick_sampler_create(&o, 6, &s) == WICK_ERR_INVALID_ARGUMENT, "NaN temperature");
  CHECK(wick_sampler_create(NULL, 0, &s) == WICK_ERR_INVALID_ARGUMENT, "vocab 0");
  o = wick_sampler_options_default();
  o.struct_size = 3;
  CHECK(wick_sampler_create(&o, 6, &s) == WICK_ERR_INVALID_ARGUMENT, "bad struct_size");
  CHECK(wick_sampler_sample(NULL, logits) == -1, "NULL sampler");
}

static wick_sampler *make_penalized(float penalty, size_t vocab) {
  wick_sampler_options o = wick_sampler_options_default();
  o.repetition_penalty = penalty;
  wick_sampler *s = NULL;
  CHECK(wick_sampler_create(&o, vocab, &s) == WICK_OK, "sampler_create with a penalty");
  return s;
}

/* HuggingFace's repetition penalty: seen ids' logits divided (>= 0) or multiplied (< 0) by
 * p, the picks joining the history; observe / forget; bad penalties and the older struct. */
static void test_repetition_penalty(void) {
  const float logits[5] = {2.0f, 1.9f, -0.1f, -0.15f, 0.0f};
  const float negative[5] = {-2.0f, -1.9f, -0.1f, -0.15f, -0.3f};
  wick_sampler *s = make_penalized(2.0f, 5);
  CHECK(wick_sampler_sample(s, logits) == 0, "empty history: greedy");
  CHECK(wick_sampler_sample(s, logits) == 1, "the pick joined the history: 2 / 2 < 1.9");
  CHECK(wick_sampler_sample(s, logits) == 0, "1.0 > 0.95");
  wick_sampler_forget(s);
  CHECK(wick_sampler_sample(s, negative) == 2, "forgotten: greedy");
  CHECK(wick_sampler_sample(s, negative) == 3, "-0.1 * 2 < -0.15");
  wick_sampler_forget(s);
  const int32_t seen[2] = {0, 2};
  CHECK(wick_sampler_observe(s, seen, 2) == WICK_OK, "observe");
  CHECK(wick_sampler_sample(s, logits) == 1, "observed ids are penalized");
  const int32_t bad[2] = {1, 5};
  CHECK(wick_sampler_observe(s, bad, 2) == WICK_ERR_INVALID_ARGUMENT, "id out of range");
  CHECK(wick_sampler_observe(s, NULL, 1) == WICK_ERR_INVALID_ARGUMENT, "NULL ids");
  CHECK(wick_sampler_observe(NULL, seen, 1) == WICK_ERR_INVALID_ARGUMENT, "NULL sampler");
  CHECK(wick_sampler_observe(s, NULL, 0) == WICK_OK, "nothing to observe");
  wick_sampler_forget(NULL);
  wick_sampler_destroy(s);
  wick_sampler *boost = make_penalized(0.5f, 5);
  CHECK(wick_sampler_observe(boost, &seen[1], 1) == WICK_OK, "observe");
  CHECK(wick_sampler_sample(boost, negative) == 2, "p < 1: -0.1 * 0.5 is still the largest");
  wick_sampler_forget(boost);
  const int32_t one = 1;
  CHECK(wick_sampler_observe(boost, &one, 1) == WICK_OK, "observe");
  CHECK(wick_sampler_sample(boost, logits) == 1, "p < 1 favours the history: 1.9 / 0.5");
  wick_sampler_destroy(boost);
  /* off (1, the default): the history changes nothing */
  wick_sampler *off = make_penalized(1.0f, 5);
  CHECK(wick_sampler_sample(off, logits) == 0 && wick_sampler_sample(off, logits) == 0,
        "penalty 1 is off");
  wick_sampler_destroy(off);
  const float bad_penalties[4] = {0.0f, -1.0f, NAN, INFINITY};
  for (int i = 0; i < 4; i++) {
    wick_sampler_options o = wick_sampler_options_default();
    o.repetition_penalty = bad_penalties[i];
    wick_sampler *b = NULL;
    CHECK(wick_sampler_create(&o, 5, &b) == WICK_ERR_INVALID_ARGUMENT && b == NULL,
          "bad penalty %g", (double)bad_penalties[i]);
  }
  /* the struct before repetition_penalty: accepted, the penalty off */
  wick_sampler_options older = wick_sampler_options_default();
  older.struct_size = offsetof(wick_sampler_options, repetition_penalty);
  older.repetition_penalty = 0.0f; /* past struct_size: not read */
  wick_sampler *o = NULL;
  CHECK(wick_sampler_create(&older, 5, &o) == WICK_OK, "the older struct_size");
  CHECK(wick_sampler_sample(o, logits) == 0 && wick_sampler_sample(o, logits) == 0,
        "the older struct has no penalty");
  wick_sampler_destroy(o);
}

/* Parses `text` as the generator does: max_seq_len and eos ids; returns false on malformed. */
static bool parse(const char *text, int64_t *max_seq_len, size_t *num_eos) {
  wick_json j;
  wick_json_init(&j, text, strlen(text));
  if (!wick_json_object_begin(&j)) return false;
  const char *key;
  size_t n;
  int more;
  int64_t eos[4];
  *max_seq_len = -1;
  *num_eos = 0;
  while ((more = wick_json_object_next(&j, &key, &n)) > 0) {
    bool ok;
    if (n == 11 && memcmp(key, "max_seq_len", 11) == 0)
      ok = wick_json_int(&j, max_seq_len);
    else if (n == 13 && memcmp(key, "eos_token_ids", 13) == 0)
      ok = wick_json_int_array(&j, eos, 4, num_eos);
    else
      ok = wick_json_skip(&j);
    if (!ok) return false;
  }
  return more == 0;
}

static void test_json(void) {
  int64_t len;
  size_t neos;
  CHECK(parse("{\"a\": {\"b\": [1, \"x\\\"y\", null, true]}, \"max_seq_len\": 512, "
              "\"eos_token_ids\": [2, 3, 4, 5, 6, 7]}",
              &len, &neos) &&
            len == 512 && neos == 4,
        "a valid object (eos ids beyond the cap dropped)");
  CHECK(parse("  {}  ", &len, &neos) && len == -1, "an empty object");
  const char *bad[] = {
      "",
      "{",
      "{\"max_seq_len\": 1.5}",
      "{\"max_seq_len\": 99999999999999999999}",
      "{\"max_seq_len\" 5}",
      "{\"a\": \"unterminated}",
      "{\"a\": [1, 2}",
      "{\"eos_token_ids\": [1, -]}",
      "[1, 2]",
      "{\"a\": 1,}",
      "{\"a\": tru}",
      "{\"a\": \"\\",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(!parse(bad[i], &len, &neos), "malformed text %zu accepted: %s", i, bad[i]);
  char deep[200];
  size_t d = 0;
  d += (size_t)snprintf(deep, sizeof deep, "{\"a\": ");
  for (int i = 0; i < 60; i++) deep[d++] = '[';
  deep[d] = '\0';
  CHECK(!parse(deep, &len, &neos), "nesting past the depth cap (and truncated)");
  /* a text that is not NUL-terminated: the reader stops at the given size */
  const char cut[] = "{\"max_seq_len\": 77}XXXX";
  wick_json j;
  wick_json_init(&j, cut, 19);
  const char *key;
  size_t n;
  int64_t v = 0;
  CHECK(wick_json_object_begin(&j) && wick_json_object_next(&j, &key, &n) == 1 &&
            wick_json_int(&j, &v) && v == 77 && wick_json_object_next(&j, &key, &n) == 0,
        "bounded by size");
}

int main(void) {
  test_sampler();
  test_repetition_penalty();
  test_json();
  wick_error_info err;
  wick_llm *llm = NULL;
  CHECK(wick_llm_create(NULL, NULL, &err, &llm) == WICK_ERR_INVALID_ARGUMENT && llm == NULL,
        "NULL model");
  CHECK(wick_model_metadata(NULL, "wick_llm", NULL) == NULL, "metadata of NULL");
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
