/*
 * registry.c — looks operators up in op_table.inc (builtin codes) and
 * custom_op_table.inc (custom codes), and names builtin codes.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op_api.h"
#include "format/schema.h"
#include "kernels/kernels.h"

#define WICK_OP(name, def) extern const wick_op_def def;
#include "ops/op_table.inc"
#undef WICK_OP

static const wick_op_def *const op_table[] = {
#define WICK_OP(name, def) &def,
#include "ops/op_table.inc"
#undef WICK_OP
};

/* op_table.inc's names and the schema's codes, for the self-check. */
static const struct {
  const char *name;
  int32_t builtin;
} op_lines[] = {
#define WICK_OP(name, def) {#name, WICK_BUILTIN_##name},
#include "ops/op_table.inc"
#undef WICK_OP
};

#define TABLE_SIZE (sizeof op_table / sizeof op_table[0])

#define WICK_CUSTOM_OP(code, def) extern const wick_op_def def;
#include "ops/custom_op_table.inc"
#undef WICK_CUSTOM_OP

static const wick_op_def *const custom_table[] = {
#define WICK_CUSTOM_OP(code, def) &def,
#include "ops/custom_op_table.inc"
#undef WICK_CUSTOM_OP
};

#define CUSTOM_TABLE_SIZE (sizeof custom_table / sizeof custom_table[0])

/* Builtin code -> definition, filled in order; codes are < WICK_BUILTIN_COUNT. */
const wick_op_def *wick_op_find(int32_t builtin) {
  if (builtin < 0 || builtin >= WICK_BUILTIN_COUNT) return NULL;
  for (size_t i = 0; i < TABLE_SIZE; i++)
    if (op_table[i]->builtin == builtin) return op_table[i];
  return NULL;
}

/* Custom code -> definition; the name is exactly the definition's. */
const wick_op_def *wick_op_find_custom(const char *custom_code) {
  if (custom_code == NULL) return NULL;
  for (size_t i = 0; i < CUSTOM_TABLE_SIZE; i++)
    if (strcmp(custom_table[i]->name, custom_code) == 0) return custom_table[i];
  return NULL;
}

const wick_op_def *wick_op_at(size_t i) { return i < TABLE_SIZE ? op_table[i] : NULL; }

#ifndef NDEBUG
/* Debug builds check the tables once, on the first lookup: a mismatch is a build error that
 * slipped through, so it stops the process with the reason. */
static void check_tables_once(void) {
  static atomic_int checked;
  if (atomic_exchange(&checked, 1)) return;
  char why[256];
  if (!wick_op_tables_check(why, sizeof why)) {
    fprintf(stderr, "wick: op table self-check failed: %s\n", why);
    abort();
  }
}
#endif

const wick_op_def *wick_op_lookup(const wick_operator_info *op, char *why, size_t why_size) {
#ifndef NDEBUG
  check_tables_once();
#endif
  const wick_op_def *def;
  if (op->builtin == WICK_BUILTIN_CUSTOM) {
    def = wick_op_find_custom(op->custom_name);
    if (def == NULL) {
      wick_format_message(why, why_size, "custom operator \"%s\" is not supported by wick",
                          op->custom_name ? op->custom_name : "");
      return NULL;
    }
  } else {
    def = wick_op_find(op->builtin);
    if (def == NULL) {
      wick_format_message(why, why_size,
                          "operator %s (builtin code %d, version %d) is not supported by wick",
                          wick_builtin_name(op->builtin), op->builtin, op->version);
      return NULL;
    }
  }
  if (op->version > def->max_version) {
    wick_format_message(why, why_size,
                        "version %d is newer than the versions wick implements (1..%d)",
                        op->version, def->max_version);
    return NULL;
  }
  return def;
}

static bool check_entry(const wick_op_def *d, char *why, size_t why_size) {
  if (d->name == NULL || d->prepare == NULL || d->invoke == NULL || d->max_version < 1) {
    wick_format_message(why, why_size, "op %s: missing name, prepare, invoke or version",
                        d->name ? d->name : "?");
    return false;
  }
  if ((d->flags & WICK_OP_ELEMENTWISE) && (d->flags & WICK_OP_ALIAS)) {
    wick_format_message(why, why_size, "op %s is marked both elementwise and alias", d->name);
    return false;
  }
  const uint32_t kind = (d->flags >> 16) & 0xffu, approximate = (d->flags >> 24) & 0xffu;
  if (kind > WICK_F32_UNARY_COUNT || approximate > WICK_F32_UNARY_COUNT ||
      (approximate != 0 && kind == 0)) {
    wick_format_message(why, why_size,
                        "op %s: epilogue kinds out of range, or an approximate one alone", d->name);
    return false;
  }
  return true;
}

bool wick_op_tables_check(char *why, size_t why_size) {
  for (size_t i = 0; i < TABLE_SIZE; i++) {
    const wick_op_def *d = op_table[i];
    if (!check_entry(d, why, why_size)) return false;
    if (strcmp(d->name, op_lines[i].name) != 0 || d->builtin != op_lines[i].builtin ||
        strcmp(wick_builtin_name(d->builtin), d->name) != 0) {
      wick_format_message(why, why_size,
                          "op_table.inc line %s (code %d) holds the definition of %s (code %d)",
                          op_lines[i].name, (int)op_lines[i].builtin, d->name, (int)d->builtin);
      return false;
    }
    if (i > 0 && strcmp(op_table[i - 1]->name, d->name) >= 0) {
      wick_format_message(why, why_size, "op_table.inc is not sorted: %s before %s",
                          op_table[i - 1]->name, d->name);
      return false;
    }
  }
  for (size_t i = 0; i < CUSTOM_TABLE_SIZE; i++) {
    const wick_op_def *d = custom_table[i];
    if (!check_entry(d, why, why_size)) return false;
    if (d->builtin != WICK_BUILTIN_CUSTOM) {
      wick_format_message(why, why_size, "custom op %s has builtin code %d", d->name,
                          (int)d->builtin);
      return false;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(custom_table[j]->name, d->name) == 0) {
        wick_format_message(why, why_size, "custom op %s is listed twice", d->name);
        return false;
      }
  }
  return true;
}
