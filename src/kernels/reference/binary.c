/*
 * binary.c — reference elementwise binary kernels with numpy broadcasting.
 *
 * Iteration: the output is walked in row-major order with an index counter
 * over all but the innermost dimension; each operand's offset advances by its
 * stride (0 on a broadcast dimension). The float32 formula of each arithmetic
 * op and the formula of each comparison and logical op is its KERNEL in
 * binary_ops.inc (the record each op is derived from). The integer
 * arithmetic (INT_APPLY) is written here:
 *   DIV, FLOOR_DIV  truncating / flooring; FLOOR_MOD  the sign of b
 *   POW             repeated squaring, 0 for a negative exponent
 *   overflow        wraps (two's complement)
 * and so are BITWISE_XOR (on the bit pattern) and ATAN2 (atan2(y, x), same
 * shapes).
 */
#include <math.h>

#include "kernels/reference/reference.h"

/* Calls BODY(ia, ib, io) for every output element. */
#define BROADCAST_LOOP(bc, BODY)                                                                \
  do {                                                                                          \
    int32_t r_ = (bc)->rank;                                                                    \
    if (r_ == 0) {                                                                              \
      BODY(0, 0, 0);                                                                            \
      break;                                                                                    \
    }                                                                                           \
    int64_t idx_[WICK_MAX_RANK] = {0};                                                          \
    int64_t inner_ = (bc)->dims[r_ - 1];                                                        \
    int64_t sa_ = (bc)->a_strides[r_ - 1], sb_ = (bc)->b_strides[r_ - 1];                       \
    int64_t outer_ = 1;                                                                         \
    for (int32_t d_ = 0; d_ < r_ - 1; d_++) outer_ *= (bc)->dims[d_];                           \
    if (inner_ == 0) break;                                                                     \
    int64_t io_ = 0;                                                                            \
    for (int64_t o_ = 0; o_ < outer_; o_++) {                                                   \
      int64_t ba_ = 0, bb_ = 0;                                                                 \
      for (int32_t d_ = 0; d_ < r_ - 1; d_++) {                                                 \
        ba_ += idx_[d_] * (bc)->a_strides[d_];                                                  \
        bb_ += idx_[d_] * (bc)->b_strides[d_];                                                  \
      }                                                                                         \
      for (int64_t i_ = 0; i_ < inner_; i_++, io_++) BODY(ba_ + i_ * sa_, bb_ + i_ * sb_, io_); \
      for (int32_t d_ = r_ - 2; d_ >= 0; d_--) {                                                \
        if (++idx_[d_] < (bc)->dims[d_]) break;                                                 \
        idx_[d_] = 0;                                                                           \
      }                                                                                         \
    }                                                                                           \
  } while (0)

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* FLOOR_MOD: the remainder with the sign of the divisor. */
static float floor_mod(float x, float y) {
  float m = fmodf(x, y);
  if (m != 0.0f && ((m < 0.0f) != (y < 0.0f))) m += y;
  return m;
}

static float f32_apply(wick_binary_op op, float x, float y) {
  switch (op) {
#define WICK_BINARY_F32(NAME, name, KERNEL, ...) \
  case WICK_BINARY_##NAME: return KERNEL;
    /* one case per arithmetic record */
#include "kernels/reference/binary_ops.inc"
  }
  return 0.0f;
}

/* Element count when a and b are both laid out exactly like the output (no
 * broadcasting), else -1. */
static int64_t same_layout_count(const wick_broadcast *bc) {
  int64_t n = 1;
  for (int32_t d = bc->rank - 1; d >= 0; d--) {
    if (bc->dims[d] != 1 && (bc->a_strides[d] != n || bc->b_strides[d] != n)) return -1;
    n *= bc->dims[d];
  }
  return n;
}

/* Same-shape ADD/SUB/MUL/MAXIMUM/MINIMUM, written as plain loops the compiler
 * vectorizes (the residual adds of ResNets and MobileNets). Results equal the
 * generic loop's bit for bit: same operations, same order. */
static bool f32_binary_flat(wick_binary_op op, int64_t n, const float *a, const float *b,
                            float *out, float lo, float hi) {
  switch (op) {
    case WICK_BINARY_ADD:
      for (int64_t i = 0; i < n; i++) out[i] = clampf(a[i] + b[i], lo, hi);
      return true;
    case WICK_BINARY_SUB:
      for (int64_t i = 0; i < n; i++) out[i] = clampf(a[i] - b[i], lo, hi);
      return true;
    case WICK_BINARY_MUL:
      for (int64_t i = 0; i < n; i++) out[i] = clampf(a[i] * b[i], lo, hi);
      return true;
    default: return false;
  }
}

void wick_f32_binary__reference(wick_binary_op op, const wick_broadcast *bc, const float *a,
                                const float *b, float *out, float lo, float hi) {
  int64_t n = same_layout_count(bc);
  if (n >= 0 && f32_binary_flat(op, n, a, b, out, lo, hi)) return;
#define F32_BODY(ia, ib, io) out[io] = clampf(f32_apply(op, a[ia], b[ib]), lo, hi)
  BROADCAST_LOOP(bc, F32_BODY);
#undef F32_BODY
}

/* Integer ops compute in unsigned arithmetic where C would overflow. */
#define INT_APPLY(NAME, T, UT, TMIN)                   \
  static T NAME(wick_binary_op op, T x, T y) {         \
    switch (op) {                                      \
      case WICK_BINARY_ADD: return (T)((UT)x + (UT)y); \
      case WICK_BINARY_SUB: return (T)((UT)x - (UT)y); \
      case WICK_BINARY_MUL: return (T)((UT)x * (UT)y); \
      case WICK_BINARY_DIV:                            \
        if (y == 0) return 0;                          \
        if (x == TMIN && y == -1) return TMIN;         \
        return x / y;                                  \
      case WICK_BINARY_MAXIMUM: return x > y ? x : y;  \
      case WICK_BINARY_MINIMUM: return x < y ? x : y;  \
      case WICK_BINARY_POW: {                          \
        if (y < 0) return 0;                           \
        UT r = 1, base = (UT)x;                        \
        for (T e = y; e > 0; e >>= 1) {                \
          if (e & 1) r *= base;                        \
          base *= base;                                \
        }                                              \
        return (T)r;                                   \
      }                                                \
      case WICK_BINARY_SQUARED_DIFFERENCE: {           \
        UT d = (UT)x - (UT)y;                          \
        return (T)(d * d);                             \
      }                                                \
      case WICK_BINARY_FLOOR_DIV: {                    \
        if (y == 0) return 0;                          \
        if (x == TMIN && y == -1) return TMIN;         \
        T q = x / y;                                   \
        if ((x % y != 0) && ((x < 0) != (y < 0))) q--; \
        return q;                                      \
      }                                                \
      case WICK_BINARY_FLOOR_MOD: {                    \
        if (y == 0 || y == -1) return 0;               \
        T m = x % y;                                   \
        if (m != 0 && ((m < 0) != (y < 0))) m += y;    \
        return m;                                      \
      }                                                \
      default: break; /* float-only ops (TYPES F32) */ \
    }                                                  \
    return 0;                                          \
  }

INT_APPLY(i32_apply, int32_t, uint32_t, INT32_MIN)
INT_APPLY(i64_apply, int64_t, uint64_t, INT64_MIN)

void wick_i32_binary__reference(wick_binary_op op, const wick_broadcast *bc, const int32_t *a,
                                const int32_t *b, int32_t *out, int32_t lo, int32_t hi) {
#define I32_BODY(ia, ib, io)                      \
  do {                                            \
    int32_t v_ = i32_apply(op, a[ia], b[ib]);     \
    out[io] = v_ < lo ? lo : (v_ > hi ? hi : v_); \
  } while (0)
  BROADCAST_LOOP(bc, I32_BODY);
#undef I32_BODY
}

void wick_i64_binary__reference(wick_binary_op op, const wick_broadcast *bc, const int64_t *a,
                                const int64_t *b, int64_t *out) {
#define I64_BODY(ia, ib, io) out[io] = i64_apply(op, a[ia], b[ib])
  BROADCAST_LOOP(bc, I64_BODY);
#undef I64_BODY
}

void wick_c64_mul__reference(const wick_broadcast *bc, const float *a, const float *b, float *out) {
#define C64_BODY(ia, ib, io)                                                              \
  do {                                                                                    \
    float ar = a[2 * (ia)], ai = a[2 * (ia) + 1], br = b[2 * (ib)], bi = b[2 * (ib) + 1]; \
    out[2 * (io)] = ar * br - ai * bi;                                                    \
    out[2 * (io) + 1] = ar * bi + ai * br;                                                \
  } while (0)
  BROADCAST_LOOP(bc, C64_BODY);
#undef C64_BODY
}

/* A comparison's or logical op's KERNEL (binary_ops.inc) on two values: floats as they are,
 * every integer type and bool widened to int64 (exact). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
static bool compare_f32(wick_compare_op op, float x, float y) {
  switch (op) {
#define WICK_COMPARE(NAME, name, KERNEL, ...) \
  case WICK_COMPARE_##NAME:                   \
    return KERNEL;
#define WICK_LOGICAL WICK_COMPARE
#include "kernels/reference/binary_ops.inc"
  }
  return false;
}
#pragma GCC diagnostic pop

static bool compare_int(wick_compare_op op, int64_t x, int64_t y) {
  switch (op) {
#define WICK_COMPARE(NAME, name, KERNEL, ...) \
  case WICK_COMPARE_##NAME:                   \
    return KERNEL;
#define WICK_LOGICAL WICK_COMPARE
#include "kernels/reference/binary_ops.inc"
  }
  return false;
}

#define COMPARE_TYPED(T, BODY)                        \
  do {                                                \
    const T *pa_ = (const T *)a, *pb_ = (const T *)b; \
    BROADCAST_LOOP(bc, BODY);                         \
  } while (0)
#define CMP_F32_BODY(ia, ib, io) out[io] = compare_f32(op, pa_[ia], pb_[ib])
#define CMP_INT_BODY(ia, ib, io) out[io] = compare_int(op, pa_[ia], pb_[ib])

void wick_compare__reference(wick_compare_op op, wick_dtype type, const wick_broadcast *bc,
                             const void *a, const void *b, bool *out) {
  switch (type) {
    case WICK_DTYPE_FLOAT32: COMPARE_TYPED(float, CMP_F32_BODY); break;
    case WICK_DTYPE_INT32: COMPARE_TYPED(int32_t, CMP_INT_BODY); break;
    case WICK_DTYPE_INT64: COMPARE_TYPED(int64_t, CMP_INT_BODY); break;
    case WICK_DTYPE_INT8: COMPARE_TYPED(int8_t, CMP_INT_BODY); break;
    case WICK_DTYPE_UINT8: COMPARE_TYPED(uint8_t, CMP_INT_BODY); break;
    case WICK_DTYPE_INT16: COMPARE_TYPED(int16_t, CMP_INT_BODY); break;
    case WICK_DTYPE_BOOL: COMPARE_TYPED(bool, CMP_INT_BODY); break;
    default: break;
  }
}
#undef CMP_F32_BODY
#undef CMP_INT_BODY

#define XOR_FN(NAME, T)                                                        \
  static void NAME(const wick_broadcast *bc, const T *a, const T *b, T *out) { \
    typedef T elem_t;                                                          \
    BROADCAST_LOOP(bc, XOR_BODY);                                              \
  }
#define XOR_BODY(ia, ib, io) out[io] = (elem_t)(a[ia] ^ b[ib])
XOR_FN(xor_u8, uint8_t)
XOR_FN(xor_u16, uint16_t)
XOR_FN(xor_u32, uint32_t)
#undef XOR_BODY
#undef XOR_FN

void wick_bitwise_xor__reference(size_t elem_size, const wick_broadcast *bc, const void *a,
                                 const void *b, void *out) {
  switch (elem_size) {
    case 1: xor_u8(bc, a, b, out); break;
    case 2: xor_u16(bc, a, b, out); break;
    case 4: xor_u32(bc, a, b, out); break;
    default: break;
  }
}

void wick_f32_atan2__reference(int64_t n, const float *y, const float *x, float *out) {
  for (int64_t i = 0; i < n; i++) out[i] = atan2f(y[i], x[i]);
}

void wick_f64_atan2__reference(int64_t n, const double *y, const double *x, double *out) {
  for (int64_t i = 0; i < n; i++) out[i] = atan2(y[i], x[i]);
}
