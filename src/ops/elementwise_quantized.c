/*
 * elementwise_quantized.c — quantized ADD, SUB and MUL (int8, uint8, int16),
 * with numpy broadcasting and fused activations, and MAXIMUM / MINIMUM on
 * the raw values (operands quantized like the output).
 *
 * Reached from elementwise_binary.c when input 0 is a quantized activation.
 * Both inputs and the output share one type; int16 requires zero points 0.
 * Parameters as LiteRT (FORMAT.md):
 *   ADD/SUB  inputs shifted left 20 bits (15 for int16), scaled by
 *            s_i / (2 max(s1, s2)), summed, requantized by
 *            2 max(s1, s2) / (2^shift s_out) — the last product in float.
 *            int16 with pot_scale_int16 (the default) and power-of-two scales
 *            takes LiteRT's LSTM path instead: a rounding right shift of one
 *            input and a saturating add (ADD needs equal shapes there, as
 *            LiteRT's kernel).
 *   MUL      (a - z1)(b - z2) requantized by s1 s2 / s_out, computed in float.
 * int8 ADD/SUB of equally shaped inputs, and int8 MUL of equal shapes or of
 * a full tensor by a row of its last dimension (squeeze-excite's channel
 * scale), run the optimized kernels of src/kernels/q8.h when the CPU has
 * them (bit-exact with the reference).
 * Next: src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef enum qbin_kind { QB_ADD, QB_ADD_POT, QB_MUL, QB_MAXMIN } qbin_kind;

typedef struct qbin_data {
  wick_broadcast bc;
  qbin_kind kind;
  bool subtract;
  wick_qadd_params add;
  wick_qmul_params mul;
  int32_t pot_shift1, pot_shift2;
  const wick_q8_kernels *kern; /* int8 fast paths; NULL: reference */
  int64_t row;                 /* MUL: elements per kernel call (a row when broadcasting) */
  bool row_is_a;               /* MUL: input 0 is the broadcast row */
} qbin_data;

static bool same_shape(const wick_tensor *a, const wick_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* int8 MUL shapes the optimized kernel takes: equal shapes (row = all), or
 * one operand with only 1s before its last dimension, whose size matches the
 * other operand's last dimension (row = that size). */
static bool mul_rows(const wick_tensor *a, const wick_tensor *b, int64_t *row, bool *row_is_a) {
  *row_is_a = false;
  if (same_shape(a, b)) {
    *row = wick_tensor_elements(a);
    return *row > 0;
  }
  for (int side = 0; side < 2; side++) {
    const wick_tensor *r = side ? a : b, *full = side ? b : a;
    if (r->rank < 1 || full->rank < r->rank || full->rank < 1) continue;
    bool ok = r->dims[r->rank - 1] == full->dims[full->rank - 1];
    for (int32_t i = 0; i + 1 < r->rank; i++) ok = ok && r->dims[i] == 1;
    if (ok && r->dims[r->rank - 1] > 0) {
      *row = r->dims[r->rank - 1];
      *row_is_a = side == 1;
      return true;
    }
  }
  return false;
}

wick_status wick_binary_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const int32_t builtin = ctx->node->op->builtin;
  const bool maxmin = builtin == WICK_BUILTIN_MAXIMUM || builtin == WICK_BUILTIN_MINIMUM;
  WICK_CHECK_SUPPORTED(ctx,
                       builtin == WICK_BUILTIN_ADD || builtin == WICK_BUILTIN_SUB ||
                           builtin == WICK_BUILTIN_MUL || maxmin,
                       "quantized %s inputs are not supported", wick_dtype_name(a->type));
  const wick_dtype t = a->type;
  WICK_CHECK(ctx, b->type == t, "input types differ (%s and %s)", wick_dtype_name(t),
             wick_dtype_name(b->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == t, "output type %s with %s inputs is not supported",
                       wick_dtype_name(out->type), wick_dtype_name(t));
  qbin_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
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
    ctx->node->user_data = d;
    return wick_op_set_output(ctx, 0, t, d->bc.rank, d->bc.dims);
  }
  int32_t lo, hi;
  WICK_TRY(wick_quant_activation_range(ctx, ctx->params->activation, t, qo, &lo, &hi));
  d->subtract = builtin == WICK_BUILTIN_SUB;

  if (builtin == WICK_BUILTIN_MUL) {
    d->kind = QB_MUL;
    wick_qmul_params *m = &d->mul;
    /* float arithmetic, as LiteRT */
    const float real = q1.scale * q2.scale / qo.scale;
    WICK_TRY(wick_quant_multiplier(ctx, (double)real, 30, "the output", &m->output_multiplier,
                                   &m->output_shift));
    m->input1_offset = -q1.zero_point;
    m->input2_offset = -q2.zero_point;
    m->output_offset = qo.zero_point;
    m->act_min = lo;
    m->act_max = hi;
    if (t == WICK_DTYPE_INT8 && mul_rows(a, b, &d->row, &d->row_is_a)) {
      const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
      d->kern = k && k->mul ? k : NULL;
    }
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
                               d->pot_shift2 <= 0 && d->pot_shift1 >= -15 &&
                               d->pot_shift2 >= -15,
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
      WICK_TRY(wick_quant_multiplier(ctx, real1, 0, "input 0", &p->input1_multiplier,
                                     &p->input1_shift));
      WICK_TRY(wick_quant_multiplier(ctx, real2, 0, "input 1", &p->input2_multiplier,
                                     &p->input2_shift));
      WICK_TRY(wick_quant_multiplier(ctx, real_out, 30, "the output", &p->output_multiplier,
                                     &p->output_shift));
      p->input1_offset = -q1.zero_point;
      p->input2_offset = -q2.zero_point;
      p->output_offset = qo.zero_point;
      p->act_min = lo;
      p->act_max = hi;
      if (t == WICK_DTYPE_INT8 && same_shape(a, b)) {
        const wick_q8_kernels *k = wick_q8_kernels_select(wick_op_force_reference(ctx));
        d->kern = k && k->add ? k : NULL;
      }
    }
  }
  ctx->node->user_data = d;
  return wick_op_set_output(ctx, 0, t, d->bc.rank, d->bc.dims);
}

/* An int8 ADD of two same-shape tensors by the fast kernel, split over the
 * threads in 64-aligned chunks (integer math: every element comes out the
 * same in any chunk). */
typedef struct qadd_job {
  const qbin_data *d;
  const int8_t *a, *b;
  int8_t *out;
} qadd_job;

static void qadd_elements(void *arg, size_t e0, size_t e1) {
  const qadd_job *j = arg;
  j->d->kern->add(e1 - e0, j->a + e0, j->b + e0, j->out + e0, &j->d->add, j->d->subtract);
}

wick_status wick_binary_invoke_quantized(wick_op_ctx *ctx) {
  const qbin_data *d = ctx->node->user_data;
  wick_tensor *a = wick_op_input(ctx, 0), *b = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  switch (d->kind) {
    case QB_MUL:
      if (d->kern != NULL) {
        const int64_t total = wick_tensor_elements(o);
        const int8_t *x = a->data, *y = b->data;
        int8_t *z = o->data;
        for (int64_t i = 0; i < total; i += d->row) {
          const int8_t *pa = x + i, *pb = y + i;
          if (d->row != total) {
            if (d->row_is_a)
              pa = x;
            else
              pb = y;
          }
          d->kern->mul((size_t)d->row, pa, pb, z + i, &d->mul);
        }
        break;
      }
      wick_q_mul__reference(a->type, &d->bc, &d->mul, a->data, b->data, o->data);
      break;
    case QB_ADD:
      if (d->kern != NULL) {
        qadd_job j = {d, a->data, b->data, o->data};
        return wick_parallel_elements(ctx, (size_t)wick_tensor_elements(o), qadd_elements, &j);
      }
      wick_q_add__reference(a->type, d->subtract, &d->bc, &d->add, a->data, b->data, o->data);
      break;
    case QB_MAXMIN:
      wick_q_maximum_minimum__reference(a->type, ctx->node->op->builtin == WICK_BUILTIN_MAXIMUM,
                                        &d->bc, a->data, b->data, o->data);
      break;
    case QB_ADD_POT:
      wick_q_add_pot_i16__reference(d->subtract, &d->bc, d->pot_shift1, d->pot_shift2,
                                    d->add.act_min, d->add.act_max, a->data, b->data, o->data);
      break;
  }
  return WICK_OK;
}
