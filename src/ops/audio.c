/*
 * audio.c — the audio custom ops of LiteRT's BuiltinOpResolver (what
 * TensorFlow's converter writes for tf.raw_ops.AudioSpectrogram and Mfcc,
 * e.g. in keyword-spotting models).
 *
 * AudioSpectrogram: input float32 [samples, channels]; output float32
 * [channels, frames, fft_length/2 + 1], frames = 1 + (samples - window_size)
 * / stride (0 when samples < window_size), fft_length the least power of two
 * >= window_size. Options (FlexBuffers map): window_size (>= 2) and stride
 * (>= 1) required; magnitude_squared defaults to false, as in LiteRT.
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

/* ---------------------------------------------------------------- options */

static wick_status opt_fail(const wick_op_ctx *ctx, const char *key, wick_flex_status st) {
  if (st == WICK_FLEX_ABSENT)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "custom_options lack \"%s\"", key);
  if (st == WICK_FLEX_WRONG_TYPE)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options \"%s\" is not a number of the expected kind", key);
  return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                      "custom_options are malformed FlexBuffers (reading \"%s\")", key);
}

static wick_status open_options(const wick_op_ctx *ctx, wick_flex_map *m) {
  size_t size;
  const uint8_t *bytes = wick_op_custom_options(ctx, &size);
  wick_flex_status st = wick_flex_root_map(bytes, size, m);
  if (st == WICK_FLEX_WRONG_TYPE)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options must be a FlexBuffers map");
  if (st != WICK_FLEX_OK)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options (%zu bytes) are not a well-formed FlexBuffers map", size);
  return WICK_OK;
}

/* A required int32 option (LiteRT stores these as int). */
static wick_status opt_int(const wick_op_ctx *ctx, const wick_flex_map *m, const char *key,
                           int32_t *out) {
  int64_t v;
  wick_flex_status st = wick_flex_map_int(m, key, &v);
  if (st != WICK_FLEX_OK) return opt_fail(ctx, key, st);
  WICK_CHECK(ctx, v >= INT32_MIN && v <= INT32_MAX, "custom_options \"%s\" = %lld is out of range",
             key, (long long)v);
  *out = (int32_t)v;
  return WICK_OK;
}

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
  WICK_TRY(open_options(ctx, &m));
  WICK_TRY(opt_int(ctx, &m, "window_size", &d->window));
  WICK_TRY(opt_int(ctx, &m, "stride", &d->stride));
  wick_flex_status st = wick_flex_map_bool(&m, "magnitude_squared", &d->magnitude_squared);
  if (st != WICK_FLEX_OK && st != WICK_FLEX_ABSENT) return opt_fail(ctx, "magnitude_squared", st);
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
  ctx->node->user_data = d;
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
  const spectrogram_data *d = ctx->node->user_data;
  if (d->frames == 0 || d->channels == 0) return WICK_OK;
  wick_spectrogram__reference(d->samples, d->channels, d->window, d->stride, d->frames,
                              d->magnitude_squared, wick_op_input(ctx, 0)->data,
                              wick_op_output(ctx, 0)->data, wick_op_scratch(ctx));
  return WICK_OK;
}

const wick_op_def wick_op_audio_spectrogram = {"AudioSpectrogram", WICK_BUILTIN_CUSTOM, 1,
                                               spectrogram_prepare, spectrogram_invoke};
