/*
 * audio.c — the audio custom ops of LiteRT's BuiltinOpResolver,
 * AudioSpectrogram and Mfcc (what TensorFlow's converter writes for
 * tf.raw_ops.AudioSpectrogram and Mfcc, e.g. in keyword-spotting models).
 *
 * AudioSpectrogram: input float32 [samples, channels]; output float32
 * [channels, frames, fft_length/2 + 1], frames = 1 + (samples - window_size)
 * / stride (0 when samples < window_size), fft_length the least power of two
 * >= window_size. Options (FlexBuffers map): window_size (>= 2) and stride
 * (>= 1) required; magnitude_squared defaults to false, as in LiteRT.
 *
 * Mfcc: inputs spectrogram float32 [channels, frames, bins] (squared
 * magnitudes, bins >= 2) and sample_rate int32 (one element, > 0; read at
 * invoke when it is not a constant); output float32 [channels, frames,
 * dct_coefficient_count]. Options: filterbank_channel_count (>= 1) and
 * dct_coefficient_count (1 ..= filterbank_channel_count) and
 * upper_frequency_limit required, lower_frequency_limit defaults to 0 (LiteRT
 * reads a missing key as 0, which is valid only for this one); 0 <= lower <
 * upper. LiteRT reads the two limits with AsInt64 (a float value truncates
 * toward zero) and keeps them as float: so does wick.
 *
 * Options are untrusted: a missing required key, a wrong type or broken
 * FlexBuffers fail with WICK_ERR_MALFORMED_MODEL naming the key; LiteRT reads
 * a missing key as 0 and then fails at prepare or invoke. Values LiteRT
 * rejects (window_size < 2, stride < 1) are malformed too.
 */
#include <string.h>

#include "format/flexbuffer.h"
#include "format/schema.h"
#include "ops/op_common.h"

/* ------------------------------------------------------- AudioSpectrogram */

typedef struct spectrogram_data {
  int32_t window, stride;
  bool magnitude_squared;
  int64_t samples, channels, frames;
} spectrogram_data;

static wick_status spectrogram_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  spectrogram_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(d, 0, sizeof *d);
  wick_flex_map m;
  WICK_TRY(wick_op_flex_options(ctx, &m));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "window_size", -1, &d->window));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "stride", -1, &d->stride));
  wick_flex_status st = wick_flex_map_bool(&m, "magnitude_squared", &d->magnitude_squared);
  if (st != WICK_FLEX_OK && st != WICK_FLEX_ABSENT)
    return wick_op_flex_fail(ctx, "magnitude_squared", st);
  WICK_CHECK(ctx, d->window >= 2, "window_size %d must be >= 2", d->window);
  WICK_CHECK(ctx, d->stride >= 1, "stride %d must be >= 1", d->stride);
  WICK_CHECK_SUPPORTED(ctx, d->window <= (1 << 30), "window_size %d is above 2^30", d->window);

  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  WICK_CHECK(ctx, in->rank == 2, "the input must be [samples, channels], not rank %d", in->rank);
  d->samples = in->dims[0];
  d->channels = in->dims[1];
  d->frames = d->samples < d->window ? 0 : 1 + (d->samples - d->window) / d->stride;
  const int32_t bins = wick_spectrogram_fft_length(d->window) / 2 + 1;
  const int32_t dims[3] = {(int32_t)d->channels, (int32_t)d->frames, bins};
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 3, dims));
  wick_op_set_data(ctx, d);
  /* No frame (window_size > samples) reads nothing and needs no work area;
   * otherwise the FFT length is < 2 * samples, within the input's count. */
  if (d->frames == 0 || d->channels == 0) return WICK_OK;
  const int64_t doubles = wick_spectrogram_work_doubles(d->window);
  size_t bytes;
  if (!wick_mul_size((size_t)doubles, sizeof(double), &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "the FFT work area overflows");
  wick_op_request_scratch(ctx, bytes);
  return WICK_OK;
}

static wick_status spectrogram_invoke(wick_op_ctx *ctx) {
  const spectrogram_data *d = wick_op_data(ctx);
  if (d->frames == 0 || d->channels == 0) return WICK_OK;
  wick_spectrogram__reference(d->samples, d->channels, d->window, d->stride, d->frames,
                              d->magnitude_squared, wick_op_input(ctx, 0)->data,
                              wick_op_output(ctx, 0)->data, wick_op_scratch(ctx));
  return WICK_OK;
}

const wick_op_def wick_op_audio_spectrogram = {
    "AudioSpectrogram",  WICK_BUILTIN_CUSTOM, 1,
    spectrogram_prepare, spectrogram_invoke,  WICK_OP_REFERENCE_KERNELS};

/* ------------------------------------------------------------------- Mfcc */

typedef struct mfcc_data {
  wick_mfcc_params p;
  int64_t frames; /* channels * frames of the spectrogram */
  int32_t bins;
} mfcc_data;

/* A frequency limit: LiteRT's AsInt64 (truncation) stored as float. `dflt`
 * < 0 means required. */
static wick_status opt_limit(const wick_op_ctx *ctx, const wick_flex_map *m, const char *key,
                             double dflt, double *out) {
  double v;
  wick_flex_status st = wick_flex_map_float(m, key, &v);
  if (st == WICK_FLEX_ABSENT && dflt >= 0)
    v = dflt;
  else if (st != WICK_FLEX_OK)
    return wick_op_flex_fail(ctx, key, st);
  WICK_CHECK(ctx, v > -9.2e18 && v < 9.2e18, "custom_options \"%s\" = %g is out of range", key, v);
  *out = (double)(float)(int64_t)v;
  return WICK_OK;
}

/* The sample rate, checked: `bad` is the status of a value <= 0. */
static wick_status read_sample_rate(const wick_op_ctx *ctx, wick_status bad, double *out) {
  const int32_t rate = *(const int32_t *)wick_op_input(ctx, 1)->data;
  if (rate <= 0) return wick_op_fail(ctx, bad, "sample_rate is %d: it must be positive", rate);
  *out = (double)rate;
  return WICK_OK;
}

static wick_status mfcc_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  mfcc_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(d, 0, sizeof *d);
  wick_flex_map m;
  WICK_TRY(wick_op_flex_options(ctx, &m));
  WICK_TRY(opt_limit(ctx, &m, "upper_frequency_limit", -1, &d->p.upper));
  WICK_TRY(opt_limit(ctx, &m, "lower_frequency_limit", 0, &d->p.lower));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "filterbank_channel_count", -1, &d->p.filterbank));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "dct_coefficient_count", -1, &d->p.dct));
  WICK_CHECK(ctx, d->p.lower >= 0, "lower_frequency_limit %g is negative", d->p.lower);
  WICK_CHECK(ctx, d->p.upper > d->p.lower,
             "upper_frequency_limit %g must be above lower_frequency_limit %g", d->p.upper,
             d->p.lower);
  WICK_CHECK(ctx, d->p.filterbank >= 1, "filterbank_channel_count %d must be >= 1",
             d->p.filterbank);
  WICK_CHECK(ctx, d->p.dct >= 1 && d->p.dct <= d->p.filterbank,
             "dct_coefficient_count %d must be in [1, filterbank_channel_count %d]", d->p.dct,
             d->p.filterbank);

  wick_tensor *in, *rate;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &rate));
  WICK_TRY(wick_require_float32(ctx, in, "the spectrogram"));
  WICK_CHECK(ctx, in->rank == 3, "the spectrogram must be [channels, frames, bins], not rank %d",
             in->rank);
  WICK_CHECK(ctx, in->dims[2] >= 2, "the spectrogram has %d bins: Mfcc needs >= 2", in->dims[2]);
  WICK_CHECK(ctx, rate->type == WICK_DTYPE_INT32, "sample_rate must be int32, not %s",
             wick_dtype_name(rate->type));
  WICK_CHECK(ctx, wick_tensor_elements(rate) == 1, "sample_rate must hold one value, not %lld",
             (long long)wick_tensor_elements(rate));
  if (rate->known) WICK_TRY(read_sample_rate(ctx, WICK_ERR_MALFORMED_MODEL, &d->p.sample_rate));
  d->frames = (int64_t)in->dims[0] * in->dims[1];
  d->bins = in->dims[2];
  const int32_t dims[3] = {in->dims[0], in->dims[1], d->p.dct};
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 3, dims));
  wick_op_set_data(ctx, d);
  if (d->frames == 0) return WICK_OK;
  const int64_t doubles = wick_mfcc_work_doubles(d->bins, d->p.filterbank, d->p.dct);
  size_t bytes;
  if (!wick_mul_size((size_t)doubles, sizeof(double), &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "the Mfcc work area overflows");
  wick_op_request_scratch(ctx, bytes);
  return WICK_OK;
}

static wick_status mfcc_invoke(wick_op_ctx *ctx) {
  mfcc_data *d = wick_op_data(ctx);
  WICK_TRY(read_sample_rate(ctx, WICK_ERR_INVALID_INPUT, &d->p.sample_rate));
  if (d->frames == 0) return WICK_OK;
  wick_mfcc__reference(&d->p, d->frames, d->bins, wick_op_input(ctx, 0)->data,
                       wick_op_output(ctx, 0)->data, wick_op_scratch(ctx));
  return WICK_OK;
}

const wick_op_def wick_op_mfcc = {"Mfcc",       WICK_BUILTIN_CUSTOM, 1,
                                  mfcc_prepare, mfcc_invoke,         WICK_OP_REFERENCE_KERNELS};
