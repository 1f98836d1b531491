/*
 * json.c — the bounded JSON reader of json.h.
 */
#include "llm/json.h"

#define MAX_DEPTH 32

void wick_json_init(wick_json *j, const char *text, size_t size) {
  j->p = j->start = text;
  j->end = text + size;
  j->first = true;
}

size_t wick_json_offset(const wick_json *j) { return (size_t)(j->p - j->start); }

static void ws(wick_json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool eat(wick_json *j, char c) {
  ws(j);
  if (j->p < j->end && *j->p == c) {
    j->p++;
    return true;
  }
  return false;
}

/* A string: its raw bytes (between the quotes). */
static bool string(wick_json *j, const char **s, size_t *n) {
  if (!eat(j, '"')) return false;
  const char *b = j->p;
  while (j->p < j->end && *j->p != '"') {
    if ((unsigned char)*j->p < 0x20) return false;
    if (*j->p == '\\') {
      if (++j->p >= j->end) return false;
    }
    j->p++;
  }
  if (j->p >= j->end) return false;
  *s = b;
  *n = (size_t)(j->p - b);
  j->p++;
  return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A number's characters (not validated beyond JSON's alphabet). */
static bool number(wick_json *j) {
  ws(j);
  const char *b = j->p;
  while (j->p < j->end && (is_digit(*j->p) || *j->p == '-' || *j->p == '+' || *j->p == '.' ||
                           *j->p == 'e' || *j->p == 'E'))
    j->p++;
  return j->p > b;
}

static bool literal(wick_json *j, const char *word, size_t n) {
  if ((size_t)(j->end - j->p) < n) return false;
  for (size_t i = 0; i < n; i++)
    if (j->p[i] != word[i]) return false;
  j->p += n;
  return true;
}

static bool skip(wick_json *j, int depth) {
  if (depth > MAX_DEPTH) return false;
  ws(j);
  if (j->p >= j->end) return false;
  const char c = *j->p;
  const char *s;
  size_t n;
  if (c == '"') return string(j, &s, &n);
  if (c == 't') return literal(j, "true", 4);
  if (c == 'f') return literal(j, "false", 5);
  if (c == 'n') return literal(j, "null", 4);
  if (c == '[') {
    j->p++;
    if (eat(j, ']')) return true;
    do {
      if (!skip(j, depth + 1)) return false;
    } while (eat(j, ','));
    return eat(j, ']');
  }
  if (c == '{') {
    j->p++;
    if (eat(j, '}')) return true;
    do {
      if (!string(j, &s, &n) || !eat(j, ':') || !skip(j, depth + 1)) return false;
    } while (eat(j, ','));
    return eat(j, '}');
  }
  return number(j);
}

bool wick_json_skip(wick_json *j) { return skip(j, 1); }

bool wick_json_object_begin(wick_json *j) {
  j->first = true;
  return eat(j, '{');
}

int wick_json_object_next(wick_json *j, const char **key, size_t *key_len) {
  if (eat(j, '}')) return 0;
  if (!j->first && !eat(j, ',')) return -1;
  j->first = false;
  if (!string(j, key, key_len) || !eat(j, ':')) return -1;
  return 1;
}

bool wick_json_int(wick_json *j, int64_t *out) {
  ws(j);
  bool neg = j->p < j->end && *j->p == '-';
  if (neg) j->p++;
  if (j->p >= j->end || !is_digit(*j->p)) return false;
  uint64_t v = 0;
  while (j->p < j->end && is_digit(*j->p)) {
    const uint64_t d = (uint64_t)(*j->p - '0');
    if (v > (UINT64_C(9223372036854775807) - d) / 10) return false;
    v = v * 10 + d;
    j->p++;
  }
  if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) return false;
  *out = neg ? -(int64_t)v : (int64_t)v;
  return true;
}

bool wick_json_int_array(wick_json *j, int64_t *out, size_t cap, size_t *n) {
  *n = 0;
  if (!eat(j, '[')) return false;
  if (eat(j, ']')) return true;
  do {
    int64_t v;
    if (!wick_json_int(j, &v)) return false;
    if (*n < cap) out[(*n)++] = v;
  } while (eat(j, ','));
  return eat(j, ']');
}
