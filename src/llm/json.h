/*
 * json.h — a small reader of untrusted JSON for the "wick_llm" metadata:
 * walks one top-level object, reads integers and arrays of integers, and
 * skips any other value (strings with escapes, numbers, literals, nested
 * arrays and objects up to a depth cap). Never reads past `size` bytes; the
 * text need not be NUL-terminated.
 */
#ifndef WICK_LLM_JSON_H
#define WICK_LLM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WICK_LLM_INTERNAL __attribute__((visibility("hidden")))

typedef struct wick_json {
  const char *p, *end, *start;
  bool first; /* no member read yet in the current object */
} wick_json;

WICK_LLM_INTERNAL void wick_json_init(wick_json *j, const char *text, size_t size);
/* Consumes "{"; false if the next value is not an object. */
WICK_LLM_INTERNAL bool wick_json_object_begin(wick_json *j);
/* The next member's key (raw bytes between the quotes, escapes not decoded) with the reader
 * at its value: 1; 0 at the closing "}" (consumed); -1 on malformed text. */
WICK_LLM_INTERNAL int wick_json_object_next(wick_json *j, const char **key, size_t *key_len);
/* An integer value (no fraction or exponent) in int64 range. */
WICK_LLM_INTERNAL bool wick_json_int(wick_json *j, int64_t *out);
/* An array of integers; at most `cap` are kept (the rest are read and dropped). */
WICK_LLM_INTERNAL bool wick_json_int_array(wick_json *j, int64_t *out, size_t cap, size_t *n);
/* Any value. */
WICK_LLM_INTERNAL bool wick_json_skip(wick_json *j);
/* Bytes read so far (for messages). */
WICK_LLM_INTERNAL size_t wick_json_offset(const wick_json *j);

#endif /* WICK_LLM_JSON_H */
