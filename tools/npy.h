/*
 * npy.h — reading and writing NumPy .npy files (format version 1.0/2.0,
 * little-endian, C order) for the wick CLI.
 */
#ifndef WICK_TOOLS_NPY_H
#define WICK_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "wick/wick.h"

typedef struct npy_array {
  wick_dtype dtype;
  int rank;
  int64_t dims[WICK_MAX_RANK];
  void *data; /* malloc'd */
  size_t bytes;
} npy_array;

/* Returns 0 on success, else fills `error`. */
int npy_read(const char *path, npy_array *out, char *error, size_t error_size);
int npy_write(const char *path, wick_dtype dtype, int rank, const int32_t *dims, const void *data,
              size_t bytes, char *error, size_t error_size);
void npy_free(npy_array *a);

#endif
