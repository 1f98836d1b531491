/*
 * test_threads.c — threads, three ways:
 *
 *   1. bit-identical results for any thread count: a synthetic conv net whose
 *      every parallel path (indirect GEMM, 1x1 GEMM, 3x3 and 5x5 depthwise,
 *      grouped/reference conv, pools, FULLY_CONNECTED, BATCH_MATMUL, PADs
 *      folded into convolutions and a max pool) splits into several tasks,
 *      on the optimized and on the reference kernels, and equal to the
 *      unfused graph (WICK_NO_FUSION=1) on the optimized kernels, plus
 *      the small real models in $WICK_SHARED_MODELS and a few Keras files from
 *      the model cache ($WICK_MODEL_CACHE or build/model-cache) when present,
 *      each run with num_threads 1, 2, 3, 4 and 7 and compared byte for byte;
 *   2. one shared model, several OS threads, each with its own interpreter
 *      (1 or 2 threads: the latter drives its own workers), every result
 *      equal to the first run's; then cancellation from another thread while
 *      invokes run;
 *   3. the pool itself: every task of jobs from 2 to 200000 tasks (more than
 *      one claim word holds: they run in groups) runs exactly once, on 2, 3
 *      and 7 threads;
 *   4. cancelling one giant operator from another thread (a 2.4 G multiply-add
 *      convolution on the reference kernels, and a 4.6 G-tap int8 MAX_POOL_2D
 *      on the optimized ones: seconds of work each): invoke must return
 *      WICK_ERR_CANCELLED from inside the operator, promptly.
 *
 * Built with -DWICK_SANITIZE=thread (CI) ThreadSanitizer checks the pool and
 * that sharing a model needs no locks (docs/reliability.md, rule 6).
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "tiny_model.h"
#include "wick/wick.h"

enum { THREADS = 4 };

static const int thread_counts[] = {1, 2, 3, 4, 7};
#define NUM_COUNTS (sizeof thread_counts / sizeof thread_counts[0])

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- models */

/* Deterministic pseudo-random floats in [-1, 1). */
static float lcg(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
}

static int32_t g_const_rand(tm_graph *g, const char *name, const int32_t *shape, size_t rank,
                            uint32_t seed) {
  size_t n = 1;
  for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = lcg(&seed) * 0.25f;
  int32_t t = tm_g_const(g, name, TM_F32, shape, rank, v, n * sizeof *v, NULL);
  free(v);
  return t;
}

/* Conv2DOptions type 1 / DepthwiseConv2DOptions type 2 / Pool2DOptions type 5. */
static tm_node *conv_opts(tm_builder *b, int padding, int stride, int act) {
  tm_node *o = tm_table(b);
  tm_i8(o, 0, (int8_t)padding);
  tm_i32(o, 1, stride);
  tm_i32(o, 2, stride);
  tm_i8(o, 3, (int8_t)act);
  tm_i32(o, 4, 1);
  tm_i32(o, 5, 1);
  return o;
}

static tm_node *dw_opts(tm_builder *b, int padding, int stride) {
  tm_node *o = tm_table(b);
  tm_i8(o, 0, (int8_t)padding); /* 0 SAME, 1 VALID */
  tm_i32(o, 1, stride);
  tm_i32(o, 2, stride);
  tm_i32(o, 3, 1);
  tm_i8(o, 4, 0);
  tm_i32(o, 5, 1);
  tm_i32(o, 6, 1);
  return o;
}

static tm_node *pool_opts(tm_builder *b, int padding, int stride, int k) {
  tm_node *o = tm_table(b);
  tm_i8(o, 0, (int8_t)padding);
  tm_i32(o, 1, stride);
  tm_i32(o, 2, stride);
  tm_i32(o, 3, k);
  tm_i32(o, 4, k);
  tm_i8(o, 5, 0);
  return o;
}

/* A synthetic net sized so that each op splits into several tasks:
 *   x[2,40,40,16] -CONV 3x3 relu-> c1[2,40,40,32] -DW 3x3-> d1 -DW 5x5 s2-> d2[2,20,20,32]
 *   d1 -CONV 1x1-> c2[2,40,40,48] -MAX_POOL 2x2 s2-> p1[2,20,20,48] -AVG_POOL 3x3 s1-> p2
 *   p2 -RESHAPE-> r[40,960] -FULLY_CONNECTED-> f[40,50]
 *   x -CONV 3x3 groups 2-> gc[2,40,40,32]          (the reference conv path)
 *   q[4,64,96] x kk[4,96,80] -BATCH_MATMUL-> bm[4,64,80]   (constant rhs: packed at prepare)
 *   q x q2[4,96,80] -BATCH_MATMUL-> bm2                  (run-time rhs: packed at invoke)
 *   c2 -PAD H,W by 1-> pd[2,42,42,48];  c1, c2 -CONCATENATION(axis 3)-> cc[2,40,40,80]
 *   c2 -TRANSPOSE(0,3,1,2)-> tr[2,48,40,40]
 *   c2 -LOGISTIC-> lg -ADD c2-> ad -MUL chan[48]-> ml[2,40,40,48]   (elementwise kernels)
 * and PADs that prepare folds into their reader (src/core/fuse.c):
 *   c2 -PAD (1,2)x(0,1)-> pa[2,43,41,48] -DW 3x3 s2 VALID-> da[2,21,20,48]
 *   d1 -PAD (1,1)x(1,1)-> pb[2,42,42,32] -CONV 3x3 s2 VALID-> cb[2,20,20,16]
 *   c2 -PADV2 -inf (1,0)x(1,0)-> pm[2,41,41,48] -MAX_POOL 3x3 s2 VALID-> mp[2,20,20,48]
 * Outputs d2, f, gc, bm, bm2, pd, cc, tr, ml, da, cb, mp. */
static uint8_t *conv_net(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t s_x[4] = {2, 40, 40, 16}, s_w1[4] = {32, 3, 3, 16}, s_32[1] = {32};
  int32_t s_c1[4] = {2, 40, 40, 32}, s_dw[4] = {1, 3, 3, 32}, s_dw5[4] = {1, 5, 5, 32};
  int32_t s_d2[4] = {2, 20, 20, 32}, s_w2[4] = {48, 1, 1, 32}, s_48[1] = {48};
  int32_t s_c2[4] = {2, 40, 40, 48}, s_p[4] = {2, 20, 20, 48}, s_2[1] = {2};
  int32_t shape_r[2] = {40, 960}, s_wf[2] = {50, 960}, s_50[1] = {50}, s_f[2] = {40, 50};
  int32_t s_wg[4] = {32, 3, 3, 8}, s_q[3] = {4, 64, 96}, s_kk[3] = {4, 96, 80};
  int32_t s_bm[3] = {4, 64, 80};

  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4);
  int32_t q = tm_g_tensor(&g, "q", TM_F32, s_q, 3);
  int32_t w1 = g_const_rand(&g, "w1", s_w1, 4, 1), b1 = g_const_rand(&g, "b1", s_32, 1, 2);
  int32_t c1 = tm_g_tensor(&g, "c1", TM_F32, s_c1, 4);
  int32_t dw = g_const_rand(&g, "dw", s_dw, 4, 3), db = g_const_rand(&g, "db", s_32, 1, 4);
  int32_t d1 = tm_g_tensor(&g, "d1", TM_F32, s_c1, 4);
  int32_t dw5 = g_const_rand(&g, "dw5", s_dw5, 4, 5);
  int32_t d2 = tm_g_tensor(&g, "d2", TM_F32, s_d2, 4);
  int32_t w2 = g_const_rand(&g, "w2", s_w2, 4, 6), b2 = g_const_rand(&g, "b2", s_48, 1, 7);
  int32_t c2 = tm_g_tensor(&g, "c2", TM_F32, s_c2, 4);
  int32_t p1 = tm_g_tensor(&g, "p1", TM_F32, s_p, 4);
  int32_t p2 = tm_g_tensor(&g, "p2", TM_F32, s_p, 4);
  int32_t rs = tm_g_const(&g, "shape", TM_I32, s_2, 1, shape_r, sizeof shape_r, NULL);
  int32_t r = tm_g_tensor(&g, "r", TM_F32, shape_r, 2);
  int32_t wf = g_const_rand(&g, "wf", s_wf, 2, 8), bf = g_const_rand(&g, "bf", s_50, 1, 9);
  int32_t f = tm_g_tensor(&g, "f", TM_F32, s_f, 2);
  int32_t wg = g_const_rand(&g, "wg", s_wg, 4, 10);
  int32_t gc = tm_g_tensor(&g, "gc", TM_F32, s_c1, 4);
  int32_t kk = g_const_rand(&g, "kk", s_kk, 3, 11);
  int32_t bm = tm_g_tensor(&g, "bm", TM_F32, s_bm, 3);
  int32_t q2 = tm_g_tensor(&g, "q2", TM_F32, s_kk, 3);
  int32_t bm2 = tm_g_tensor(&g, "bm2", TM_F32, s_bm, 3);
  int32_t s_pads[2] = {4, 2}, pads[8] = {0, 0, 1, 1, 1, 1, 0, 0}, s_4[1] = {4},
          perm[4] = {0, 3, 1, 2};
  int32_t s_pd[4] = {2, 42, 42, 48}, s_cc[4] = {2, 40, 40, 80}, s_tr[4] = {2, 48, 40, 40};
  int32_t tpads = tm_g_const(&g, "pads", TM_I32, s_pads, 2, pads, sizeof pads, NULL);
  int32_t pd = tm_g_tensor(&g, "pd", TM_F32, s_pd, 4);
  int32_t cc = tm_g_tensor(&g, "cc", TM_F32, s_cc, 4);
  int32_t tperm = tm_g_const(&g, "perm", TM_I32, s_4, 1, perm, sizeof perm, NULL);
  int32_t tr = tm_g_tensor(&g, "tr", TM_F32, s_tr, 4);
  int32_t lg = tm_g_tensor(&g, "lg", TM_F32, s_c2, 4), ad = tm_g_tensor(&g, "ad", TM_F32, s_c2, 4);
  int32_t chan = g_const_rand(&g, "chan", s_48, 1, 12), ml = tm_g_tensor(&g, "ml", TM_F32, s_c2, 4);
  int32_t pads_a[8] = {0, 0, 1, 2, 0, 1, 0, 0}, pads_b[8] = {0, 0, 1, 1, 1, 1, 0, 0};
  int32_t pads_m[8] = {0, 0, 1, 0, 1, 0, 0, 0}, s_1[1] = {1};
  const float minus_inf = -INFINITY;
  int32_t s_pa[4] = {2, 43, 41, 48}, s_da[4] = {2, 21, 20, 48}, s_dwa[4] = {1, 3, 3, 48};
  int32_t s_pb[4] = {2, 42, 42, 32}, s_wb[4] = {16, 3, 3, 32}, s_cb[4] = {2, 20, 20, 16};
  int32_t s_16[1] = {16}, s_pm[4] = {2, 41, 41, 48};
  int32_t tpads_a = tm_g_const(&g, "pads_a", TM_I32, s_pads, 2, pads_a, sizeof pads_a, NULL);
  int32_t tpads_b = tm_g_const(&g, "pads_b", TM_I32, s_pads, 2, pads_b, sizeof pads_b, NULL);
  int32_t tpads_m = tm_g_const(&g, "pads_m", TM_I32, s_pads, 2, pads_m, sizeof pads_m, NULL);
  int32_t ninf = tm_g_const(&g, "minus_inf", TM_F32, s_1, 0, &minus_inf, sizeof minus_inf, NULL);
  int32_t pa = tm_g_tensor(&g, "pa", TM_F32, s_pa, 4), da = tm_g_tensor(&g, "da", TM_F32, s_da, 4);
  int32_t dwa = g_const_rand(&g, "dwa", s_dwa, 4, 13), dba = g_const_rand(&g, "dba", s_48, 1, 14);
  int32_t pb = tm_g_tensor(&g, "pb", TM_F32, s_pb, 4), cb = tm_g_tensor(&g, "cb", TM_F32, s_cb, 4);
  int32_t wb = g_const_rand(&g, "wb", s_wb, 4, 15), bb = g_const_rand(&g, "bb", s_16, 1, 16);
  int32_t pm = tm_g_tensor(&g, "pm", TM_F32, s_pm, 4), mp = tm_g_tensor(&g, "mp", TM_F32, s_p, 4);

  {
    int32_t in[3] = {x, w1, b1}, out[1] = {c1};
    tm_g_op(&g, 3, in, 3, out, 1, 1, conv_opts(b, 0, 1, 1));
  }
  {
    int32_t in[3] = {c1, dw, db}, out[1] = {d1};
    tm_g_op(&g, 4, in, 3, out, 1, 2, dw_opts(b, 0, 1));
  }
  {
    int32_t in[2] = {d1, dw5}, out[1] = {d2};
    tm_g_op(&g, 4, in, 2, out, 1, 2, dw_opts(b, 0, 2));
  }
  {
    int32_t in[3] = {d1, w2, b2}, out[1] = {c2};
    tm_g_op(&g, 3, in, 3, out, 1, 1, conv_opts(b, 1, 1, 0));
  }
  {
    int32_t in[1] = {c2}, out[1] = {p1};
    tm_g_op(&g, 17, in, 1, out, 1, 5, pool_opts(b, 1, 2, 2));
  }
  {
    int32_t in[1] = {p1}, out[1] = {p2};
    tm_g_op(&g, 1, in, 1, out, 1, 5, pool_opts(b, 0, 1, 3));
  }
  {
    tm_node *o = tm_table(b);
    tm_ref(o, 0, tm_vec_i32(b, shape_r, 2));
    int32_t in[2] = {p2, rs}, out[1] = {r};
    tm_g_op(&g, 22, in, 2, out, 1, 17, o);
  }
  {
    tm_node *o = tm_table(b);
    tm_i8(o, 0, 0);
    int32_t in[3] = {r, wf, bf}, out[1] = {f};
    tm_g_op(&g, 9, in, 3, out, 1, 8, o);
  }
  {
    int32_t in[2] = {x, wg}, out[1] = {gc};
    tm_g_op(&g, 3, in, 2, out, 1, 1, conv_opts(b, 0, 1, 0));
  }
  {
    tm_node *o = tm_table(b); /* BatchMatMulOptions type 101: adj_x, adj_y false */
    int32_t in[2] = {q, kk}, out[1] = {bm};
    tm_g_op(&g, 126, in, 2, out, 1, 101, o);
  }
  {
    tm_node *o = tm_table(b);
    int32_t in[2] = {q, q2}, out[1] = {bm2};
    tm_g_op(&g, 126, in, 2, out, 1, 101, o);
  }
  { /* PAD: PadOptions type 22 */
    int32_t in[2] = {c2, tpads}, out[1] = {pd};
    tm_g_op(&g, 34, in, 2, out, 1, 22, tm_table(b));
  }
  { /* CONCATENATION: ConcatenationOptions type 10 */
    tm_node *o = tm_table(b);
    tm_i32(o, 0, 3);
    tm_i8(o, 1, 0);
    int32_t in[2] = {c1, c2}, out[1] = {cc};
    tm_g_op(&g, 2, in, 2, out, 1, 10, o);
  }
  { /* TRANSPOSE: TransposeOptions type 26 */
    int32_t in[2] = {c2, tperm}, out[1] = {tr};
    tm_g_op(&g, 39, in, 2, out, 1, 26, tm_table(b));
  }
  { /* LOGISTIC (no options), ADD: AddOptions type 11, MUL: MulOptions type 21 */
    int32_t in[1] = {c2}, out[1] = {lg};
    tm_g_op(&g, 14, in, 1, out, 1, 0, NULL);
  }
  {
    tm_node *o = tm_table(b);
    tm_i8(o, 0, 0);
    int32_t in[2] = {lg, c2}, out[1] = {ad};
    tm_g_op(&g, 0, in, 2, out, 1, 11, o);
  }
  {
    tm_node *o = tm_table(b);
    tm_i8(o, 0, 0);
    int32_t in[2] = {ad, chan}, out[1] = {ml};
    tm_g_op(&g, 18, in, 2, out, 1, 21, o);
  }
  {
    int32_t in[2] = {c2, tpads_a}, out[1] = {pa};
    tm_g_op(&g, 34, in, 2, out, 1, 22, tm_table(b));
  }
  {
    int32_t in[3] = {pa, dwa, dba}, out[1] = {da};
    tm_g_op(&g, 4, in, 3, out, 1, 2, dw_opts(b, 1, 2));
  }
  {
    int32_t in[2] = {d1, tpads_b}, out[1] = {pb};
    tm_g_op(&g, 34, in, 2, out, 1, 22, tm_table(b));
  }
  {
    int32_t in[3] = {pb, wb, bb}, out[1] = {cb};
    tm_g_op(&g, 3, in, 3, out, 1, 1, conv_opts(b, 1, 2, 0));
  }
  {
    int32_t in[3] = {c2, tpads_m, ninf}, out[1] = {pm};
    tm_g_op(&g, 60, in, 3, out, 1, 0, NULL);
  }
  {
    int32_t in[1] = {pm}, out[1] = {mp};
    tm_g_op(&g, 17, in, 1, out, 1, 5, pool_opts(b, 1, 2, 3));
  }
  int32_t gin[3] = {x, q, q2}, gout[12] = {d2, f, gc, bm, bm2, pd, cc, tr, ml, da, cb, mp};
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, gin, 3, gout, 12, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* One CONV_2D x[1,2048,32,64] * w[64,3,3,64]: 2.4 G multiply-adds, in
 * narrow rows (1.2 M multiply-adds each) so that one task stays short even
 * under ThreadSanitizer. */
static uint8_t *giant_conv(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t s_x[4] = {1, 2048, 32, 64}, s_w[4] = {64, 3, 3, 64};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4);
  int32_t w = g_const_rand(&g, "w", s_w, 4, 42);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 4);
  int32_t in[2] = {x, w}, out[1] = {y};
  tm_g_op(&g, 3, in, 2, out, 1, 1, conv_opts(b, 0, 1, 0));
  int32_t gin[1] = {x}, gout[1] = {y};
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* x int8 [1, 2048, 64, 16] -MAX_POOL_2D 47x47, SAME, stride 1-> y (same shape):
 * 2 M outputs x 2209 taps. */
static uint8_t *giant_int8_pool(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t s_x[4] = {1, 2048, 64, 16};
  const float scale[1] = {0.05f};
  const int64_t zp[1] = {-3};
  g.tensors[g.nt] = tm_tensor(b, "x", TM_I8, s_x, 4, 0, tm_quant(b, scale, zp, 1, 0));
  int32_t x = (int32_t)g.nt++;
  g.tensors[g.nt] = tm_tensor(b, "y", TM_I8, s_x, 4, 0, tm_quant(b, scale, zp, 1, 0));
  int32_t y = (int32_t)g.nt++;
  tm_node *o = tm_table(b); /* Pool2DOptions: SAME, strides 1, filter 47x47, no activation */
  tm_i8(o, 0, 0), tm_i32(o, 1, 1), tm_i32(o, 2, 1), tm_i32(o, 3, 47), tm_i32(o, 4, 47);
  tm_i8(o, 5, 0);
  int32_t in[1] = {x}, out[1] = {y};
  tm_g_op(&g, 17, in, 1, out, 1, 5, o);
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, in, 1, out, 1, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* ---------------------------------------------------------------- helpers */

static size_t outputs_bytes(wick_interpreter *it) {
  size_t n = 0;
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++)
    n += wick_tensor_byte_size(wick_interpreter_output(it, i));
  return n;
}

static void copy_outputs(wick_interpreter *it, unsigned char *dst) {
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    memcpy(dst, wick_tensor_data(t), wick_tensor_byte_size(t));
    dst += wick_tensor_byte_size(t);
  }
}

/* Deterministic inputs: floats in [-1, 1), integers small and non-negative
 * (index-like inputs stay in range more often; an out-of-range value gives
 * the same error at every thread count, which is compared too). */
static void fill_inputs(wick_interpreter *it) {
  uint32_t seed = 12345;
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    size_t bytes = wick_tensor_byte_size(t), es = wick_dtype_size(wick_tensor_dtype(t));
    unsigned char *p = wick_tensor_mutable_data(t);
    if (p == NULL || es == 0) continue;
    for (size_t k = 0; k < bytes / es; k++) {
      float v = lcg(&seed);
      switch (wick_tensor_dtype(t)) {
        case WICK_DTYPE_FLOAT32: memcpy(p + k * es, &v, 4); break;
        case WICK_DTYPE_INT8: p[k] = (unsigned char)(int8_t)(v * 100); break;
        case WICK_DTYPE_UINT8: p[k] = (unsigned char)(v * 100 + 128); break;
        case WICK_DTYPE_BOOL: p[k] = v > 0; break;
        case WICK_DTYPE_INT16: {
          int16_t x = (int16_t)(v * 1000);
          memcpy(p + k * es, &x, 2);
          break;
        }
        case WICK_DTYPE_INT32: {
          int32_t x = (int32_t)((v + 1) * 2);
          memcpy(p + k * es, &x, 4);
          break;
        }
        case WICK_DTYPE_INT64: {
          int64_t x = (int64_t)((v + 1) * 2);
          memcpy(p + k * es, &x, 8);
          break;
        }
        default: memset(p + k * es, 0, es); break;
      }
    }
  }
}

/* Runs `model` once per thread count and compares status and output bytes
 * with the 1-thread run. Returns the failures; *ran is 0 when the model does
 * not run on wick at all (skipped). */
static int check_thread_counts(const char *name, const wick_model *model, int force_reference,
                               int *ran) {
  unsigned char *want = NULL;
  size_t want_bytes = 0;
  wick_status want_st = WICK_OK;
  int failures = 0;
  *ran = 0;
  for (size_t c = 0; c < NUM_COUNTS; c++) {
    wick_interpreter_options o = wick_interpreter_options_default();
    o.num_threads = thread_counts[c];
    o.force_reference_kernels = force_reference;
    wick_error_info err;
    wick_interpreter *it;
    if (wick_interpreter_create(model, NULL, &o, &err, &it) != WICK_OK) {
      if (c != 0) {
        fprintf(stderr, "%s: create with %d threads failed: %s\n", name, o.num_threads,
                err.message);
        failures++;
      }
      break;
    }
    fill_inputs(it);
    wick_status st = wick_interpreter_invoke(it);
    size_t bytes = st == WICK_OK ? outputs_bytes(it) : 0;
    unsigned char *got = malloc(bytes ? bytes : 1);
    if (st == WICK_OK) copy_outputs(it, got);
    if (c == 0) {
      want = got;
      want_bytes = bytes;
      want_st = st;
      *ran = 1;
    } else {
      if (st != want_st || bytes != want_bytes || memcmp(got, want, bytes) != 0) {
        fprintf(stderr, "%s%s: %d threads differ from 1 thread (status %d vs %d)\n", name,
                force_reference ? " (reference kernels)" : "", o.num_threads, (int)st,
                (int)want_st);
        failures++;
      }
      free(got);
    }
    wick_interpreter_destroy(it);
  }
  free(want);
  return failures;
}

static int check_file(const char *path, int *checked) {
  wick_error_info err;
  wick_model *model;
  if (wick_model_load_file(path, NULL, &err, &model) != WICK_OK) return 0;
  int ran, failures = check_thread_counts(path, model, 0, &ran);
  *checked += ran;
  wick_model_destroy(model);
  return failures;
}

/* Every .tflite in `dir` whose name starts with one of `prefixes` (NULL:
 * all). */
static int check_dir(const char *dir, const char *const *prefixes, int *checked) {
  DIR *d = dir ? opendir(dir) : NULL;
  if (d == NULL) return 0;
  int failures = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 8 || strcmp(e->d_name + len - 7, ".tflite") != 0) continue;
    int wanted = prefixes == NULL;
    for (size_t i = 0; prefixes && prefixes[i]; i++)
      if (strncmp(e->d_name, prefixes[i], strlen(prefixes[i])) == 0) wanted = 1;
    if (!wanted) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    failures += check_file(path, checked);
  }
  closedir(d);
  return failures;
}

/* ---------------------------------------------------------------- phase 2: shared model */

typedef struct job {
  const wick_model *model;
  int num_threads, runs;
  const unsigned char *want; /* outputs of the first run, concatenated */
  size_t want_bytes;
  int failures;
} job;

static void *worker(void *arg) {
  job *j = arg;
  wick_error_info err;
  wick_interpreter *it;
  wick_interpreter_options o = wick_interpreter_options_default();
  o.num_threads = j->num_threads; /* each OS thread drives its own pool */
  if (wick_interpreter_create(j->model, NULL, &o, &err, &it) != WICK_OK) {
    fprintf(stderr, "create: %s\n", err.message);
    j->failures++;
    return NULL;
  }
  unsigned char *got = malloc(j->want_bytes);
  for (int r = 0; r < j->runs; r++) {
    fill_inputs(it);
    if (wick_interpreter_invoke(it) != WICK_OK) {
      j->failures++;
      break;
    }
    copy_outputs(it, got);
    if (memcmp(got, j->want, j->want_bytes) != 0) j->failures++;
  }
  free(got);
  wick_interpreter_destroy(it);
  return NULL;
}

typedef struct cancel_job {
  wick_interpreter *it;
  atomic_int stop;
  atomic_int cancelled, ok, other;
} cancel_job;

static void *invoker(void *arg) {
  cancel_job *c = arg;
  while (!atomic_load(&c->stop)) {
    wick_status st = wick_interpreter_invoke(c->it);
    if (st == WICK_OK)
      atomic_fetch_add(&c->ok, 1);
    else if (st == WICK_ERR_CANCELLED)
      atomic_fetch_add(&c->cancelled, 1);
    else
      atomic_fetch_add(&c->other, 1);
  }
  return NULL;
}

static int shared_model_phase(const char *name, const wick_model *model, int num_threads, int runs,
                              int cancel_loop) {
  wick_error_info err;
  wick_interpreter *ref;
  wick_interpreter_options o = wick_interpreter_options_default();
  o.num_threads = num_threads;
  if (wick_interpreter_create(model, NULL, &o, &err, &ref) != WICK_OK) {
    fprintf(stderr, "create: %s\n", err.message);
    return 1;
  }
  fill_inputs(ref);
  if (wick_interpreter_invoke(ref) != WICK_OK) return 1;
  size_t want_bytes = outputs_bytes(ref);
  unsigned char *want = malloc(want_bytes);
  copy_outputs(ref, want);

  pthread_t th[THREADS];
  job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){model, num_threads, runs, want, want_bytes, 0};
    pthread_create(&th[i], NULL, worker, &jobs[i]);
  }
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    failures += jobs[i].failures;
  }

  /* Cancel from another thread while invokes run: each returns OK or
   * CANCELLED, never anything else, and the interpreter stays usable. */
  cancel_job c = {ref, 0, 0, 0, 0};
  if (cancel_loop) {
    pthread_t inv;
    pthread_create(&inv, NULL, invoker, &c);
    /* Keep cancelling until both outcomes were seen a few times. */
    for (long i = 0; i < 100000000L && (atomic_load(&c.cancelled) < 20 || atomic_load(&c.ok) < 20);
         i++) {
      if (i % 8 == 0) wick_interpreter_cancel(ref);
      if (i % 1024 == 0) sched_yield();
    }
    atomic_store(&c.stop, 1);
    pthread_join(inv, NULL);
    if (atomic_load(&c.other) != 0 || atomic_load(&c.cancelled) == 0) failures++;
  }
  fill_inputs(ref);
  while (wick_interpreter_invoke(ref) == WICK_ERR_CANCELLED) {
  }
  unsigned char *again = malloc(want_bytes);
  copy_outputs(ref, again);
  if (memcmp(again, want, want_bytes) != 0) failures++;

  printf(
      "%s, interpreters of %d threads: %d OS threads x %d runs, %d invokes ok / %d "
      "cancelled: %d failures\n",
      name, num_threads, THREADS, runs, atomic_load(&c.ok), atomic_load(&c.cancelled), failures);
  free(again);
  free(want);
  wick_interpreter_destroy(ref);
  return failures;
}

/* Worker stacks (512 KiB each) count against memory_limit_bytes. */
static int thread_memory_cap(const wick_model *model) {
  int failures = 0;
  struct {
    int threads;
    size_t limit;
    wick_status want;
  } cases[] = {{1, 600 << 10, WICK_OK},
               {3, 600 << 10, WICK_ERR_OUT_OF_MEMORY},
               {3, 4 << 20, WICK_OK}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    wick_interpreter_options o = wick_interpreter_options_default();
    o.num_threads = cases[i].threads;
    o.memory_limit_bytes = cases[i].limit;
    wick_error_info err;
    wick_interpreter *it;
    wick_status st = wick_interpreter_create(model, NULL, &o, &err, &it);
    if (st != cases[i].want ||
        (st == WICK_ERR_OUT_OF_MEMORY && strstr(err.message, "threads") == NULL)) {
      fprintf(stderr, "%d threads under a %zu-byte cap: status %d (\"%s\"), want %d\n",
              cases[i].threads, cases[i].limit, (int)st, err.message, (int)cases[i].want);
      failures++;
    }
    if (st == WICK_OK) {
      fill_inputs(it);
      if (wick_interpreter_invoke(it) != WICK_OK) failures++;
      wick_interpreter_destroy(it);
    }
  }
  printf("thread stacks under the memory cap: %d failures\n", failures);
  return failures;
}

/* ---------------------------------------------------------------- phase 3: one giant op */

typedef struct giant_job {
  wick_interpreter *it;
  atomic_int started;
  wick_status status;
  double returned_at;
} giant_job;

static void *giant_invoker(void *arg) {
  giant_job *j = arg;
  atomic_store(&j->started, 1);
  j->status = wick_interpreter_invoke(j->it);
  j->returned_at = now_s();
  return NULL;
}

static int giant_cancel(const char *name, const wick_model *model, int num_threads,
                        bool reference) {
  wick_interpreter_options o = wick_interpreter_options_default();
  o.num_threads = num_threads;
  o.force_reference_kernels = reference;
  wick_error_info err;
  wick_interpreter *it;
  if (wick_interpreter_create(model, NULL, &o, &err, &it) != WICK_OK) {
    fprintf(stderr, "%s: %s\n", name, err.message);
    return 1;
  }
  fill_inputs(it);
  giant_job j = {it, 0, WICK_OK, 0};
  pthread_t th;
  pthread_create(&th, NULL, giant_invoker, &j);
  while (!atomic_load(&j.started)) sched_yield();
  /* Let the operator get going (the model has just this one). */
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  double cancelled_at = now_s();
  wick_interpreter_cancel(it);
  pthread_join(th, NULL);
  double latency = j.returned_at - cancelled_at;
  int failures = 0;
  const char *msg = wick_interpreter_last_error(it);
  if (j.status != WICK_ERR_CANCELLED || strstr(msg, "inside the operator") == NULL) {
    fprintf(stderr, "%s (%d threads): status %d, message \"%s\"\n", name, num_threads,
            (int)j.status, msg);
    failures++;
  }
  /* The status and message above prove the operator stopped between its
   * tasks (it would otherwise run to its end and report no cancellation
   * inside it). The latency (a task is ~1 M multiply-adds: milliseconds) is
   * printed, not asserted: a wall-clock bound flakes on a loaded machine. */
  printf("%s, %d threads: cancelled inside the operator, returned %.1f ms after cancel\n", name,
         num_threads, latency * 1e3);
  wick_interpreter_destroy(it);
  return failures;
}

/* Graph fusion (activations into epilogues, PADs into their reader) must not
 * change a byte: the same kernels with WICK_NO_FUSION=1 give the same outputs. */
static int check_fusion_is_exact(const char *name, const wick_model *model, int folded_pads) {
  unsigned char *out[2] = {NULL, NULL};
  size_t bytes[2] = {0, 0};
  int skipped[2] = {0, 0}; /* PAD / PADV2 nodes that took 0 ns: folded */
  for (int no_fusion = 0; no_fusion <= 1; no_fusion++) {
    if (no_fusion) setenv("WICK_NO_FUSION", "1", 1);
    wick_interpreter_options o = wick_interpreter_options_default();
    o.num_threads = 3;
    wick_error_info err;
    wick_interpreter *it;
    wick_status st = wick_interpreter_create(model, NULL, &o, &err, &it);
    unsetenv("WICK_NO_FUSION");
    if (st != WICK_OK) {
      fprintf(stderr, "%s: create failed: %s\n", name, err.message);
      free(out[0]);
      return 1;
    }
    fill_inputs(it);
    wick_interpreter_set_profiling(it, 1);
    if (wick_interpreter_invoke(it) == WICK_OK) {
      for (size_t i = 0; i < wick_interpreter_op_count(it); i++)
        if (strncmp(wick_interpreter_op_name(it, i), "PAD", 3) == 0 &&
            wick_interpreter_op_time_ns(it, i) == 0)
          skipped[no_fusion]++;
      bytes[no_fusion] = outputs_bytes(it);
      out[no_fusion] = malloc(bytes[no_fusion] ? bytes[no_fusion] : 1);
      copy_outputs(it, out[no_fusion]);
    }
    wick_interpreter_destroy(it);
  }
  int bad = out[0] == NULL || out[1] == NULL || bytes[0] != bytes[1] ||
            memcmp(out[0], out[1], bytes[0]) != 0;
  if (bad) fprintf(stderr, "%s: fused and unfused (WICK_NO_FUSION=1) outputs differ\n", name);
  if (skipped[0] != folded_pads || skipped[1] != 0) {
    fprintf(stderr, "%s: %d PADs folded (%d with WICK_NO_FUSION=1), expected %d\n", name,
            skipped[0], skipped[1], folded_pads);
    bad = 1;
  }
  free(out[0]);
  free(out[1]);
  return bad;
}

typedef struct count_job {
  atomic_uchar *runs; /* per task */
  atomic_int bad_thread;
  size_t threads;
} count_job;

static void count_task(void *arg, size_t task, size_t thread) {
  count_job *j = arg;
  atomic_fetch_add_explicit(&j->runs[task], 1, memory_order_relaxed);
  if (thread >= j->threads) atomic_store(&j->bad_thread, 1);
}

/* Every task of a job runs once, whichever thread claims it. */
static int pool_runs_every_task_once(void) {
  static const size_t sizes[] = {2, 3, 5, 64, 1001, 65535, 65536, 200000};
  static const int threads[] = {2, 3, 7};
  int failures = 0;
  atomic_uchar *runs = malloc(200000 * sizeof *runs);
  if (runs == NULL) return 1;
  for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
    wick_mem mem;
    wick_mem_init(&mem, NULL, 0);
    wick_thread_pool *pool;
    if (wick_thread_pool_create(&mem, threads[ti], &pool) != WICK_OK || pool == NULL) {
      fprintf(stderr, "pool of %d threads not created\n", threads[ti]);
      failures++;
      continue;
    }
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      for (int rep = 0; rep < 20; rep++) {
        const size_t n = sizes[si];
        for (size_t t = 0; t < n; t++) atomic_init(&runs[t], 0);
        count_job j = {runs, 0, wick_thread_pool_threads(pool)};
        bool complete = wick_thread_pool_run(pool, n, UINT64_MAX, count_task, &j, NULL);
        size_t wrong = 0;
        for (size_t t = 0; t < n; t++) wrong += atomic_load(&runs[t]) != 1;
        if (!complete || wrong || atomic_load(&j.bad_thread)) {
          fprintf(stderr, "pool, %d threads, %zu tasks: %zu tasks not run exactly once%s\n",
                  threads[ti], n, wrong, complete ? "" : " (reported incomplete)");
          failures++;
          break;
        }
      }
    }
    wick_thread_pool_destroy(pool);
  }
  free(runs);
  printf("pool: every task of jobs of 2..200000 tasks ran once on 2/3/7 threads: %d failures\n",
         failures);
  return failures;
}

int main(void) {
  int failures = 0;

  failures += pool_runs_every_task_once();

  /* 1. Bit-identical for any thread count. */
  size_t size;
  uint8_t *net = conv_net(&size);
  wick_error_info err;
  wick_model *model;
  if (wick_model_load_buffer(net, size, NULL, &err, &model) != WICK_OK) {
    fprintf(stderr, "load conv net: %s\n", err.message);
    return 1;
  }
  int ran;
  for (int force_reference = 0; force_reference <= 1; force_reference++) {
    failures += check_thread_counts("conv net", model, force_reference, &ran);
    if (!ran) {
      fprintf(stderr, "conv net does not run: %s\n", err.message);
      failures++;
    }
  }
  failures += check_fusion_is_exact("conv net", model, 3);
  wick_model_destroy(model);
  free(net);
  int checked = 0;
  failures += check_dir(getenv("WICK_SHARED_MODELS"), NULL, &checked);
  const char *cache = getenv("WICK_MODEL_CACHE");
  static const char *const keras[] = {"mobilenet_v2-", "tiny_cnn-", "transformer_block-", "mlp-",
                                      NULL};
  failures += check_dir(cache ? cache : "build/model-cache", keras, &checked);
  printf(
      "thread counts 1/2/3/4/7: conv net (optimized and reference kernels) and %d model "
      "files compared%s\n",
      checked, checked ? "" : " (no model files found: $WICK_SHARED_MODELS / model cache)");

  /* 2. One model, many OS threads, each interpreter with its own workers. */
  uint8_t *chain = tm_demo_chain(&size);
  if (wick_model_load_buffer(chain, size, NULL, &err, &model) != WICK_OK) {
    fprintf(stderr, "load: %s\n", err.message);
    return 1;
  }
  failures += shared_model_phase("demo chain", model, 1, 50, 1);
  failures += shared_model_phase("demo chain", model, 2, 50, 1);
  failures += thread_memory_cap(model);
  wick_model_destroy(model);
  free(chain);
  net = conv_net(&size);
  if (wick_model_load_buffer(net, size, NULL, &err, &model) != WICK_OK) return 1;
  failures += shared_model_phase("conv net", model, 2, 3, 0);
  wick_model_destroy(model);
  free(net);

  /* 4. Cancel one giant operator from another thread. */
  uint8_t *giant = giant_conv(&size);
  if (wick_model_load_buffer(giant, size, NULL, &err, &model) != WICK_OK) {
    fprintf(stderr, "load giant: %s\n", err.message);
    return 1;
  }
  failures += giant_cancel("giant conv", model, 1, true);
  failures += giant_cancel("giant conv", model, 2, true);
  wick_model_destroy(model);
  free(giant);
  giant = giant_int8_pool(&size);
  if (wick_model_load_buffer(giant, size, NULL, &err, &model) != WICK_OK) {
    fprintf(stderr, "load giant pool: %s\n", err.message);
    return 1;
  }
  failures += giant_cancel("giant int8 max pool", model, 1, false);
  failures += giant_cancel("giant int8 max pool", model, 2, false);
  wick_model_destroy(model);
  free(giant);

  printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
