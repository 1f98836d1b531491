/*
 * conv_2d.c — CONV_2D and DEPTHWISE_CONV_2D (float32).
 *
 * Inputs: activation [N, H, W, Cin]; filter OHWI [Cout, kh, kw, Cin/groups]
 * for CONV_2D, [1, kh, kw, Cout] for DEPTHWISE_CONV_2D (Cout = Cin * M);
 * optional bias [Cout]. Grouped CONV_2D (Cin a multiple of the filter's
 * input depth) is supported. Output [N, outH, outW, Cout] with SAME/VALID
 * padding as in docs/format.md ("Padding"). Quantized inputs go to conv_2d_quantized.c.
 *
 * Hybrid (dynamic-range) form: float32 input/output/bias with an int8
 * symmetric filter, one scale per output channel (CONV_2D, grouped too, and
 * DEPTHWISE_CONV_2D): each image is quantized at run time (asymmetric, as
 * LiteRT's EvalHybridPerChannel) and src/kernels/reference/hybrid.c runs it;
 * optimized, the image's range and its quantization run in parts over the
 * threads (wick_hybrid_quantize_image, src/ops/hybrid.c: the same bytes), and
 * a 1x1 stride-1 unpadded CONV_2D quantizes straight into the GEMM's rows
 * (its patches are the pixels); a grouped CONV_2D with one channel per
 * group (Keras ConvNeXt's 7x7) runs the depthwise rows on its filter
 * transposed to [1, kh, kw, C], other grouped ones the reference kernel.
 *
 * Kernels: prepare picks them (src/kernels/select.c) and packs the constant
 * filter once; invoke only runs them. CONV_2D with groups == 1: a 1x1,
 * stride-1, unpadded conv is a plain GEMM over the [N*H*W, Cin] input; any
 * other is an indirect GEMM whose indirection buffer (row pointers, padding
 * taps -> a zero row) is rebuilt only when the input's address changes —
 * except 3x3 stride-1 convs with enough channels and 4x4 output tiles
 * (winograd_wins), which run as Winograd F(4x4, 3x3) (src/kernels/winograd.c;
 * WICK_NO_WINOGRAD=1 keeps them on the indirect GEMM).
 * DEPTHWISE_CONV_2D runs register-blocked 3x3 and 5x5 kernels (dilation 1,
 * strides 1-2) or the generic vectorized one (any size, stride, dilation);
 * a depth multiplier M > 1 first expands the input into scratch (channel c
 * repeated M times) and runs the M = 1 kernel on it. Everything else —
 * grouped convs, filters not known at prepare, kernels the ISA lacks, or
 * force_reference — runs the reference kernels.
 *
 * Fusion (src/core/fuse.c): an activation or residual add folded into this
 * node runs in the epilogue — per GEMM tile, per depthwise output row, or
 * over the whole output after the reference kernels. A PAD folded in front
 * (float, hybrid and quantized alike) makes input 0 the PAD's input and
 * adds its counts to the padding (wick_conv_spatial).
 *
 * Threads (ops/parallel.h): the GEMM paths run the driver's tasks (column
 * blocks x runs of row tiles); Winograd runs blocks of tiles (a split fixed
 * by the shape); the depthwise and reference paths split output rows.
 * Either way each output is computed exactly as on one thread.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/hybrid.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef enum conv_path {
  CONV_REFERENCE,
  CONV_GEMM,
  CONV_IGEMM,
  CONV_WINOGRAD,
  CONV_DWCONV
} conv_path;

/* The cost rule of winograd_wins (measurements in docs/architecture.md). */
#define WINOGRAD_MIN_CHANNELS 16
#define WINOGRAD_MIN_TILES_PER_TASK 20

typedef struct conv_data {
  wick_conv_shape shape;
  float lo, hi;
  conv_path path;
  const wick_f32_kernels *kern;     /* NULL on the reference path */
  const wick_f32_gemm_kernel *gemm; /* the GEMM tile for out_c (CONV_GEMM, CONV_IGEMM) */
  float *packed;                    /* filter + bias, layout in kernels.h */
  float *zero;                      /* in_c zeros, read by padding taps (igemm) */
  const float **ind;                /* indirection buffer (igemm) */
  const void *ind_input;            /* the input address `ind` points into */
  bool hybrid;                      /* int8 filter, float activations */
  const float *filter_scales;       /* hybrid: out_c scales */
  size_t qin_offset;                /* hybrid: one quantized image, in scratch from here */
  /* hybrid CONV_2D, optimized: blocks of HCONV_MB output pixels gathered (im2col, padding
   * taps hold the image's zero point, which adds nothing to sum w * (x - zp)) into per-thread
   * scratch, int32 dot products with the filter rows (q8 `dots` or the portable loop), the
   * zero point taken out with the filter row sums (filter_sums), the reference's rescale. */
  bool hybrid_blocked;
  const wick_f32_kernels *quantize_f32; /* hybrid: the image quantization's vector kernels */
  wick_q8_dots_fn dots;
  int32_t *filter_sums;
  /* hybrid CONV_2D on the GEMM form of ops/hybrid.h (when the int8 GEMM kernels exist and the
   * patches of all images fit HCONV_GEMM_MAX_BYTES): every output pixel's patch is a row */
  bool hybrid_gemm;
  wick_hybrid_gemm h;
  /* hybrid, run as depthwise rows: the filter in [1, kh, kw, out_c] (the input's filter for
   * DEPTHWISE_CONV_2D, a transposed copy for a CONV_2D with one channel per group) */
  const int8_t *dw_filter;
  wick_hybrid_dwconv_fn hybrid_dwconv; /* multiplier 1 on a vector ISA; NULL: portable rows */
  wick_f32_dwconv_fn dwconv;           /* CONV_DWCONV */
  wick_conv_shape dw_shape;            /* the multiplier-1 shape the depthwise kernel runs */
  wick_f32_winograd_tasks winograd;    /* CONV_WINOGRAD: the split (pointers set per invoke) */
} conv_data;

static const float *bias_data(const wick_op_ctx *ctx);

#define HCONV_MB 16 /* output pixels per hybrid block */
/* Above this many patch bytes (output pixels x kernel taps x input channels, all images) the
 * hybrid CONV_2D keeps the blocked form rather than hold every patch at once. */
#define HCONV_GEMM_MAX_BYTES ((size_t)16 << 20)

/* Bytes of one thread's hybrid scratch: HCONV_MB patches of k bytes (rounded up to 64),
 * then HCONV_MB x out_c int32 sums; false on overflow. */
static bool hconv_per_thread(size_t k, size_t out_c, size_t *bytes) {
  size_t patch, acc;
  if (!wick_mul_size(k, HCONV_MB, &patch) || !wick_add_size(patch, 63, &patch) ||
      !wick_mul_size(out_c, HCONV_MB * sizeof(int32_t), &acc))
    return false;
  patch = patch / 64 * 64;
  return wick_add_size(patch, acc, bytes);
}

/* A 1x1, stride-1, unpadded CONV_2D: its patches are the image's pixels. */
static bool hconv_pointwise(const wick_conv_shape *s) {
  return s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
         s->pad_left == 0 && s->out_h == s->in_h && s->out_w == s->in_w;
}

/* Requests the scratch of a hybrid form that uses `form` bytes of it from its start: the
 * quantized image goes after them (64-aligned), so that no layer holds an image of its own. */
static wick_status image_scratch(wick_op_ctx *ctx, conv_data *d, size_t form) {
  const wick_conv_shape *s = &d->shape;
  size_t image, total;
  d->qin_offset = (form + 63) & ~(size_t)63;
  if (d->qin_offset < form ||
      !wick_mul_size((size_t)s->in_h * (size_t)s->in_w, (size_t)s->in_c, &image) ||
      !wick_add_size(d->qin_offset, image, &total))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "hybrid convolution scratch overflows");
  wick_op_request_scratch(ctx, total);
  return WICK_OK;
}

/* The int8 filter of the hybrid form: symmetric, one scale per output channel. */
static wick_status hybrid_prepare(wick_op_ctx *ctx, conv_data *d, const wick_tensor *filter,
                                  bool depthwise) {
  const wick_conv_shape *s = &d->shape;
  const wick_quant *q = filter->info != NULL ? &filter->info->quant : NULL;
  WICK_CHECK_SUPPORTED(ctx, q != NULL && q->count > 0,
                       "float32 input with an int8 filter without quantization parameters (the "
                       "hybrid form needs per-channel scales)");
  const int32_t axis = depthwise ? 3 : 0;
  WICK_CHECK_SUPPORTED(ctx, q->count == (uint32_t)s->out_c && q->quantized_dimension == axis,
                       "a hybrid filter needs %d per-channel scales on dimension %d (it has %u "
                       "on dimension %d)",
                       s->out_c, axis, q->count, q->quantized_dimension);
  for (uint32_t i = 0; i < q->count; i++) {
    WICK_CHECK(ctx, q->zero_point[i] == 0, "the int8 filter must be symmetric (zero point 0)");
    WICK_CHECK(ctx, isfinite(q->scale[i]) && q->scale[i] >= 0.0f,
               "filter scale %u is not a finite non-negative number", i);
  }
  d->filter_scales = q->scale;
  d->hybrid = true;
  d->quantize_f32 = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (wick_op_force_reference(ctx) || !wick_input_known(ctx, 1) || s->out_c == 0 ||
      (int64_t)s->out_h * s->out_w == 0)
    return image_scratch(ctx, d, 0);
  /* one channel per group: a depthwise convolution once the filter is transposed */
  const bool channelwise =
      !depthwise && s->groups > 1 && s->groups == s->in_c && s->out_c == s->groups;
  if (!depthwise && s->groups != 1 && !channelwise) /* the reference kernel */
    return image_scratch(ctx, d, 0);
  if (depthwise || channelwise) { /* rows split over the threads, out_c uint32 sums each */
    d->dw_shape = *s;
    d->dw_filter = wick_op_input(ctx, 1)->data;
    if (channelwise) {
      const size_t taps = (size_t)s->k_h * (size_t)s->k_w, c = (size_t)s->out_c;
      size_t bytes;
      int8_t *t;
      if (!wick_mul_size(taps, c, &bytes) || (t = wick_op_alloc(ctx, bytes)) == NULL)
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
      const int8_t *f = d->dw_filter;
      for (size_t o = 0; o < c; o++)
        for (size_t i = 0; i < taps; i++) t[i * c + o] = f[o * taps + i];
      d->dw_filter = t;
      d->dw_shape.multiplier = 1;
    }
    if (d->dw_shape.multiplier == 1 && d->quantize_f32 != NULL) {
      d->hybrid_dwconv = d->quantize_f32->hybrid_dwconv;
      if (d->hybrid_dwconv != NULL) { /* sums in registers: no scratch */
        d->hybrid_blocked = true;
        return image_scratch(ctx, d, 0);
      }
    }
    size_t scratch;
    if (!wick_mul_size((size_t)s->out_c * sizeof(uint32_t), wick_op_num_threads(ctx), &scratch))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "hybrid depthwise scratch overflows");
    d->hybrid_blocked = true;
    return image_scratch(ctx, d, scratch);
  }
  size_t k = (size_t)s->k_h * (size_t)s->k_w, per_thread, scratch, rows, patches;
  /* the GEMM form: every patch a row of the int8 GEMM */
  if (wick_mul_size(k, (size_t)s->in_c, &patches) &&
      wick_mul_size((size_t)s->out_h * (size_t)s->out_w, (size_t)s->batch, &rows) &&
      wick_mul_size(rows, patches, &patches) && patches <= HCONV_GEMM_MAX_BYTES && patches > 0) {
    WICK_TRY(wick_hybrid_gemm_prepare(ctx, &d->h, rows, (size_t)s->out_c, k * (size_t)s->in_c,
                                      wick_op_input(ctx, 1)->data, false, 0, &d->hybrid_gemm));
    /* the patches are copied anyway: copied as the kernels' u8 form, no preparation pass */
    if (d->hybrid_gemm) d->h.rows_u8 = !hconv_pointwise(s) && wick_hybrid_gemm_u8_rows(&d->h);
    if (d->hybrid_gemm) return image_scratch(ctx, d, d->h.scratch_bytes);
  }
  /* the blocked form: patches and int32 sums per thread, the filter row sums once */
  if (!wick_mul_size(k, (size_t)s->in_c, &k) ||
      !hconv_per_thread(k, (size_t)s->out_c, &per_thread) ||
      !wick_mul_size(per_thread, wick_op_num_threads(ctx), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "hybrid convolution scratch overflows");
  d->filter_sums = wick_op_alloc(ctx, (size_t)s->out_c * sizeof(int32_t));
  if (d->filter_sums == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  const int8_t *f = wick_op_input(ctx, 1)->data;
  for (int32_t o = 0; o < s->out_c; o++) {
    uint32_t sum = 0;
    for (size_t i = 0; i < k; i++) sum += (uint32_t)(int32_t)f[(size_t)o * k + i];
    d->filter_sums[o] = (int32_t)sum;
  }
  const wick_q8_kernels *q8 = wick_q8_kernels_select(false);
  d->dots = q8 != NULL ? q8->dots : NULL;
  d->hybrid_blocked = true;
  return image_scratch(ctx, d, scratch);
}

/* One image of a hybrid convolution (CONV_2D blocks or depthwise rows). */
typedef struct hybrid_job {
  const conv_data *d;
  const int8_t *filter;
  const float *bias;
  float *out;       /* this image's output */
  uint8_t *scratch; /* per_thread bytes per thread */
  size_t per_thread;
  const int8_t *qin; /* the quantized image */
  int32_t offset;    /* its zero point and scale */
  float scale;
} hybrid_job;

/* n bytes of src into dst with flip (0, or 0x80: x + 128 as u8) applied to each. */
static void copy_flipped(int8_t *dst, const int8_t *src, size_t n, uint8_t flip) {
  if (flip == 0) {
    memcpy(dst, src, n);
    return;
  }
  for (size_t i = 0; i < n; i++) dst[i] = (int8_t)((uint8_t)src[i] ^ flip);
}

/* The patch of output pixel p (of one image) into row: k = kh * kw * in_c int8, taps outside
 * the image hold the image's zero point (they add nothing to sum w * (x - zero point)); with
 * flip 0x80 every byte is written as x + 128 (u8), the GEMM kernels' input form. */
static void im2col_row(const wick_conv_shape *s, const int8_t *qin, int32_t offset, uint8_t flip,
                       size_t p, int8_t *row) {
  const size_t c = (size_t)s->in_c;
  const int fill = (int)(uint8_t)((uint8_t)(int8_t)offset ^ flip);
  const int64_t oy = (int64_t)(p / (size_t)s->out_w), ox = (int64_t)(p % (size_t)s->out_w);
  for (int32_t ky = 0; ky < s->k_h; ky++) {
    const int64_t iy = oy * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
    if (s->dilation_w == 1) { /* the row's taps are adjacent pixels: one copy for the inside */
      int8_t *dst = row + (size_t)ky * (size_t)s->k_w * c;
      const int64_t ix0 = ox * s->stride_w - s->pad_left;
      if (iy < 0 || iy >= s->in_h) {
        memset(dst, fill, (size_t)s->k_w * c);
        continue;
      }
      const int64_t lo = ix0 < 0 ? -ix0 : 0; /* taps [lo, hi) inside */
      int64_t hi = (int64_t)s->in_w - ix0;
      if (hi > s->k_w) hi = s->k_w;
      if (hi < lo) hi = lo;
      if (lo > 0) memset(dst, fill, (size_t)(lo < s->k_w ? lo : s->k_w) * c);
      if (hi > lo)
        copy_flipped(dst + (size_t)lo * c,
                     qin + ((size_t)iy * (size_t)s->in_w + (size_t)(ix0 + lo)) * c,
                     (size_t)(hi - lo) * c, flip);
      if (hi < s->k_w && lo < s->k_w) {
        const int64_t from = hi > lo ? hi : lo;
        memset(dst + (size_t)from * c, fill, (size_t)(s->k_w - from) * c);
      }
      continue;
    }
    for (int32_t kx = 0; kx < s->k_w; kx++) {
      const int64_t ix = ox * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
      int8_t *dst = row + ((size_t)ky * (size_t)s->k_w + (size_t)kx) * c;
      if (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w)
        memset(dst, fill, c);
      else
        copy_flipped(dst, qin + ((size_t)iy * (size_t)s->in_w + (size_t)ix) * c, c, flip);
    }
  }
}

/* Output pixels [HCONV_MB * begin, HCONV_MB * end) of one image. */
static void hconv_blocks(void *arg, size_t begin, size_t end, size_t thread) {
  const hybrid_job *j = arg;
  const conv_data *d = j->d;
  const wick_conv_shape *s = &d->shape;
  const size_t c = (size_t)s->in_c, k = (size_t)s->k_h * (size_t)s->k_w * c;
  const size_t pixels = (size_t)s->out_h * (size_t)s->out_w, oc = (size_t)s->out_c;
  int8_t *patch = (int8_t *)(j->scratch + thread * j->per_thread);
  int32_t *acc =
      (int32_t *)(void *)(j->scratch + thread * j->per_thread + (k * HCONV_MB + 63) / 64 * 64);
  for (size_t blk = begin; blk < end; blk++) {
    const size_t p0 = blk * HCONV_MB, mb = pixels - p0 < HCONV_MB ? pixels - p0 : HCONV_MB;
    for (size_t i = 0; i < mb; i++) im2col_row(s, j->qin, j->offset, 0, p0 + i, patch + i * k);
    if (d->dots != NULL)
      d->dots(mb, oc, k, patch, j->filter, acc, oc);
    else
      wick_hybrid_dots__reference(mb, oc, k, patch, j->filter, acc, oc);
    for (size_t i = 0; i < mb; i++) {
      float *o = j->out + (p0 + i) * oc;
      for (size_t ch = 0; ch < oc; ch++) {
        const uint32_t sum =
            (uint32_t)acc[i * oc + ch] - (uint32_t)d->filter_sums[ch] * (uint32_t)j->offset;
        /* the reference's association: (acc * s_filter) * s_input, then the bias */
        float y = (float)(int32_t)sum * d->filter_scales[ch] * j->scale;
        if (j->bias) y += j->bias[ch];
        o[ch] = y < d->lo ? d->lo : (y > d->hi ? d->hi : y);
      }
    }
  }
}

static void hdw_rows(void *arg, size_t begin, size_t end, size_t thread) {
  const hybrid_job *j = arg;
  const conv_data *d = j->d;
  if (d->hybrid_dwconv != NULL) {
    d->hybrid_dwconv(&d->dw_shape, j->qin, j->offset, j->scale, d->dw_filter, d->filter_scales,
                     d->dw_filter != j->filter, j->bias, j->out, d->lo, d->hi, (int32_t)begin,
                     (int32_t)end);
    return;
  }
  wick_hybrid_depthwise_rows(&d->dw_shape, j->qin, j->offset, j->scale, d->dw_filter,
                             d->filter_scales, d->dw_filter != j->filter, j->bias, j->out, d->lo,
                             d->hi, (int32_t)begin, (int32_t)end,
                             (uint32_t *)(void *)(j->scratch + thread * j->per_thread));
}

/* The GEMM form: the patches of one image into the form's rows (a range of output pixels per
 * task), then, for all images, the sums and the reference's rescale per block. */
typedef struct hconv_gemm_job {
  const conv_data *d;
  const int8_t *qin; /* the quantized image */
  int8_t *rows;      /* this image's first row */
  int32_t offset;
  const float *bias;
  float *out;
  const int32_t *acc;
} hconv_gemm_job;

static void hconv_gemm_patches(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const hconv_gemm_job *j = arg;
  for (size_t p = begin; p < end; p++)
    im2col_row(&j->d->shape, j->qin, j->offset, j->d->h.rows_u8 ? 0x80 : 0, p,
               j->rows + p * j->d->h.k);
}

static void hconv_gemm_finish(void *arg, size_t m0, size_t m1, size_t n0, size_t n1) {
  const hconv_gemm_job *j = arg;
  const conv_data *d = j->d;
  const wick_hybrid_gemm *h = &d->h;
  for (size_t r = m0; r < m1; r++) {
    const uint32_t offset = (uint32_t)h->row_offsets[r];
    const float scale = h->row_scales[r];
    const int32_t *acc = j->acc + r * h->n;
    float *o = j->out + r * h->n;
    if (h->f32 != NULL && h->f32->hybrid_rescale != NULL) {
      h->f32->hybrid_rescale(n1 - n0, acc + n0, h->weight_sums + n0, offset, d->filter_scales + n0,
                             scale, true, j->bias ? j->bias + n0 : NULL, d->lo, d->hi, o + n0);
      continue;
    }
    for (size_t c = n0; c < n1; c++) {
      const uint32_t sum = (uint32_t)acc[c] - h->weight_sums[c] * offset;
      /* the reference's association: (acc * s_filter) * s_input, then the bias */
      float y = (float)(int32_t)sum * d->filter_scales[c] * scale;
      if (j->bias) y += j->bias[c];
      o[c] = y < d->lo ? d->lo : (y > d->hi ? d->hi : y);
    }
  }
}

static wick_status hybrid_gemm_run(const wick_op_ctx *ctx, const conv_data *d) {
  const wick_conv_shape *s = &d->shape;
  const float *in = wick_op_input(ctx, 0)->data;
  const size_t image = (size_t)s->in_h * (size_t)s->in_w * (size_t)s->in_c;
  const size_t pixels = (size_t)s->out_h * (size_t)s->out_w;
  int8_t *qin = (int8_t *)wick_op_scratch(ctx) + d->qin_offset;
  hconv_gemm_job j = {d, qin, NULL, 0, bias_data(ctx), wick_op_output(ctx, 0)->data, NULL};
  /* a 1x1 stride-1 unpadded convolution's patches are the image's pixels: quantized
   * straight into the GEMM's rows, no copy */
  const bool pointwise = hconv_pointwise(s);
  for (int32_t n = 0; n < s->batch; n++) {
    const size_t r0 = (size_t)n * pixels;
    j.rows = wick_hybrid_gemm_rows(&d->h, wick_op_scratch(ctx)) + r0 * d->h.k;
    float scale;
    WICK_TRY(wick_hybrid_quantize_image(ctx, d->h.f32, image, in + (size_t)n * image,
                                        pointwise ? j.rows : qin, &scale, &j.offset));
    for (size_t r = r0; r < r0 + pixels; r++) {
      d->h.row_scales[r] = scale;
      d->h.row_offsets[r] = j.offset;
    }
    if (!pointwise) WICK_TRY(wick_parallel_range(ctx, pixels, d->h.k, hconv_gemm_patches, &j));
  }
  j.acc = wick_hybrid_gemm_sums(&d->h, wick_op_scratch(ctx));
  return wick_hybrid_gemm_run(ctx, &d->h, hconv_gemm_finish, &j);
}

/* One image at a time: quantize it, run the hybrid kernel. */
static wick_status hybrid_run(const wick_op_ctx *ctx, const conv_data *d, bool depthwise) {
  if (d->hybrid_gemm) return hybrid_gemm_run(ctx, d);
  const wick_conv_shape *s = &d->shape;
  const float *in = wick_op_input(ctx, 0)->data;
  float *out = wick_op_output(ctx, 0)->data;
  const int64_t image = (int64_t)s->in_h * s->in_w * s->in_c;
  const int64_t out_image = (int64_t)s->out_h * s->out_w * s->out_c;
  int8_t *qin = (int8_t *)wick_op_scratch(ctx) + d->qin_offset;
  for (int32_t n = 0; n < s->batch; n++) {
    int32_t offset;
    float scale;
    WICK_TRY(wick_hybrid_quantize_image(ctx, d->quantize_f32, (size_t)image, in + n * image, qin,
                                        &scale, &offset));
    if (d->hybrid_blocked && d->dw_filter != NULL) {
      hybrid_job j = {d,
                      wick_op_input(ctx, 1)->data,
                      bias_data(ctx),
                      out + n * out_image,
                      wick_op_scratch(ctx),
                      (size_t)s->out_c * sizeof(uint32_t),
                      qin,
                      offset,
                      scale};
      const uint64_t per_row = (uint64_t)s->out_w * (uint64_t)s->out_c * (uint64_t)s->k_h *
                               (uint64_t)s->k_w * WICK_DEPTHWISE_WORK_PER_MAC;
      wick_status st = wick_parallel_range(ctx, (size_t)s->out_h, per_row, hdw_rows, &j);
      if (st != WICK_OK) return st;
      continue;
    }
    if (d->hybrid_blocked) {
      const size_t k = (size_t)s->k_h * (size_t)s->k_w * (size_t)s->in_c;
      size_t per_thread = 0;
      (void)hconv_per_thread(k, (size_t)s->out_c, &per_thread); /* (checked at prepare) */
      hybrid_job j = {d,
                      wick_op_input(ctx, 1)->data,
                      bias_data(ctx),
                      out + n * out_image,
                      wick_op_scratch(ctx),
                      per_thread,
                      qin,
                      offset,
                      scale};
      const size_t pixels = (size_t)s->out_h * (size_t)s->out_w;
      const size_t blocks = (pixels + HCONV_MB - 1) / HCONV_MB;
      wick_status st =
          wick_parallel_range(ctx, blocks, (uint64_t)HCONV_MB * (uint64_t)k * (uint64_t)s->out_c,
                              hconv_blocks, &j);
      if (st != WICK_OK) return st;
      continue;
    }
    wick_hybrid_conv2d__reference(s, depthwise, qin, offset, scale, wick_op_input(ctx, 1)->data,
                                  d->filter_scales, bias_data(ctx), out + n * out_image, d->lo,
                                  d->hi);
  }
  return WICK_OK;
}

static const float *bias_data(const wick_op_ctx *ctx) {
  wick_tensor *b = wick_op_input(ctx, 2);
  return b ? b->data : NULL;
}

static wick_status choose_kernels(wick_op_ctx *ctx, conv_data *d, bool depthwise);

/* Records the path prepare chose (wick_interpreter_op_kernel). */
static void mark_kernel(const wick_op_ctx *ctx, const conv_data *d, bool depthwise) {
  const bool grouped = !depthwise && d->shape.groups != 1;
  if (d->hybrid) {
    if (d->hybrid_gemm)
      wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "hybrid gemm");
    else if (!d->hybrid_blocked)
      wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, grouped ? "hybrid grouped" : "hybrid");
    else if (d->hybrid_dwconv != NULL) /* vector rows, split over the threads */
      wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "hybrid dwconv");
    else if (d->dw_filter != NULL) /* portable rows, split over the threads */
      wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "hybrid depthwise rows");
    else
      wick_op_set_kernel(ctx, d->dots != NULL ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_GENERIC,
                         "hybrid blocked");
    return;
  }
  switch (d->path) {
    case CONV_GEMM: wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "gemm"); return;
    case CONV_IGEMM: wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "igemm"); return;
    case CONV_WINOGRAD: wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "winograd"); return;
    case CONV_DWCONV:
      wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED,
                         d->dwconv == d->kern->dwconv3x3   ? "dwconv3x3"
                         : d->dwconv == d->kern->dwconv5x5 ? "dwconv5x5"
                                                           : "dwconv");
      return;
    default: wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, grouped ? "grouped" : NULL); return;
  }
}

static wick_status conv_prepare_common(wick_op_ctx *ctx, bool depthwise) {
  if (wick_quant_routed(ctx, 0)) return wick_conv_prepare_quantized(ctx, depthwise);
  WICK_TRY(wick_check_arity(ctx, 2, 3, 1));
  wick_tensor *in, *filter;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  wick_tensor *bias = wick_op_input(ctx, 2);
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  const bool hybrid = filter->type == WICK_DTYPE_INT8;
  if (!hybrid) WICK_TRY(wick_require_float32(ctx, filter, "the filter"));
  if (bias) WICK_TRY(wick_require_float32(ctx, bias, "the bias"));
  wick_conv_shape shape;
  WICK_TRY(wick_conv2d_geometry(ctx, in, filter, bias, depthwise, &shape));
  const wick_conv_params *p = &ctx->params->conv;
  conv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->shape = shape;
  WICK_TRY(wick_activation_range_f32(ctx, p->activation, &d->lo, &d->hi));
  WICK_TRY(wick_conv2d_set_output(ctx, &d->shape, depthwise, WICK_DTYPE_FLOAT32));
  wick_op_set_data(ctx, d);
  WICK_TRY(hybrid ? hybrid_prepare(ctx, d, filter, depthwise) : choose_kernels(ctx, d, depthwise));
  mark_kernel(ctx, d, depthwise);
  /* the packed copy holds the filter (and a float bias): the file's pages can go */
  if (hybrid ? d->hybrid_gemm : d->path != CONV_REFERENCE) {
    wick_op_release_input(ctx, 1);
    if (!hybrid) wick_op_release_input(ctx, 2);
  }
  return WICK_OK;
}

/* Whether Winograd F(4x4, 3x3) beats the indirect GEMM on `s` (measured on
 * ResNet-18/50, docs/architecture.md): it does a quarter of the multiply-adds
 * but streams a filter 4x larger and transforms every input and output, so it
 * needs enough tiles to reuse each transformed filter and enough channels
 * to amortize the transforms. */
static bool winograd_wins(const wick_f32_kernels *kern, const wick_f32_gemm_kernel *gemm,
                          const wick_conv_shape *s, wick_f32_winograd_tasks *plan) {
  if (!wick_f32_winograd_supported(kern, s) || s->in_c < WINOGRAD_MIN_CHANNELS ||
      s->out_c < WINOGRAD_MIN_CHANNELS || !wick_f32_winograd_plan(plan, kern, gemm, s))
    return false;
  return plan->tiles >= WINOGRAD_MIN_TILES_PER_TASK * plan->tasks;
}

/* Packs the transformed filter and sizes the per-thread scratch (d->winograd
 * holds the plan). */
static wick_status winograd_prepare(wick_op_ctx *ctx, conv_data *d, const float *filter,
                                    const float *bias) {
  const wick_conv_shape *s = &d->shape;
  size_t floats, bytes, scratch;
  if (!wick_f32_winograd_packed_size(s, d->gemm->nr, &floats) ||
      !wick_mul_size(floats, sizeof(float), &bytes) ||
      !wick_mul_size(d->winograd.scratch_floats, sizeof(float) * wick_op_num_threads(ctx),
                     &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "Winograd filter size overflows");
  bool cached;
  /* slot 1: the indirect GEMM's packing (slot 0) differs */
  if ((d->packed = wick_op_packed(ctx, 1, (uint32_t)d->gemm->nr, bytes, &cached)) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
  if (!cached) wick_f32_winograd_pack(s, d->gemm->nr, filter, bias, d->packed);
  wick_op_request_scratch(ctx, scratch);
  d->path = CONV_WINOGRAD;
  return WICK_OK;
}

/* Chooses the optimized path if one applies and packs the filter for it;
 * leaves d->path = CONV_REFERENCE otherwise. */
static wick_status choose_kernels(wick_op_ctx *ctx, conv_data *d, bool depthwise) {
  const wick_conv_shape *s = &d->shape;
  d->path = CONV_REFERENCE;
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (kern == NULL || !wick_input_known(ctx, 1)) return WICK_OK;
  if (wick_op_input(ctx, 2) != NULL && !wick_input_known(ctx, 2)) return WICK_OK;
  if ((int64_t)s->batch * s->out_h * s->out_w == 0 || s->out_c == 0 || s->k_h == 0 || s->k_w == 0)
    return WICK_OK;
  const float *filter = wick_op_input(ctx, 1)->data, *bias = bias_data(ctx);
  size_t floats, bytes;
  /* A CONV_2D with one input and one output channel per group (groups == in_c == out_c:
   * Keras' ConvNeXt writes its 7x7 depthwise convolutions so) is a depthwise convolution:
   * its OHWI filter [C, kh, kw, 1] transposed to [1, kh, kw, C] takes the depthwise kernels. */
  float *transposed = NULL;
  if (!depthwise && s->groups > 1 && s->groups == s->in_c && s->out_c == s->groups) {
    const size_t taps = (size_t)s->k_h * (size_t)s->k_w, c = (size_t)s->out_c;
    if (!wick_mul_size(taps, c, &floats) || !wick_mul_size(floats, sizeof(float), &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "filter size overflows");
    if ((transposed = wick_op_alloc(ctx, bytes)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t o = 0; o < c; o++)
      for (size_t t = 0; t < taps; t++) transposed[t * c + o] = filter[o * taps + t];
    filter = transposed;
    depthwise = true;
  }
  if (depthwise) {
    if (s->stride_h < 1 || s->stride_w < 1 || s->dilation_h < 1 || s->dilation_w < 1)
      return WICK_OK;
    bool unit = s->dilation_h == 1 && s->dilation_w == 1 && s->stride_h <= 2 && s->stride_w <= 2;
    d->dwconv = kern->dwconv;
    if (unit && s->k_h == 3 && s->k_w == 3) d->dwconv = kern->dwconv3x3;
    if (unit && s->k_h == 5 && s->k_w == 5) d->dwconv = kern->dwconv5x5;
    if (d->dwconv == NULL) return WICK_OK; /* this ISA has no kernel for the shape */
    size_t taps = (size_t)s->k_h * (size_t)s->k_w;
    size_t blocks = ((size_t)s->out_c + kern->dw_cr - 1) / kern->dw_cr;
    if (!wick_mul_size(taps + 1, kern->dw_cr, &floats) || !wick_mul_size(blocks, floats, &floats) ||
        !wick_mul_size(floats, sizeof(float), &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
    bool cached;
    if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->dw_cr, bytes, &cached)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
    if (!cached) wick_f32_dwconv_pack((size_t)s->out_c, kern->dw_cr, taps, filter, bias, d->packed);
    d->dw_shape = *s;
    if (transposed != NULL) { /* (as DEPTHWISE_CONV_2D's geometry describes it) */
      d->dw_shape.groups = s->out_c;
      d->dw_shape.multiplier = 1;
    }
    if (s->multiplier > 1) {
      /* The input expanded to out_c channels lives in scratch. */
      size_t expanded;
      if (!wick_mul_size((size_t)s->batch * (size_t)s->in_h, (size_t)s->in_w, &expanded) ||
          !wick_mul_size(expanded, (size_t)s->out_c, &expanded) ||
          !wick_mul_size(expanded, sizeof(float), &bytes))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "expanded input size overflows");
      wick_op_request_scratch(ctx, bytes);
      d->dw_shape.in_c = s->out_c;
      d->dw_shape.groups = s->out_c;
      d->dw_shape.multiplier = 1;
    }
    d->path = CONV_DWCONV;
  } else {
    if (s->groups != 1) return WICK_OK;
    const wick_f32_gemm_kernel *gk = wick_f32_gemm_kernel_for(kern, (size_t)s->out_c);
    if (wick_op_winograd_allowed(ctx) && winograd_wins(kern, gk, s, &d->winograd)) {
      d->kern = kern;
      d->gemm = gk;
      return winograd_prepare(ctx, d, filter, bias);
    }
    size_t k = (size_t)s->k_h * (size_t)s->k_w, count;
    if (!wick_mul_size(k, (size_t)s->in_c, &k) ||
        !wick_f32_gemm_packed_size_checked((size_t)s->out_c, k, gk->nr, &floats) ||
        !wick_mul_size(floats, sizeof(float), &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
    bool cached;
    if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)gk->nr, bytes, &cached)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
    if (!cached) wick_f32_gemm_pack((size_t)s->out_c, k, gk->nr, filter, bias, d->packed);
    d->gemm = gk;
    if (s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
        s->pad_left == 0 && s->out_h == s->in_h && s->out_w == s->in_w) {
      d->path = CONV_GEMM;
    } else {
      if (!wick_f32_conv_indirection_size(s, gk->mr, &count) ||
          !wick_mul_size(count, sizeof(float *), &bytes))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "indirection buffer size overflows");
      d->zero = wick_op_alloc(ctx, (size_t)s->in_c * sizeof(float));
      d->ind = wick_op_alloc(ctx, bytes);
      if (d->zero == NULL || d->ind == NULL)
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory (indirection buffer)");
      d->ind_input = NULL;
      d->path = CONV_IGEMM;
    }
  }
  d->kern = kern;
  return WICK_OK;
}

static void winograd_task(void *arg, size_t task, size_t thread) {
  wick_f32_winograd_run_task(arg, task, thread);
}

/* One invoke's arguments, shared by the row tasks. */
typedef struct conv_job {
  const conv_data *d;
  bool depthwise;
  const float *in, *filter, *bias;
  float *out;
  wick_f32_dwconv_args dw; /* CONV_DWCONV: the kernel's arguments (whole tensor) */
} conv_job;

/* Rows [y0, y1) of image n, on the path prepare chose (not the GEMM ones). */
static void conv_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  (void)thread;
  const conv_job *j = arg;
  const wick_conv_shape *s = &j->d->shape;
  const wick_conv_shape r = wick_conv_shape_rows(s, y0, y1);
  const float *in = j->in + (int64_t)n * s->in_h * s->in_w * s->in_c;
  float *out = j->out + ((int64_t)n * s->out_h + y0) * s->out_w * s->out_c;
  switch (j->d->path) {
    case CONV_DWCONV: /* takes rows of the whole tensor */
      j->d->dwconv(&j->dw, (size_t)n * (size_t)s->out_h + (size_t)y0,
                   (size_t)n * (size_t)s->out_h + (size_t)y1);
      return;
    case CONV_REFERENCE:
      if (j->depthwise)
        wick_f32_depthwise_conv2d__reference(&r, in, j->filter, j->bias, out, j->d->lo, j->d->hi);
      else
        wick_f32_conv2d__reference(&r, in, j->filter, j->bias, out, j->d->lo, j->d->hi);
      return;
    case CONV_GEMM:
    case CONV_IGEMM:
    case CONV_WINOGRAD: break; /* run as GEMM / Winograd tasks */
  }
}

/* Runs the path prepare chose, split over the interpreter's threads, with
 * the fused epilogue (if any) inside the GEMM tiles / depthwise rows. */
static wick_status conv_run(const wick_op_ctx *ctx, bool depthwise) {
  conv_data *d = wick_op_data(ctx);
  if (d->hybrid) {
    wick_status st = hybrid_run(ctx, d, depthwise);
    if (st == WICK_OK) st = wick_op_run_fused_epilogue(ctx);
    return st;
  }
  const wick_conv_shape *s = &d->shape;
  const float *in = wick_op_input(ctx, 0)->data;
  float *out = wick_op_output(ctx, 0)->data;
  wick_f32_epilogue epilogue;
  const wick_f32_epilogue *ep = wick_op_fused_epilogue(ctx, &epilogue) ? &epilogue : NULL;
  wick_f32_gemm_tasks t;
  size_t tasks;
  switch (d->path) {
    case CONV_GEMM:
      tasks =
          wick_f32_gemm_tasks_init(&t, d->gemm,
                                   (size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w,
                                   (size_t)s->out_c, (size_t)s->in_c, in, (size_t)s->in_c,
                                   d->packed, out, (size_t)s->out_c, d->lo, d->hi, WICK_TASK_GRAIN);
      t.ep = ep;
      return wick_op_run_gemm_tasks(ctx, &t, tasks);
    case CONV_IGEMM:
      if (d->ind_input != in) {
        wick_f32_conv_indirection_init(s, d->gemm->mr, in, d->zero, d->ind);
        d->ind_input = in;
      }
      tasks = wick_f32_conv_igemm_tasks_init(&t, d->gemm, s, d->ind, d->packed, out, d->lo, d->hi,
                                             WICK_TASK_GRAIN);
      t.ep = ep;
      return wick_op_run_gemm_tasks(ctx, &t, tasks);
    case CONV_WINOGRAD: {
      wick_f32_winograd_tasks w = d->winograd;
      w.s = s;
      w.input = in;
      w.packed = d->packed;
      w.output = out;
      w.lo = d->lo;
      w.hi = d->hi;
      w.ep = ep;
      w.scratch = wick_op_scratch(ctx);
      return wick_parallel_for(ctx, w.tasks, winograd_task, &w);
    }
    case CONV_DWCONV:
    case CONV_REFERENCE: break;
  }
  conv_job j = {d, depthwise, in, wick_op_input(ctx, 1)->data, bias_data(ctx), out, {0}};
  if (d->path == CONV_DWCONV) {
    const float *x = in;
    if (s->multiplier > 1) { /* expanded[p, c*M + m] = in[p, c] */
      float *e = wick_op_scratch(ctx);
      const size_t pixels = (size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w;
      const size_t c = (size_t)s->in_c, m = (size_t)s->multiplier;
      for (size_t p = 0; p < pixels; p++)
        for (size_t i = 0; i < c; i++)
          for (size_t k = 0; k < m; k++) e[(p * c + i) * m + k] = in[p * c + i];
      x = e;
    }
    /* a lone activation runs per output row inside the kernel; with a residual add or a PRELU
     * the whole epilogue runs after all rows */
    j.dw = (wick_f32_dwconv_args){&d->dw_shape,
                                  x,
                                  d->packed,
                                  out,
                                  d->lo,
                                  d->hi,
                                  ep && !ep->residual && !ep->alpha ? ep->act : NULL};
  }
  int64_t per_pixel = (int64_t)s->out_c * s->k_h * s->k_w;
  per_pixel *=
      depthwise || d->path == CONV_DWCONV ? WICK_DEPTHWISE_WORK_PER_MAC : s->in_c / s->groups;
  wick_status st =
      wick_parallel_rows(ctx, s->batch, s->out_h, (uint64_t)per_pixel * (uint64_t)s->out_w,
                         wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                         conv_rows, &j);
  if (st == WICK_OK && ep && (d->path == CONV_REFERENCE || ep->residual || ep->alpha))
    st = wick_op_run_fused_epilogue(ctx);
  return st;
}

static wick_status invoke_quantized(wick_op_ctx *ctx) {
  wick_status st = wick_conv_invoke_quantized(ctx);
  if (st == WICK_OK) st = wick_op_run_fused_epilogue(ctx); /* fusion only takes float outputs */
  return st;
}

static wick_status conv_prepare(wick_op_ctx *ctx) { return conv_prepare_common(ctx, false); }
static wick_status depthwise_prepare(wick_op_ctx *ctx) { return conv_prepare_common(ctx, true); }

static wick_status conv_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return invoke_quantized(ctx);
  return conv_run(ctx, false);
}

static wick_status depthwise_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return invoke_quantized(ctx);
  return conv_run(ctx, true);
}

const wick_op_def wick_op_conv_2d = {"CONV_2D",    WICK_BUILTIN_CONV_2D, 8,
                                     conv_prepare, conv_invoke,          WICK_OP_TAKES_EPILOGUE};
const wick_op_def wick_op_depthwise_conv_2d = {
    "DEPTHWISE_CONV_2D", WICK_BUILTIN_DEPTHWISE_CONV_2D, 7, depthwise_prepare,
    depthwise_invoke,    WICK_OP_TAKES_EPILOGUE};
