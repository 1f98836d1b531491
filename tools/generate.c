/*
 * generate.c — `wick generate`: greedy or sampled generation with an LLM file
 * written by wick.llm.convert (include/wick/llm.h), on text or token ids.
 *
 *   wick generate m.tflite (--prompt TEXT | --tokens 1,2,3) [--max-tokens N]
 *       [--temperature T] [--top-k K] [--top-p P] [--seed S] [--threads N]
 *       [--repetition-penalty P]
 *       [--stop ID,...|--no-stop] [--bench [--runs R] [--warmup W]]
 *
 * --prompt encodes the text with the file's tokenizer and streams the new
 * text as it is made, then the ids ("tokens: 5,7,..."); --tokens streams the
 * ids. Then the prefill and decode speeds. Stops at the file's
 * end-of-sequence ids unless --stop or --no-stop says otherwise.
 *
 * --bench measures instead of streaming: W untimed warm-up runs, then R timed
 * runs of the same request from an empty cache, each making exactly N tokens
 * (no stop ids), and prints the medians of prefill time, time to first token
 * and decode time, wall clock and process CPU time, as "key: value" lines
 * (print_bench has the format; tests/python/llm/test_llm.py parses it).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "generate.h"
#include "wick/llm.h"

#define EXIT_MODEL 1
#define EXIT_USAGE 2
#define MAX_IDS 65536
#define MAX_RUNS 1000

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (every thread), in seconds. */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

/* A whole decimal integer in [lo, hi]. */
static bool parse_count(const char *text, long lo, long hi, long *v) {
  char *end;
  errno = 0;
  const long x = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || x < lo || x > hi) return false;
  *v = x;
  return true;
}

#define WINDOW 64 /* tokens held back at most (print_text) */

typedef struct stream {
  double first; /* when the first token came (the prompt's prefill is done) */
  size_t count;
  const wick_tokenizer *tokenizer; /* text mode: print the tokens' text */
  int32_t window[WINDOW];          /* tokens not printed yet */
  size_t held;
  bool started; /* a token that is not left out was printed: the next ones continue the text */
} stream;

/* Prints the text of the held tokens (HuggingFace's decode of them, continuing what was
 * printed), unless more tokens may change it: the last one not left out is a byte token (a
 * run of them decodes as a whole) or the text ends in U+FFFD (an incomplete character). */
static void print_text(stream *s, bool last) {
  char small[512], *text = small;
  size_t size = 0;
  const unsigned flags =
      WICK_TOKENIZER_SKIP_SPECIAL | (s->started ? WICK_TOKENIZER_CONTINUATION : 0u);
  if (wick_tokenizer_decode_text(s->tokenizer, s->window, s->held, flags, small, sizeof small,
                                 &size) != WICK_OK)
    size = 0;
  if (size > sizeof small) {
    text = malloc(size);
    if (text == NULL || wick_tokenizer_decode_text(s->tokenizer, s->window, s->held, flags, text,
                                                   size, &size) != WICK_OK)
      size = 0;
  }
  const bool incomplete = size >= 3 && memcmp(text + size - 3, "\xEF\xBF\xBD", 3) == 0;
  bool open = false; /* the last token not left out is a byte token */
  for (size_t i = s->held; i-- > 0;)
    if (!wick_tokenizer_is_special(s->tokenizer, s->window[i])) {
      open = wick_tokenizer_is_byte(s->tokenizer, s->window[i]);
      break;
    }
  if (!(incomplete || open) || last || s->held == WINDOW) {
    if (text != NULL) fwrite(text, 1, size, stdout);
    for (size_t i = 0; i < s->held; i++)
      s->started = s->started || !wick_tokenizer_is_special(s->tokenizer, s->window[i]);
    s->held = 0;
  }
  if (text != small) free(text);
}

static int on_token(void *user, int32_t token) {
  stream *s = user;
  if (s->count++ == 0) s->first = seconds();
  if (s->tokenizer != NULL) {
    s->window[s->held++] = token;
    print_text(s, false);
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

/* ---------------------------------------------------------------- --bench */

/* One timed run's durations, seconds: wall clock and process CPU time. */
typedef struct timing {
  double prefill, first, decode;             /* wall */
  double prefill_cpu, first_cpu, decode_cpu; /* CPU */
} timing;

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : (x > y ? 1 : 0);
}

/* The median of field `offset` (bytes into a timing) over n runs. */
static double median(const timing *t, size_t n, size_t offset) {
  double v[MAX_RUNS];
  for (size_t i = 0; i < n; i++) memcpy(&v[i], (const char *)&t[i] + offset, sizeof v[i]);
  qsort(v, n, sizeof v[0], by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run from an empty cache: the prompt appended, then exactly max_new tokens sampled (the
 * first from the prompt's logits, each next one after appending the one before; no stop
 * ids), as wick_llm_generate does. */
static wick_status bench_run(wick_llm *llm, const wick_sampler_options *so, const int32_t *prompt,
                             size_t prompt_len, size_t max_new, int32_t *out, timing *t) {
  wick_sampler *sampler;
  wick_status st = wick_sampler_create(so, wick_llm_vocab_size(llm), &sampler);
  if (st == WICK_OK) st = wick_llm_reset(llm);
  if (st != WICK_OK) {
    wick_sampler_destroy(sampler);
    return st;
  }
  const double t0 = seconds(), c0 = cpu_seconds();
  st = wick_llm_append(llm, prompt, prompt_len);
  if (st == WICK_OK) st = wick_sampler_observe(sampler, prompt, prompt_len); /* ids checked */
  const double t1 = seconds(), c1 = cpu_seconds();
  if (st == WICK_OK) out[0] = wick_sampler_sample(sampler, wick_llm_logits(llm));
  const double t2 = seconds(), c2 = cpu_seconds();
  for (size_t i = 1; i < max_new && st == WICK_OK; i++) {
    st = wick_llm_append(llm, &out[i - 1], 1);
    if (st == WICK_OK) out[i] = wick_sampler_sample(sampler, wick_llm_logits(llm));
  }
  const double t3 = seconds(), c3 = cpu_seconds();
  *t = (timing){t1 - t0, t2 - t0, t3 - t2, c1 - c0, c2 - c0, c3 - c2};
  wick_sampler_destroy(sampler);
  return st;
}

/* Peak resident memory in MB: VmHWM of /proc/self/status where there is one (this process's
 * own: getrusage's ru_maxrss carries over through exec from the process that started us),
 * else ru_maxrss. */
static double peak_rss_mb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f != NULL) {
    char line[256];
    long kb = -1;
    while (kb < 0 && fgets(line, sizeof line, f) != NULL)
      if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    if (kb > 0) return (double)kb / 1024.0;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

/* The report of --bench: one "key: value" line per measure (times in ms, speeds in tokens
 * per second of wall clock; CPU: the process's CPU time over all its threads). */
static void print_bench(const timing *runs, size_t num_runs, long warmup, int threads,
                        size_t prompt_len, size_t max_new, double load_s, double create_s) {
#define MEDIAN(field) median(runs, num_runs, offsetof(timing, field))
  const double prefill = MEDIAN(prefill), prefill_cpu = MEDIAN(prefill_cpu);
  const double first = MEDIAN(first), first_cpu = MEDIAN(first_cpu);
  const double decode = MEDIAN(decode), decode_cpu = MEDIAN(decode_cpu);
#undef MEDIAN
  printf("bench: %zu runs (medians) after %ld warm-up, threads %d\n", num_runs, warmup, threads);
  printf("prefill: %zu tokens in %.2f ms, %.2f tok/s (CPU %.2f ms, %.2f tok/s)\n", prompt_len,
         prefill * 1e3, (double)prompt_len / prefill, prefill_cpu * 1e3,
         (double)prompt_len / prefill_cpu);
  printf("time to first token: %.2f ms (CPU %.2f ms)\n", first * 1e3, first_cpu * 1e3);
  if (max_new > 1)
    printf("decode: %zu tokens in %.2f ms, %.2f tok/s, %.3f ms/token (CPU %.2f ms, %.2f tok/s)\n",
           max_new - 1, decode * 1e3, (double)(max_new - 1) / decode,
           decode * 1e3 / (double)(max_new - 1), decode_cpu * 1e3,
           (double)(max_new - 1) / decode_cpu);
  printf("load: %.2f ms, create: %.2f ms\n", load_s * 1e3, create_s * 1e3);
  printf("peak rss: %.1f MB\n", peak_rss_mb());
}

/* ---------------------------------------------------------------- the command */

int wick_cmd_generate(int argc, char **argv) {
  const char *path = NULL, *tokens = NULL, *stop_text = NULL, *text = NULL;
  long max_new = 32, runs = 3, warmup = 1, threads = 1;
  int no_stop = 0, bench = 0;
  wick_sampler_options so = wick_sampler_options_default();
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const bool has = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf(
          "usage: wick generate MODEL.tflite (--prompt TEXT | --tokens ID,ID,...)\n"
          "                     [--max-tokens N] [--temperature T] [--top-k K] [--top-p P]\n"
          "                     [--seed S] [--repetition-penalty P] [--threads N]\n"
          "                     [--stop ID,...] [--no-stop]\n"
          "                     [--bench [--runs R] [--warmup W]]\n\n"
          "Generates with an LLM file written by wick.llm.convert (prefill_<n> and decode\n"
          "signatures, a KV cache in variables): the prompt (--prompt TEXT, encoded by\n"
          "the tokenizer in the file; or its token ids, --tokens) is written to the\n"
          "cache in prefill chunks, then up to --max-tokens N tokens (--max-new N, default\n"
          "32) are picked greedily, or sampled with --temperature T > 0 (and --top-k,\n"
          "--top-p, --seed; the sampling of include/wick/llm.h), after HuggingFace's\n"
          "--repetition-penalty P (> 0; 1, the default, is off) on the ids of the prompt\n"
          "and of the tokens made so far. Generation stops after\n"
          "an end-of-sequence id of the file, or one of --stop, or never with --no-stop.\n"
          "Prints the new text as it comes (with --prompt; special tokens such as\n"
          "<|im_end|> are not shown) and `tokens: ...`, then prefill and decode\n"
          "tokens/s. A chat template is the caller's to write into TEXT, e.g.\n"
          "$'<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n' for SmolLM2.\n\n"
          "--bench: W untimed warm-up runs (default 1), then R timed runs (default 3), each\n"
          "from an empty cache making exactly N tokens (stop ids ignored); prints the new\n"
          "ids and the medians: prefill (the prompt written to the cache) in ms and\n"
          "tokens/s, time to first token (prefill + picking the first), decode (the N - 1\n"
          "steps after it) in tokens/s and ms/token, each also in process CPU time (all\n"
          "threads; steadier than the wall clock on a loaded machine), load and create\n"
          "times and the peak RSS.\n");
      return 0;
    }
    if (strcmp(a, "--tokens") == 0 && has) {
      tokens = argv[++i];
    } else if (strcmp(a, "--prompt") == 0 && has) {
      text = argv[++i];
    } else if ((strcmp(a, "--max-tokens") == 0 || strcmp(a, "--max-new") == 0) && has) {
      if (!parse_count(argv[++i], 0, MAX_IDS, &max_new))
        return usage_error("--max-tokens must be an integer in 0..65536");
    } else if (strcmp(a, "--temperature") == 0 && has) {
      so.temperature = strtof(argv[++i], NULL);
    } else if (strcmp(a, "--top-k") == 0 && has) {
      so.top_k = atoi(argv[++i]);
    } else if (strcmp(a, "--top-p") == 0 && has) {
      so.top_p = strtof(argv[++i], NULL);
    } else if (strcmp(a, "--repetition-penalty") == 0 && has) {
      char *end;
      so.repetition_penalty = strtof(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(so.repetition_penalty > 0.0f) ||
          !isfinite(so.repetition_penalty))
        return usage_error("--repetition-penalty must be a finite number > 0 (1: off)");
    } else if (strcmp(a, "--seed") == 0 && has) {
      so.seed = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "--threads") == 0 && has) {
      if (!parse_count(argv[++i], -1, 64, &threads))
        return usage_error("--threads must be an integer in -1..64 (-1: one per CPU)");
    } else if (strcmp(a, "--stop") == 0 && has) {
      stop_text = argv[++i];
    } else if (strcmp(a, "--no-stop") == 0) {
      no_stop = 1;
    } else if (strcmp(a, "--bench") == 0) {
      bench = 1;
    } else if (strcmp(a, "--runs") == 0 && has) {
      if (!parse_count(argv[++i], 1, MAX_RUNS, &runs))
        return usage_error("--runs must be an integer in 1..1000");
    } else if (strcmp(a, "--warmup") == 0 && has) {
      if (!parse_count(argv[++i], 0, MAX_RUNS, &warmup))
        return usage_error("--warmup must be an integer in 0..1000");
    } else if (a[0] != '-' && path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "wick generate: unknown argument %s (see --help)\n", a);
      return EXIT_USAGE;
    }
  }
  if (path == NULL || (tokens == NULL) == (text == NULL))
    return usage_error("need MODEL.tflite and one of --prompt and --tokens");
  if (bench && max_new < 1) return usage_error("--bench needs --max-tokens of at least 1");
  static int32_t prompt[MAX_IDS], stop[MAX_IDS], out[MAX_IDS];
  size_t prompt_len = 0, num_stop = 0;
  if (tokens != NULL && !parse_ids(tokens, prompt, MAX_IDS, &prompt_len))
    return usage_error("--tokens takes comma-separated token ids, e.g. 1,2,3");
  if (stop_text != NULL && !parse_ids(stop_text, stop, MAX_IDS, &num_stop))
    return usage_error("--stop takes comma-separated token ids");

  wick_error_info err;
  wick_model *model;
  const double load_start = seconds();
  wick_status st = wick_model_load_file(path, NULL, &err, &model);
  const double load_s = seconds() - load_start;
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
  lo.num_threads = (int)threads;
  wick_llm *llm;
  const double create_start = seconds();
  st = wick_llm_create(model, &lo, &err, &llm);
  const double create_s = seconds() - create_start;
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
    fprintf(
        stderr,
        "wick generate: bad sampling options (temperature, top-k, top-p, repetition penalty)\n");
    wick_tokenizer_destroy(tokenizer);
    wick_llm_destroy(llm);
    wick_model_destroy(model);
    return EXIT_USAGE;
  }
  int rc = 0;
  if (bench) {
    const size_t room = wick_llm_max_seq_len(llm);
    if (prompt_len > room || (size_t)max_new - 1 > room - prompt_len) {
      fprintf(stderr,
              "wick generate: %zu prompt tokens + %ld new tokens do not fit the %zu-position "
              "cache\n",
              prompt_len, max_new, room);
      rc = EXIT_USAGE;
    }
    static timing times[MAX_RUNS];
    for (long r = 0; rc == 0 && r < warmup + runs; r++) {
      timing t;
      st = bench_run(llm, &so, prompt, prompt_len, (size_t)max_new, out, &t);
      if (st != WICK_OK) {
        fprintf(stderr, "wick generate: %s: %s\n", wick_status_string(st),
                wick_llm_last_error(llm));
        rc = st == WICK_ERR_INVALID_INPUT ? EXIT_USAGE : EXIT_MODEL;
      } else if (r >= warmup) {
        times[r - warmup] = t;
      }
    }
    if (rc == 0) {
      printf("tokens: ");
      for (long i = 0; i < max_new; i++) printf(i ? ",%d" : "%d", (int)out[i]);
      printf("\n");
      print_bench(times, (size_t)runs, warmup, (int)threads, prompt_len, (size_t)max_new, load_s,
                  create_s);
    }
  } else {
    stream s = {.tokenizer = tokenizer};
    size_t made = 0;
    if (tokenizer == NULL) printf("tokens: ");
    const double t0 = seconds();
    st = wick_llm_generate(llm, prompt, prompt_len, (size_t)max_new, sampler, stop, num_stop,
                           on_token, &s, out, &made);
    const double t1 = seconds();
    if (tokenizer != NULL && s.held > 0) print_text(&s, true);
    printf("\n");
    if (tokenizer != NULL) {
      printf("prompt: %zu tokens\ntokens: ", prompt_len);
      for (size_t i = 0; i < made; i++) printf(i ? ",%d" : "%d", (int)out[i]);
      printf("\n");
    }
    if (st != WICK_OK) {
      fprintf(stderr, "wick generate: %s: %s\n", wick_status_string(st), wick_llm_last_error(llm));
      rc =
          st == WICK_ERR_INVALID_ARGUMENT || st == WICK_ERR_INVALID_INPUT ? EXIT_USAGE : EXIT_MODEL;
    } else if (made > 0) {
      const double prefill = s.first - t0, decode = t1 - s.first;
      printf("prefill: %zu tokens in %.1f ms (%.1f tok/s)\n", prompt_len, prefill * 1e3,
             (double)prompt_len / prefill);
      if (made > 1)
        printf("decode: %zu tokens in %.1f ms (%.1f tok/s)\n", made - 1, decode * 1e3,
               (double)(made - 1) / decode);
    }
  }
  wick_sampler_destroy(sampler);
  wick_tokenizer_destroy(tokenizer);
  wick_llm_destroy(llm);
  wick_model_destroy(model);
  return rc;
}
