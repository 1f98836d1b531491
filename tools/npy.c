/*
 * npy.c — a small .npy reader/writer: enough of the format for the CLI's
 * inputs and outputs (numeric dtypes and bool, little-endian, C order).
 */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *descr;
  wick_dtype dtype;
} kDescrs[] = {
    {"<f4", WICK_DTYPE_FLOAT32}, {"<f2", WICK_DTYPE_FLOAT16}, {"<i4", WICK_DTYPE_INT32},
    {"|u1", WICK_DTYPE_UINT8},   {"<i8", WICK_DTYPE_INT64},   {"|b1", WICK_DTYPE_BOOL},
    {"<i2", WICK_DTYPE_INT16},   {"|i1", WICK_DTYPE_INT8},    {"<f8", WICK_DTYPE_FLOAT64},
};

static int fail(char *error, size_t size, const char *msg, const char *path) {
  snprintf(error, size, "%s: %s", path, msg);
  return -1;
}

int npy_read(const char *path, npy_array *out, char *error, size_t error_size) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return fail(error, error_size, "cannot open", path);
  unsigned char magic[10];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return fail(error, error_size, "not a .npy file", path);
  }
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (fread(b, 1, 2, f) != 2) goto bad;
    hlen = (uint32_t)(b[0] | (b[1] << 8));
  } else {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) goto bad;
    hlen = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
  }
  if (hlen > 65536) goto bad;
  char *header = calloc(1, hlen + 1);
  if (!header || fread(header, 1, hlen, f) != hlen) {
    free(header);
    goto bad;
  }
  const char *d = strstr(header, "'descr':");
  const char *fo = strstr(header, "'fortran_order':");
  const char *sh = strstr(header, "'shape':");
  if (!d || !fo || !sh) {
    free(header);
    goto bad;
  }
  d = strchr(d + 8, '\'');
  int found = 0;
  for (size_t i = 0; d && i < sizeof kDescrs / sizeof kDescrs[0]; i++) {
    if (strncmp(d + 1, kDescrs[i].descr, 3) == 0 && d[4] == '\'') {
      out->dtype = kDescrs[i].dtype;
      found = 1;
    }
  }
  if (!found || strncmp(fo + 16, " True", 5) == 0) {
    free(header);
    fclose(f);
    return fail(error, error_size, "unsupported dtype or Fortran order", path);
  }
  const char *p = strchr(sh, '(');
  int64_t count = 1;
  out->rank = 0;
  if (p) p++;
  while (p && *p && *p != ')') {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || out->rank >= WICK_MAX_RANK) {
      free(header);
      goto bad;
    }
    out->dims[out->rank++] = v;
    count *= v;
    p = end;
  }
  free(header);
  out->bytes = (size_t)count * wick_dtype_size(out->dtype);
  out->data = malloc(out->bytes ? out->bytes : 1);
  if (!out->data || fread(out->data, 1, out->bytes, f) != out->bytes) {
    free(out->data);
    out->data = NULL;
    goto bad;
  }
  fclose(f);
  return 0;
bad:
  fclose(f);
  return fail(error, error_size, "malformed .npy file", path);
}

int npy_write(const char *path, wick_dtype dtype, int rank, const int32_t *dims, const void *data,
              size_t bytes, char *error, size_t error_size) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof kDescrs / sizeof kDescrs[0]; i++)
    if (kDescrs[i].dtype == dtype) descr = kDescrs[i].descr;
  if (!descr) return fail(error, error_size, "dtype has no .npy form", path);
  char shape[256] = "";
  size_t n = 0;
  for (int i = 0; i < rank; i++)
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%d%s", dims[i],
                          (rank == 1 || i + 1 < rank) ? "," : "");
  char header[512];
  int len = snprintf(header, sizeof header,
                     "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  int total = 10 + len + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) return fail(error, error_size, "cannot create", path);
  uint16_t hlen = (uint16_t)(len + pad + 1);
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (unsigned char)(hlen & 0xff),
                           (unsigned char)(hlen >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, (size_t)len, f) == (size_t)len;
  for (int i = 0; i < pad && ok; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  ok = ok && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  ok = (fclose(f) == 0) && ok;
  return ok ? 0 : fail(error, error_size, "write failed", path);
}

void npy_free(npy_array *a) {
  free(a->data);
  a->data = NULL;
}
