/*
 * elementwise_quantized.c — quantized ADD, SUB and MUL (int8, uint8, int16),
 * with numpy broadcasting and fused activations, MAXIMUM / MINIMUM on the raw
 * values (operands quantized like the output), and int8 SQUARED_DIFFERENCE.
 *
 * Reached from elementwise_binary.c when input 0 is a quantized activation.
 * Both inputs and the output share one type; int16 requires zero points 0.
 * Parameters as LiteRT (docs/format.md, "int8 quantization"):
 *   ADD/SUB  inputs shifted left 20 bits (15 for int16), scaled by
 *            s_i / (2 max(s1, s2)), summed, requantized by
 *            2 max(s1, s2) / (2^shift s_out) — the last product in float.
 *            int16 with pot_scale_int16 (the default) and power-of-two scales
 *            takes LiteRT's LSTM path instead: a rounding right shift of one
 *            input and a saturating add (ADD needs equal shapes there, as
 *            LiteRT's kernel).
 *   MUL      (a - z1)(b - z2) requantized by s1 s2 / s_out, computed in float.
 *   SQUARED_DIFFERENCE (int8 only, as LiteRT)  as ADD/SUB with a left shift
 *            of 7: the two rescaled inputs are subtracted, the difference
 *            squared in 32 bits and requantized by (2 max(s1, s2))^2 /
 *            (2^14 s_out); every multiplier must be below 1 (LiteRT aborts
 *            otherwise, wick refuses at prepare). No fused activation.
 * int8 and int16 (not the power-of-two form) ADD/SUB/MUL, uint8 MUL and int8 SQUARED_DIFFERENCE of
 * equal shapes, or of a full tensor by a row of its last dimension or a scalar (Keras'
 * rescaling/normalization, squeeze-excite's channel scale; the row is tiled so each kernel call
 * covers hundreds of elements), run the optimized kernels of src/kernels/q8.h when the CPU has them
 * (bit-exact with the reference), split over the threads. Other int8 broadcasts that collapse to
 * at most three loops (elementwise_driver.c's plan: [M, C] op [M, 1] per row, as layer norm's mean
 * and variance — ConvNeXt's [1, H, W, C] minus [1, H, W, 1] —, [N, HW, C] op [N, 1, C], ...) whose
 * innermost run is at least QBIN_MIN_INNER long call the same kernels once per inner run, a
 * broadcast scalar splatted into a per-thread row; the runs split over the threads.
 * int8 and uint8 ADD / SUB (left shift 20) take the add8 kernels before all that when the table
 * has them and each input's rescale has an exact 32-bit form (q8.h, wick_q8_rescale8_make,
 * checked at prepare on all 256 values; it can fail when one input's scale is more than 2^11
 * times finer than the other's, and the op then keeps the kernels above, or for uint8 the
 * reference): the same shapes, the broadcast row or scalar rescaled once (a known row at
 * prepare) instead of tiled as bytes. The add8 path is bit-exact with LiteRT's reference kernels
 * like the rest; LiteRT's own optimized ADD rounds a few sums one step away from its reference.
 * Next: src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef enum qbin_kind { QB_ADD, QB_ADD_POT, QB_MUL, QB_MAXMIN, QB_SQUARED_DIFFERENCE } qbin_kind;

typedef struct qbin_data {
  wick_broadcast bc;
  qbin_kind kind;
  bool subtract;
  wick_qadd_params add;
  wick_qmul_params mul;
  int32_t pot_shift1, pot_shift2;
  const wick_q8_kernels *kern; /* int8 fast paths; NULL: reference */
  int64_t row;                 /* a broadcast row's length (one operand is a row of the
                                * other's last dimension, or a scalar: 1); 0: equal shapes */
  bool row_is_a;               /* input 0 is the broadcast row */
  size_t tile;                 /* the row repeated to this many elements (a multiple of row) */
  bool planned;                /* other broadcasts: kernel calls over `plan`'s inner runs */
  wick_f32_binary_plan plan;   /* (element strides; the float plan is type-agnostic) */
  size_t splat_bytes;          /* per thread: a broadcast scalar repeated over an inner run */
  size_t esize;                /* bytes per element: 1 (int8, uint8 MUL) or 2 (int16) */
  bool u8;                     /* uint8 MUL (kern->mul_u8) */
  /* int8 / uint8 ADD / SUB on kern->add8 (each input's rescale in 32-bit arithmetic, q8.h): */
  bool add8;
  wick_q8_add8_params a8;     /* both operands bytes: in[0] is input 0's rescale, in[1] input 1's */
  wick_q8_add8_params a8r[2]; /* against a rescaled operand when the bytes are input i */
  int32_t (*rescaled)[256];   /* [i][byte]: the reference's rescale of each value of input i,
                               * input 1's negated for SUB (the rescaled rows and scalars) */
  int32_t *row32;             /* a known broadcast row rescaled and tiled at prepare, or NULL */
} qbin_data;

/* Elements per kernel call against a tiled broadcast row (plus one row for the phase). */
#define QBIN_TILE 512
/* The shortest inner run the planned broadcasts call a kernel for (shorter ones: the
 * reference, whose per-element loop is then no slower than a call per few elements). */
#define QBIN_MIN_INNER 16

static bool same_shape(const wick_tensor *a, const wick_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* int8 shapes the optimized kernels take: equal shapes (row 0), or one operand
 * with only 1s before its last dimension, whose size matches the other
 * operand's last dimension or is 1 (a channel row or a scalar: row = its size;
 * Keras' rescaling and normalization layers, squeeze-excite's channel scale). */
static bool kernel_shapes(const wick_tensor *a, const wick_tensor *b, int64_t *row,
                          bool *row_is_a) {
  *row_is_a = false;
  *row = 0;
  if (same_shape(a, b)) return wick_tensor_elements(a) > 0;
  for (int side = 0; side < 2; side++) {
    const wick_tensor *r = side ? a : b, *full = side ? b : a;
    if (full->rank < 1 || full->rank < r->rank || wick_tensor_elements(full) == 0) continue;
    const int64_t len = wick_tensor_elements(r);
    bool ok = len == 1 || (r->rank >= 1 && r->dims[r->rank - 1] == full->dims[full->rank - 1]);
    for (int32_t i = 0; i + 1 < r->rank; i++) ok = ok && r->dims[i] == 1;
    if (ok && len > 0) {
      *row = len;
      *row_is_a = side == 1;
      return true;
    }
  }
  return false;
}

/* The kernel path of prepare: the table, and a tile (scratch) for a broadcast row. */
static wick_status use_kernels(wick_op_ctx *ctx, qbin_data *d, const wick_tensor *a,
                               const wick_tensor *b, bool have) {
  const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (k == NULL || !have) return WICK_OK;
  if (!kernel_shapes(a, b, &d->row, &d->row_is_a)) {
    if (!wick_f32_binary_plan_make(&d->bc, &d->plan) || d->plan.dims[2] < QBIN_MIN_INNER)
      return WICK_OK;
    if (d->plan.form != WICK_F32_VV) {
      d->splat_bytes = (d->plan.dims[2] * d->esize + 63) & ~(size_t)63;
      size_t bytes;
      if (!wick_mul_size(d->splat_bytes, wick_op_num_threads(ctx), &bytes))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "broadcast row too long");
      wick_op_request_scratch(ctx, bytes);
    }
    d->planned = true;
    d->kern = k;
    return WICK_OK;
  }
  if (d->row > 0) {
    const size_t row = (size_t)d->row;
    d->tile = row >= QBIN_TILE ? row : QBIN_TILE / row * row;
    size_t bytes;
    if (!wick_add_size(d->tile, row, &bytes) || !wick_mul_size(bytes, d->esize, &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "broadcast row too long");
    wick_op_request_scratch(ctx, bytes);
  }
  d->kern = k;
  return WICK_OK;
}

/* int8 / uint8 ADD / SUB on the add8 kernels when both inputs' rescales have an exact 32-bit
 * form (wick_q8_rescale8_make: input shifts down to about -11, so inputs whose scales are
 * 2^11 or more apart keep the other kernels) and the output shift is at least -31. The shapes
 * are use_kernels': equal shapes, a row of the last dimension or a scalar (the row rescaled
 * once: at prepare when it is known, else at invoke into the scratch; a scalar at invoke),
 * or the planned broadcasts (each inner run's broadcast scalar rescaled by table lookup). */
static wick_status use_add8(wick_op_ctx *ctx, qbin_data *d, const wick_tensor *a,
                            const wick_tensor *b, const wick_q8_kernels *k, wick_dtype t) {
  const wick_qadd_params *p = &d->add;
  const bool u8 = t == WICK_DTYPE_UINT8;
  wick_q8_add8_params q;
  memset(&q, 0, sizeof q);
  if (k == NULL || k->add8 == NULL || k->add8_rescaled == NULL || p->output_shift < -31 ||
      !wick_q8_rescale8_make(p->input1_offset, p->input1_multiplier, p->input1_shift, p->left_shift,
                             u8, &q.in[0]) ||
      !wick_q8_rescale8_make(p->input2_offset, p->input2_multiplier, p->input2_shift, p->left_shift,
                             u8, &q.in[1]))
    return WICK_OK;
  q.u8 = u8;
  q.output_multiplier = p->output_multiplier;
  q.output_shift = p->output_shift;
  q.output_offset = p->output_offset;
  q.act_min = p->act_min;
  q.act_max = p->act_max;
  q.subtract = d->subtract;
  d->a8 = q;
  d->a8r[0] = q; /* bytes are input 0: T0(a) + (-)T1(b) */
  d->a8r[0].subtract = false;
  d->a8r[1] = q; /* bytes are input 1: T0(a) +- T1(b) with the kernel's operand input 1 */
  d->a8r[1].in[0] = q.in[1];
  if (!kernel_shapes(a, b, &d->row, &d->row_is_a) &&
      (!wick_f32_binary_plan_make(&d->bc, &d->plan) || d->plan.dims[2] < QBIN_MIN_INNER))
    return WICK_OK; /* the reference */
  d->rescaled = wick_op_alloc(ctx, 2 * sizeof *d->rescaled);
  if (d->rescaled == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t byte = 0; byte < 256; byte++) {
    const int32_t v = u8 ? byte : (int32_t)(int8_t)byte;
    const int32_t x1 = (int32_t)((uint32_t)(v + p->input1_offset) << p->left_shift);
    const int32_t x2 = (int32_t)((uint32_t)(v + p->input2_offset) << p->left_shift);
    d->rescaled[0][byte] =
        wick_q_multiply_by_quantized_multiplier(x1, p->input1_multiplier, p->input1_shift);
    const int32_t t2 =
        wick_q_multiply_by_quantized_multiplier(x2, p->input2_multiplier, p->input2_shift);
    d->rescaled[1][byte] = d->subtract ? (int32_t)(0u - (uint32_t)t2) : t2;
  }
  d->planned = d->row == 0 && !same_shape(a, b);
  if (d->row > 1) {
    const size_t row = (size_t)d->row;
    d->tile = row >= QBIN_TILE ? row : QBIN_TILE / row * row;
    size_t bytes;
    if (!wick_add_size(d->tile, row, &bytes) || !wick_mul_size(bytes, sizeof(int32_t), &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "broadcast row too long");
    const size_t side = d->row_is_a ? 0 : 1;
    if (wick_input_known(ctx, side)) {
      d->row32 = wick_op_alloc(ctx, bytes);
      if (d->row32 == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
      const uint8_t *r = wick_op_input(ctx, side)->data;
      for (size_t i = 0; i < d->tile + row; i++) d->row32[i] = d->rescaled[side][r[i % row]];
    } else {
      wick_op_request_scratch(ctx, bytes);
    }
  }
  d->kern = k;
  d->add8 = true;
  return WICK_OK;
}

/* int8 SQUARED_DIFFERENCE's parameters, as LiteRT: twice the larger input
 * scale in float, the ratios in double, every multiplier below 1. */
static wick_status squared_difference_params(const wick_op_ctx *ctx, wick_qparams q1,
                                             wick_qparams q2, wick_qparams qo,
                                             wick_qadd_params *p) {
  p->left_shift = 7;
  const double twice_max = (double)(2.0f * (q1.scale > q2.scale ? q1.scale : q2.scale));
  const double real1 = (double)q1.scale / twice_max, real2 = (double)q2.scale / twice_max;
  const double real_out = twice_max * twice_max / (double)((float)(1 << 14) * qo.scale);
  WICK_TRY(
      wick_quant_multiplier(ctx, real1, 0, "input 0", &p->input1_multiplier, &p->input1_shift));
  WICK_TRY(
      wick_quant_multiplier(ctx, real2, 0, "input 1", &p->input2_multiplier, &p->input2_shift));
  WICK_TRY(wick_quant_multiplier(ctx, real_out, 0, "the output", &p->output_multiplier,
                                 &p->output_shift));
  p->input1_offset = -q1.zero_point;
  p->input2_offset = -q2.zero_point;
  p->output_offset = qo.zero_point;
  p->act_min = INT8_MIN;
  p->act_max = INT8_MAX;
  return WICK_OK;
}

wick_status wick_qmul_params_make(const wick_op_ctx *ctx, wick_qparams q1, wick_qparams q2,
                                  wick_qparams qo, wick_activation act, wick_dtype type,
                                  wick_qmul_params *m) {
  /* float arithmetic, as LiteRT */
  const float real = q1.scale * q2.scale / qo.scale;
  WICK_TRY(wick_quant_multiplier(ctx, (double)real, 30, "the output", &m->output_multiplier,
                                 &m->output_shift));
  m->input1_offset = -q1.zero_point;
  m->input2_offset = -q2.zero_point;
  m->output_offset = qo.zero_point;
  return wick_quant_activation_range(ctx, act, type, qo, &m->act_min, &m->act_max);
}

wick_status wick_binary_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const int32_t builtin = wick_op_builtin(ctx);
  const bool maxmin = builtin == WICK_BUILTIN_MAXIMUM || builtin == WICK_BUILTIN_MINIMUM;
  const bool sqdiff = builtin == WICK_BUILTIN_SQUARED_DIFFERENCE;
  WICK_CHECK_SUPPORTED(ctx,
                       builtin == WICK_BUILTIN_ADD || builtin == WICK_BUILTIN_SUB ||
                           builtin == WICK_BUILTIN_MUL || maxmin ||
                           (sqdiff && a->type == WICK_DTYPE_INT8),
                       "quantized %s inputs are not supported", wick_dtype_name(a->type));
  const wick_dtype t = a->type;
  WICK_CHECK(ctx, b->type == t, "input types differ (%s and %s)", wick_dtype_name(t),
             wick_dtype_name(b->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == t, "output type %s with %s inputs is not supported",
                       wick_dtype_name(out->type), wick_dtype_name(t));
  qbin_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->esize = t == WICK_DTYPE_INT16 ? 2 : 1;
  WICK_TRY(wick_broadcast_shapes(ctx, a, b, &d->bc.rank, d->bc.dims));
  wick_broadcast_strides(a, d->bc.rank, d->bc.dims, d->bc.a_strides);
  wick_broadcast_strides(b, d->bc.rank, d->bc.dims, d->bc.b_strides);

  wick_qparams q1, q2, qo;
  WICK_TRY(wick_quant_params(ctx, a, "input 0", false, &q1));
  WICK_TRY(wick_quant_params(ctx, b, "input 1", false, &q2));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  if (t == WICK_DTYPE_INT16)
    WICK_CHECK_SUPPORTED(ctx, q1.zero_point == 0 && q2.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
  if (maxmin) {
    /* Raw comparisons, as LiteRT: only valid when nothing needs requantizing. */
    WICK_CHECK_SUPPORTED(ctx,
                         q1.scale == qo.scale && q2.scale == qo.scale &&
                             q1.zero_point == qo.zero_point && q2.zero_point == qo.zero_point,
                         "inputs quantized differently from the output are not supported");
    d->kind = QB_MAXMIN;
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(t));
    wick_op_set_data(ctx, d);
    return wick_op_set_output(ctx, 0, t, d->bc.rank, d->bc.dims);
  }
  int32_t lo = 0, hi = 0; /* (SQUARED_DIFFERENCE has no fused activation) */
  if (!sqdiff) WICK_TRY(wick_quant_activation_range(ctx, ctx->params->activation, t, qo, &lo, &hi));
  d->subtract = builtin == WICK_BUILTIN_SUB;

  if (sqdiff) {
    WICK_TRY(squared_difference_params(ctx, q1, q2, qo, &d->add));
    d->kind = QB_SQUARED_DIFFERENCE;
    const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
    WICK_TRY(use_kernels(ctx, d, a, b, k != NULL && k->squared_difference != NULL));
  } else if (builtin == WICK_BUILTIN_MUL) {
    d->kind = QB_MUL;
    WICK_TRY(wick_qmul_params_make(ctx, q1, q2, qo, ctx->params->activation, t, &d->mul));
    const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
    d->u8 = t == WICK_DTYPE_UINT8;
    WICK_TRY(use_kernels(ctx, d, a, b,
                         k != NULL && (t == WICK_DTYPE_INT8    ? k->mul != NULL
                                       : t == WICK_DTYPE_UINT8 ? k->mul_u8 != NULL
                                                               : k->mul16 != NULL)));
  } else {
    int32_t l1, l2, lout;
    bool pot = t == WICK_DTYPE_INT16 && ctx->params->pot_scale_int16 &&
               wick_quant_checked_log2(q1.scale, &l1) && wick_quant_checked_log2(q2.scale, &l2) &&
               wick_quant_checked_log2(qo.scale, &lout);
    if (pot) {
      d->kind = QB_ADD_POT;
      d->pot_shift1 = l1 - lout;
      d->pot_shift2 = l2 - lout;
      WICK_CHECK_SUPPORTED(ctx,
                           (d->pot_shift1 == 0 || d->pot_shift2 == 0) && d->pot_shift1 <= 0 &&
                               d->pot_shift2 <= 0 && d->pot_shift1 >= -15 && d->pot_shift2 >= -15,
                           "power-of-two int16 scales need one input on the output's scale and "
                           "the other at most 2^15 finer (shifts %d, %d)",
                           (int)d->pot_shift1, (int)d->pot_shift2);
      if (!d->subtract)
        WICK_CHECK_SUPPORTED(ctx, same_shape(a, b),
                             "int16 ADD with power-of-two scales needs inputs of equal shapes");
      d->add.act_min = lo;
      d->add.act_max = hi;
    } else {
      d->kind = QB_ADD;
      wick_qadd_params *p = &d->add;
      p->left_shift = t == WICK_DTYPE_INT16 ? 15 : 20;
      const double twice_max = (double)(2.0f * (q1.scale > q2.scale ? q1.scale : q2.scale));
      const double real1 = (double)q1.scale / twice_max, real2 = (double)q2.scale / twice_max;
      const double real_out = twice_max / (double)((float)(1 << p->left_shift) * qo.scale);
      WICK_TRY(
          wick_quant_multiplier(ctx, real1, 0, "input 0", &p->input1_multiplier, &p->input1_shift));
      WICK_TRY(
          wick_quant_multiplier(ctx, real2, 0, "input 1", &p->input2_multiplier, &p->input2_shift));
      WICK_TRY(wick_quant_multiplier(ctx, real_out, 30, "the output", &p->output_multiplier,
                                     &p->output_shift));
      p->input1_offset = -q1.zero_point;
      p->input2_offset = -q2.zero_point;
      p->output_offset = qo.zero_point;
      p->act_min = lo;
      p->act_max = hi;
      const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
      if (t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8) WICK_TRY(use_add8(ctx, d, a, b, k, t));
      if (!d->add8 && (t == WICK_DTYPE_INT8 || t == WICK_DTYPE_INT16))
        WICK_TRY(
            use_kernels(ctx, d, a, b,
                        k != NULL && (t == WICK_DTYPE_INT8 ? k->add != NULL : k->add16 != NULL)));
    }
  }
  if (d->add8)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED,
                       t == WICK_DTYPE_UINT8
                           ? (d->planned ? "u8 add8 broadcast runs"
                                         : (d->row > 0 ? "u8 add8 broadcast row" : "u8 add8"))
                           : (d->planned ? "q8 add8 broadcast runs"
                                         : (d->row > 0 ? "q8 add8 broadcast row" : "q8 add8")));
  else if (d->kern != NULL && d->esize == 2)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED,
                       d->planned ? "q16 broadcast runs"
                                  : (d->row > 0 ? "q16 broadcast row" : "q16"));
  else if (d->kern != NULL && d->u8)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED,
                       d->planned ? "u8 broadcast runs" : (d->row > 0 ? "u8 broadcast row" : "u8"));
  else if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED,
                       d->planned ? "q8 broadcast runs" : (d->row > 0 ? "q8 broadcast row" : "q8"));
  else if (sqdiff) { /* why: no kernel on this CPU ("int8"), or a broadcast it does not take */
    const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       k != NULL && k->squared_difference != NULL ? "broadcast" : "int8");
  } else /* why: int16 or uint8, or a broadcast the kernels do not take */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       t == WICK_DTYPE_INT8 ? "broadcast" : wick_dtype_name(t));
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, t, d->bc.rank, d->bc.dims);
}

/* int8 / int16 ADD / SUB / MUL by the fast kernels, split over the threads in
 * 64-aligned chunks (integer math: every element comes out the same in any
 * chunk). A broadcast row is read from the tile (the row repeated, plus one
 * more row), starting at the chunk's phase in the row. Pointers are bytes;
 * elements d->esize bytes. */
typedef struct qbin_job {
  const qbin_data *d;
  const uint8_t *a, *b;
  uint8_t *tile, *out;
} qbin_job;

/* out[0, n) = a op b on the kernel of the op's type. */
static void call_kernel(const qbin_data *d, size_t n, const void *a, const void *b, void *out) {
  if (d->kind == QB_SQUARED_DIFFERENCE) {
    d->kern->squared_difference(n, a, b, out, &d->add);
  } else if (d->esize == 2) {
    if (d->kind == QB_MUL)
      d->kern->mul16(n, a, b, out, &d->mul);
    else
      d->kern->add16(n, a, b, out, &d->add, d->subtract);
  } else {
    if (d->kind == QB_MUL && d->u8)
      d->kern->mul_u8(n, a, b, out, &d->mul);
    else if (d->kind == QB_MUL)
      d->kern->mul(n, a, b, out, &d->mul);
    else
      d->kern->add(n, a, b, out, &d->add, d->subtract);
  }
}

static void qbin_elements(void *arg, size_t e0, size_t e1) {
  const qbin_job *j = arg;
  const qbin_data *d = j->d;
  const size_t es = d->esize;
  for (size_t e = e0; e < e1;) {
    size_t n = e1 - e;
    const uint8_t *pa = j->a + e * es, *pb = j->b + e * es;
    if (d->row > 0) {
      if (n > d->tile) n = d->tile;
      const uint8_t *t = j->tile + e % (size_t)d->row * es;
      if (d->row_is_a)
        pa = t;
      else
        pb = t;
    }
    call_kernel(d, n, pa, pb, j->out + e * es);
    e += n;
  }
}

/* Inner runs [begin, end) of a planned broadcast (run u: outer indices u / dims[1], u % dims[1]);
 * a broadcast scalar is splatted into this thread's row of the scratch. */
static void qbin_runs(void *arg, size_t begin, size_t end, size_t thread) {
  const qbin_job *j = arg;
  const qbin_data *d = j->d;
  const wick_f32_binary_plan *p = &d->plan;
  const size_t inner = p->dims[2], es = d->esize;
  uint8_t *splat = j->tile + thread * d->splat_bytes;
  for (size_t u = begin; u < end; u++) {
    const size_t i = u / p->dims[1], k = u % p->dims[1];
    const uint8_t *pa = j->a + (i * p->a_strides[0] + k * p->a_strides[1]) * es;
    const uint8_t *pb = j->b + (i * p->b_strides[0] + k * p->b_strides[1]) * es;
    if (p->form != WICK_F32_VV) { /* splat the broadcast operand's scalar over the run */
      const uint8_t *scalar = p->form == WICK_F32_VS ? pb : pa;
      if (es == 1) {
        memset(splat, *scalar, inner);
      } else {
        int16_t v, *row = (int16_t *)(void *)splat;
        memcpy(&v, scalar, sizeof v);
        for (size_t c = 0; c < inner; c++) row[c] = v;
      }
      if (p->form == WICK_F32_VS)
        pb = splat;
      else
        pa = splat;
    }
    call_kernel(d, inner, pa, pb, j->out + u * inner * es);
  }
}

static wick_status run_kernels(const wick_op_ctx *ctx, const qbin_data *d, const void *a,
                               const void *b, void *out, size_t total) {
  if (d->planned) {
    qbin_job j = {d, a, b, d->splat_bytes ? wick_op_scratch(ctx) : NULL, out};
    return wick_parallel_range(ctx, d->plan.dims[0] * d->plan.dims[1], d->plan.dims[2] * 16,
                               qbin_runs, &j);
  }
  uint8_t *tile = NULL;
  if (d->row > 0) {
    const uint8_t *row = d->row_is_a ? a : b;
    const size_t es = d->esize;
    tile = wick_op_scratch(ctx);
    /* the row, then the filled part doubled until tile + row elements (whole rows each time) */
    const size_t row_bytes = (size_t)d->row * es, bytes = (d->tile + (size_t)d->row) * es;
    memcpy(tile, row, row_bytes);
    for (size_t filled = row_bytes; filled < bytes;) {
      const size_t n = filled <= bytes - filled ? filled : bytes - filled;
      memcpy(tile + filled, tile, n);
      filled += n;
    }
  }
  qbin_job j = {d, a, b, tile, out};
  return wick_parallel_elements(ctx, total, qbin_elements, &j);
}

/* ---- the add8 kernels: elements split over the threads as run_kernels' ---- */

typedef struct add8_job {
  const qbin_data *d;
  const uint8_t *a, *b;
  const int32_t *r; /* the rescaled row's tile (row > 1) or scalar (row 1) */
  uint8_t *out;
} add8_job;

static void add8_elements(void *arg, size_t e0, size_t e1) {
  const add8_job *j = arg;
  const qbin_data *d = j->d;
  if (d->row == 0) {
    d->kern->add8(e1 - e0, j->a + e0, j->b + e0, j->out + e0, &d->a8);
    return;
  }
  const uint8_t *full = d->row_is_a ? j->b : j->a;
  const wick_q8_add8_params *p = &d->a8r[d->row_is_a ? 1 : 0];
  if (d->row == 1) {
    d->kern->add8_rescaled(e1 - e0, full + e0, j->r, 0, j->out + e0, p);
    return;
  }
  for (size_t e = e0; e < e1;) {
    const size_t n = e1 - e < d->tile ? e1 - e : d->tile;
    d->kern->add8_rescaled(n, full + e, j->r + e % (size_t)d->row, 1, j->out + e, p);
    e += n;
  }
}

/* Inner runs [begin, end) of a planned broadcast, as qbin_runs; a broadcast scalar is looked up
 * rescaled. */
static void add8_runs(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const add8_job *j = arg;
  const qbin_data *d = j->d;
  const wick_f32_binary_plan *p = &d->plan;
  const size_t inner = p->dims[2];
  for (size_t u = begin; u < end; u++) {
    const size_t i = u / p->dims[1], k = u % p->dims[1];
    const uint8_t *pa = j->a + i * p->a_strides[0] + k * p->a_strides[1];
    const uint8_t *pb = j->b + i * p->b_strides[0] + k * p->b_strides[1];
    uint8_t *out = j->out + u * inner;
    if (p->form == WICK_F32_VV) {
      d->kern->add8(inner, pa, pb, out, &d->a8);
    } else if (p->form == WICK_F32_VS) {
      const int32_t r = d->rescaled[1][*pb];
      d->kern->add8_rescaled(inner, pa, &r, 0, out, &d->a8r[0]);
    } else {
      const int32_t r = d->rescaled[0][*pa];
      d->kern->add8_rescaled(inner, pb, &r, 0, out, &d->a8r[1]);
    }
  }
}

static wick_status run_add8(const wick_op_ctx *ctx, const qbin_data *d, const void *a,
                            const void *b, void *out, size_t total) {
  add8_job j = {d, a, b, NULL, out};
  if (d->planned)
    return wick_parallel_range(ctx, d->plan.dims[0] * d->plan.dims[1], d->plan.dims[2] * 16,
                               add8_runs, &j);
  int32_t scalar;
  if (d->row == 1) {
    const size_t side = d->row_is_a ? 0 : 1;
    scalar = d->rescaled[side][*(const uint8_t *)(d->row_is_a ? a : b)];
    j.r = &scalar;
  } else if (d->row > 1) {
    if (d->row32 != NULL) {
      j.r = d->row32;
    } else { /* a row computed at run time: rescaled and tiled into the scratch */
      const size_t side = d->row_is_a ? 0 : 1, row = (size_t)d->row;
      const uint8_t *r = d->row_is_a ? a : b;
      int32_t *tile = wick_op_scratch(ctx);
      for (size_t i = 0; i < row; i++) tile[i] = d->rescaled[side][r[i]];
      for (size_t i = row; i < d->tile + row; i++) tile[i] = tile[i - row];
      j.r = tile;
    }
  }
  return wick_parallel_elements(ctx, total, add8_elements, &j);
}

wick_status wick_binary_invoke_quantized(wick_op_ctx *ctx) {
  const qbin_data *d = wick_op_data(ctx);
  wick_tensor *a = wick_op_input(ctx, 0), *b = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  switch (d->kind) {
    case QB_MUL:
      if (d->kern != NULL)
        return run_kernels(ctx, d, a->data, b->data, o->data, (size_t)wick_tensor_elements(o));
      wick_q_mul__reference(a->type, &d->bc, &d->mul, a->data, b->data, o->data);
      break;
    case QB_ADD:
      if (d->add8)
        return run_add8(ctx, d, a->data, b->data, o->data, (size_t)wick_tensor_elements(o));
      if (d->kern != NULL)
        return run_kernels(ctx, d, a->data, b->data, o->data, (size_t)wick_tensor_elements(o));
      wick_q_add__reference(a->type, d->subtract, &d->bc, &d->add, a->data, b->data, o->data);
      break;
    case QB_MAXMIN:
      wick_q_maximum_minimum__reference(a->type, wick_op_builtin(ctx) == WICK_BUILTIN_MAXIMUM,
                                        &d->bc, a->data, b->data, o->data);
      break;
    case QB_SQUARED_DIFFERENCE:
      if (d->kern != NULL)
        return run_kernels(ctx, d, a->data, b->data, o->data, (size_t)wick_tensor_elements(o));
      wick_q_squared_difference_i8__reference(&d->bc, &d->add, a->data, b->data, o->data);
      break;
    case QB_ADD_POT:
      wick_q_add_pot_i16__reference(d->subtract, &d->bc, d->pot_shift1, d->pot_shift2,
                                    d->add.act_min, d->add.act_max, a->data, b->data, o->data);
      break;
  }
  return WICK_OK;
}
