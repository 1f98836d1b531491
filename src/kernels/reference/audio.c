/*
 * audio.c — reference kernels of the two audio custom ops in LiteRT's
 * BuiltinOpResolver: AudioSpectrogram (windowed power spectra of a signal)
 * and Mfcc (mel-frequency cepstral coefficients of such spectra).
 *
 * Both follow LiteRT's arithmetic step by step in double (its Spectrogram,
 * MfccMelFilterbank and MfccDct classes are double inside) and round to
 * float where it does, so results agree with it to a few float ulps. The FFT
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

void wick_spectrogram__reference(int64_t samples, int64_t channels, int32_t window, int32_t stride,
                                 int64_t frames, bool magnitude_squared, const float *in,
                                 float *out, double *work) {
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

/* --------------------------------------------------------------------- Mfcc */

int64_t wick_mfcc_work_doubles(int32_t bins, int32_t filterbank, int32_t dct) {
  return (int64_t)dct * filterbank + 2 * (int64_t)filterbank + 2 * (int64_t)bins + 1;
}

static double freq_to_mel(double hz) { return 1127.0 * log1p(hz / 700.0); }

void wick_mfcc__reference(const wick_mfcc_params *p, int64_t frames, int32_t bins, const float *in,
                          float *out, double *work) {
  const int32_t fb = p->filterbank, nd = p->dct;
  double *cosines = work;                       /* [dct][filterbank] */
  double *centres = cosines + (int64_t)nd * fb; /* filterbank + 1 mel centres */
  double *weights = centres + (int64_t)fb + 1;  /* per bin */
  double *band = weights + bins;                /* per bin: channel (an integer) */
  double *mel = band + bins;                    /* per frame: filterbank values */

  /* The DCT-II matrix, in LiteRT's order of operations. */
  const double norm = sqrt(2.0 / (double)fb), arg = atan(1.0) * 4.0 / (double)fb;
  for (int64_t i = 0; i < nd; i++)
    for (int64_t j = 0; j < fb; j++)
      cosines[i * fb + j] = norm * cos((double)i * arg * ((double)j + 0.5));

  /* The filterbank. Bin i (frequency i * hz_per_bin) in [start, end] feeds
   * the falling side of channel band[i] (if >= 0) with weight weights[i]
   * and the rising side of channel band[i] + 1 (if < filterbank) with
   * 1 - weights[i]. */
  const double hz_per_bin = 0.5 * p->sample_rate / (double)(bins - 1);
  const double end_f = p->upper / hz_per_bin;
  const bool gives_up = !(end_f < (double)bins); /* LiteRT: "input too short" */
  int32_t start = 0, end = -1;
  if (!gives_up) {
    end = (int32_t)end_f;
    start = (int32_t)(1.5 + p->lower / hz_per_bin); /* <= end + 1: lower < upper */
    const double mel_low = freq_to_mel(p->lower), mel_high = freq_to_mel(p->upper);
    const double spacing = (mel_high - mel_low) / (double)(fb + 1);
    for (int64_t c = 0; c <= fb; c++) centres[c] = mel_low + spacing * (double)(c + 1);
    int32_t channel = 0;
    for (int32_t i = 0; i < bins; i++) {
      const double melf = freq_to_mel((double)i * hz_per_bin);
      if (i < start || i > end) {
        band[i] = -2.0;
        weights[i] = 0.0;
        continue;
      }
      while (channel < fb && centres[channel] < melf) channel++;
      band[i] = channel - 1;
      weights[i] = channel >= 1
                       ? (centres[channel] - melf) / (centres[channel] - centres[channel - 1])
                       : (centres[0] - melf) / (centres[0] - mel_low);
    }
  }

  for (int64_t f = 0; f < frames; f++) {
    const float *spectrum = in + f * bins;
    float *coeffs = out + f * nd;
    if (gives_up) {
      for (int32_t i = 0; i < nd; i++) coeffs[i] = 0.0f;
      continue;
    }
    for (int32_t c = 0; c < fb; c++) mel[c] = 0.0;
    for (int32_t i = start; i <= end; i++) {
      const double magnitude = sqrt((double)spectrum[i]);
      const double weighted = magnitude * weights[i];
      const int32_t channel = (int32_t)band[i];
      if (channel >= 0) mel[channel] += weighted;
      if (channel + 1 < fb) mel[channel + 1] += magnitude - weighted;
    }
    for (int32_t c = 0; c < fb; c++) mel[c] = log(mel[c] < 1e-12 ? 1e-12 : mel[c]);
    for (int32_t i = 0; i < nd; i++) {
      double sum = 0.0;
      for (int32_t j = 0; j < fb; j++) sum += cosines[(int64_t)i * fb + j] * mel[j];
      coeffs[i] = (float)sum;
    }
  }
}
