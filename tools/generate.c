/*
 * generate.c — `wick generate`: greedy or sampled generation with an LLM file
 * written by wick.llm.convert (include/wick/llm.h), on text or token ids.
 *
 *   wick generate m.tflite (--prompt TEXT | --tokens 1,2,3) [--max-new N]
 *       [--temperature T] [--top-k K] [--top-p P] [--seed S] [--threads N]
 *       [--stop ID,...|--no-stop]
 *
 * --prompt encodes the text with the file's tokenizer and streams the new
 * text as it is made, then the ids ("tokens: 5,7,..."); --tokens streams the
 * ids. Then the prefill and decode speeds. Stops at the file's
 * end-of-sequence ids unless --stop or --no-stop says otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generate.h"
#include "wick/llm.h"

#define EXIT_MODEL 1
#define EXIT_USAGE 2
#define MAX_IDS 65536

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "1,2,3" -> ids; false on anything but non-negative int32 values separated by commas. */
static bool parse_ids(const char *text, int32_t *ids, size_t cap, size_t *n) {
  *n = 0;
  const char *p = text;
  while (*p) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno != 0 || v < 0 || v > INT32_MAX || *n == cap) return false;
    ids[(*n)++] = (int32_t)v;
    if (*end == ',' && end[1] != '\0')
      p = end + 1;
    else if (*end == '\0')
      p = end;
    else
      return false;
  }
  return *n > 0;
}

typedef struct stream {
  double first; /* when the first token came (the prompt's prefill is done) */
  size_t count;
  const wick_tokenizer *tokenizer; /* text mode: print each token's bytes */
} stream;

static int on_token(void *user, int32_t token) {
  stream *s = user;
  if (s->count++ == 0) s->first = seconds();
  if (s->tokenizer != NULL) {
    if (!wick_tokenizer_is_added(s->tokenizer, token)) {
      char bytes[256];
      size_t n = wick_tokenizer_decode(s->tokenizer, token, bytes, sizeof bytes);
      fwrite(bytes, 1, n < sizeof bytes ? n : sizeof bytes, stdout);
    }
  } else {
    printf(s->count == 1 ? "%d" : ",%d", (int)token);
  }
  fflush(stdout);
  return 0;
}

static int usage_error(const char *what) {
  fprintf(stderr, "wick generate: %s (see --help)\n", what);
  return EXIT_USAGE;
}

int wick_cmd_generate(int argc, char **argv) {
  const char *path = NULL, *tokens = NULL, *stop_text = NULL, *text = NULL;
  long max_new = 32;
  int threads = 1, no_stop = 0;
  wick_sampler_options so = wick_sampler_options_default();
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const bool has = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf(
          "usage: wick generate MODEL.tflite (--prompt TEXT | --tokens ID,ID,...) [--max-new N]\n"
          "                     [--temperature T] [--top-k K] [--top-p P] [--seed S]\n"
          "                     [--threads N] [--stop ID,...] [--no-stop]\n\n"
          "Generates with an LLM file written by wick.llm.convert (prefill_<n> and decode\n"
          "signatures, a KV cache in variables): the prompt (--prompt TEXT, encoded by\n"
          "the tokenizer in the file; or its token ids, --tokens) is written to the\n"
          "cache in prefill chunks, then up to --max-new tokens (default\n"
          "32) are picked greedily, or sampled with --temperature T > 0 (and --top-k,\n"
          "--top-p, --seed; the sampling of include/wick/llm.h). Generation stops after\n"
          "an end-of-sequence id of the file, or one of --stop, or never with --no-stop.\n"
          "Prints the new text as it comes (with --prompt; added tokens such as\n"
          "<|im_end|> are not shown) and `tokens: ...`, then prefill and decode\n"
          "tokens/s. A chat template is the caller's to write into TEXT, e.g.\n"
          "$'<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n' for SmolLM2.\n");
      return 0;
    }
    if (strcmp(a, "--tokens") == 0 && has) {
      tokens = argv[++i];
    } else if (strcmp(a, "--prompt") == 0 && has) {
      text = argv[++i];
    } else if (strcmp(a, "--max-new") == 0 && has) {
      max_new = strtol(argv[++i], NULL, 10);
    } else if (strcmp(a, "--temperature") == 0 && has) {
      so.temperature = strtof(argv[++i], NULL);
    } else if (strcmp(a, "--top-k") == 0 && has) {
      so.top_k = atoi(argv[++i]);
    } else if (strcmp(a, "--top-p") == 0 && has) {
      so.top_p = strtof(argv[++i], NULL);
    } else if (strcmp(a, "--seed") == 0 && has) {
      so.seed = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "--threads") == 0 && has) {
      threads = atoi(argv[++i]);
    } else if (strcmp(a, "--stop") == 0 && has) {
      stop_text = argv[++i];
    } else if (strcmp(a, "--no-stop") == 0) {
      no_stop = 1;
    } else if (a[0] != '-' && path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "wick generate: unknown argument %s (see --help)\n", a);
      return EXIT_USAGE;
    }
  }
  if (path == NULL || (tokens == NULL) == (text == NULL))
    return usage_error("need MODEL.tflite and one of --prompt and --tokens");
  if (max_new < 0 || max_new > MAX_IDS) return usage_error("--max-new must be in 0..65536");
  static int32_t prompt[MAX_IDS], stop[MAX_IDS], out[MAX_IDS];
  size_t prompt_len = 0, num_stop = 0;
  if (tokens != NULL && !parse_ids(tokens, prompt, MAX_IDS, &prompt_len))
    return usage_error("--tokens takes comma-separated token ids, e.g. 1,2,3");
  if (stop_text != NULL && !parse_ids(stop_text, stop, MAX_IDS, &num_stop))
    return usage_error("--stop takes comma-separated token ids");

  wick_error_info err;
  wick_model *model;
  wick_status st = wick_model_load_file(path, NULL, &err, &model);
  if (st != WICK_OK) {
    fprintf(stderr, "wick generate: %s: %s: %s\n", path, wick_status_string(st), err.message);
    return EXIT_MODEL;
  }
  wick_tokenizer *tokenizer = NULL;
  if (text != NULL) {
    st = wick_tokenizer_create(model, &err, &tokenizer);
    if (st == WICK_OK)
      st = wick_tokenizer_encode(tokenizer, text, strlen(text), prompt, MAX_IDS, &prompt_len);
    if (st == WICK_OK && (prompt_len == 0 || prompt_len > MAX_IDS)) {
      snprintf(err.message, sizeof err.message, "the prompt is %zu tokens (1..%d)", prompt_len,
               MAX_IDS);
      st = WICK_ERR_INVALID_ARGUMENT;
    }
    if (st != WICK_OK) {
      fprintf(stderr, "wick generate: %s: %s\n", path, err.message);
      wick_tokenizer_destroy(tokenizer);
      wick_model_destroy(model);
      return st == WICK_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_MODEL;
    }
  }
  wick_llm_options lo = wick_llm_options_default();
  lo.num_threads = threads;
  wick_llm *llm;
  st = wick_llm_create(model, &lo, &err, &llm);
  if (st != WICK_OK) {
    fprintf(stderr, "wick generate: %s: %s: %s\n", path, wick_status_string(st), err.message);
    wick_tokenizer_destroy(tokenizer);
    wick_model_destroy(model);
    return EXIT_MODEL;
  }
  if (stop_text == NULL && !no_stop)
    for (size_t i = 0; i < wick_llm_eos_count(llm); i++)
      stop[num_stop++] = wick_llm_eos_token(llm, i);
  if (no_stop) num_stop = 0;
  wick_sampler *sampler;
  st = wick_sampler_create(&so, wick_llm_vocab_size(llm), &sampler);
  if (st != WICK_OK) {
    fprintf(stderr, "wick generate: bad sampling options (temperature, top-k, top-p)\n");
    wick_tokenizer_destroy(tokenizer);
    wick_llm_destroy(llm);
    wick_model_destroy(model);
    return EXIT_USAGE;
  }
  stream s = {0, 0, tokenizer};
  size_t made = 0;
  if (tokenizer == NULL) printf("tokens: ");
  const double t0 = seconds();
  st = wick_llm_generate(llm, prompt, prompt_len, (size_t)max_new, sampler, stop, num_stop,
                         on_token, &s, out, &made);
  const double t1 = seconds();
  printf("\n");
  if (tokenizer != NULL) {
    printf("prompt: %zu tokens\ntokens: ", prompt_len);
    for (size_t i = 0; i < made; i++) printf(i ? ",%d" : "%d", (int)out[i]);
    printf("\n");
  }
  int rc = 0;
  if (st != WICK_OK) {
    fprintf(stderr, "wick generate: %s: %s\n", wick_status_string(st), wick_llm_last_error(llm));
    rc = st == WICK_ERR_INVALID_ARGUMENT || st == WICK_ERR_INVALID_INPUT ? EXIT_USAGE : EXIT_MODEL;
  } else if (made > 0) {
    const double prefill = s.first - t0, decode = t1 - s.first;
    printf("prefill: %zu tokens in %.1f ms (%.1f tok/s)\n", prompt_len, prefill * 1e3,
           (double)prompt_len / prefill);
    if (made > 1)
      printf("decode: %zu tokens in %.1f ms (%.1f tok/s)\n", made - 1, decode * 1e3,
             (double)(made - 1) / decode);
  }
  wick_sampler_destroy(sampler);
  wick_tokenizer_destroy(tokenizer);
  wick_llm_destroy(llm);
  wick_model_destroy(model);
  return rc;
}
