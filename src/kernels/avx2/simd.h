/*
 * avx2/simd.h — the vector vocabulary of src/kernels/template/ for AVX2 + FMA
 * (8 floats). Same names and semantics as avx512/simd.h (read that first);
 * tails use vmaskmov (which never faults on masked-off lanes) and comparisons
 * yield all-ones lanes. Included only by this folder's .c files (compiled
 * with -mavx2 -mfma).
 */
#ifndef WICK_KERNELS_AVX2_SIMD_H
#define WICK_KERNELS_AVX2_SIMD_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VL 8
#define ISA_SUFFIX(name) name##__avx2
#define SIMD_INLINE static inline __attribute__((always_inline))

typedef __m256 vf;
typedef __m256i vmask;
typedef __m256 vbool;

static const int32_t wick_avx2_mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};

SIMD_INLINE vmask vmask_tail(size_t n) {
  return _mm256_loadu_si256((const __m256i *)(wick_avx2_mask_table + 8 - (n < VL ? n : VL)));
}
SIMD_INLINE vmask vmask_all(void) { return _mm256_set1_epi32(-1); }
SIMD_INLINE vf vload(const float *p) { return _mm256_loadu_ps(p); }
SIMD_INLINE vf vloadm(const float *p, vmask m) { return _mm256_maskload_ps(p, m); }
SIMD_INLINE void vstore(float *p, vf v) { _mm256_storeu_ps(p, v); }
/* The first n <= 8 lanes of v to p, by plain 16/8/4-byte stores: VMASKMOVPS stores are slow
 * on AMD's cores (and make the loads after them wait), and every mask here is a prefix. */
SIMD_INLINE void wick_avx2_store_first(float *p, __m256 v, size_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(p, v);
    return;
  }
  __m128 h = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(p, h);
    h = _mm256_extractf128_ps(v, 1);
    p += 4, n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi((__m64 *)(void *)p, h);
    h = _mm_movehl_ps(h, h);
    p += 2, n -= 2;
  }
  if (n) _mm_store_ss(p, h);
}
SIMD_INLINE void vstorem(float *p, vmask m, vf v) {
  wick_avx2_store_first(p, v,
                        (size_t)__builtin_popcount(
                            (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m))));
}
SIMD_INLINE vf vset1(float x) { return _mm256_set1_ps(x); }
SIMD_INLINE vf vzero(void) { return _mm256_setzero_ps(); }
SIMD_INLINE vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
SIMD_INLINE vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
SIMD_INLINE vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
SIMD_INLINE vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
SIMD_INLINE vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
SIMD_INLINE vf vfnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
SIMD_INLINE vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
SIMD_INLINE vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
SIMD_INLINE vf vabs(vf a) {
  return _mm256_castsi256_ps(
      _mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32(0x7fffffff)));
}
SIMD_INLINE vf vsqrt(vf a) { return _mm256_sqrt_ps(a); }
SIMD_INLINE vf vneg(vf a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
SIMD_INLINE vf vround(vf a) {
  return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* Round toward zero. */
SIMD_INLINE vf vtrunc(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
/* The first n <= VL lanes of v (integral, in [-128, 255]) stored as the low
 * bytes of their int32 values: int8 or uint8 alike. */
SIMD_INLINE void vstore_bytes(void *p, vf v, size_t n) {
  const __m256i i = _mm256_cvtps_epi32(v);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  const __m128i low_bytes =
      _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i b = _mm_shuffle_epi8(w, low_bytes);
  if (n >= VL) {
    _mm_storel_epi64((__m128i *)p, b);
  } else {
    uint8_t tmp[16];
    _mm_storeu_si128((__m128i *)(void *)tmp, b);
    memcpy(p, tmp, n);
  }
}
/* Four vectors of integral values in [-128, 127] stored as 4 * VL int8, in order (the
 * signed saturating packs leave such values unchanged): one store instead of four. */
#define SIMD_HAS_STORE_INT8X4 1
SIMD_INLINE void vstore_int8x4(void *p, vf a, vf b, vf c, vf d) {
  const __m256i ab = _mm256_packs_epi32(_mm256_cvtps_epi32(a), _mm256_cvtps_epi32(b));
  const __m256i cd = _mm256_packs_epi32(_mm256_cvtps_epi32(c), _mm256_cvtps_epi32(d));
  /* per 128-bit half, 4-byte groups: a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7 */
  const __m256i abcd = _mm256_packs_epi16(ab, cd);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  _mm256_storeu_si256((__m256i *)p, _mm256_permutevar8x32_epi32(abcd, order));
}
/* The first n <= VL lanes (integral, inside int16) as int16. */
SIMD_INLINE void vstore_i16(int16_t *p, vf v, size_t n) {
  const __m256i i = _mm256_cvtps_epi32(v);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  if (n >= VL) {
    _mm_storeu_si128((__m128i *)(void *)p, w);
  } else {
    int16_t tmp[VL];
    _mm_storeu_si128((__m128i *)(void *)tmp, w);
    memcpy(p, tmp, n * sizeof(int16_t));
  }
}
/* n <= VL int16 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_i16(const int16_t *p, size_t n) {
  __m128i w;
  if (n >= VL) {
    w = _mm_loadu_si128((const __m128i *)(const void *)p);
  } else {
    int16_t tmp[VL] = {0};
    memcpy(tmp, p, n * sizeof(int16_t));
    w = _mm_loadu_si128((const __m128i *)(const void *)tmp);
  }
  return _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(w));
}
/* n <= VL int8 or uint8 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_bytes(const void *p, size_t n, bool is_unsigned) {
  __m128i b;
  if (n >= VL) {
    b = _mm_loadl_epi64((const __m128i *)p);
  } else {
    uint8_t tmp[16] = {0};
    memcpy(tmp, p, n);
    b = _mm_loadu_si128((const __m128i *)(const void *)tmp);
  }
  return _mm256_cvtepi32_ps(is_unsigned ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b));
}
/* v * 2^n for integral n, as two exact power-of-two factors 2^n1 * 2^n2
 * (n1 = floor(n/2), n2 = n - n1, each a normal float once n is clamped to
 * [-250, 250]). v * 2^n1 is exact unless it overflows (to inf, as the true
 * product would) or leaves the normal range, so the result is rounded once
 * whenever v * 2^n1 is normal: always for exp's |v| in [0.5, 2] and n >=
 * -250. NaN stays NaN. */
SIMD_INLINE vf vscale2(vf v, vf n) {
  n = _mm256_min_ps(_mm256_set1_ps(250.0f), _mm256_max_ps(_mm256_set1_ps(-250.0f), n));
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  vf s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  vf s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(v, s1), s2);
}
SIMD_INLINE vf vcopysign(vf m, vf s) {
  const vf sign = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(sign, m), _mm256_and_ps(sign, s));
}
SIMD_INLINE vbool vlt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
SIMD_INLINE vbool vle(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
SIMD_INLINE vbool vgt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
SIMD_INLINE vbool vge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
SIMD_INLINE vbool visnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
SIMD_INLINE vbool vor(vbool a, vbool b) { return _mm256_or_ps(a, b); }
SIMD_INLINE bool vany(vbool a) { return _mm256_movemask_ps(a) != 0; }
/* 2^n for t = n + 1.5 * 2^23 (float) with integral n in [-126, 127]: t's
 * low mantissa bits are 2^22 + n, and (bits + 127) << 23 keeps n + 127 as
 * the exponent field. */
SIMD_INLINE vf vpow2_magic(vf t) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127)), 23));
}
SIMD_INLINE vf vselect(vbool c, vf t, vf f) { return _mm256_blendv_ps(f, t, c); }
SIMD_INLINE float vreduce_add(vf a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
SIMD_INLINE float vreduce_max(vf a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* ---- int32 lanes and half-width doubles, for template/q8_requant.h ----
 * vi: VL int32 lanes; vib: a lane-wise condition (all-ones lanes); vih: VL/2
 * int32 lanes; vd: VL/2 doubles, vdb: their condition. */
typedef __m256i vi;
typedef __m256i vib;
typedef __m128i vih;
typedef __m256d vd;
typedef __m256d vdb;

SIMD_INLINE vi vi_load(const int32_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
SIMD_INLINE vi vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
SIMD_INLINE vi vi_set1_64(int64_t x) { return _mm256_set1_epi64x(x); } /* 64-bit lanes */
SIMD_INLINE vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
SIMD_INLINE vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
SIMD_INLINE vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
SIMD_INLINE vi vi_min(vi a, vi b) { return _mm256_min_epi32(a, b); }
SIMD_INLINE vi vi_max(vi a, vi b) { return _mm256_max_epi32(a, b); }
SIMD_INLINE vi vi_sllv(vi a, vi n) { return _mm256_sllv_epi32(a, n); }
SIMD_INLINE vi vi_srav(vi a, vi n) { return _mm256_srav_epi32(a, n); }
SIMD_INLINE vi vi_shr1(vi a) { return _mm256_srli_epi32(a, 1); } /* logical */
SIMD_INLINE bool vi_any(vi a) { return !_mm256_testz_si256(a, a); }
SIMD_INLINE vi vi_add64(vi a, vi b) { return _mm256_add_epi64(a, b); }
/* The signed 64-bit products of the even int32 lanes. */
SIMD_INLINE vi vi_mul_even(vi a, vi b) { return _mm256_mul_epi32(a, b); }
/* Each odd lane moved to the even lane below it (as a 64-bit shift: on
 * AVX2 cores shifts have two ports, shuffles one). */
SIMD_INLINE vi vi_odd_to_even(vi a) { return _mm256_srli_epi64(a, 32); }
/* floor(p / 2^31) of the 64-bit lanes of `even` (to the even int32 lanes)
 * and of `odd` (to the odd ones). */
SIMD_INLINE vi vi_shr31_pairs(vi even, vi odd) {
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_add_epi64(odd, odd), 0xAA);
}
SIMD_INLINE vib vi_lt_zero(vi a) { return _mm256_cmpgt_epi32(_mm256_setzero_si256(), a); }
SIMD_INLINE vib vi_gt(vi a, vi b) { return _mm256_cmpgt_epi32(a, b); }
SIMD_INLINE vi vi_inc_where(vi a, vib c) { return _mm256_sub_epi32(a, c); } /* a + (c ? 1 : 0) */
SIMD_INLINE vih vi_low_half(vi a) { return _mm256_castsi256_si128(a); }
SIMD_INLINE vih vi_high_half(vi a) { return _mm256_extracti128_si256(a, 1); }
SIMD_INLINE vi vi_join(vih lo, vih hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
SIMD_INLINE vd vd_from_vih(vih a) { return _mm256_cvtepi32_pd(a); }
SIMD_INLINE vih vih_from_vd(vd a) { return _mm256_cvttpd_epi32(a); } /* truncating */
SIMD_INLINE vd vd_load(const double *p) { return _mm256_loadu_pd(p); }
SIMD_INLINE vd vd_set1(double x) { return _mm256_set1_pd(x); }
SIMD_INLINE vd vd_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
SIMD_INLINE vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
SIMD_INLINE vd vd_min(vd a, vd b) { return _mm256_min_pd(a, b); }
SIMD_INLINE vd vd_max(vd a, vd b) { return _mm256_max_pd(a, b); }
SIMD_INLINE vd vd_trunc(vd a) { return _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
SIMD_INLINE vdb vd_ge(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
SIMD_INLINE vdb vd_le(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
/* a + (c ? b : 0), a - (c ? b : 0). */
SIMD_INLINE vd vd_add_where(vd a, vdb c, vd b) { return _mm256_add_pd(a, _mm256_and_pd(c, b)); }
SIMD_INLINE vd vd_sub_where(vd a, vdb c, vd b) { return _mm256_sub_pd(a, _mm256_and_pd(c, b)); }

#endif /* WICK_KERNELS_AVX2_SIMD_H */
