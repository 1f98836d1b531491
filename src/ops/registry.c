/*
 * registry.c — looks operators up in op_table.inc (builtin codes) and
 * custom_op_table.inc (custom codes), and names builtin codes.
 */
#include <string.h>

#include "core/internal.h"
#include "format/schema.h"

#define WICK_OP(name, def) extern const wick_op_def def;
#include "ops/op_table.inc"
#undef WICK_OP

static const wick_op_def *const op_table[] = {
#define WICK_OP(name, def) &def,
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

const char *wick_builtin_name(int32_t code) {
  switch (code) {
#define WICK_X_NAME(name, c) \
  case c:                    \
    return #name;
    WICK_BUILTIN_OPERATORS(WICK_X_NAME)
#undef WICK_X_NAME
    default:
      return "UNKNOWN";
  }
}

const wick_op_def *wick_op_lookup(const wick_operator_info *op, char *why, size_t why_size) {
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

bool wick_op_reads_shapes_only(const wick_op_def *def) { return def == &wick_op_shape; }
