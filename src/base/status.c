/*
 * status.c — status and dtype names, and the message formatting every layer
 * uses to explain a failure. No global state: messages go into buffers owned
 * by the caller or by the object that failed.
 */
#include <stdio.h>

#include "base/base.h"

const char *wick_status_string(wick_status status) {
  switch (status) {
    case WICK_OK: return "ok";
    case WICK_ERR_INVALID_ARGUMENT: return "invalid argument";
    case WICK_ERR_MALFORMED_MODEL: return "malformed model";
    case WICK_ERR_UNSUPPORTED_OP: return "unsupported operator";
    case WICK_ERR_OUT_OF_MEMORY: return "out of memory";
    case WICK_ERR_IO: return "i/o error";
    case WICK_ERR_CANCELLED: return "cancelled";
    case WICK_ERR_INVALID_INPUT: return "invalid input value";
  }
  return "unknown status";
}

const char *wick_version(void) { return WICK_VERSION_STRING; }

size_t wick_dtype_size(wick_dtype dtype) {
  switch (dtype) {
    case WICK_DTYPE_FLOAT32:
    case WICK_DTYPE_INT32:
    case WICK_DTYPE_RESOURCE: return 4;
    case WICK_DTYPE_FLOAT16:
    case WICK_DTYPE_INT16: return 2;
    case WICK_DTYPE_UINT8:
    case WICK_DTYPE_INT8:
    case WICK_DTYPE_BOOL: return 1;
    case WICK_DTYPE_INT64:
    case WICK_DTYPE_FLOAT64:
    case WICK_DTYPE_COMPLEX64: return 8;
    case WICK_DTYPE_STRING: return 0;
  }
  return 0;
}

const char *wick_dtype_name(wick_dtype dtype) {
  switch (dtype) {
    case WICK_DTYPE_FLOAT32: return "float32";
    case WICK_DTYPE_FLOAT16: return "float16";
    case WICK_DTYPE_INT32: return "int32";
    case WICK_DTYPE_UINT8: return "uint8";
    case WICK_DTYPE_INT64: return "int64";
    case WICK_DTYPE_STRING: return "string";
    case WICK_DTYPE_BOOL: return "bool";
    case WICK_DTYPE_INT16: return "int16";
    case WICK_DTYPE_COMPLEX64: return "complex64";
    case WICK_DTYPE_INT8: return "int8";
    case WICK_DTYPE_FLOAT64: return "float64";
    case WICK_DTYPE_RESOURCE: return "resource";
  }
  return "unknown";
}

void wick_vformat_message(char *buf, size_t size, const char *fmt, va_list ap) {
  if (buf == NULL || size == 0) return;
  int n = vsnprintf(buf, size, fmt, ap);
  if (n < 0) buf[0] = 0;
}

void wick_format_message(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(buf, size, fmt, ap);
  va_end(ap);
}

int64_t wick_shape_elements(int32_t rank, const int32_t *dims) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; i++) n *= dims[i];
  return n;
}
