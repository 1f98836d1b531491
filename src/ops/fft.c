/*
 * fft.c — RFFT2D and the complex64 element ops REAL, IMAG and COMPLEX_ABS:
 * what TensorFlow's converter emits for tf.signal.rfft / rfft2d / stft
 * followed by tf.abs, tf.math.real or tf.math.imag (spectrogram front ends).
 *
 * RFFT2D: input float32 [..., H, W] (rank >= 2) and fft_length int32 [2];
 * output complex64 [..., fft_length[0], fft_length[1] / 2 + 1]. The input's
 * last two dims are cropped or zero-padded to fft_length. Both lengths must
 * be powers of two, as in LiteRT (its FFT library takes no others). A
 * fft_length that is not constant is read at invoke, as LiteRT does (the
 * node is prepared again then; a bad value is "invalid input value").
 *
 * LiteRT's kernel returns values that are not the DFT when fft_length[1] is
 * 1 (e.g. 1-1j for the one-sample input 1); wick computes the DFT there.
 *
 * REAL / IMAG / COMPLEX_ABS: complex64 in, float32 out of the same shape.
 * (complex128, which LiteRT also takes, is not a wick dtype.)
 *
 * Next: src/kernels/reference/fft.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"

typedef struct rfft2d_data {
  int64_t slices;
  int32_t in_h, in_w, fft_h, fft_w;
} rfft2d_data;

static bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static wick_status rfft2d_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *len;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &len));
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  WICK_CHECK(ctx, in->rank >= 2, "the input must have rank >= 2, not %d", in->rank);
  WICK_CHECK(ctx, len->type == WICK_DTYPE_INT32, "fft_length must be int32, not %s",
             wick_dtype_name(len->type));
  WICK_CHECK(ctx, len->rank == 1 && len->dims[0] == 2,
             "fft_length must have shape [2] (height, width)");
  if (!len->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  int64_t fft[2];
  for (int i = 0; i < 2; i++) {
    fft[i] = wick_read_int(len, i);
    if (fft[i] < 1)
      return wick_op_fail(ctx, len->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                          "fft_length[%d] is %lld: lengths must be >= 1", i, (long long)fft[i]);
    if (!is_power_of_two(fft[i]))
      return wick_op_fail(ctx, len->known ? WICK_ERR_UNSUPPORTED_OP : WICK_ERR_INVALID_INPUT,
                          "fft_length[%d] is %lld: RFFT2D takes only powers of two (as LiteRT)", i,
                          (long long)fft[i]);
  }
  int32_t r = in->rank;
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < r; i++) dims[i] = in->dims[i];
  dims[r - 2] = (int32_t)fft[0];
  dims[r - 1] = (int32_t)(fft[1] / 2 + 1);
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_COMPLEX64, r, dims));

  rfft2d_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->slices = 1;
  for (int32_t i = 0; i < r - 2; i++) d->slices *= in->dims[i]; /* divides the input's count */
  d->in_h = in->dims[r - 2];
  d->in_w = in->dims[r - 1];
  d->fft_h = (int32_t)fft[0];
  d->fft_w = (int32_t)fft[1];
  wick_op_set_data(ctx, d);
  /* An empty output is never computed; otherwise one output slice,
   * fft_h * (fft_w/2 + 1), is within the output's capped element count, and
   * the work area is a few times that (in doubles). */
  if (wick_tensor_elements(wick_op_output(ctx, 0)) == 0) return WICK_OK;
  int64_t doubles = wick_rfft2d_work_doubles(d->fft_h, d->fft_w), bytes;
  if (!wick_mul_i64(doubles, (int64_t)sizeof(double), &bytes) || (uint64_t)bytes > SIZE_MAX)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "the FFT work area overflows");
  wick_op_request_scratch(ctx, (size_t)bytes);
  return WICK_OK;
}

static wick_status rfft2d_invoke(wick_op_ctx *ctx) {
  const rfft2d_data *d = wick_op_data(ctx);
  wick_rfft2d__reference(d->slices, d->in_h, d->in_w, d->fft_h, d->fft_w,
                         wick_op_input(ctx, 0)->data, wick_op_output(ctx, 0)->data,
                         wick_op_scratch(ctx));
  return WICK_OK;
}

const wick_op_def wick_op_rfft2d = {"RFFT2D",       WICK_BUILTIN_RFFT2D, 1,
                                    rfft2d_prepare, rfft2d_invoke,       WICK_OP_REFERENCE_KERNELS};

/* ---------------------------------------------------------------- REAL, IMAG, COMPLEX_ABS */

static wick_status complex_part_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_COMPLEX64,
                       "input type %s is not supported (complex64)", wick_dtype_name(in->type));
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

static wick_status complex_part_invoke(wick_op_ctx *ctx, wick_complex_part part) {
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_complex_part__reference(part, wick_tensor_elements(in), in->data,
                               wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

static wick_status real_invoke(wick_op_ctx *ctx) {
  return complex_part_invoke(ctx, WICK_COMPLEX_REAL);
}
static wick_status imag_invoke(wick_op_ctx *ctx) {
  return complex_part_invoke(ctx, WICK_COMPLEX_IMAG);
}
static wick_status complex_abs_invoke(wick_op_ctx *ctx) {
  return complex_part_invoke(ctx, WICK_COMPLEX_ABS);
}

const wick_op_def wick_op_real = {"REAL",      WICK_BUILTIN_REAL,        1, complex_part_prepare,
                                  real_invoke, WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_imag = {"IMAG",      WICK_BUILTIN_IMAG,        1, complex_part_prepare,
                                  imag_invoke, WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_complex_abs = {
    "COMPLEX_ABS",        WICK_BUILTIN_COMPLEX_ABS, 1,
    complex_part_prepare, complex_abs_invoke,       WICK_OP_REFERENCE_KERNELS};
