/*
 * delegates.h — the built-in delegates (src/delegates/): their constructors
 * from a configuration string, for the name registry of registry.c. Each
 * delegate sees the graph only through the public delegate API of wick.h;
 * nothing here includes the core (scripts/check_layers.py).
 */
#ifndef WICK_DELEGATES_DELEGATES_H
#define WICK_DELEGATES_DELEGATES_H

#include <stdbool.h>

#include "wick/wick.h"

/* One "key=value" setting of a configuration string, as registry.c parses it. */
typedef struct wick_delegate_setting {
  char key[32];
  char value[224];
} wick_delegate_setting;

#endif /* WICK_DELEGATES_DELEGATES_H */
