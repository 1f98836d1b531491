/*
 * fft.c — reference real 2-D FFT (TFLite's RFFT2D), the real 1-D FFT in
 * double that the audio kernels share (audio.c), and the complex64 element
 * ops (REAL, IMAG, COMPLEX_ABS).
 *
 * RFFT2D works in double precision, as LiteRT's kernel (Ooura's rdft2d on
 * doubles) does: float inputs are exact in double, the O(log n) rounding of
 * the butterflies stays ~1e-16 relative, and the one rounding to float at the
 * end makes the results nearly bit-equal to LiteRT's for every length
 * (float butterflies would drift ~1e-7 * log2(n) from it instead).
 *
 * Method per slice: each of the (at most fft_h) input rows is a real FFT of
 * length fft_w, done as a complex FFT of half the length on the packed pairs
 * z[n] = x[2n] + i x[2n+1] followed by the even/odd split; then each of the
 * fft_w/2 + 1 columns is a complex FFT of length fft_h. Both complex FFTs
 * are iterative radix-2 decimation in time: a bit-reversal permutation, then
 * butterflies of span 2, 4, ... n. Twiddles exp(-2 pi i k / n) are computed
 * with cos/sin of each k directly (no recurrence, so no drift).
 */
#include <math.h>

#include "kernels/reference/reference.h"

typedef struct cplx {
  double re, im;
} cplx;

static const double TWO_PI = 6.283185307179586476925286766559;

/* w[k] = exp(-2 pi i k / n) for k < n / 2 (nothing when n < 2). */
static void twiddles(int64_t n, cplx *w) {
  for (int64_t k = 0; k < n / 2; k++) {
    double a = TWO_PI * (double)k / (double)n;
    w[k].re = cos(a);
    w[k].im = -sin(a);
  }
}

/* In-place forward complex DFT of a[0..n), n a power of two. w[j * stride]
 * must be exp(-2 pi i j / n) for j < n / 2. */
static void fft(cplx *a, int64_t n, const cplx *w, int64_t stride) {
  /* Bit-reversal permutation: j is the reverse of i in log2(n) bits. */
  for (int64_t i = 1, j = 0; i < n; i++) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      cplx t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    int64_t half = len / 2, step = (n / len) * stride;
    for (int64_t i = 0; i < n; i += len)
      for (int64_t j = 0; j < half; j++) {
        cplx t = w[j * step], u = a[i + j], v = a[i + j + half];
        cplx vw = {v.re * t.re - v.im * t.im, v.re * t.im + v.im * t.re};
        a[i + j].re = u.re + vw.re;
        a[i + j].im = u.im + vw.im;
        a[i + j + half].re = u.re - vw.re;
        a[i + j + half].im = u.im - vw.im;
      }
  }
}

/* X[0..n/2] = DFT of a real sequence x[0..n) (n >= 2) that the caller has
 * packed as z[k] = x[2k] + i x[2k+1], k < n / 2 (z is overwritten). `w`
 * holds exp(-2 pi i k / n) for k < n / 2. */
static void real_fft_packed(int64_t n, const cplx *w, cplx *z, cplx *X) {
  int64_t m = n / 2;
  fft(z, m, w, 2); /* exp(-2 pi i j / m) = w[2 j] */
  /* With E, O the DFTs (length m) of the even and odd samples, Z = E + i O
   * and conj(Z[m - k]) = E[k] - i O[k]; X[k] = E[k] + exp(-2 pi i k / n) O[k],
   * where exp(-2 pi i m / n) = -1. */
  for (int64_t k = 0; k <= m; k++) {
    cplx a = z[k % m], b = z[(m - k) % m];
    double er = 0.5 * (a.re + b.re), ei = 0.5 * (a.im - b.im);   /* E[k] */
    double or_ = 0.5 * (a.im + b.im), oi = -0.5 * (a.re - b.re); /* O[k] */
    cplx t = k < m ? w[k] : (cplx){-1.0, 0.0};
    X[k].re = er + (or_ * t.re - oi * t.im);
    X[k].im = ei + (or_ * t.im + oi * t.re);
  }
}

/* X[0..n/2] = DFT of the real x[0..n), x zero past `valid` (<= n). `w`
 * holds exp(-2 pi i k / n) for k < n / 2; `z` has room for n / 2 values. */
static void real_fft(const float *x, int64_t valid, int64_t n, const cplx *w, cplx *z, cplx *X) {
  if (n == 1) {
    X[0].re = valid > 0 ? x[0] : 0.0;
    X[0].im = 0.0;
    return;
  }
  for (int64_t k = 0; k < n / 2; k++) {
    z[k].re = 2 * k < valid ? x[2 * k] : 0.0;
    z[k].im = 2 * k + 1 < valid ? x[2 * k + 1] : 0.0;
  }
  real_fft_packed(n, w, z, X);
}

void wick_fft_twiddles_f64(int64_t n, double *w) { twiddles(n, (cplx *)w); }

void wick_real_fft_f64(int64_t n, const double *x, const double *w, double *z, double *X) {
  cplx *out = (cplx *)X;
  if (n == 1) {
    out[0] = (cplx){x[0], 0.0};
    return;
  }
  cplx *packed = (cplx *)z;
  for (int64_t k = 0; k < n / 2; k++) packed[k] = (cplx){x[2 * k], x[2 * k + 1]};
  real_fft_packed(n, (const cplx *)w, packed, out);
}

int64_t wick_rfft2d_work_doubles(int32_t fft_h, int32_t fft_w) {
  int64_t cols = (int64_t)fft_w / 2 + 1;
  int64_t buf = fft_h > cols ? fft_h : cols;
  /* width twiddles, height twiddles, row spectra [fft_h][cols], one line */
  return 2 * ((int64_t)fft_w / 2 + (int64_t)fft_h / 2 + (int64_t)fft_h * cols + buf);
}

void wick_rfft2d__reference(int64_t slices, int32_t in_h, int32_t in_w, int32_t fft_h,
                            int32_t fft_w, const float *in, float *out, double *work) {
  int64_t cols = (int64_t)fft_w / 2 + 1;
  int64_t rows = in_h < fft_h ? in_h : fft_h; /* input rows that reach the FFT */
  int64_t valid = in_w < fft_w ? in_w : fft_w;
  cplx *tw_w = (cplx *)work;
  cplx *tw_h = tw_w + fft_w / 2;
  cplx *spec = tw_h + fft_h / 2; /* [fft_h][cols] row spectra */
  cplx *line = spec + (int64_t)fft_h * cols;
  twiddles(fft_w, tw_w);
  twiddles(fft_h, tw_h);
  for (int64_t s = 0; s < slices; s++) {
    const float *x = in + s * (int64_t)in_h * in_w;
    float *y = out + s * (int64_t)fft_h * cols * 2;
    for (int64_t r = 0; r < rows; r++)
      real_fft(x + r * in_w, valid, fft_w, tw_w, line, spec + r * cols);
    for (int64_t c = 0; c < cols; c++) {
      for (int64_t r = 0; r < fft_h; r++) line[r] = r < rows ? spec[r * cols + c] : (cplx){0, 0};
      fft(line, fft_h, tw_h, 1);
      for (int64_t r = 0; r < fft_h; r++) {
        y[(r * cols + c) * 2] = (float)line[r].re;
        y[(r * cols + c) * 2 + 1] = (float)line[r].im;
      }
    }
  }
}

void wick_complex_part__reference(wick_complex_part part, int64_t n, const float *in, float *out) {
  for (int64_t i = 0; i < n; i++) {
    float re = in[2 * i], im = in[2 * i + 1];
    switch (part) {
      case WICK_COMPLEX_REAL: out[i] = re; break;
      case WICK_COMPLEX_IMAG: out[i] = im; break;
      case WICK_COMPLEX_ABS: out[i] = hypotf(re, im); break;
    }
  }
}
