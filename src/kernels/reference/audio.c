/*
 * audio.c — reference kernels of the audio custom ops in LiteRT's
 * BuiltinOpResolver: AudioSpectrogram (windowed power spectra of a signal).
 *
 * It follows LiteRT's arithmetic step by step in double (its Spectrogram
 * class is double inside) and rounds to float where it does. The FFT
 * is fft.c's (radix-2 in double); LiteRT's is Ooura's rdft, whose imaginary
 * parts have the other sign, which the squared magnitude does not see.
 */
#include <math.h>

#include "kernels/reference/reference.h"

/* --------------------------------------------------------- AudioSpectrogram */

int32_t wick_spectrogram_fft_length(int32_t window) {
  int32_t n = 1;
  while (n < window) n *= 2;
  return n;
}

int64_t wick_spectrogram_work_doubles(int32_t window) {
  return 5 * (int64_t)wick_spectrogram_fft_length(window) + 2;
}

void wick_spectrogram__reference(int64_t samples, int64_t channels, int32_t window,
                                 int32_t stride, int64_t frames, bool magnitude_squared,
                                 const float *in, float *out, double *work) {
  (void)samples; /* the frames stay inside: (frames - 1) * stride + window <= samples */
  const int64_t n = wick_spectrogram_fft_length(window), bins = n / 2 + 1;
  double *hann = work, *x = hann + n, *tw = x + n, *z = tw + n, *spec = z + n;
  /* LiteRT's periodic Hann window, pi as 4 atan(1). */
  const double pi = atan(1.0) * 4.0;
  for (int64_t j = 0; j < window; j++)
    hann[j] = 0.5 - 0.5 * cos((2.0 * pi * (double)j) / (double)window);
  wick_fft_twiddles_f64(n, tw);
  for (int64_t c = 0; c < channels; c++)
    for (int64_t f = 0; f < frames; f++) {
      const float *frame = in + f * stride * channels + c;
      for (int64_t j = 0; j < window; j++) x[j] = (double)frame[j * channels] * hann[j];
      for (int64_t j = window; j < n; j++) x[j] = 0.0;
      wick_real_fft_f64(n, x, tw, z, spec);
      float *row = out + (c * frames + f) * bins;
      for (int64_t k = 0; k < bins; k++) {
        const double re = spec[2 * k], im = spec[2 * k + 1];
        const float power = (float)(re * re + im * im);
        row[k] = magnitude_squared ? power : sqrtf(power);
      }
    }
}
