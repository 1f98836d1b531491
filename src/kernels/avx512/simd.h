/*
 * avx512/simd.h — the vector vocabulary the kernel templates in
 * src/kernels/template/ are written in, for AVX-512F (16 floats).
 *
 * Each ISA folder has a simd.h defining the same names: `vf` (a vector of VL
 * floats), `vmask` (which lanes of a tail to load/store), `vbool` (a lane-wise
 * comparison result), and small inline functions. Min/max follow the x86
 * instructions: vmax(a, b) = a > b ? a : b, so a NaN in `b` (or in either,
 * for the second operand) passes through; templates put the data operand
 * second where NaN must propagate. Included only by this folder's .c files
 * (compiled with -mavx512f -mavx512vl -mavx2 -mfma).
 */
#ifndef WICK_KERNELS_AVX512_SIMD_H
#define WICK_KERNELS_AVX512_SIMD_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VL 16
#define ISA_SUFFIX(name) name##__avx512
/* vscale2 is one instruction (VSCALEFPS) for any n: template/elementwise.h's
 * exp uses it directly instead of its range-checked fast path. */
#define SIMD_SCALE2_IS_CHEAP 1
#define SIMD_INLINE static inline __attribute__((always_inline))

typedef __m512 vf;
typedef __mmask16 vmask;
typedef __mmask16 vbool;

SIMD_INLINE vmask vmask_tail(size_t n) { /* the first n < VL lanes (n >= VL: all) */
  return (vmask)(n >= VL ? 0xffffu : (1u << n) - 1u);
}
SIMD_INLINE vmask vmask_all(void) { return (vmask)0xffffu; }
SIMD_INLINE vf vload(const float *p) { return _mm512_loadu_ps(p); }
SIMD_INLINE vf vloadm(const float *p, vmask m) { return _mm512_maskz_loadu_ps(m, p); }
SIMD_INLINE void vstore(float *p, vf v) { _mm512_storeu_ps(p, v); }
SIMD_INLINE void vstorem(float *p, vmask m, vf v) { _mm512_mask_storeu_ps(p, m, v); }
SIMD_INLINE vf vset1(float x) { return _mm512_set1_ps(x); }
SIMD_INLINE vf vzero(void) { return _mm512_setzero_ps(); }
SIMD_INLINE vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
SIMD_INLINE vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
SIMD_INLINE vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
SIMD_INLINE vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
SIMD_INLINE vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a*b + c */
SIMD_INLINE vf vfnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a*b */
SIMD_INLINE vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
SIMD_INLINE vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
SIMD_INLINE vf vabs(vf a) { return _mm512_abs_ps(a); }
SIMD_INLINE vf vsqrt(vf a) { return _mm512_sqrt_ps(a); }
SIMD_INLINE vf vneg(vf a) {
  return _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int32_t)0x80000000u)));
}
/* -|a|: the sign bit set (one VORPS; template/elementwise.h's LOGISTIC). */
#define SIMD_HAS_NEGABS 1
SIMD_INLINE vf vnegabs(vf a) {
  return _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int32_t)0x80000000u)));
}
/* Round to nearest, ties to even. */
SIMD_INLINE vf vround(vf a) {
  return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* Round toward zero. */
SIMD_INLINE vf vtrunc(vf a) {
  return _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}
/* The first n <= VL lanes of v (integral, in [-128, 255]) stored as the low
 * bytes of their int32 values: int8 or uint8 alike. */
SIMD_INLINE void vstore_bytes(void *p, vf v, size_t n) {
  const __m128i b = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v));
  if (n >= VL) {
    _mm_storeu_si128((__m128i *)p, b);
  } else {
    uint8_t tmp[VL];
    _mm_storeu_si128((__m128i *)(void *)tmp, b);
    memcpy(p, tmp, n);
  }
}
/* The first n <= VL lanes (integral, inside int16) as int16. */
SIMD_INLINE void vstore_i16(int16_t *p, vf v, size_t n) {
  const __m256i w = _mm512_cvtepi32_epi16(_mm512_cvtps_epi32(v));
  if (n >= VL) {
    _mm256_storeu_si256((__m256i *)(void *)p, w);
  } else {
    int16_t tmp[VL];
    _mm256_storeu_si256((__m256i *)(void *)tmp, w);
    memcpy(p, tmp, n * sizeof(int16_t));
  }
}
/* n <= VL int16 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_i16(const int16_t *p, size_t n) {
  __m256i w;
  if (n >= VL) {
    w = _mm256_loadu_si256((const __m256i *)(const void *)p);
  } else {
    int16_t tmp[VL] = {0};
    memcpy(tmp, p, n * sizeof(int16_t));
    w = _mm256_loadu_si256((const __m256i *)(const void *)tmp);
  }
  return _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(w));
}
/* n <= VL int8 or uint8 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_bytes(const void *p, size_t n, bool is_unsigned) {
  __m128i b;
  if (n >= VL) {
    b = _mm_loadu_si128((const __m128i *)p);
  } else {
    uint8_t tmp[VL] = {0};
    memcpy(tmp, p, n);
    b = _mm_loadu_si128((const __m128i *)(const void *)tmp);
  }
  return _mm512_cvtepi32_ps(is_unsigned ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b));
}
/* v * 2^n for integral n (any range: overflows to inf, underflows through
 * the denormals to 0, NaN stays NaN). */
SIMD_INLINE vf vscale2(vf v, vf n) { return _mm512_scalef_ps(v, n); }
/* table[i & 15] for the integer i in the low bits of each lane of `bits` (VPERMPS): one
 * instruction, so template/elementwise.h's LOGISTIC takes exp from a 16-entry table. */
#define SIMD_HAS_LUT16 1
SIMD_INLINE vf vlut16(vf bits, vf table) {
  return _mm512_permutexvar_ps(_mm512_castps_si512(bits), table);
}
SIMD_INLINE vf vload_table16(const float *t) { return _mm512_loadu_ps(t); }
/* Sign bit of `s` on the magnitude of `m`. */
SIMD_INLINE vf vcopysign(vf m, vf s) {
  const __m512i sign = _mm512_set1_epi32((int32_t)0x80000000u);
  return _mm512_castsi512_ps(
      _mm512_ternarylogic_epi32(sign, _mm512_castps_si512(s), _mm512_castps_si512(m), 0xca));
}
SIMD_INLINE vbool vlt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
SIMD_INLINE vbool vle(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
SIMD_INLINE vbool vgt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
SIMD_INLINE vbool vge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
SIMD_INLINE vbool visnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
SIMD_INLINE vbool vor(vbool a, vbool b) { return (vbool)(a | b); }
/* c ? t : f, lane-wise. */
SIMD_INLINE vf vselect(vbool c, vf t, vf f) { return _mm512_mask_blend_ps(c, f, t); }
SIMD_INLINE float vreduce_add(vf a) { return _mm512_reduce_add_ps(a); }
SIMD_INLINE float vreduce_max(vf a) { return _mm512_reduce_max_ps(a); }

/* ---- int32 lanes and half-width doubles, for template/q8_requant.h ----
 * vi: VL int32 lanes; vib: a lane-wise condition (a mask); vih: VL/2 int32
 * lanes; vd: VL/2 doubles, vdb: their condition. AVX-512F only, so the
 * avx512vnni/ kernels (compiled with a superset of this folder's flags) use
 * it too. */
typedef __m512i vi;
typedef __mmask16 vib;
typedef __m256i vih;
typedef __m512d vd;
typedef __mmask8 vdb;

SIMD_INLINE vi vi_load(const int32_t *p) { return _mm512_loadu_si512(p); }
SIMD_INLINE vi vi_set1(int32_t x) { return _mm512_set1_epi32(x); }
SIMD_INLINE vi vi_set1_64(int64_t x) { return _mm512_set1_epi64(x); } /* 64-bit lanes */
SIMD_INLINE vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
SIMD_INLINE vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
SIMD_INLINE vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
SIMD_INLINE vi vi_min(vi a, vi b) { return _mm512_min_epi32(a, b); }
SIMD_INLINE vi vi_max(vi a, vi b) { return _mm512_max_epi32(a, b); }
SIMD_INLINE vi vi_sllv(vi a, vi n) { return _mm512_sllv_epi32(a, n); }
SIMD_INLINE vi vi_srav(vi a, vi n) { return _mm512_srav_epi32(a, n); }
SIMD_INLINE vi vi_shr1(vi a) { return _mm512_srli_epi32(a, 1); } /* logical */
SIMD_INLINE bool vi_any(vi a) { return _mm512_test_epi32_mask(a, a) != 0; }
SIMD_INLINE vi vi_add64(vi a, vi b) { return _mm512_add_epi64(a, b); }
/* The signed 64-bit products of the even int32 lanes. */
SIMD_INLINE vi vi_mul_even(vi a, vi b) { return _mm512_mul_epi32(a, b); }
/* Each odd lane copied to the even lane below it (a shuffle: on AVX-512
 * cores every shift runs on one port, which the multiply-adds also need). */
SIMD_INLINE vi vi_odd_to_even(vi a) { return _mm512_shuffle_epi32(a, _MM_PERM_DDBB); }
/* floor(p / 2^31) of the 64-bit lanes of `even` (to the even int32 lanes)
 * and of `odd` (to the odd ones): both doubled, so that the results are
 * their high halves, gathered by one masked shuffle. */
SIMD_INLINE vi vi_shr31_pairs(vi even, vi odd) {
  even = _mm512_add_epi64(even, even);
  odd = _mm512_add_epi64(odd, odd);
  return _mm512_mask_shuffle_epi32(odd, (__mmask16)0x5555, even, _MM_PERM_CDAB);
}
SIMD_INLINE vib vi_lt_zero(vi a) { return _mm512_cmplt_epi32_mask(a, _mm512_setzero_si512()); }
SIMD_INLINE vib vi_gt(vi a, vi b) { return _mm512_cmpgt_epi32_mask(a, b); }
SIMD_INLINE vi vi_inc_where(vi a, vib c) { /* a + (c ? 1 : 0) */
  return _mm512_mask_add_epi32(a, c, a, _mm512_set1_epi32(1));
}
SIMD_INLINE vih vi_low_half(vi a) { return _mm512_castsi512_si256(a); }
SIMD_INLINE vih vi_high_half(vi a) { return _mm512_extracti64x4_epi64(a, 1); }
SIMD_INLINE vi vi_join(vih lo, vih hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
SIMD_INLINE vd vd_from_vih(vih a) { return _mm512_cvtepi32_pd(a); }
SIMD_INLINE vih vih_from_vd(vd a) { return _mm512_cvttpd_epi32(a); } /* truncating */
SIMD_INLINE vd vd_load(const double *p) { return _mm512_loadu_pd(p); }
SIMD_INLINE vd vd_set1(double x) { return _mm512_set1_pd(x); }
SIMD_INLINE vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
SIMD_INLINE vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
SIMD_INLINE vd vd_min(vd a, vd b) { return _mm512_min_pd(a, b); }
SIMD_INLINE vd vd_max(vd a, vd b) { return _mm512_max_pd(a, b); }
SIMD_INLINE vd vd_trunc(vd a) {
  return _mm512_roundscale_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}
SIMD_INLINE vdb vd_ge(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
SIMD_INLINE vdb vd_le(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
/* a + (c ? b : 0), a - (c ? b : 0). */
SIMD_INLINE vd vd_add_where(vd a, vdb c, vd b) { return _mm512_mask_add_pd(a, c, a, b); }
SIMD_INLINE vd vd_sub_where(vd a, vdb c, vd b) { return _mm512_mask_sub_pd(a, c, a, b); }

#endif /* WICK_KERNELS_AVX512_SIMD_H */
