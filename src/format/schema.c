/*
 * schema.c — names of the schema's builtin operator codes (schema.h's list).
 */
#include "format/model.h"
#include "format/schema.h"

const char *wick_builtin_name(int32_t code) {
  switch (code) {
#define WICK_X_NAME(name, c) \
  case c: return #name;
    WICK_BUILTIN_OPERATORS(WICK_X_NAME)
#undef WICK_X_NAME
    default: return "UNKNOWN";
  }
}
