/*
 * tokenizer.c — wick_tokenizer (include/wick/llm.h): the tokenizer packed in a
 * file's "wick_tokenizer" metadata (python/wick/llm/tokenizer.py writes it and
 * has the layout), a HuggingFace `tokenizers` BPE model — byte-level (GPT-2
 * style: SmolLM2, Llama 3, Qwen2) or SentencePiece style (a "▁" metaspace,
 * byte fallback to <0xNN> tokens: Llama 2, TinyLlama, Mistral, Gemma) —
 * encoded and decoded as `tokenizers` does. The entry is untrusted: every
 * count, length and id is checked before use, and strings point into the
 * model's bytes (nothing is copied).
 *
 * Encoding, as tokenizers' Tokenizer.encode(text, add_special_tokens=False):
 *  1. the added tokens that are not normalized are found in the text
 *     (leftmost, longest first), with the whitespace their lstrip / rstrip
 *     take;
 *  2. each stretch between them is normalized (the Prepend, Replace, NFC,
 *     NFD, NFKD, NFKC and Lowercase steps; the normalization forms from
 *     generated Unicode 9.0 tables, unicode_nfc.h and unicode_compat.h, and
 *     Lowercase from Unicode 17.0's, as tokenizers has them) and the
 *     normalized added tokens are found in what that gives;
 *  3. each stretch left is pre-tokenized: not at all (one word), GPT-2's
 *     byte-level split (the regex
 *       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *     written out by hand over code points, after an optional split of every
 *     digit into its own piece), or Llama 3's or Qwen2's regex split (a Split
 *     on their pattern before a ByteLevel without its own split: also written
 *     out by hand, regex_piece_end); \p{L}, \p{N} and \s exact for every code
 *     point (unicode_classes.h, generated); each piece's bytes then map to
 *     GPT-2's byte symbols, bytes_to_unicode), Metaspace (spaces become the replacement,
 *     which is prepended as the scheme says and starts a new word), or Split
 *     on a string (Gemma's: its matches removed, isolated, merged with the
 *     word before or after, or adjacent ones together);
 *  4. each word's characters become symbols — the character's vocabulary id,
 *     else its bytes' <0xNN> tokens (byte fallback), else the unknown token
 *     (consecutive ones fused), else nothing — which BPE merges, lowest merge
 *     rank first, leftmost on ties (the order of tokenizers' heap).
 * Decoding runs the decoder's steps (ByteLevel, Replace, ByteFallback, Fuse,
 * Strip, Metaspace) over the tokens' strings, as tokenizers' decode_chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/internal.h"
#include "llm/unicode_classes.h"
#include "llm/unicode_nfc.h"
/* after unicode_nfc.h */
#include "llm/unicode_compat.h"

typedef struct span {
  const uint8_t *p;
  uint32_t n;
} span;

typedef struct merge {
  uint64_t key; /* left << 32 | right; 0 with rank UINT32_MAX: empty slot */
  uint32_t rank, merged;
} merge;

/* The kinds of the entry's step records (tokenizer.py has the same numbers). */
enum { DIGITS_ONE_BY_ONE = 1 }; /* version 1's flags; a byte-level pre-tokenizer's x */
enum {
  NORM_PREPEND = 1,
  NORM_REPLACE = 2,
  NORM_NFC = 3,
  NORM_NFD = 4,
  NORM_NFKD = 5,
  NORM_NFKC = 6,
  NORM_LOWERCASE = 7
};
enum {
  PRE_NONE = 0,
  PRE_BYTE_LEVEL = 1,
  PRE_METASPACE = 2,
  PRE_SPLIT = 3,
  PRE_REGEX_BYTE_LEVEL = 4
};
enum { REGEX_LLAMA3 = 1, REGEX_QWEN2 = 2 }; /* a PRE_REGEX_BYTE_LEVEL's x */
enum {
  SPLIT_REMOVED = 0,
  SPLIT_ISOLATED = 1,
  SPLIT_MERGED_WITH_PREVIOUS = 2,
  SPLIT_MERGED_WITH_NEXT = 3,
  SPLIT_CONTIGUOUS = 4
};
enum { PREPEND_NEVER = 0, PREPEND_ALWAYS = 1, PREPEND_FIRST = 2 };
enum { MODEL_BYTE_FALLBACK = 1, MODEL_FUSE_UNK = 2, MODEL_IGNORE_MERGES = 4 };
enum {
  DEC_BYTE_LEVEL = 1,
  DEC_REPLACE = 2,
  DEC_BYTE_FALLBACK = 3,
  DEC_FUSE = 4,
  DEC_STRIP = 5,
  DEC_METASPACE = 6
};
enum { ADDED_NORMALIZED = 1, ADDED_LSTRIP = 2, ADDED_RSTRIP = 4, ADDED_SPECIAL = 8 };

#define MAX_STEPS 16
/* What the normalizer or the decoder may make of n bytes (real ones: 11n + a few bytes, NFKD
 * of U+FDFA; more is a hostile entry's Replace steps, refused as out of memory). */
#define GROWTH_LIMIT(n) (12 * (size_t)(n) + 4096)

/* A normalizer, pre-tokenizer or decoder step: kind, two strings, two numbers. */
typedef struct step {
  uint32_t kind;
  span a, b;
  uint32_t x, y;
} step;

typedef struct added {
  int32_t id;
  uint32_t flags;
  span text; /* what is matched in the text (a normalized token: its normalized content) */
} added;

struct wick_tokenizer {
  uint32_t num_tokens, num_merges, num_added;
  span *tokens;        /* the model's vocabulary by id (empty: no model token of that id) */
  added *added;        /* by first byte, then longest first */
  uint32_t first[257]; /* added[first[b] .. first[b + 1]): the added tokens starting with byte b */
  int32_t *added_of;   /* per id: its index in added, or -1 */
  uint32_t *ids;       /* string -> id hash over tokens: id + 1, 0 = empty */
  size_t ids_mask;
  merge *merges;
  size_t merges_mask;
  step norm[MAX_STEPS];
  uint32_t num_norm;
  step pre;
  uint32_t model_flags;
  int32_t unk; /* -1: none */
  step dec[MAX_STEPS];
  uint32_t num_dec;
  bool has_decoder;         /* without one, tokens are joined with spaces */
  int32_t fallback_id[256]; /* the id of each byte's <0xNN> token, -1 */
  uint16_t byte_char[256];  /* GPT-2's symbol of each byte (a code point) */
  int16_t char_byte[512];   /* the inverse: code point -> byte, -1 */
};

/* ---------------------------------------------------------------- reading the entry */

typedef struct blob {
  const uint8_t *p, *end;
} blob;

static bool u32(blob *b, uint32_t *v) {
  if (b->end - b->p < 4) return false;
  *v = (uint32_t)b->p[0] | (uint32_t)b->p[1] << 8 | (uint32_t)b->p[2] << 16 |
       (uint32_t)b->p[3] << 24;
  b->p += 4;
  return true;
}

static bool str(blob *b, span *s) {
  uint32_t n;
  if (!u32(b, &n) || n > (size_t)(b->end - b->p)) return false;
  *s = (span){b->p, n};
  b->p += n;
  return true;
}

static bool record(blob *b, step *s) {
  return u32(b, &s->kind) && str(b, &s->a) && str(b, &s->b) && u32(b, &s->x) && u32(b, &s->y);
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(1099511628211);
  return h;
}

static uint64_t hash_key(uint64_t k) {
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  k ^= k >> 33;
  return k;
}

static size_t table_size(size_t n) {
  size_t s = 16;
  while (s < 2 * n) s *= 2;
  return s;
}

static int32_t find_id(const wick_tokenizer *t, const uint8_t *p, size_t n) {
  for (size_t i = (size_t)(hash_bytes(p, n) & t->ids_mask);; i = (i + 1) & t->ids_mask) {
    const uint32_t e = t->ids[i];
    if (e == 0) return -1;
    const span *s = &t->tokens[e - 1];
    if (s->n == n && memcmp(s->p, p, n) == 0) return (int32_t)(e - 1);
  }
}

static const merge *find_merge(const wick_tokenizer *t, int32_t a, int32_t b) {
  const uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
  for (size_t i = (size_t)(hash_key(key) & t->merges_mask);; i = (i + 1) & t->merges_mask) {
    const merge *m = &t->merges[i];
    if (m->rank == UINT32_MAX) return NULL;
    if (m->key == key) return m;
  }
}

/* UTF-8 of code point c (a scalar value) into out; its length. */
static size_t utf8(uint32_t c, uint8_t out[4]) {
  if (c < 0x80) {
    out[0] = (uint8_t)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (uint8_t)(0xC0 | (c >> 6));
    out[1] = (uint8_t)(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (c >> 12));
    out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (c >> 18));
  out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (c & 0x3F));
  return 4;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for
 * 256, 257, ... in byte order. */
static void byte_map(wick_tokenizer *t) {
  uint32_t next = 256;
  for (int i = 0; i < 512; i++) t->char_byte[i] = -1;
  for (uint32_t b = 0; b < 256; b++) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    t->byte_char[b] = (uint16_t)(printable ? b : next++);
    t->char_byte[t->byte_char[b]] = (int16_t)b;
  }
}

/* The length of the well-formed UTF-8 sequence at s[0, n) (*ok), or of its maximal
 * ill-formed prefix, at least 1 (the unit one U+FFFD replaces, as Rust's from_utf8_lossy
 * and Python's "replace" count them). */
static size_t utf8_sequence(const uint8_t *s, size_t n, bool *ok) {
  const uint8_t c = s[0];
  *ok = false;
  if (c < 0x80) {
    *ok = true;
    return 1;
  }
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF; /* the second byte's range */
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 1;
  }
  for (size_t i = 1; i < need; i++) {
    if (i >= n) return i;
    if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF)) return i;
  }
  *ok = true;
  return need;
}

static bool one_char(span s) {
  bool ok;
  return s.n > 0 && utf8_sequence(s.p, s.n, &ok) == s.n && ok;
}

static wick_status bad(wick_error_info *error, const char *what) {
  if (error != NULL)
    snprintf(error->message, sizeof error->message, "the wick_tokenizer metadata is malformed: %s",
             what);
  return WICK_ERR_MALFORMED_MODEL;
}

static int by_first_byte_then_longest(const void *pa, const void *pb) {
  const added *a = pa, *b = pb;
  if (a->text.p[0] != b->text.p[0]) return a->text.p[0] < b->text.p[0] ? -1 : 1;
  if (a->text.n != b->text.n) return a->text.n > b->text.n ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id ? 1 : 0);
}

/* Checks the version 2 steps: known kinds, one-character replacements. */
static const char *check_steps(const wick_tokenizer *t) {
  for (uint32_t i = 0; i < t->num_norm; i++)
    if (t->norm[i].kind < NORM_PREPEND || t->norm[i].kind > NORM_LOWERCASE)
      return "an unknown normalizer step (a newer wick wrote it: update the runtime)";
  const step *p = &t->pre;
  if (p->kind > PRE_REGEX_BYTE_LEVEL) return "an unknown pre-tokenizer";
  if (p->kind == PRE_REGEX_BYTE_LEVEL && p->x != REGEX_LLAMA3 && p->x != REGEX_QWEN2)
    return "an unknown Split regex";
  if (p->kind == PRE_SPLIT && (p->a.n == 0 || p->x > SPLIT_CONTIGUOUS))
    return "a Split pre-tokenizer without a pattern or with an unknown behavior";
  if (p->kind == PRE_METASPACE && (!one_char(p->a) || p->x > PREPEND_FIRST))
    return "a Metaspace pre-tokenizer without a one-character replacement or scheme";
  for (uint32_t i = 0; i < t->num_dec; i++) {
    const step *d = &t->dec[i];
    if (d->kind < DEC_BYTE_LEVEL || d->kind > DEC_METASPACE) return "an unknown decoder step";
    if ((d->kind == DEC_STRIP || d->kind == DEC_METASPACE) && !one_char(d->a))
      return "a Strip or Metaspace decoder without a one-character content";
    if (d->kind == DEC_METASPACE && d->x > PREPEND_FIRST) return "a Metaspace decoder scheme";
  }
  return NULL;
}

wick_status wick_tokenizer_create(const wick_model *model, wick_error_info *error,
                                  wick_tokenizer **out) {
  if (error != NULL) error->message[0] = '\0';
  if (out == NULL || model == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *out = NULL;
  size_t size;
  const uint8_t *data = wick_model_metadata(model, "wick_tokenizer", &size);
  if (data == NULL) {
    if (error != NULL)
      snprintf(error->message, sizeof error->message,
               "the model has no tokenizer (\"wick_tokenizer\" metadata): convert it with "
               "wick.llm.convert(..., tokenizer=) and a BPE tokenizer (byte-level or "
               "SentencePiece style), or pass token ids");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  blob b = {data, data + size};
  uint32_t version, flags, n;
  if (size < 4 || memcmp(data, "WTOK", 4) != 0) return bad(error, "no WTOK header");
  b.p += 4;
  if (!u32(&b, &version) || (version != 1 && version != 2)) return bad(error, "unknown version");
  if (!u32(&b, &flags) || !u32(&b, &n) || n == 0 || n > (1u << 24))
    return bad(error, "token count");
  wick_tokenizer *t = calloc(1, sizeof *t);
  if (t == NULL) return WICK_ERR_OUT_OF_MEMORY;
  wick_status st = WICK_ERR_OUT_OF_MEMORY;
  t->num_tokens = n;
  t->tokens = calloc(n, sizeof *t->tokens);
  t->added_of = malloc(n * sizeof *t->added_of);
  const size_t ids_size = table_size(n);
  t->ids = calloc(ids_size, sizeof *t->ids);
  t->ids_mask = ids_size - 1;
  if (t->tokens == NULL || t->added_of == NULL || t->ids == NULL) goto fail;
  for (uint32_t i = 0; i < n; i++) t->added_of[i] = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (!str(&b, &t->tokens[i])) {
      st = bad(error, "a token's length runs past the entry");
      goto fail;
    }
    const span *s = &t->tokens[i];
    if (s->n == 0) continue; /* a hole in the ids */
    size_t h = (size_t)(hash_bytes(s->p, s->n) & t->ids_mask);
    while (t->ids[h] != 0) {
      const span *o = &t->tokens[t->ids[h] - 1];
      if (o->n == s->n && memcmp(o->p, s->p, s->n) == 0) break; /* first id wins */
      h = (h + 1) & t->ids_mask;
    }
    if (t->ids[h] == 0) t->ids[h] = i + 1;
  }
  uint32_t m;
  if (!u32(&b, &m) || m > (size_t)(b.end - b.p) / 12) {
    st = bad(error, "merge count");
    goto fail;
  }
  t->num_merges = m;
  const size_t merges_size = table_size(m);
  t->merges = malloc(merges_size * sizeof *t->merges);
  if (t->merges == NULL) goto fail;
  t->merges_mask = merges_size - 1;
  for (size_t i = 0; i < merges_size; i++) t->merges[i] = (merge){0, UINT32_MAX, 0};
  for (uint32_t r = 0; r < m; r++) {
    uint32_t a = 0, c = 0, merged = 0; /* (room checked above) */
    u32(&b, &a);
    u32(&b, &c);
    u32(&b, &merged);
    if (a >= n || c >= n || merged >= n) {
      st = bad(error, "a merge names an id out of range");
      goto fail;
    }
    const uint64_t key = (uint64_t)a << 32 | c;
    size_t h = (size_t)(hash_key(key) & t->merges_mask);
    while (t->merges[h].rank != UINT32_MAX && t->merges[h].key != key) h = (h + 1) & t->merges_mask;
    if (t->merges[h].rank == UINT32_MAX) t->merges[h] = (merge){key, r, merged};
  }
  uint32_t s;
  if (!u32(&b, &s) || s > (size_t)(b.end - b.p) / 4 || s > n) {
    st = bad(error, "added token count");
    goto fail;
  }
  t->added = malloc((s ? s : 1) * sizeof *t->added);
  if (t->added == NULL) goto fail;
  for (uint32_t i = 0; i < s; i++) {
    added a = {0};
    uint32_t id = 0;
    bool ok = u32(&b, &id);
    if (version == 1) {
      a.flags = ADDED_SPECIAL;
      ok = ok && id < n;
      if (ok) a.text = t->tokens[id];
    } else {
      ok = ok && u32(&b, &a.flags) && str(&b, &a.text);
    }
    if (!ok || id >= n || a.text.n == 0) {
      st = bad(error, "an added token out of range or empty");
      goto fail;
    }
    a.id = (int32_t)id;
    if (t->added_of[id] < 0) t->added[t->added_of[id] = (int32_t)t->num_added++] = a;
  }
  if (version == 1) {
    t->pre = (step){PRE_BYTE_LEVEL, {NULL, 0}, {NULL, 0}, flags & DIGITS_ONE_BY_ONE, 0};
    t->dec[0] = (step){DEC_BYTE_LEVEL, {NULL, 0}, {NULL, 0}, 0, 0};
    t->num_dec = 1;
    t->has_decoder = true;
    t->unk = -1;
  } else {
    uint32_t unk = 0, has_decoder = 0;
    bool ok = u32(&b, &t->num_norm) && t->num_norm <= MAX_STEPS;
    for (uint32_t i = 0; ok && i < t->num_norm; i++) ok = record(&b, &t->norm[i]);
    ok = ok && record(&b, &t->pre) && u32(&b, &t->model_flags) && u32(&b, &unk) && unk <= n;
    ok = ok && u32(&b, &has_decoder) && u32(&b, &t->num_dec) && t->num_dec <= MAX_STEPS;
    for (uint32_t i = 0; ok && i < t->num_dec; i++) ok = record(&b, &t->dec[i]);
    if (!ok) {
      st = bad(error, "the normalizer, pre-tokenizer, model or decoder records");
      goto fail;
    }
    t->unk = (int32_t)unk - 1;
    t->has_decoder = has_decoder != 0;
    const char *why = check_steps(t);
    if (why != NULL) {
      st = bad(error, why);
      goto fail;
    }
  }
  /* the added tokens by first byte, longest first: the longest match at a position wins */
  if (t->num_added > 1) qsort(t->added, t->num_added, sizeof *t->added, by_first_byte_then_longest);
  for (uint32_t i = 0; i < t->num_added; i++) t->added_of[t->added[i].id] = (int32_t)i;
  uint32_t k = 0;
  for (uint32_t c = 0; c <= 256; c++) {
    while (k < t->num_added && t->added[k].text.p[0] < c) k++;
    t->first[c] = k;
  }
  byte_map(t);
  for (int c = 0; c < 256; c++) {
    char name[8];
    snprintf(name, sizeof name, "<0x%02X>", c);
    t->fallback_id[c] = find_id(t, (const uint8_t *)name, 6);
  }
  *out = t;
  return WICK_OK;
fail:
  wick_tokenizer_destroy(t);
  return st;
}

void wick_tokenizer_destroy(wick_tokenizer *t) {
  if (t == NULL) return;
  free(t->tokens);
  free(t->added_of);
  free(t->ids);
  free(t->merges);
  free(t->added);
  free(t);
}

size_t wick_tokenizer_vocab_size(const wick_tokenizer *t) { return t ? t->num_tokens : 0; }

int wick_tokenizer_is_added(const wick_tokenizer *t, int32_t id) {
  return t != NULL && id >= 0 && (uint32_t)id < t->num_tokens && t->added_of[id] >= 0;
}

int wick_tokenizer_is_special(const wick_tokenizer *t, int32_t id) {
  return wick_tokenizer_is_added(t, id) && (t->added[t->added_of[id]].flags & ADDED_SPECIAL);
}

/* ---------------------------------------------------------------- growable bytes */

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
  size_t limit; /* the most bytes it may hold (0: no limit) */
  bool failed;  /* out of memory or over the limit: the contents are incomplete */
} buf;

static bool reserve(buf *b, size_t more) {
  if (b->failed) return false;
  if (b->limit > 0 && more > b->limit - (b->n < b->limit ? b->n : b->limit)) {
    b->failed = true;
    return false;
  }
  if (b->n + more <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + more) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (p == NULL) {
    b->failed = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

static void put(buf *b, const void *p, size_t n) {
  if (n == 0 || !reserve(b, n)) return;
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

/* Appends s[0, n) with every occurrence of `from` (non-empty) replaced by `to`, left to right,
 * not overlapping. */
static void put_replaced(buf *b, const uint8_t *s, size_t n, span from, span to) {
  size_t i = 0, start = 0;
  while (from.n > 0 && i + from.n <= n) {
    if (s[i] == from.p[0] && memcmp(s + i, from.p, from.n) == 0) {
      put(b, s + start, i - start);
      put(b, to.p, to.n);
      i += from.n;
      start = i;
    } else {
      i++;
    }
  }
  put(b, s + start, n - start);
}

/* The classes of the pre-tokenizer regexes: \p{L}, \p{N}, \s as tokenizers' regex engine
 * (Oniguruma) defines them, exact for every code point (unicode_classes.h, generated); OTHER
 * is everything else (marks \p{M} included). */
typedef enum cls { OTHER = UC_OTHER, LETTER = UC_LETTER, DIGIT = UC_NUMBER, SPACE = UC_SPACE } cls;

static cls classify(uint32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return LETTER;
    if (c >= '0' && c <= '9') return DIGIT;
    if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return SPACE;
    return OTHER;
  }
  size_t lo = 0, hi = UNICODE_RANGE_COUNT; /* the first range whose last >= c */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (unicode_ranges[mid].last < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < UNICODE_RANGE_COUNT && unicode_ranges[lo].first <= c) return (cls)unicode_ranges[lo].cls;
  return OTHER;
}

/* One code point of text[i, n): its value and byte length (an invalid byte: itself, 1). */
static uint32_t decode_utf8(const uint8_t *s, size_t n, size_t *len) {
  const uint8_t c = s[0];
  size_t need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (need == 0 || need > n) {
    *len = 1;
    return 0xFFFFFFFFu; /* invalid: a symbol of its own */
  }
  uint32_t v = need == 1 ? c : (uint32_t)(c & (0x7F >> need));
  for (size_t k = 1; k < need; k++) {
    if ((s[k] & 0xC0) != 0x80) {
      *len = 1;
      return 0xFFFFFFFFu;
    }
    v = v << 6 | (s[k] & 0x3F);
  }
  *len = need;
  return v;
}

/* ---------------------------------------------------------------- NFC, NFD, NFKD, NFKC */

/* The Unicode normalization forms as tokenizers computes them (its NFC normalizer: Qwen2's,
 * Qwen2.5's, Qwen3's; NFD, NFKD, NFKC), from the Unicode 9.0 tables of unicode_nfc.h and
 * unicode_compat.h (generated; scripts/gen_unicode_nfc.py says why 9.0): canonical or
 * compatibility decomposition, canonical ordering by combining class, canonical composition
 * (NFC, NFKC), Hangul by the algorithm. put_form cuts the text into stretches that normalize
 * on their own and copies those already normalized. */

enum {
  HANGUL_S = 0xAC00,
  HANGUL_L = 0x1100,
  HANGUL_V = 0x1161,
  HANGUL_T = 0x11A7,
  HANGUL_L_COUNT = 19,
  HANGUL_V_COUNT = 21,
  HANGUL_T_COUNT = 28,
  HANGUL_N_COUNT = HANGUL_V_COUNT * HANGUL_T_COUNT,
  HANGUL_S_COUNT = HANGUL_L_COUNT * HANGUL_N_COUNT
};
#define NFC_RAW_BYTE 0x80000000u /* | an ill-formed byte, kept as is */

static uint8_t nfc_class(uint32_t c) {
  if (c < 0x300 || c >= NFC_RAW_BYTE) return 0;
  size_t lo = 0, hi = NFC_CLASS_COUNT; /* the first range whose last >= c */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (nfc_classes[mid].last < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < NFC_CLASS_COUNT && nfc_classes[lo].first <= c ? nfc_classes[lo].ccc : 0;
}

static bool nfc_quick_yes(uint32_t c) {
  if (c < 0x300 || c >= NFC_RAW_BYTE) return true;
  size_t lo = 0, hi = NFC_NOT_YES_COUNT;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (nfc_not_yes[mid].last < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return !(lo < NFC_NOT_YES_COUNT && nfc_not_yes[lo].first <= c);
}

static const nfc_decomposition *find_decomposition(const nfc_decomposition *table, size_t count,
                                                   uint32_t c) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (table[mid].c < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count && table[lo].c == c ? &table[lo] : NULL;
}

/* A normalization form: compatibility decompositions (NFKD, NFKC) or canonical ones only;
 * composed afterwards (NFC, NFKC) or not. */
typedef struct form {
  bool compat, compose;
} form;

/* c's full decomposition under the form, its code points in *pool; NULL: none (Hangul
 * syllables are left to the algorithm). */
static const nfc_decomposition *decomposition(uint32_t c, bool compat, const uint32_t **pool) {
  if (c < 0xA0 || c >= NFC_RAW_BYTE) return NULL;
  if (compat) {
    const nfc_decomposition *d = find_decomposition(compat_decomp, COMPAT_DECOMP_COUNT, c);
    if (d != NULL) {
      *pool = compat_decomp_pool;
      return d;
    }
  }
  if (c < 0xC0) return NULL;
  *pool = nfc_decomp_pool;
  return find_decomposition(nfc_decomp, NFC_DECOMP_COUNT, c);
}

/* The primary composite of a + b, or 0. */
static uint32_t nfc_compose(uint32_t a, uint32_t b) {
  if (a >= HANGUL_L && a < HANGUL_L + HANGUL_L_COUNT && b >= HANGUL_V &&
      b < HANGUL_V + HANGUL_V_COUNT)
    return HANGUL_S + ((a - HANGUL_L) * HANGUL_V_COUNT + (b - HANGUL_V)) * HANGUL_T_COUNT;
  if (a >= HANGUL_S && a < HANGUL_S + HANGUL_S_COUNT && (a - HANGUL_S) % HANGUL_T_COUNT == 0 &&
      b > HANGUL_T && b < HANGUL_T + HANGUL_T_COUNT)
    return a + (b - HANGUL_T);
  size_t lo = 0, hi = NFC_COMP_COUNT;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const nfc_composition *m = &nfc_comp[mid];
    if (m->first < a || (m->first == a && m->second < b))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < NFC_COMP_COUNT && nfc_comp[lo].first == a && nfc_comp[lo].second == b
             ? nfc_comp[lo].composite
             : 0;
}

/* One code point of s[0, n) and its length; an ill-formed sequence: its first byte as
 * NFC_RAW_BYTE | byte, length 1. */
static uint32_t nfc_next(const uint8_t *s, size_t n, size_t *len) {
  bool ok;
  utf8_sequence(s, n, &ok);
  if (!ok) {
    *len = 1;
    return NFC_RAW_BYTE | s[0];
  }
  return decode_utf8(s, n, len);
}

typedef struct nfc_char {
  uint32_t c;
  uint8_t ccc;
} nfc_char;

static void nfc_push(nfc_char *out, size_t *n, uint32_t c) {
  out[(*n)++] = (nfc_char){c, nfc_class(c)};
}

/* Sorts marks[0, n) by class, stably: insertion for short runs, counting (through tmp, room
 * for n) for long ones, so that a hostile run of marks costs O(n). */
static void sort_marks(nfc_char *marks, size_t n, nfc_char *tmp) {
  if (n <= 16) {
    for (size_t i = 1; i < n; i++) {
      const nfc_char x = marks[i];
      size_t j = i;
      while (j > 0 && marks[j - 1].ccc > x.ccc) {
        marks[j] = marks[j - 1];
        j--;
      }
      marks[j] = x;
    }
    return;
  }
  size_t start[257] = {0};
  for (size_t i = 0; i < n; i++) start[marks[i].ccc + 1]++;
  for (int k = 1; k < 257; k++) start[k] += start[k - 1];
  for (size_t i = 0; i < n; i++) tmp[start[marks[i].ccc]++] = marks[i];
  memcpy(marks, tmp, n * sizeof *marks);
}

/* Appends the form's normalization of s[0, n) (one stretch that needs normalizing). chars: room
 * for 12n (6n code points — the longest decomposition per byte, unicode_compat.h — and 6n of
 * sorting scratch). */
static void put_form_stretch(buf *b, const uint8_t *s, size_t n, nfc_char *chars, form f) {
  size_t count = 0, len;
  for (size_t i = 0; i < n; i += len) { /* decomposition */
    const uint32_t c = nfc_next(s + i, n - i, &len);
    if (c >= HANGUL_S && c < HANGUL_S + HANGUL_S_COUNT) {
      const uint32_t k = c - HANGUL_S;
      nfc_push(chars, &count, HANGUL_L + k / HANGUL_N_COUNT);
      nfc_push(chars, &count, HANGUL_V + (k % HANGUL_N_COUNT) / HANGUL_T_COUNT);
      if (k % HANGUL_T_COUNT != 0) nfc_push(chars, &count, HANGUL_T + k % HANGUL_T_COUNT);
      continue;
    }
    const uint32_t *pool = NULL;
    const nfc_decomposition *d = decomposition(c, f.compat, &pool);
    if (d == NULL) {
      nfc_push(chars, &count, c);
    } else {
      for (uint32_t k = 0; k < d->count; k++) nfc_push(chars, &count, pool[d->start + k]);
    }
  }
  for (size_t a = 0; a < count;) { /* canonical ordering: each run of marks sorted, stably */
    if (chars[a].ccc == 0) {
      a++;
      continue;
    }
    size_t end = a + 1;
    while (end < count && chars[end].ccc != 0) end++;
    sort_marks(chars + a, end - a, chars + 6 * n);
    a = end;
  }
  size_t kept = 0, starter = 0; /* composition: chars[0, kept) is the result so far */
  bool has_starter = false;
  if (!f.compose) kept = count;
  for (size_t i = 0; f.compose && i < count; i++) {
    const nfc_char x = chars[i];
    /* x joins the last starter unless a character between them has a class of 0 or >= x's */
    if (has_starter && (kept == starter + 1 || chars[kept - 1].ccc < x.ccc)) {
      const uint32_t composite = nfc_compose(chars[starter].c, x.c);
      if (composite != 0) {
        chars[starter].c = composite;
        continue;
      }
    }
    if (x.ccc == 0) {
      has_starter = true;
      starter = kept;
    }
    chars[kept++] = x;
  }
  for (size_t i = 0; i < kept; i++) {
    uint8_t u[4];
    const uint32_t c = chars[i].c;
    if (c >= NFC_RAW_BYTE)
      put(b, &(uint8_t){(uint8_t)c}, 1);
    else
      put(b, u, utf8(c, u));
  }
}

/* Whether nothing before c composes or reorders with c or what it decomposes to: a stretch
 * of the text may start there. */
static bool form_cut(uint32_t c, form f) {
  if (nfc_class(c) != 0 || (f.compose && !nfc_quick_yes(c))) return false;
  if (f.compose && !f.compat) return true; /* NFC: a Yes starter decomposes to Yes starters */
  const uint32_t *pool = NULL;
  const nfc_decomposition *d = decomposition(c, f.compat, &pool);
  if (d == NULL) return true; /* Hangul syllables too: they start with a leading consonant */
  const uint32_t first = pool[d->start];
  return nfc_class(first) == 0 && (!f.compose || nfc_quick_yes(first));
}

/* Whether c is in the form already (alone): nothing to decompose, and (composing) NFC_Quick_Check
 * Yes. */
static bool form_stable(uint32_t c, form f) {
  if (c < 0xA0 || c >= NFC_RAW_BYTE) return true;
  if (c >= HANGUL_S && c < HANGUL_S + HANGUL_S_COUNT) return f.compose;
  if (f.compose) {
    if (!nfc_quick_yes(c)) return false;
    return !f.compat || find_decomposition(compat_decomp, COMPAT_DECOMP_COUNT, c) == NULL;
  }
  const uint32_t *pool = NULL;
  return decomposition(c, f.compat, &pool) == NULL;
}

/* Appends the form's normalization of s[0, n) (NFC, NFD, NFKD or NFKC). The text is cut before
 * every code point of class 0 that nothing before it composes or reorders with (form_cut); a
 * stretch of stable code points with their classes in order is copied as is (ASCII always is),
 * the others are normalized. Ill-formed UTF-8 bytes pass through unchanged. */
static void put_form(buf *b, const uint8_t *s, size_t n, form f) {
  size_t copied = 0, i = 0, len;
  nfc_char *chars = NULL; /* 12 per byte: put_form_stretch's room */
  while (i < n) {
    const size_t start = i;
    uint32_t c = nfc_next(s + i, n - i, &len);
    bool yes = form_stable(c, f);
    uint8_t last = nfc_class(c);
    for (i += len; i < n; i += len) {
      c = nfc_next(s + i, n - i, &len);
      if (c < 0xA0) break; /* ASCII and C1 controls: a new stretch, stable */
      const uint8_t ccc = nfc_class(c);
      if (form_cut(c, f)) break;
      if (!form_stable(c, f) || (ccc != 0 && ccc < last)) yes = false;
      last = ccc;
    }
    if (!yes) {
      put(b, s + copied, start - copied);
      if (chars == NULL) chars = malloc(12 * n * sizeof *chars);
      if (chars == NULL) {
        b->failed = true;
        return;
      }
      put_form_stretch(b, s + start, i - start, chars, f);
      copied = i;
    }
  }
  put(b, s + copied, n - copied);
  free(chars);
}

/* ---------------------------------------------------------------- Lowercase */

/* c lowercased by one code point (unicode_compat.h's runs), or c. */
static uint32_t lower_of(uint32_t c) {
  size_t lo = 0, hi = LOWER_RUN_COUNT; /* the first run whose last >= c */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (lower_runs[mid].last < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == LOWER_RUN_COUNT || lower_runs[lo].first > c) return c;
  const lower_run *r = &lower_runs[lo];
  return (c - r->first) % r->stride == 0 ? (uint32_t)((int64_t)c + r->delta) : c;
}

/* Appends s[0, n) lowercased as tokenizers' Lowercase does (Rust's char::to_lowercase on each
 * character: full mappings, U+0130 to "i\u0307", no final-sigma rule). Ill-formed UTF-8
 * bytes pass through unchanged. */
static void put_lowercase(buf *b, const uint8_t *s, size_t n) {
  size_t copied = 0, len;
  for (size_t i = 0; i < n; i += len) {
    len = 1;
    uint8_t u[4];
    size_t size = 0;
    if (s[i] < 0x80) {
      if (s[i] < 'A' || s[i] > 'Z') continue;
      u[0] = (uint8_t)(s[i] + ('a' - 'A'));
      size = 1;
    } else {
      const uint32_t c = nfc_next(s + i, n - i, &len);
      if (c >= NFC_RAW_BYTE) continue;
      if (c == 0x130) {
        put(b, s + copied, i - copied);
        put(b, "i\xCC\x87", 3);
        copied = i + len;
        continue;
      }
      const uint32_t low = lower_of(c);
      if (low == c) continue;
      size = utf8(low, u);
    }
    put(b, s + copied, i - copied);
    put(b, u, size);
    copied = i + len;
  }
  put(b, s + copied, n - copied);
}

typedef struct cp {
  uint32_t c;
  uint8_t cls;
  uint32_t at; /* byte offset */
} cp;

static bool is_newline(uint32_t c) { return c == '\r' || c == '\n'; }

/* The end of the contraction 's|'t|'re|'ve|'m|'ll|'d at cps[i], or 0. any_case: the
 * (?i:...) of Llama 3's and Qwen2's patterns, where Oniguruma's case folding also takes
 * U+017F (long s) for s. */
static size_t contraction_end(const cp *cps, size_t n, size_t i, bool any_case) {
  if (cps[i].c != '\'' || i + 1 >= n) return 0;
  uint32_t a = cps[i + 1].c, b = i + 2 < n ? cps[i + 2].c : 0;
  if (any_case) {
    if (a >= 'A' && a <= 'Z') a += 'a' - 'A';
    if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
    if (a == 0x17F) a = 's';
  }
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return 0;
}

/* The end of `\s+(?!\S)|\s+` at cps[i] (a space): the run, less its last space when a
 * non-space follows and the run is longer than one. */
static size_t spaces_end(const cp *cps, size_t n, size_t i) {
  size_t e = i;
  while (e < n && cps[e].cls == SPACE) e++;
  if (e == n || e - i == 1) return e;
  return e - 1; /* leave the last space to the word that follows */
}

/* The end (index into cps) of the piece the GPT-2 split takes at cps[i] (i < n):
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t gpt2_piece_end(const cp *cps, size_t n, size_t i) {
  const size_t c = contraction_end(cps, n, i, false);
  if (c) return c;
  size_t j = i;
  if (cps[j].c == ' ' && j + 1 < n && cps[j + 1].cls != SPACE) j++; /* " ?" */
  const uint8_t k = cps[j].cls;
  if (k != SPACE) { /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+` */
    while (j < n && cps[j].cls == k) j++;
    return j;
  }
  return spaces_end(cps, n, i);
}

/* The end of the piece Llama 3's pattern (max_digits 3) or Qwen2's (1) takes at cps[i]:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * the alternatives in order, each with the backtracking it needs written out. */
static size_t regex_piece_end(const cp *cps, size_t n, size_t i, size_t max_digits) {
  size_t j = contraction_end(cps, n, i, true);
  if (j) return j;
  const uint8_t k = cps[i].cls;
  j = i; /* [^\r\n\p{L}\p{N}]?\p{L}+ */
  if (k != LETTER && k != DIGIT && !is_newline(cps[i].c) && i + 1 < n && cps[i + 1].cls == LETTER)
    j++;
  if (cps[j].cls == LETTER) {
    while (j < n && cps[j].cls == LETTER) j++;
    return j;
  }
  if (k == DIGIT) { /* \p{N}{1,max_digits} */
    for (j = i; j < n && j - i < max_digits && cps[j].cls == DIGIT;) j++;
    return j;
  }
  j = i; /* ` ?[^\s\p{L}\p{N}]+[\r\n]*` */
  if (cps[j].c == ' ' && j + 1 < n && cps[j + 1].cls == OTHER) j++;
  if (cps[j].cls == OTHER) {
    while (j < n && cps[j].cls == OTHER) j++;
    while (j < n && is_newline(cps[j].c)) j++;
    return j;
  }
  /* a space: `\s*[\r\n]+` ends after the run's last \r or \n (\s* gives back spaces until
   * one follows), else `\s+(?!\S)|\s+` */
  size_t e = i;
  while (e < n && cps[e].cls == SPACE) e++;
  for (size_t m = e; m > i; m--)
    if (is_newline(cps[m - 1].c)) return m;
  return spaces_end(cps, n, i);
}

/* ---------------------------------------------------------------- BPE */

typedef struct symbol {
  int32_t id;
  int32_t prev, next; /* neighbours in the word, -1 at its ends */
  bool gone;          /* merged into its left neighbour */
} symbol;

typedef struct candidate {
  uint32_t rank, pos;
  int32_t merged;
} candidate;

/* The state of one encode call. */
typedef struct enc {
  const wick_tokenizer *t;
  int32_t *ids;
  size_t capacity, count;
  bool failed;             /* out of memory */
  buf norm, scratch, word; /* the normalized stretch; normalizer scratch; a word's symbols */
  symbol *syms;
  candidate *heap;
  size_t syms_cap;
  cp *cps;
  size_t cps_cap;
} enc;

static void emit(enc *e, int32_t id) {
  if (e->count < e->capacity) e->ids[e->count] = id;
  e->count++;
}

static bool before(const candidate *a, const candidate *b) {
  return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void heap_push(candidate *h, size_t *n, candidate c) {
  size_t i = (*n)++;
  while (i > 0 && before(&c, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = c;
}

static candidate heap_pop(candidate *h, size_t *n) {
  const candidate top = h[0], last = h[--*n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && before(&h[c + 1], &h[c])) c++;
    if (!before(&h[c], &last)) break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0) h[i] = last;
  return top;
}

/* Offers the merge of symbol `pos` with its right neighbour, if there is one. */
static void offer(const wick_tokenizer *t, const symbol *s, size_t pos, candidate *heap,
                  size_t *n) {
  if (s[pos].next < 0) return;
  const merge *m = find_merge(t, s[pos].id, s[s[pos].next].id);
  if (m != NULL) heap_push(heap, n, (candidate){m->rank, (uint32_t)pos, (int32_t)m->merged});
}

/* tokenizers' Word::merge_all without dropout: the candidate merges in a heap by (rank,
 * position); a popped one whose symbols changed since it was offered is dropped. */
static void merge_all(const wick_tokenizer *t, symbol *s, size_t n, candidate *heap) {
  size_t hn = 0;
  for (size_t i = 0; i + 1 < n; i++) offer(t, s, i, heap, &hn);
  while (hn > 0) {
    const candidate c = heap_pop(heap, &hn);
    symbol *a = &s[c.pos];
    if (a->gone || a->next < 0) continue;
    symbol *b = &s[a->next];
    const merge *m = find_merge(t, a->id, b->id);
    if (m == NULL || (int32_t)m->merged != c.merged) continue; /* expired */
    a->id = c.merged;
    b->gone = true;
    a->next = b->next;
    if (b->next >= 0) s[b->next].prev = (int32_t)c.pos;
    if (a->prev >= 0) offer(t, s, (size_t)a->prev, heap, &hn);
    offer(t, s, c.pos, heap, &hn);
  }
}

static bool room_for_symbols(enc *e, size_t n) {
  if (n <= e->syms_cap) return true;
  free(e->syms);
  free(e->heap);
  e->syms = malloc(n * sizeof *e->syms);
  e->heap = malloc(3 * n * sizeof *e->heap); /* n - 1 offers, then at most 2 per merge */
  e->syms_cap = e->syms && e->heap ? n : 0;
  if (e->syms_cap == 0) e->failed = true;
  return e->syms_cap != 0;
}

/* BPE over one word w[0, n) (UTF-8: vocabulary strings; for byte-level tokenizers the byte
 * symbols), as tokenizers' BPE::merge_word. */
static void bpe_word(enc *e, const uint8_t *w, size_t n) {
  const wick_tokenizer *t = e->t;
  if (n == 0) return;
  if (t->model_flags & MODEL_IGNORE_MERGES) {
    const int32_t id = find_id(t, w, n);
    if (id >= 0) {
      emit(e, id);
      return;
    }
  }
  if (!room_for_symbols(e, n)) return;
  symbol *s = e->syms;
  size_t k = 0;
  int32_t unk = -1; /* an unknown token waiting (fused with the next unknown characters) */
  for (size_t at = 0; at < n;) {
    size_t len;
    decode_utf8(w + at, n - at, &len);
    const int32_t id = find_id(t, w + at, len);
    bool fell_back = false;
    if (id >= 0) {
      if (unk >= 0) s[k++].id = unk, unk = -1;
      s[k++].id = id;
    } else if (t->model_flags & MODEL_BYTE_FALLBACK) {
      fell_back = true;
      for (size_t i = 0; i < len && fell_back; i++) fell_back = t->fallback_id[w[at + i]] >= 0;
      for (size_t i = 0; i < len && fell_back; i++) s[k++].id = t->fallback_id[w[at + i]];
    }
    if (id < 0 && !fell_back && t->unk >= 0) {
      if (unk >= 0 && !(t->model_flags & MODEL_FUSE_UNK)) s[k++].id = unk;
      unk = t->unk;
    }
    at += len;
  }
  if (unk >= 0) s[k++].id = unk;
  for (size_t i = 0; i < k; i++) {
    s[i].prev = (int32_t)i - 1;
    s[i].next = i + 1 < k ? (int32_t)i + 1 : -1;
    s[i].gone = false;
  }
  merge_all(t, s, k, e->heap);
  for (size_t i = 0; i < k; i++)
    if (!s[i].gone) emit(e, s[i].id);
}

/* ---------------------------------------------------------------- pre-tokenizers */

/* A byte-level piece: its bytes as GPT-2's byte symbols, then BPE. */
static void byte_level_word(enc *e, const uint8_t *p, size_t n) {
  e->word.n = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t u[4];
    put(&e->word, u, utf8(e->t->byte_char[p[i]], u));
  }
  if (e->word.failed) {
    e->failed = true;
    return;
  }
  bpe_word(e, e->word.p, e->word.n);
}

/* GPT-2's split of text[0, size) (or Llama 3's or Qwen2's regex split), each piece through
 * byte_level_word. */
static void byte_level(enc *e, const uint8_t *text, size_t size) {
  if (size > e->cps_cap) {
    free(e->cps);
    e->cps = malloc(size * sizeof *e->cps);
    e->cps_cap = e->cps ? size : 0;
    if (e->cps == NULL) {
      e->failed = true;
      return;
    }
  }
  cp *cps = e->cps;
  size_t n = 0;
  for (size_t at = 0; at < size;) {
    size_t len;
    const uint32_t c = decode_utf8(text + at, size - at, &len);
    cps[n++] = (cp){c, (uint8_t)(c == 0xFFFFFFFFu ? OTHER : classify(c)), (uint32_t)at};
    at += len;
  }
  const step *pre = &e->t->pre;
  const bool digits = pre->kind == PRE_BYTE_LEVEL && (pre->x & DIGITS_ONE_BY_ONE);
  const uint32_t regex = pre->kind == PRE_REGEX_BYTE_LEVEL ? pre->x : 0;
  size_t i = 0;
  while (i < n) {
    /* digits one by one: a digit is a piece; the split runs between digits */
    size_t stop = n;
    if (digits) {
      if (cps[i].cls == DIGIT) {
        const size_t b0 = cps[i].at, b1 = i + 1 < n ? cps[i + 1].at : size;
        byte_level_word(e, text + b0, b1 - b0);
        i++;
        continue;
      }
      for (stop = i; stop < n && cps[stop].cls != DIGIT; stop++) {
      }
    }
    const size_t end = regex == REGEX_LLAMA3  ? regex_piece_end(cps, stop, i, 3)
                       : regex == REGEX_QWEN2 ? regex_piece_end(cps, stop, i, 1)
                                              : gpt2_piece_end(cps, stop, i);
    const size_t b0 = cps[i].at, b1 = end < n ? cps[end].at : size;
    byte_level_word(e, text + b0, b1 - b0);
    i = end;
  }
}

/* tokenizers' Metaspace: spaces become the replacement, which is prepended (scheme "always";
 * "first": only to the stretch that starts the text) unless the stretch starts with it, and,
 * with split, starts a new word at each of its occurrences. */
static void metaspace(enc *e, const uint8_t *p, size_t n, bool starts_text) {
  const step *pre = &e->t->pre;
  const span space = {(const uint8_t *)" ", 1};
  buf *w = &e->word;
  w->n = 0;
  const bool starts = n >= pre->a.n && memcmp(p, pre->a.p, pre->a.n) == 0;
  const bool prepend = pre->x == PREPEND_ALWAYS || (pre->x == PREPEND_FIRST && starts_text);
  if (prepend && !starts && !(p[0] == ' ')) put(w, pre->a.p, pre->a.n);
  put_replaced(w, p, n, space, pre->a);
  if (w->failed) {
    e->failed = true;
    return;
  }
  /* (bpe_word does not touch e->word: the words below point into it) */
  size_t start = 0;
  if (pre->y) /* split: MergedWithNext */
    for (size_t i = 1; i + pre->a.n <= w->n; i++)
      if (memcmp(w->p + i, pre->a.p, pre->a.n) == 0) {
        bpe_word(e, w->p + start, i - start);
        start = i;
        i += pre->a.n - 1;
      }
  bpe_word(e, w->p + start, w->n - start);
}

/* tokenizers' Split on a string pattern (not inverted): the text cut into the pattern's
 * matches (leftmost, not overlapping) and the stretches between them, which become words by
 * the behavior: Removed drops the matches, Isolated keeps every part, MergedWithPrevious
 * appends a match to the part before it unless that is a match too, MergedWithNext prepends a
 * match to the stretch after it when there is one, Contiguous joins adjacent matches. */
typedef struct splitter {
  enc *e;
  const uint8_t *p;
  uint32_t how;
  size_t start, end; /* the word being built: p[start, end) */
  bool have, last_match;
} splitter;

static void split_flush(splitter *s) {
  if (s->have) bpe_word(s->e, s->p + s->start, s->end - s->start);
  s->have = false;
}

static void split_part(splitter *s, size_t a, size_t b, bool match) {
  bool joins = false;
  switch (s->how) {
    case SPLIT_REMOVED:
      if (!match) bpe_word(s->e, s->p + a, b - a);
      return;
    case SPLIT_ISOLATED: bpe_word(s->e, s->p + a, b - a); return;
    case SPLIT_MERGED_WITH_PREVIOUS: joins = match && !s->last_match; break;
    case SPLIT_MERGED_WITH_NEXT: joins = !match && s->last_match; break;
    default: /* SPLIT_CONTIGUOUS */ joins = match && s->last_match;
  }
  if (joins && s->have) {
    s->end = b;
  } else {
    split_flush(s);
    *s = (splitter){s->e, s->p, s->how, a, b, true, false};
  }
  s->last_match = match;
}

static void split_words(enc *e, const uint8_t *p, size_t n) {
  const span pat = e->t->pre.a;
  splitter s = {e, p, e->t->pre.x, 0, 0, false, false};
  size_t start = 0;
  for (size_t i = 0; i + pat.n <= n;) {
    if (memcmp(p + i, pat.p, pat.n) != 0) {
      i++;
      continue;
    }
    if (i > start) split_part(&s, start, i, false);
    split_part(&s, i, i + pat.n, true);
    i += pat.n;
    start = i;
  }
  if (start < n) split_part(&s, start, n, false);
  split_flush(&s);
}

/* One stretch of normalized text with no added token in it. */
static void pre_tokenize(enc *e, const uint8_t *p, size_t n, bool starts_text) {
  if (n == 0) return;
  switch (e->t->pre.kind) {
    case PRE_BYTE_LEVEL:
    case PRE_REGEX_BYTE_LEVEL: byte_level(e, p, n); break;
    case PRE_METASPACE: metaspace(e, p, n, starts_text); break;
    case PRE_SPLIT: split_words(e, p, n); break;
    default: bpe_word(e, p, n);
  }
}

/* ---------------------------------------------------------------- added tokens, normalizer */

static bool is_space(const uint8_t *s, size_t n, size_t *len) {
  const uint32_t c = decode_utf8(s, n, len);
  return c != 0xFFFFFFFFu && classify(c) == SPACE;
}

/* The next added token of the given kind (normalized or not) in s[from, n): leftmost, then
 * longest. Its index in t->added and its start (*at); -1 if none. */
static int32_t next_added(const wick_tokenizer *t, const uint8_t *s, size_t n, size_t from,
                          bool normalized, size_t *at) {
  for (size_t i = from; i < n; i++) {
    for (uint32_t k = t->first[s[i]]; k < t->first[s[i] + 1]; k++) {
      const added *a = &t->added[k];
      if (((a->flags & ADDED_NORMALIZED) != 0) == normalized && a->text.n <= n - i &&
          memcmp(a->text.p, s + i, a->text.n) == 0) {
        *at = i;
        return (int32_t)k;
      }
    }
  }
  return -1;
}

static void normalized_stretch(enc *e, const uint8_t *p, size_t n, bool starts_text);

/* Splits s[0, n) on the added tokens of one kind, as tokenizers' AddedVocabulary::find_matches
 * (lstrip: the whitespace before the token, not before the previous match, goes with it;
 * rstrip: the whitespace after it); the stretches between go on. */
static void split_added(enc *e, const uint8_t *s, size_t n, bool normalized, bool starts_text) {
  size_t start = 0, at;
  int32_t k;
  while ((k = next_added(e->t, s, n, start, normalized, &at)) >= 0) {
    const added *a = &e->t->added[k];
    size_t b0 = at, b1 = at + a->text.n, len;
    if (a->flags & ADDED_LSTRIP) {
      size_t ws = start; /* where the whitespace that ends s[start, at) begins */
      for (size_t i = start; i < at; i += len)
        if (!is_space(s + i, at - i, &len)) ws = i + len;
      b0 = ws;
    }
    if (a->flags & ADDED_RSTRIP)
      while (b1 < n && is_space(s + b1, n - b1, &len)) b1 += len;
    if (start < b0) {
      if (normalized)
        pre_tokenize(e, s + start, b0 - start, starts_text && start == 0);
      else
        normalized_stretch(e, s + start, b0 - start, start == 0);
    }
    emit(e, a->id);
    start = b1;
  }
  if (start < n) {
    if (normalized)
      pre_tokenize(e, s + start, n - start, starts_text && start == 0);
    else
      normalized_stretch(e, s + start, n - start, start == 0);
  }
}

/* A stretch of the text between non-normalized added tokens: normalized (Prepend: when not
 * empty; Replace: every occurrence), then split on the normalized added tokens. */
static void normalized_stretch(enc *e, const uint8_t *p, size_t n, bool starts_text) {
  const wick_tokenizer *t = e->t;
  if (t->num_norm == 0) {
    split_added(e, p, n, true, starts_text);
    return;
  }
  buf *cur = &e->norm, *next = &e->scratch;
  cur->n = 0;
  cur->limit = next->limit = GROWTH_LIMIT(n);
  put(cur, p, n);
  for (uint32_t i = 0; i < t->num_norm && cur->n <= GROWTH_LIMIT(n); i++) {
    const step *s = &t->norm[i];
    next->n = 0;
    if (s->kind == NORM_PREPEND) {
      if (cur->n > 0) put(next, s->a.p, s->a.n);
      put(next, cur->p, cur->n);
    } else if (s->kind >= NORM_NFC && s->kind <= NORM_NFKC) {
      const form f = {.compat = s->kind == NORM_NFKD || s->kind == NORM_NFKC,
                      .compose = s->kind == NORM_NFC || s->kind == NORM_NFKC};
      put_form(next, cur->p, cur->n, f);
    } else if (s->kind == NORM_LOWERCASE) {
      put_lowercase(next, cur->p, cur->n);
    } else {
      put_replaced(next, cur->p, cur->n, s->a, s->b);
    }
    buf *x = cur;
    cur = next;
    next = x;
  }
  if (cur->failed || next->failed) {
    e->failed = true;
    return;
  }
  if (cur->n > GROWTH_LIMIT(n)) { /* a hostile entry's Replace steps */
    e->failed = true;
    return;
  }
  /* keep the result in e->norm (split_added's stretches point into it) */
  if (cur != &e->norm) {
    buf x = e->norm;
    e->norm = *cur;
    *cur = x;
  }
  split_added(e, e->norm.p, e->norm.n, true, starts_text);
}

wick_status wick_tokenizer_encode(const wick_tokenizer *t, const char *text, size_t size,
                                  int32_t *ids, size_t capacity, size_t *count) {
  if (count != NULL) *count = 0;
  if (t == NULL || count == NULL || (text == NULL && size > 0) || (ids == NULL && capacity > 0))
    return WICK_ERR_INVALID_ARGUMENT;
  enc e = {0};
  e.t = t;
  e.ids = ids;
  e.capacity = capacity;
  if (size > 0) split_added(&e, (const uint8_t *)text, size, false, true);
  free(e.norm.p);
  free(e.scratch.p);
  free(e.word.p);
  free(e.syms);
  free(e.heap);
  free(e.cps);
  if (e.failed) return WICK_ERR_OUT_OF_MEMORY;
  *count = e.count;
  return WICK_OK;
}

/* ---------------------------------------------------------------- decoding */

/* A list of token strings: token i is text[end[i - 1], end[i]). */
typedef struct tokens {
  buf text;
  size_t *end;
  size_t count, cap;
  bool failed;
} tokens;

static void close_token(tokens *l) {
  if (l->count == l->cap) {
    const size_t cap = l->cap ? 2 * l->cap : 16;
    size_t *end = realloc(l->end, cap * sizeof *end);
    if (end == NULL) {
      l->failed = true;
      return;
    }
    l->end = end;
    l->cap = cap;
  }
  l->end[l->count++] = l->text.n;
}

static span token_at(const tokens *l, size_t i) {
  const size_t a = i ? l->end[i - 1] : 0;
  return (span){l->text.p + a, (uint32_t)(l->end[i] - a)};
}

static void put_bytes(buf *b, const uint8_t *p, size_t n) { put(b, p, n); }

static const uint8_t REPLACEMENT[3] = {0xEF, 0xBF, 0xBD}; /* U+FFFD */

/* bytes[0, n) as text: well-formed UTF-8 kept, each maximal ill-formed part one U+FFFD. */
static void put_lossy(buf *b, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n;) {
    bool ok;
    const size_t len = utf8_sequence(p + i, n - i, &ok);
    if (ok)
      put(b, p + i, len);
    else
      put(b, REPLACEMENT, 3);
    i += len;
  }
}

static int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The byte a "<0xNN>" token stands for (as ByteFallback reads it: u8::from_str_radix of
 * the two characters, which takes a leading '+'), or -1. */
static int fallback_byte(span s) {
  if (s.n != 6 || memcmp(s.p, "<0x", 3) != 0 || s.p[5] != '>') return -1;
  const int hi = hex_digit(s.p[3]), lo = hex_digit(s.p[4]);
  if (s.p[3] == '+' && lo >= 0) return lo;
  return hi >= 0 && lo >= 0 ? hi * 16 + lo : -1;
}

/* ByteFallback's run of bytes: valid UTF-8 as one token, else one U+FFFD token per byte
 * (raw: the bytes as they are). */
static void flush_bytes(tokens *out, buf *run, bool raw) {
  if (run->n == 0) return;
  bool valid = true;
  for (size_t i = 0; i < run->n && valid;) {
    size_t len = utf8_sequence(run->p + i, run->n - i, &valid);
    i += len;
  }
  if (valid || raw) {
    put(&out->text, run->p, run->n);
    close_token(out);
  } else {
    for (size_t i = 0; i < run->n; i++) {
      put(&out->text, REPLACEMENT, 3);
      close_token(out);
    }
  }
  run->n = 0;
}

/* One decoder step from `in` to `out`. `first`: in's first token starts the text (Metaspace
 * drops its replacement characters there; Strip after a Fuse strips the text's start);
 * `raw`: bytes as they are, no U+FFFD. */
static void decode_step(const wick_tokenizer *t, const step *s, const tokens *in, tokens *out,
                        bool first, bool fused, bool raw, buf *run) {
  buf *o = &out->text;
  switch (s->kind) {
    case DEC_BYTE_LEVEL: { /* one token: the symbols' bytes (a token with another character
                              keeps its own bytes), as text */
      run->n = 0;
      for (size_t i = 0; i < in->count; i++) {
        const span tok = token_at(in, i);
        const size_t mark = run->n;
        for (size_t at = 0, len; at < tok.n; at += len) {
          const uint32_t c = decode_utf8(tok.p + at, tok.n - at, &len);
          const int b = c < 512 ? t->char_byte[c] : -1;
          if (b < 0) {
            run->n = mark;
            put(run, tok.p, tok.n);
            break;
          }
          const uint8_t byte = (uint8_t)b;
          put(run, &byte, 1);
        }
      }
      if (raw)
        put(o, run->p, run->n);
      else
        put_lossy(o, run->p, run->n);
      close_token(out);
      break;
    }
    case DEC_BYTE_FALLBACK:
      run->n = 0;
      for (size_t i = 0; i < in->count; i++) {
        const span tok = token_at(in, i);
        const int byte = fallback_byte(tok);
        if (byte >= 0) {
          const uint8_t b = (uint8_t)byte;
          put(run, &b, 1);
          continue;
        }
        flush_bytes(out, run, raw);
        put(o, tok.p, tok.n);
        close_token(out);
      }
      flush_bytes(out, run, raw);
      break;
    case DEC_FUSE:
      put(o, in->text.p, in->text.n);
      close_token(out);
      break;
    default:
      for (size_t i = 0; i < in->count; i++) {
        span tok = token_at(in, i);
        if (s->kind == DEC_REPLACE) {
          put_replaced(o, tok.p, tok.n, s->a, s->b);
        } else if (s->kind == DEC_STRIP) {
          uint32_t cut = 0;
          if (!(fused && !first))
            for (uint32_t k = 0;
                 k < s->x && tok.n - cut >= s->a.n && memcmp(tok.p + cut, s->a.p, s->a.n) == 0; k++)
              cut += s->a.n;
          tok.p += cut;
          tok.n -= cut;
          for (uint32_t k = 0;
               k < s->y && tok.n >= s->a.n && memcmp(tok.p + tok.n - s->a.n, s->a.p, s->a.n) == 0;
               k++)
            tok.n -= s->a.n;
          put(o, tok.p, tok.n);
        } else { /* DEC_METASPACE */
          const bool drop = i == 0 && first && s->x != PREPEND_NEVER;
          for (size_t at = 0; at < tok.n;) {
            if (tok.n - at >= s->a.n && memcmp(tok.p + at, s->a.p, s->a.n) == 0) {
              if (!drop) put(o, " ", 1);
              at += s->a.n;
            } else {
              put(o, tok.p + at, 1);
              at++;
            }
          }
        }
        close_token(out);
      }
  }
}

/* The text of ids[0, count) as tokenizers' Tokenizer.decode: each id's string (an added
 * token's text, else the vocabulary's; unknown ids left out, special ones too with
 * skip_special) through the decoder's steps, joined (with spaces when there is no
 * decoder). Appends to *text; false when out of memory. */
static bool decode_ids(const wick_tokenizer *t, const int32_t *ids, size_t count, unsigned flags,
                       bool raw, buf *text) {
  tokens a = {0}, b = {0};
  buf run = {0};
  for (size_t i = 0; i < count; i++) {
    const int32_t id = ids[i];
    if (id < 0 || (uint32_t)id >= t->num_tokens) continue;
    const int32_t k = t->added_of[id];
    if (k >= 0 && (flags & WICK_TOKENIZER_SKIP_SPECIAL) && (t->added[k].flags & ADDED_SPECIAL))
      continue;
    const span s = k >= 0 ? t->added[k].text : t->tokens[id];
    if (s.n == 0) continue;
    put(&a.text, s.p, s.n);
    close_token(&a);
  }
  const bool first = !(flags & WICK_TOKENIZER_CONTINUATION);
  bool fused = false;
  const size_t limit = GROWTH_LIMIT(a.text.n + a.count);
  a.text.limit = b.text.limit = limit;
  for (uint32_t i = 0; t->has_decoder && i < t->num_dec && a.text.n <= limit; i++) {
    b.text.n = 0;
    b.count = 0;
    decode_step(t, &t->dec[i], &a, &b, first, fused, raw, &run);
    fused = fused || t->dec[i].kind == DEC_FUSE || t->dec[i].kind == DEC_BYTE_LEVEL;
    const tokens x = a;
    a = b;
    b = x;
  }
  /* (a damaged entry's strings may not be UTF-8: the text is made so, as HuggingFace's
   * strings always are) */
  void (*out)(buf *, const uint8_t *, size_t) = raw ? put_bytes : put_lossy;
  if (t->has_decoder) {
    out(text, a.text.p, a.text.n);
  } else {
    for (size_t i = 0; i < a.count; i++) {
      const span s = token_at(&a, i);
      if (i > 0) put(text, " ", 1);
      out(text, s.p, s.n);
    }
  }
  const bool ok =
      !(a.failed || b.failed || a.text.failed || b.text.failed || run.failed) && a.text.n <= limit;
  free(a.text.p), free(a.end), free(b.text.p), free(b.end), free(run.p);
  return ok && !text->failed;
}

wick_status wick_tokenizer_decode_text(const wick_tokenizer *t, const int32_t *ids, size_t count,
                                       unsigned flags, char *text, size_t capacity, size_t *size) {
  if (size != NULL) *size = 0;
  if (t == NULL || size == NULL || (ids == NULL && count > 0) || (text == NULL && capacity > 0))
    return WICK_ERR_INVALID_ARGUMENT;
  buf out = {0};
  if (!decode_ids(t, ids, count, flags, false, &out)) {
    free(out.p);
    return WICK_ERR_OUT_OF_MEMORY;
  }
  if (out.n > 0 && capacity > 0) memcpy(text, out.p, out.n < capacity ? out.n : capacity);
  *size = out.n;
  free(out.p);
  return WICK_OK;
}

int wick_tokenizer_is_byte(const wick_tokenizer *t, int32_t id) {
  if (t == NULL || id < 0 || (uint32_t)id >= t->num_tokens) return 0;
  bool fallback = false;
  for (uint32_t i = 0; i < t->num_dec && t->has_decoder; i++)
    fallback = fallback || t->dec[i].kind == DEC_BYTE_FALLBACK;
  const int32_t k = t->added_of[id];
  return fallback && fallback_byte(k >= 0 ? t->added[k].text : t->tokens[id]) >= 0;
}

size_t wick_tokenizer_decode(const wick_tokenizer *t, int32_t id, char *bytes, size_t capacity) {
  if (t == NULL || id < 0 || (uint32_t)id >= t->num_tokens || (bytes == NULL && capacity > 0))
    return 0;
  buf out = {0};
  size_t n = 0;
  if (decode_ids(t, &id, 1, WICK_TOKENIZER_CONTINUATION, true, &out)) {
    n = out.n;
    if (n > 0 && capacity > 0) memcpy(bytes, out.p, n < capacity ? n : capacity);
  }
  free(out.p);
  return n;
}
