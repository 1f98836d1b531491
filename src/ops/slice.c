/*
 * slice.c — SLICE and STRIDED_SLICE: copy a (strided) box out of the input.
 * Any fixed-size type, any rank up to WICK_MAX_RANK. Both become one
 * wick_copy_plan (strided_copy.c).
 *
 * SLICE(input, begin, size): begin in [0, dim], size -1 (to the end) or
 * begin + size <= dim. Deferred while begin/size are run-time tensors.
 *
 * STRIDED_SLICE(input, begin, end, strides) with begin/end/ellipsis/
 * new_axis/shrink_axis masks and the `offset` option (end is a size counted
 * from begin), following LiteRT's index logic:
 *
 *   1. The spec (n entries) is expanded to "effective" dims: new_axis bits
 *      insert size-1 dims; the one ellipsis expands to the dims the spec
 *      leaves over (LiteRT's count, which gives it at least one dim); dims
 *      past the spec are taken whole.
 *   2. Per dim with stride s != 0: start = begin (+ dim if negative),
 *      clamped to [0, dim] (s > 0) or [-1, dim - 1] (s < 0), begin_mask
 *      overriding it with 0 / dim - 1; end likewise (+ start when offset;
 *      end_mask: dim / -1); count = max(0, ceil((end - start) / s)).
 *   3. shrink_axis takes the single element at start (begin + dim if
 *      negative; begin_mask still selects the first element, as in LiteRT)
 *      and drops the dim.
 *
 * Where LiteRT's result is not well defined wick refuses instead: a
 * shrink index outside [-dim, dim) is an error (LiteRT clamps it or writes
 * nothing), a shrink with a negative stride takes the element at begin
 * (LiteRT writes nothing), and with `offset` a box that runs past the input
 * (LiteRT sizes the output ceil(size / stride) and leaves the tail unwritten)
 * is an error. With `offset` the output shape is ceil(size / stride), known
 * without begin, so a run-time begin is read only at invoke.
 */
#include "format/schema.h"
#include "ops/movement.h"

/* ---------------------------------------------------------------- SLICE */

static wick_status slice_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 1));
  wick_tensor *in, *begin, *size;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &begin));
  WICK_TRY(wick_require_input(ctx, 2, &size));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t nb = 0, ns = 0;
  WICK_TRY(movement_int_vector(ctx, begin, "begin", &nb));
  WICK_TRY(movement_int_vector(ctx, size, "size", &ns));
  WICK_CHECK(ctx, nb == in->rank && ns == in->rank,
             "begin and size need %d entries (the input's rank), not %lld and %lld", in->rank,
             (long long)nb, (long long)ns);
  if (movement_unknown(ctx, begin) || movement_unknown(ctx, size)) return WICK_STATUS_DEFER;
  int64_t in_strides[WICK_MAX_RANK];
  movement_strides(in->rank, in->dims, in_strides);
  wick_copy_plan *p = movement_new_plan(ctx);
  if (p == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int32_t dims[WICK_MAX_RANK];
  p->rank = in->rank;
  for (int32_t i = 0; i < in->rank; i++) {
    int64_t b = wick_read_int(begin, i), s = wick_read_int(size, i), d = in->dims[i];
    WICK_CHECK_VALUE(ctx, b >= 0 && b <= d, "begin[%d] = %lld is outside [0, %lld]", i,
                     (long long)b, (long long)d);
    if (s == -1) s = d - b;
    WICK_CHECK_VALUE(ctx, s >= 0 && s <= d - b,
                     "size[%d] = %lld does not fit dimension %d of size %lld from begin %lld", i,
                     (long long)wick_read_int(size, i), i, (long long)d, (long long)b);
    dims[i] = (int32_t)s;
    p->dims[i] = s;
    p->src_strides[i] = in_strides[i];
    p->src_offset += b * in_strides[i];
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return wick_op_set_output(ctx, 0, in->type, in->rank, dims);
}

/* ---------------------------------------------------------------- STRIDED_SLICE */

typedef struct ss_data {
  wick_copy_plan plan;
  bool ready; /* false: begin was unknown at prepare (offset mode); plan at invoke */
} ss_data;

/* One effective dimension (step 1 of the file comment). */
typedef struct ss_dim {
  int32_t in_axis; /* -1 for an inserted axis */
  bool whole;      /* ellipsis or past the spec: the entire dim */
  int32_t spec;    /* index into begin/end/strides, when !whole and in_axis >= 0 */
  bool begin_mask, end_mask, shrink;
} ss_dim;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* Reads a spec value, clamped far outside any dimension so that the index
 * arithmetic below cannot overflow (results are unchanged: every value is
 * clamped to [-1, dim] anyway). */
static int64_t spec_value(const wick_tensor *t, int32_t i) {
  return clamp64(wick_read_int(t, i), -((int64_t)1 << 40), (int64_t)1 << 40);
}

/* Offset mode: the element count of a box of `size` (the end value) with
 * stride s, i.e. max(0, ceil(size / s)). */
static int64_t box_count(int64_t size, int64_t s) {
  if (s < 0) {
    size = -size;
    s = -s;
  }
  return size > 0 ? (size + s - 1) / s : 0;
}

static int popcount32(uint32_t x) {
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}

/* Expands the spec into effective dims; returns their count in *rank. */
static wick_status ss_expand(wick_op_ctx *ctx, const wick_tensor *in, int32_t n, ss_dim *eff,
                             int32_t *rank) {
  const wick_strided_slice_params *sp = &ctx->params->strided_slice;
  uint32_t low = n >= 32 ? 0xffffffffu : ((1u << n) - 1); /* bits past the spec are ignored */
  uint32_t ellipsis = (uint32_t)sp->ellipsis_mask & low;
  uint32_t new_axis = (uint32_t)sp->new_axis_mask & low;
  WICK_CHECK(ctx, popcount32(ellipsis) <= 1, "ellipsis_mask 0x%x sets more than one bit",
             (unsigned)sp->ellipsis_mask);
  int32_t num_add = popcount32(new_axis & ~ellipsis);
  int32_t e = in->rank + num_add;
  WICK_CHECK(ctx, e <= WICK_MAX_RANK, "the slice has %d dimensions; wick's maximum is %d", e,
             WICK_MAX_RANK);
  WICK_CHECK(ctx, n - (ellipsis ? 1 : 0) <= e,
             "begin/end/strides have %d entries for an input of rank %d", n, in->rank);
  /* Which effective dims the ellipsis covers, and which are new axes. */
  uint32_t eff_ell = 0, eff_new = 0;
  int32_t ell_start = e, expanded = 0;
  for (int32_t i = 0; i < e;) {
    if (ellipsis & (1u << i)) {
      ell_start = i;
      int32_t stop = i + 1 + num_add + in->rank - n;
      if (stop > e) stop = e;
      if (stop < i + 1) stop = i + 1;
      expanded = stop - i - 1;
      for (; i < stop; i++) eff_ell |= 1u << i;
      continue;
    }
    if (i - expanded < 32 && (new_axis & (1u << (i - expanded)))) eff_new |= 1u << i;
    i++;
  }
  int32_t added_ell = 0, added_axes = 0;
  for (int32_t i = 0; i < e; i++) {
    ss_dim *d = &eff[i];
    memset(d, 0, sizeof *d);
    d->in_axis = i - added_axes;
    if (eff_ell & (1u << i)) {
      added_ell = i - ell_start > 0 ? i - ell_start : 0;
      d->whole = true;
    } else if (eff_new & (1u << i)) {
      d->in_axis = -1;
      added_axes++;
    } else if (i >= n + expanded) {
      d->whole = true;
    } else {
      int32_t k = i - added_ell;
      d->spec = k;
      d->begin_mask = (sp->begin_mask >> k) & 1;
      d->end_mask = (sp->end_mask >> k) & 1;
      d->shrink = (sp->shrink_axis_mask >> k) & 1;
    }
    WICK_CHECK(ctx, d->in_axis < in->rank, "the slice spec does not match the input's rank %d",
               in->rank);
  }
  *rank = e;
  return WICK_OK;
}

/* Computes the output shape, and the plan when begin is known. `vstatus` is
 * the status of a bad run-time value. Sets *defer when the shape needs a
 * begin that is not known yet. */
static wick_status ss_compute(wick_op_ctx *ctx, wick_status vstatus, bool have_begin,
                              wick_copy_plan *plan, int32_t *out_rank, int32_t *out_dims,
                              bool *defer) {
  wick_tensor *in = wick_op_input(ctx, 0), *begin = wick_op_input(ctx, 1);
  wick_tensor *end = wick_op_input(ctx, 2), *strides = wick_op_input(ctx, 3);
  bool offset = ctx->params->strided_slice.offset;
  int32_t n = (int32_t)wick_tensor_elements(begin);
  ss_dim eff[WICK_MAX_RANK];
  int32_t e = 0;
  WICK_TRY(ss_expand(ctx, in, n, eff, &e));
  int64_t in_strides[WICK_MAX_RANK];
  movement_strides(in->rank, in->dims, in_strides);
  memset(plan, 0, sizeof *plan);
  plan->rank = e;
  int32_t rank = 0;
  bool empty = false;
  for (int32_t i = 0; i < e; i++) {
    const ss_dim *d = &eff[i];
    int64_t count, start = 0, step = 1;
    if (d->in_axis < 0) {
      count = 1;
    } else if (d->whole) {
      count = in->dims[d->in_axis];
    } else {
      int64_t size = in->dims[d->in_axis];
      int64_t s = spec_value(strides, d->spec);
      if (s == 0) return wick_op_fail(ctx, vstatus, "strides[%d] is 0", d->spec);
      step = s;
      int64_t raw_end = spec_value(end, d->spec);
      if (!have_begin) { /* offset mode: the shape is the box size */
        if (d->shrink) {
          count = 1;
        } else if (d->end_mask) {
          *defer = true;
          return WICK_OK;
        } else {
          count = box_count(raw_end, s);
        }
      } else {
        start = spec_value(begin, d->spec);
        if (start < 0) start += size;
        if (d->shrink && d->begin_mask) start = s > 0 ? 0 : size - 1; /* LiteRT honours it */
        if (d->shrink) {
          if (start < 0 || start >= size)
            return wick_op_fail(ctx, vstatus,
                                "shrink_axis index %lld is outside dimension %d of size %lld",
                                (long long)wick_read_int(begin, d->spec), d->in_axis,
                                (long long)size);
          count = 1;
        } else {
          start = s > 0 ? clamp64(start, 0, size) : clamp64(start, -1, size - 1);
          if (d->begin_mask) start = s > 0 ? 0 : size - 1;
          int64_t stop = offset ? start + raw_end : raw_end;
          if (stop < 0) stop += size;
          stop = s > 0 ? clamp64(stop, 0, size) : clamp64(stop, -1, size - 1);
          if (d->end_mask) stop = s > 0 ? size : -1;
          int64_t span = s > 0 ? stop - start : start - stop, m = s > 0 ? s : -s;
          count = span > 0 ? (span + m - 1) / m : 0;
          if (offset && !d->end_mask && count != box_count(raw_end, s))
            return wick_op_fail(ctx, vstatus,
                                "offset slice of %lld from begin %lld does not fit dimension %d "
                                "of size %lld",
                                (long long)raw_end, (long long)wick_read_int(begin, d->spec),
                                d->in_axis, (long long)size);
        }
      }
    }
    if (count == 0) empty = true;
    plan->dims[i] = count;
    if (d->in_axis >= 0) {
      /* |step| < size whenever count > 1, so the product cannot overflow. */
      plan->src_strides[i] = count > 1 ? step * in_strides[d->in_axis] : 0;
      plan->src_offset += start * in_strides[d->in_axis];
    }
    if (!d->shrink) {
      WICK_CHECK(ctx, count <= INT32_MAX, "output dimension overflows");
      out_dims[rank++] = (int32_t)count;
    }
  }
  if (empty) plan->src_offset = 0;
  *out_rank = rank;
  wick_copy_plan_dense_dst(plan);
  wick_copy_plan_simplify(plan);
  return WICK_OK;
}

static wick_status strided_slice_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 4, 4, 1));
  wick_tensor *in, *begin, *end, *strides;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &begin));
  WICK_TRY(wick_require_input(ctx, 2, &end));
  WICK_TRY(wick_require_input(ctx, 3, &strides));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t nb = 0, ne = 0, ns = 0;
  WICK_TRY(movement_int_vector(ctx, begin, "begin", &nb));
  WICK_TRY(movement_int_vector(ctx, end, "end", &ne));
  WICK_TRY(movement_int_vector(ctx, strides, "strides", &ns));
  WICK_CHECK(ctx, nb == ne && ne == ns,
             "begin, end and strides differ in length (%lld, %lld, %lld)", (long long)nb,
             (long long)ne, (long long)ns);
  WICK_CHECK(ctx, nb <= 2 * WICK_MAX_RANK, "begin has %lld entries", (long long)nb);
  bool offset = ctx->params->strided_slice.offset;
  if (movement_unknown(ctx, end) || movement_unknown(ctx, strides) ||
      (movement_unknown(ctx, begin) && !offset))
    return WICK_STATUS_DEFER;
  ss_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_op_set_data(ctx, d);
  int32_t rank = 0, dims[WICK_MAX_RANK];
  bool defer = false;
  d->ready = !movement_unknown(ctx, begin);
  WICK_TRY(ss_compute(ctx, movement_value_status(ctx), d->ready, &d->plan, &rank, dims, &defer));
  if (defer) return WICK_STATUS_DEFER;
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

static wick_status strided_slice_invoke(wick_op_ctx *ctx) {
  ss_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (!d->ready) {
    /* begin was not reliable at prepare (offset mode with a run-time or
     * variable begin): the shape was fixed then; the box must still fit. */
    int32_t rank = 0, dims[WICK_MAX_RANK];
    bool defer = false;
    WICK_TRY(ss_compute(ctx, WICK_ERR_INVALID_INPUT, true, &d->plan, &rank, dims, &defer));
    bool same = rank == out->rank;
    for (int32_t i = 0; same && i < rank; i++) same = dims[i] == out->dims[i];
    if (!same)
      return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                          "begin changes the output shape fixed at prepare");
  }
  if (out->bytes == 0) return WICK_OK;
  wick_strided_copy__reference(wick_dtype_size(in->type), &d->plan, in->data, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_slice = {"SLICE",       WICK_BUILTIN_SLICE, 7,
                                   slice_prepare, movement_run_plan,  0};
const wick_op_def wick_op_strided_slice = {
    "STRIDED_SLICE",       WICK_BUILTIN_STRIDED_SLICE, 8,
    strided_slice_prepare, strided_slice_invoke,       WICK_OP_REFERENCE_KERNELS};
