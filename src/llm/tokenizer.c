/*
 * tokenizer.c — wick_tokenizer (include/wick/llm.h): the byte-level BPE
 * tokenizer packed in a file's "wick_tokenizer" metadata
 * (python/wick/llm/tokenizer.py writes it). The entry is untrusted: every
 * count, length and id is checked before use, and tokens point into the
 * model's bytes (nothing is copied).
 *
 * Encoding: added tokens matched literally; between them GPT-2's
 * pre-tokenizer split (the regex
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * written out by hand over code points, after an optional split of every
 * digit into its own piece); each piece's bytes map to byte-level symbols
 * (GPT-2's bytes_to_unicode), which BPE merges lowest rank first, leftmost on
 * ties. Decoding maps a token's symbols back to bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/internal.h"

typedef struct span {
  const uint8_t *p;
  uint32_t n;
} span;

typedef struct merge {
  uint64_t key; /* left << 32 | right; 0 with rank UINT32_MAX: empty slot */
  uint32_t rank, merged;
} merge;

struct wick_tokenizer {
  uint32_t flags, num_tokens, num_merges, num_added;
  span *tokens;
  int32_t *added;    /* ids, longest text first */
  uint8_t *is_added; /* per id */
  uint32_t *ids;     /* string -> id hash: id + 1, 0 = empty */
  size_t ids_mask;
  merge *merges;
  size_t merges_mask;
  int32_t byte_id[256];    /* the vocabulary id of each byte's symbol */
  uint16_t byte_char[256]; /* each byte's symbol (a code point) */
  int16_t char_byte[512];  /* the inverse: code point -> byte, -1 */
};

enum { DIGITS_ONE_BY_ONE = 1 };

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

/* UTF-8 of code point c (< 0x800 here) into out; its length. */
static size_t utf8(uint32_t c, uint8_t out[4]) {
  if (c < 0x80) {
    out[0] = (uint8_t)c;
    return 1;
  }
  out[0] = (uint8_t)(0xC0 | (c >> 6));
  out[1] = (uint8_t)(0x80 | (c & 0x3F));
  return 2;
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

static wick_status bad(wick_error_info *error, const char *what) {
  if (error != NULL)
    snprintf(error->message, sizeof error->message, "the wick_tokenizer metadata is malformed: %s",
             what);
  return WICK_ERR_MALFORMED_MODEL;
}

static int by_length_desc(const void *a, const void *b, void *tokens) {
  const span *t = tokens;
  const uint32_t x = t[*(const int32_t *)a].n, y = t[*(const int32_t *)b].n;
  return x < y ? 1 : (x > y ? -1 : 0);
}

/* (qsort_r is not C11: a small insertion sort over the few added tokens.) */
static void sort_added(int32_t *ids, uint32_t n, span *tokens) {
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && by_length_desc(&ids[j - 1], &ids[j], tokens) > 0; j--) {
      int32_t x = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = x;
    }
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
               "wick.llm.convert(..., tokenizer=) and a byte-level BPE tokenizer, or pass "
               "token ids");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  blob b = {data, data + size};
  uint32_t version, flags, n;
  if (size < 4 || memcmp(data, "WTOK", 4) != 0) return bad(error, "no WTOK header");
  b.p += 4;
  if (!u32(&b, &version) || version != 1) return bad(error, "unknown version");
  if (!u32(&b, &flags) || !u32(&b, &n) || n == 0 || n > (1u << 24))
    return bad(error, "token count");
  wick_tokenizer *t = calloc(1, sizeof *t);
  if (t == NULL) return WICK_ERR_OUT_OF_MEMORY;
  wick_status st = WICK_ERR_OUT_OF_MEMORY;
  t->flags = flags;
  t->num_tokens = n;
  t->tokens = calloc(n, sizeof *t->tokens);
  t->is_added = calloc(n, 1);
  const size_t ids_size = table_size(n);
  t->ids = calloc(ids_size, sizeof *t->ids);
  t->ids_mask = ids_size - 1;
  if (t->tokens == NULL || t->is_added == NULL || t->ids == NULL) goto fail;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len;
    if (!u32(&b, &len) || len > (size_t)(b.end - b.p)) {
      st = bad(error, "a token's length runs past the entry");
      goto fail;
    }
    t->tokens[i] = (span){b.p, len};
    b.p += len;
    if (len == 0) continue; /* a hole in the ids */
    size_t h = (size_t)(hash_bytes(t->tokens[i].p, len) & t->ids_mask);
    while (t->ids[h] != 0) {
      const span *o = &t->tokens[t->ids[h] - 1];
      if (o->n == len && memcmp(o->p, t->tokens[i].p, len) == 0) break; /* first id wins */
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
    uint32_t id = 0;
    u32(&b, &id);
    if (id >= n || t->tokens[id].n == 0) {
      st = bad(error, "an added token id out of range or empty");
      goto fail;
    }
    if (!t->is_added[id]) t->added[t->num_added++] = (int32_t)id;
    t->is_added[id] = 1;
  }
  sort_added(t->added, t->num_added, t->tokens); /* longest first: the longest match wins */
  byte_map(t);
  for (int c = 0; c < 256; c++) {
    uint8_t u[4];
    const size_t len = utf8(t->byte_char[c], u);
    t->byte_id[c] = find_id(t, u, len); /* -1: dropped when encoding, as HuggingFace's BPE
                                         * does without an unknown token (SmolLM2 has no
                                         * symbol for bytes valid UTF-8 never holds) */
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
  free(t->is_added);
  free(t->ids);
  free(t->merges);
  free(t->added);
  free(t);
}

size_t wick_tokenizer_vocab_size(const wick_tokenizer *t) { return t ? t->num_tokens : 0; }

int wick_tokenizer_is_added(const wick_tokenizer *t, int32_t id) {
  return t != NULL && id >= 0 && (uint32_t)id < t->num_tokens && t->is_added[id];
}

/* ---------------------------------------------------------------- pre-tokenization */

typedef enum cls { LETTER, DIGIT, SPACE, OTHER } cls;

static cls classify(uint32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return LETTER;
    if (c >= '0' && c <= '9') return DIGIT;
    if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return SPACE;
    return OTHER;
  }
  if (c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
      c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000)
    return SPACE;
  if (c == 0xB2 || c == 0xB3 || c == 0xB9 || (c >= 0xBC && c <= 0xBE)) return DIGIT;
  if (c == 0xAA || c == 0xB5 || c == 0xBA) return LETTER;
  if (c < 0xC0 || c == 0xD7 || c == 0xF7) return OTHER; /* Latin-1 punctuation, symbols */
  if ((c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x205E) ||
      (c >= 0x2190 && c <= 0x2BFF) || (c >= 0x3001 && c <= 0x303F) ||
      (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0x1F000 && c <= 0x1FAFF))
    return OTHER;
  return LETTER;
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

typedef struct cp {
  uint32_t c;
  uint8_t cls;
  uint32_t at; /* byte offset */
} cp;

/* The end (index into cps) of the piece the GPT-2 split takes at cps[i] (i < n). */
static size_t piece_end(const cp *cps, size_t n, size_t i) {
  if (cps[i].c == '\'' && i + 1 < n) { /* contractions */
    const uint32_t a = cps[i + 1].c, b = i + 2 < n ? cps[i + 2].c : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  size_t j = i;
  if (cps[j].c == ' ' && j + 1 < n && cps[j + 1].cls != SPACE) j++; /* " ?" */
  const uint8_t k = cps[j].cls;
  if (k != SPACE) { /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+` */
    while (j < n && cps[j].cls == k) j++;
    return j;
  }
  size_t e = i; /* whitespace: `\s+(?!\S)`, else `\s+` */
  while (e < n && cps[e].cls == SPACE) e++;
  if (e == n || e - i == 1) return e;
  return e - 1; /* leave the last space to the word that follows */
}

/* ---------------------------------------------------------------- BPE */

typedef struct out {
  int32_t *ids;
  size_t capacity, count;
} out;

static void emit(out *o, int32_t id) {
  if (o->count < o->capacity) o->ids[o->count] = id;
  o->count++;
}

/* BPE over one piece's bytes; sym is scratch of at least n ids. */
static void bpe(const wick_tokenizer *t, const uint8_t *p, size_t n, int32_t *sym, out *o) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (t->byte_id[p[i]] >= 0) sym[kept++] = t->byte_id[p[i]];
  n = kept;
  while (n > 1) {
    size_t best = n;
    uint32_t rank = UINT32_MAX;
    const merge *chosen = NULL;
    for (size_t i = 0; i + 1 < n; i++) {
      const merge *m = find_merge(t, sym[i], sym[i + 1]);
      if (m != NULL && m->rank < rank) rank = m->rank, best = i, chosen = m;
    }
    if (chosen == NULL) break;
    sym[best] = (int32_t)chosen->merged;
    memmove(sym + best + 1, sym + best + 2, (n - best - 2) * sizeof *sym);
    n--;
  }
  for (size_t i = 0; i < n; i++) emit(o, sym[i]);
}

/* The pieces of text[0, size) (no added tokens inside). */
static void encode_plain(const wick_tokenizer *t, const uint8_t *text, size_t size, cp *cps,
                         int32_t *sym, out *o) {
  size_t n = 0;
  for (size_t at = 0; at < size;) {
    size_t len;
    const uint32_t c = decode_utf8(text + at, size - at, &len);
    cps[n++] = (cp){c, (uint8_t)(c == 0xFFFFFFFFu ? OTHER : classify(c)), (uint32_t)at};
    at += len;
  }
  size_t i = 0;
  while (i < n) {
    /* digits one by one: a digit is a piece; the split runs between digits */
    size_t stop = n;
    if (t->flags & DIGITS_ONE_BY_ONE) {
      if (cps[i].cls == DIGIT) {
        const size_t b0 = cps[i].at, b1 = i + 1 < n ? cps[i + 1].at : size;
        bpe(t, text + b0, b1 - b0, sym, o);
        i++;
        continue;
      }
      for (stop = i; stop < n && cps[stop].cls != DIGIT; stop++) {
      }
    }
    const size_t e = piece_end(cps, stop, i);
    const size_t b0 = cps[i].at, b1 = e < n ? cps[e].at : size;
    bpe(t, text + b0, b1 - b0, sym, o);
    i = e;
  }
}

wick_status wick_tokenizer_encode(const wick_tokenizer *t, const char *text, size_t size,
                                  int32_t *ids, size_t capacity, size_t *count) {
  if (count != NULL) *count = 0;
  if (t == NULL || count == NULL || (text == NULL && size > 0) || (ids == NULL && capacity > 0))
    return WICK_ERR_INVALID_ARGUMENT;
  out o = {ids, capacity, 0};
  cp *cps = malloc((size ? size : 1) * sizeof *cps);
  int32_t *sym = malloc((size ? size : 1) * sizeof *sym);
  if (cps == NULL || sym == NULL) {
    free(cps);
    free(sym);
    return WICK_ERR_OUT_OF_MEMORY;
  }
  const uint8_t *s = (const uint8_t *)text;
  size_t start = 0, i = 0;
  while (i < size) {
    int32_t hit = -1;
    for (uint32_t k = 0; k < t->num_added && hit < 0; k++) {
      const span *a = &t->tokens[t->added[k]];
      if (a->n <= size - i && a->p[0] == s[i] && memcmp(a->p, s + i, a->n) == 0) hit = t->added[k];
    }
    if (hit < 0) {
      i++;
      continue;
    }
    encode_plain(t, s + start, i - start, cps, sym, &o);
    emit(&o, hit);
    i += t->tokens[hit].n;
    start = i;
  }
  encode_plain(t, s + start, size - start, cps, sym, &o);
  free(cps);
  free(sym);
  *count = o.count;
  return WICK_OK;
}

size_t wick_tokenizer_decode(const wick_tokenizer *t, int32_t id, char *bytes, size_t capacity) {
  if (t == NULL || id < 0 || (uint32_t)id >= t->num_tokens || (bytes == NULL && capacity > 0))
    return 0;
  const span *s = &t->tokens[id];
  if (t->is_added[id]) {
    memcpy(bytes, s->p, s->n < capacity ? s->n : capacity);
    return s->n;
  }
  size_t n = 0;
  for (size_t at = 0; at < s->n;) {
    size_t len;
    const uint32_t c = decode_utf8(s->p + at, s->n - at, &len);
    const int b = c < 512 ? t->char_byte[c] : -1;
    if (n < capacity) bytes[n] = (char)(b >= 0 ? b : '?');
    n++;
    at += len;
  }
  return n;
}
