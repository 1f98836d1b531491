/*
 * op_sweep/sweep.h — the op sweep's harness as its case files see it (tests/unit/test_op_sweep.c
 * describes the sweep): a case is a one-operator model built with tiny_model.h — case_begin,
 * its inputs (random, drawn from [lo, hi]) and constants, its outputs, op() — and run_case()
 * runs it on every kernel set and prints its row of the table.
 *
 * The harness is op_sweep/harness.c; the cases are grouped by family in the other op_sweep
 * files (elementwise.c, conv.c, other.c, graphs.c), each exporting its sweep_* functions, which
 * test_op_sweep.c's main calls in table order.
 */
#ifndef WICK_TESTS_OP_SWEEP_H
#define WICK_TESTS_OP_SWEEP_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/op_api.h"
#include "format/schema.h"
#include "kernels/cpu.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "tiny_model.h"
#include "wick/wick.h"

/* ---------------------------------------------------------------- cases */

#define MAX_INPUTS 8
#define MAX_OUTPUTS 4
typedef struct case_input {
  int32_t tensor;
  wick_dtype type;
  size_t count;
  double lo, hi; /* the values drawn: uniform reals (float) or integers (others) */
} case_input;

typedef struct sweep_case {
  tm_builder *b;
  tm_graph g;
  const char *op;
  char variant[72];
  double tol; /* float outputs: relative tolerance; 0: bit for bit */
  case_input in[MAX_INPUTS];
  size_t nin;
  int32_t out[MAX_OUTPUTS];
  size_t nout;
  uint32_t rng;
  bool skip;         /* filtered out on the command line */
  bool constant_ok;  /* a constant output is the op's point (FILL, ZEROS_LIKE) */
  uint8_t *prebuilt; /* a ready-made model (malloc'd) instead of the one built here */
  size_t prebuilt_size;
} sweep_case;

#define TOL_FLOAT 1e-5
#define EXACT 0.0

/* The shape of a tensor as (array, rank): S(1, 4, 4, 3). */
#define S(...) \
  (const int32_t[]){__VA_ARGS__}, sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t)
#define FULL NAN /* lo = FULL: the type's whole range (floats: [-2, 2]) */

enum { PAD_SAME = 0, PAD_VALID = 1 };
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };
/* A tensor's per-tensor quantization. */
typedef struct qparams {
  float scale;
  int64_t zero_point;
} qparams;

extern const char *const act_names[4];     /* " relu" ... by ACT_* */
extern const wick_dtype movement_types[4]; /* float32, int8, uint8, int16 */

/* ---- the harness (op_sweep/harness.c; each function's comment is there) ---- */
size_t elements(const int32_t *shape, size_t rank);
size_t type_size(wick_dtype t);
void case_begin(sweep_case *c, const char *op, double tol, const char *fmt, ...);
int32_t add_tensor(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                   uint32_t buffer, tm_node *quant);
int32_t input(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank, tm_node *quant,
              double lo, double hi);
int32_t constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank, tm_node *quant,
                 const void *data);
int32_t random_constant(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                        tm_node *quant, double lo, double hi);
int32_t const_i32(sweep_case *c, const int32_t *shape, size_t rank, const int32_t *v);
int32_t output(sweep_case *c, wick_dtype type, tm_node *quant);
int32_t shaped_output(sweep_case *c, wick_dtype type, const int32_t *shape, size_t rank,
                      tm_node *quant);
tm_node *q(sweep_case *c, float scale, int64_t zero_point);
tm_node *q_channels(sweep_case *c, const float *scales, size_t n, int32_t dim);
void channel_scales(float *scales, size_t n, float base);
void op(sweep_case *c, int32_t builtin, const int32_t *ins, size_t nin, uint8_t opt_type,
        tm_node *opts);
void mark_covered(const char *op_name);
void run_case(sweep_case *c);
tm_node *opt_conv(sweep_case *c, int padding, int stride_h, int stride_w, int act, int dilation_h,
                  int dilation_w);
tm_node *opt_dwconv(sweep_case *c, int padding, int stride, int multiplier, int act, int dilation);
tm_node *opt_pool(sweep_case *c, int padding, int stride, int size, int act);
tm_node *opt_fc(sweep_case *c, int act, bool keep_num_dims, bool asymmetric);
tm_node *opt_i8(sweep_case *c, int8_t v);
tm_node *opt_f32(sweep_case *c, float v);
tm_node *opt_empty(sweep_case *c);
float dot_scale(int k, float s_in, double q_in, float s_w, double q_w, double q_out);
tm_node *quant_for(sweep_case *c, wick_dtype type);
double lo_for(wick_dtype type);

/* Parses the command line, checks the op tables and prints the table's header: false (after
 * printing why) when the tables are broken. */
bool sweep_begin(int argc, char **argv);
/* Prints the totals, the details of every DIFF / ERR / weak case and the coverage; the exit
 * status: 1 when any cell failed. */
int sweep_end(void);

/* ---- the cases, by family ---- */
/* op_sweep/elementwise.c */
void sweep_binary_float(void);
void sweep_binary_quantized(void);
void sweep_unary(void);
void sweep_unary_quantized(void);
void sweep_prelu(void);
void sweep_compare_logical(void);
void sweep_binary_more(void);
/* op_sweep/conv.c */
void sweep_conv(void);
void sweep_dwconv(void);
void sweep_fc(void);
void sweep_bmm(void);
void sweep_transpose_conv(void);
/* op_sweep/other.c */
void sweep_pools(void);
void sweep_softmax(void);
void sweep_reduce(void);
void sweep_pad(void);
void sweep_concat(void);
void sweep_transpose(void);
void sweep_resize(void);
void sweep_quantize(void);
void sweep_movement(void);
void sweep_misc(void);
void sweep_recurrent(void);
/* op_sweep/graphs.c */
void sweep_graphs(void);

#endif /* WICK_TESTS_OP_SWEEP_H */
