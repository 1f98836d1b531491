/*
 * registry.c — the built-in delegates by name (wick_delegate_create), as the
 * CLI's --delegate and Python's wick.load(..., delegate=) choose them, and
 * wick_delegate_destroy. A configuration string is "key=value" pairs
 * separated by ';'. Adding a delegate ("nnapi", "vulkan") adds one line to
 * `builtins` and its from-config constructor; the keys each one takes are in
 * docs/delegates.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/delegates.h"

#define MAX_SETTINGS 16

/* Splits `config` into settings; false (with the reason in `error`) for a malformed one. */
static bool parse_config(const char *config, wick_delegate_setting *out, size_t *count,
                         wick_error_info *error) {
  *count = 0;
  for (const char *s = config; s != NULL && *s;) {
    const char *end = strchr(s, ';');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    const char *eq = memchr(s, '=', len);
    if (len > 0) {
      if (eq == NULL || eq == s || (size_t)(eq - s) >= sizeof out->key ||
          len - (size_t)(eq - s) - 1 >= sizeof out->value || *count == MAX_SETTINGS) {
        if (error)
          snprintf(error->message, sizeof error->message,
                   "delegate configuration \"%.*s\": expected key=value (at most %d, ';' "
                   "between)",
                   (int)(len < 80 ? len : 80), s, MAX_SETTINGS);
        return false;
      }
      wick_delegate_setting *w = &out[(*count)++];
      memcpy(w->key, s, (size_t)(eq - s));
      w->key[eq - s] = 0;
      memcpy(w->value, eq + 1, len - (size_t)(eq - s) - 1);
      w->value[len - (size_t)(eq - s) - 1] = 0;
    }
    s = end ? end + 1 : s + len;
  }
  return true;
}

static bool parse_count(const char *v, long *out) {
  char *end;
  long n = strtol(v, &end, 10);
  if (end == v || *end != 0 || n < 0 || n > 1000000) return false;
  *out = n;
  return true;
}

/* A feature level: 27 ... 31, then 1000006 ... (beyond parse_count's range). */
static bool parse_level(const char *v, long long *out) {
  char *end;
  long long n = strtoll(v, &end, 10);
  if (end == v || *end != 0 || n < 0 || n > 2147483647LL) return false;
  *out = n;
  return true;
}

static wick_status reference_from_config(const wick_delegate_setting *s, size_t n,
                                         wick_error_info *error, wick_delegate **out) {
  wick_reference_delegate_options o = wick_reference_delegate_options_default();
  for (size_t i = 0; i < n; i++) {
    long v = 0;
    if (strcmp(s[i].key, "ops") == 0) {
      o.ops = s[i].value;
      continue;
    }
    bool number = parse_count(s[i].value, &v);
    if (number && strcmp(s[i].key, "fail_prepare") == 0) {
      o.fail_prepare = (int)v;
    } else if (number && strcmp(s[i].key, "fail_invoke") == 0) {
      o.fail_invoke = (int)v;
    } else if (number && strcmp(s[i].key, "min_partition_nodes") == 0) {
      o.min_partition_nodes = (size_t)v;
    } else {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "the reference delegate has no setting %s=%s (it takes ops=NAME,NAME..., "
                 "fail_prepare=N, fail_invoke=N, min_partition_nodes=N)",
                 s[i].key, s[i].value);
      return WICK_ERR_INVALID_ARGUMENT;
    }
  }
  return wick_reference_delegate_create(&o, error, out); /* copies what it keeps of ops */
}

static wick_status nnapi_from_config(const wick_delegate_setting *s, size_t n,
                                     wick_error_info *error, wick_delegate **out) {
  wick_nnapi_delegate_options o = wick_nnapi_delegate_options_default();
  for (size_t i = 0; i < n; i++) {
    long v = 0;
    long long level = 0;
    bool number = parse_count(s[i].value, &v);
    if (strcmp(s[i].key, "library") == 0) {
      o.library = s[i].value;
    } else if (strcmp(s[i].key, "device") == 0) {
      o.device = s[i].value;
    } else if (strcmp(s[i].key, "ops") == 0) {
      o.ops = s[i].value;
    } else if (strcmp(s[i].key, "cache_dir") == 0) {
      o.cache_dir = s[i].value;
    } else if (strcmp(s[i].key, "preference") == 0 && strcmp(s[i].value, "low_power") == 0) {
      o.preference = 0;
    } else if (strcmp(s[i].key, "preference") == 0 &&
               strcmp(s[i].value, "fast_single_answer") == 0) {
      o.preference = 1;
    } else if (strcmp(s[i].key, "preference") == 0 && strcmp(s[i].value, "sustained_speed") == 0) {
      o.preference = 2;
    } else if (strcmp(s[i].key, "feature_level") == 0 && parse_level(s[i].value, &level)) {
      o.feature_level = level;
    } else if (strcmp(s[i].key, "plan_level") == 0 && parse_level(s[i].value, &level)) {
      o.plan_level = level;
    } else if (number && strcmp(s[i].key, "relaxed_fp16") == 0 && v <= 1) {
      o.relaxed_fp16 = (int)v;
    } else if (number && strcmp(s[i].key, "min_partition_nodes") == 0) {
      o.min_partition_nodes = (size_t)v;
    } else {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "the nnapi delegate has no setting %s=%s (it takes feature_level=N, plan_level=N, "
                 "library=PATH, relaxed_fp16=0|1, preference=low_power|fast_single_answer|"
                 "sustained_speed, device=NAME, ops=NAME,NAME..., cache_dir=PATH, "
                 "min_partition_nodes=N)",
                 s[i].key, s[i].value);
      return WICK_ERR_INVALID_ARGUMENT;
    }
  }
  return wick_nnapi_delegate_create(&o, error, out); /* copies what it keeps */
}

typedef wick_status (*from_config_fn)(const wick_delegate_setting *settings, size_t n,
                                      wick_error_info *error, wick_delegate **out);

static const struct {
  const char *name;
  from_config_fn create;
} builtins[] = {
    {"reference", reference_from_config},
    {"nnapi", nnapi_from_config},
};
#define NUM_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *wick_delegate_builtin_name(size_t i) {
  return i < NUM_BUILTINS ? builtins[i].name : NULL;
}

wick_status wick_delegate_create(const char *name, const char *config, wick_error_info *error,
                                 wick_delegate **delegate_out) {
  if (error) error->message[0] = 0;
  if (delegate_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *delegate_out = NULL;
  for (size_t i = 0; name != NULL && i < NUM_BUILTINS; i++) {
    if (strcmp(builtins[i].name, name) != 0) continue;
    wick_delegate_setting settings[MAX_SETTINGS];
    size_t n;
    if (!parse_config(config, settings, &n, error)) return WICK_ERR_INVALID_ARGUMENT;
    return builtins[i].create(settings, n, error, delegate_out);
  }
  if (error) {
    int at = snprintf(error->message, sizeof error->message,
                      "this build of wick has no delegate called \"%s\" (it has:",
                      name ? name : "(null)");
    for (size_t i = 0; i < NUM_BUILTINS && at > 0 && (size_t)at < sizeof error->message; i++)
      at += snprintf(error->message + at, sizeof error->message - (size_t)at, " %s",
                     builtins[i].name);
    if (at > 0 && (size_t)at < sizeof error->message)
      snprintf(error->message + at, sizeof error->message - (size_t)at, ")");
  }
  return WICK_ERR_INVALID_ARGUMENT;
}

void wick_delegate_destroy(wick_delegate *delegate) {
  if (delegate != NULL && delegate->destroy != NULL) delegate->destroy(delegate);
}
