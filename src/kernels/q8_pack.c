/*
 * q8_pack.c — weight packing for the optimized int8 kernels (layouts and the
 * bias correction in q8.h). Runs once at prepare. Sums wrap modulo 2^32 (in
 * uint32) exactly as the reference kernels' int32 accumulators do, so the
 * corrected bias gives the reference's accumulator bit for bit.
 */
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/q8.h"

static size_t round_up4(size_t v) { return (v + 3) & ~(size_t)3; }

bool wick_q8_gemm_packed_size(const wick_q8_kernels *kern, size_t n, size_t taps, size_t kc,
                              size_t *bytes_out) {
  const size_t nr = kern->nr;
  size_t panels = n / nr + (n % nr != 0), k4, per_panel, total;
  if (kc > SIZE_MAX - 3) return false;
  k4 = kern->i16 ? (kc + 1) & ~(size_t)1 : round_up4(kc); /* bytes per channel per tap */
  if (__builtin_mul_overflow(k4, taps, &per_panel) ||
      __builtin_add_overflow(per_panel, (size_t)4 * WICK_Q8_HEADER, &per_panel) ||
      __builtin_mul_overflow(per_panel, nr, &per_panel) ||
      __builtin_mul_overflow(panels, per_panel, &total) ||
      __builtin_add_overflow(total, kern->conv_amx ? WICK_Q8_AMX_SLACK : 0, &total))
    return false;
  *bytes_out = total;
  return true;
}

/* The five header rows of one block of `cols` channels starting at c0. */
static void pack_header(size_t c0, size_t cols, size_t width, const int32_t *bias,
                        const uint32_t *wsum, int32_t zp_plus, const int32_t *multiplier,
                        const int32_t *shift, int32_t *h) {
  for (size_t j = 0; j < width; j++) {
    const bool live = j < cols;
    uint32_t b = live && bias ? (uint32_t)bias[c0 + j] : 0u;
    if (live) b -= (uint32_t)zp_plus * wsum[j];
    const int32_t m = live && multiplier ? multiplier[c0 + j] : 0;
    const int32_t s = live && shift ? shift[c0 + j] : 0;
    h[j] = (int32_t)b;
    h[width + j] = m;
    h[3 * width + j] = s > 0 ? s : 0;
    h[4 * width + j] = s > 0 ? 0 : -s;
  }
  for (size_t j = 0; j < width; j++) h[2 * width + j] = h[width + (j | 1)];
}

/* AVX2: bias uncorrected (the input is x - zp), int8 weight pairs. */
static void pack_i16(size_t n, size_t taps, size_t kc, size_t nr, const int8_t *w,
                     const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                     void *packed) {
  const size_t k2 = (kc + 1) & ~(size_t)1, k = taps * kc;
  uint32_t zero[64] = {0};
  int8_t *out = packed;
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    const size_t cols = n - j0 < nr ? n - j0 : nr;
    pack_header(j0, cols, nr, bias, zero, 0, multiplier, shift, (int32_t *)(void *)out);
    out += 4 * WICK_Q8_HEADER * nr;
    /* pair g of the columns side by side: column j's weights p, p + 1 at out[2 * j], [2 * j + 1]
     * of the pair's row of nr pairs; columns past `cols` and the odd k's last partner are 0 */
    const size_t tap_stride = k2 * nr;
    memset(out, 0, taps * tap_stride);
    for (size_t t = 0; t < taps; t++) {
      const int8_t *src = w + j0 * k + t * kc;
      int8_t *dst = out + t * tap_stride;
      for (size_t j = 0; j < cols; j++) { /* each column's weights read in order */
        const int8_t *row = src + j * k;
        int8_t *d = dst + 2 * j;
        size_t p = 0;
        for (; p + 1 < kc; p += 2, d += 2 * nr) d[0] = row[p], d[1] = row[p + 1];
        if (p < kc) d[0] = row[p];
      }
    }
    out += taps * tap_stride;
  }
}

void wick_q8_prepare_input(const wick_q8_kernels *kern, size_t n, const int8_t *in, int32_t zp,
                           void *out) {
  if (kern->i16) {
    int16_t *o = out;
    for (size_t i = 0; i < n; i++) o[i] = (int16_t)(in[i] - zp);
  } else if (kern->s8) {
    memcpy(out, in, n);
  } else {
    wick_q8_flip_sign(n, in, out);
  }
}

size_t wick_q8_zero_row_bytes(const wick_q8_kernels *kern, size_t kc) {
  return kern->i16 ? 2 * ((kc + 1) & ~(size_t)1) : round_up4(kc);
}

void wick_q8_zero_row(const wick_q8_kernels *kern, size_t kc, int32_t zp, void *row) {
  if (kern->i16)
    memset(row, 0, wick_q8_zero_row_bytes(kern, kc));
  else if (kern->s8)
    memset(row, (int)(uint8_t)zp, wick_q8_zero_row_bytes(kern, kc));
  else
    memset(row, (int)(uint8_t)((uint8_t)zp ^ 0x80u), wick_q8_zero_row_bytes(kern, kc));
}

void wick_q8_gemm_pack(const wick_q8_kernels *kern, size_t n, size_t taps, size_t kc,
                       const int8_t *w, const int32_t *bias, int32_t input_zero_point,
                       const int32_t *multiplier, const int32_t *shift, void *packed) {
  const size_t nr = kern->nr;
  if (kern->i16) {
    pack_i16(n, taps, kc, nr, w, bias, multiplier, shift, packed);
    return;
  }
  const size_t k4 = round_up4(kc), k = taps * kc;
  uint32_t wsum[64];
  int8_t *out = packed;
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    const size_t cols = n - j0 < nr ? n - j0 : nr;
    for (size_t j = 0; j < nr; j++) {
      uint32_t s = 0;
      if (j < cols)
        for (size_t p = 0; p < k; p++) s += (uint32_t)(int32_t)w[(j0 + j) * k + p];
      wsum[j] = s;
    }
    pack_header(j0, cols, nr, bias, wsum, (kern->s8 ? 0 : 128) + input_zero_point, multiplier,
                shift, (int32_t *)(void *)out);
    out += 4 * WICK_Q8_HEADER * nr;
    for (size_t t = 0; t < taps; t++)
      for (size_t g = 0; g < k4; g += 4)
        for (size_t j = 0; j < nr; j++)
          for (size_t b = 0; b < 4; b++, out++) {
            const size_t p = g + b;
            *out = j < cols && p < kc ? w[(j0 + j) * k + t * kc + p] : 0;
          }
  }
  if (kern->conv_amx) memset(out, 0, WICK_Q8_AMX_SLACK);
}

bool wick_q8_dwconv_packed_size(size_t c, size_t taps, size_t cr, size_t *bytes_out) {
  size_t blocks = c / cr + (c % cr != 0), per, total;
  if (__builtin_add_overflow(taps, (size_t)WICK_Q8_HEADER, &per) ||
      __builtin_mul_overflow(per, cr * 4, &per) || __builtin_mul_overflow(blocks, per, &total))
    return false;
  *bytes_out = total;
  return true;
}

void wick_q8_dwconv_pack(size_t c, size_t taps, size_t cr, const int8_t *w, const int32_t *bias,
                         int32_t input_zero_point, const int32_t *multiplier, const int32_t *shift,
                         void *packed) {
  int32_t *out = packed;
  uint32_t wsum[64];
  for (size_t c0 = 0; c0 < c; c0 += cr) {
    const size_t cols = c - c0 < cr ? c - c0 : cr;
    for (size_t j = 0; j < cr; j++) {
      uint32_t s = 0;
      if (j < cols)
        for (size_t t = 0; t < taps; t++) s += (uint32_t)(int32_t)w[t * c + c0 + j];
      wsum[j] = s;
    }
    pack_header(c0, cols, cr, bias, wsum, input_zero_point, multiplier, shift, out);
    out += WICK_Q8_HEADER * cr;
    for (size_t t = 0; t < taps; t++, out += cr)
      for (size_t j = 0; j < cr; j++)
        out[j] = j < cols ? (int32_t)(uint16_t)(int16_t)w[t * c + c0 + j] : 0;
  }
}

void wick_q8_rq64_prepare(size_t n, const int32_t *shift, int64_t *out) {
  for (size_t g = 0; g < (n + 15) / 16; g++, out += WICK_Q8_RQ64_WORDS)
    for (size_t j = 0; j < 16; j++) {
      const size_t ch = g * 16 + j;
      /* rdivpot's exponent e (0 for channels past n and for left shifts) */
      const int64_t e = ch < n && shift[ch] < 0 ? -(int64_t)shift[ch] : 0;
      const size_t lane = j / 2 + (j % 2) * 8;
      out[lane] = ((int64_t)1 << 30) + (e > 0 ? (int64_t)1 << (30 + e) : 0);
      out[16 + lane] = e > 0 ? (int64_t)1 << 31 : 0;
      out[32 + lane] = 31 + e;
    }
}

bool wick_q8_bmm_packed_size(const wick_q8_kernels *kern, size_t n, size_t k,
                             int32_t rhs_zero_point, size_t *bytes_out) {
  size_t bytes, weights;
  if (!wick_q8_gemm_packed_size(kern, n, 1, k, &bytes)) return false;
  if (wick_q8_bmm_w16(kern, rhs_zero_point)) { /* the weights twice: int16 pairs */
    const size_t panels = n / kern->nr + (n % kern->nr != 0);
    weights = bytes - panels * kern->nr * 4 * WICK_Q8_HEADER;
    if (__builtin_add_overflow(bytes, weights, &bytes)) return false;
  }
  *bytes_out = bytes;
  return true;
}

void wick_q8_bmm_pack(const wick_q8_kernels *kern, size_t n, size_t k, const int8_t *rhs,
                      size_t stride_j, size_t stride_p, int32_t rhs_zero_point,
                      int32_t lhs_zero_point, const int32_t *multiplier, const int32_t *shift,
                      void *packed) {
  const size_t nr = kern->nr;
  int8_t *out = packed;
  if (kern->i16) { /* pairs of rhs - zp (int16 when zp != 0: wick_q8_bmm_w16); the lhs is
                    * prepared as x - zp: no correction */
    static const uint32_t zero[64] = {0};
    const size_t k2 = (k + 1) & ~(size_t)1;
    const bool w16 = wick_q8_bmm_w16(kern, rhs_zero_point);
#if defined(__x86_64__) || defined(_M_X64)
    /* (the AVX2 table is only selected on AVX2 CPUs; the kernel tests pack every table) */
    const bool avx2 = (wick_cpu_features() & WICK_CPU_AVX2) != 0;
#endif
    for (size_t j0 = 0; j0 < n; j0 += nr) {
      const size_t cols = n - j0 < nr ? n - j0 : nr;
      pack_header(j0, cols, nr, NULL, zero, 0, multiplier, shift, (int32_t *)(void *)out);
      out += 4 * WICK_Q8_HEADER * nr;
      int16_t *o16 = (int16_t *)(void *)out;
      size_t i = 0; /* the element's index in the panel */
#if defined(__x86_64__) || defined(_M_X64)
      if (cols == 16 && nr == 16 && stride_j == 1 && avx2) { /* whole panels of rhs rows */
        wick_q8_bmm_pack_rows16__avx2(k, rhs + j0, stride_p, rhs_zero_point, w16, out);
        out += k2 * 16 * (w16 ? 2 : 1);
        continue;
      }
#endif
      for (size_t g = 0; g < k2; g += 2)
        for (size_t j = 0; j < nr; j++)
          for (size_t b = 0; b < 2; b++, i++) {
            const size_t p = g + b;
            const int32_t v =
                j < cols && p < k ? rhs[(j0 + j) * stride_j + p * stride_p] - rhs_zero_point : 0;
            if (w16)
              o16[i] = (int16_t)v;
            else
              out[i] = (int8_t)v;
          }
      out += i * (w16 ? 2 : 1);
    }
    return;
  }
  /* int8 groups of 4 (VNNI, NEON): the rhs as it is (its zero point is 0), the bias corrected
   * for the lhs as wick_q8_gemm_pack does */
  const size_t k4 = round_up4(k);
  uint32_t wsum[64];
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    const size_t cols = n - j0 < nr ? n - j0 : nr;
    for (size_t j = 0; j < nr; j++) {
      uint32_t s = 0;
      if (j < cols)
        for (size_t p = 0; p < k; p++)
          s += (uint32_t)(int32_t)rhs[(j0 + j) * stride_j + p * stride_p];
      wsum[j] = s;
    }
    pack_header(j0, cols, nr, NULL, wsum, (kern->s8 ? 0 : 128) + lhs_zero_point, multiplier, shift,
                (int32_t *)(void *)out);
    out += 4 * WICK_Q8_HEADER * nr;
    for (size_t g = 0; g < k4; g += 4)
      for (size_t j = 0; j < nr; j++)
        for (size_t b = 0; b < 4; b++, out++) {
          const size_t p = g + b;
          *out = j < cols && p < k ? rhs[(j0 + j) * stride_j + p * stride_p] : 0;
        }
  }
  if (kern->conv_amx) memset(out, 0, WICK_Q8_AMX_SLACK);
}
