/*
 * op_sweep/conv.c — the op sweep's cases for the convolutions, FULLY_CONNECTED, BATCH_MATMUL and
 * TRANSPOSE_CONV (tests/unit/test_op_sweep.c describes the sweep; op_sweep/sweep.h the harness they
 * use).
 */
#include "op_sweep/sweep.h"

/* ---------------------------------------------------------------- convolutions */

typedef struct conv_spec {
  const char *name;
  int32_t n, h, w, cin, cout, kh, kw, groups;
  int padding, sh, sw, dh, dw, act;
  bool bias;
} conv_spec;

static const conv_spec conv_specs[] = {
    {"1x1 [1,9,7,19]->37", 1, 9, 7, 19, 37, 1, 1, 1, PAD_VALID, 1, 1, 1, 1, ACT_NONE, true},
    {"1x1 [2,5,5,64]->16 relu", 2, 5, 5, 64, 16, 1, 1, 1, PAD_VALID, 1, 1, 1, 1, ACT_RELU, true},
    {"3x3 same [1,28,26,16]->24 (winograd)", 1, 28, 26, 16, 24, 3, 3, 1, PAD_SAME, 1, 1, 1, 1,
     ACT_NONE, true},
    {"3x3 same [1,6,7,5]->13", 1, 6, 7, 5, 13, 3, 3, 1, PAD_SAME, 1, 1, 1, 1, ACT_RELU6, true},
    {"3x3 stride 2 same [2,11,9,5]->13", 2, 11, 9, 5, 13, 3, 3, 1, PAD_SAME, 2, 2, 1, 1, ACT_RELU,
     true},
    {"5x3 stride 1x2 valid [1,12,13,7]->9", 1, 12, 13, 7, 9, 5, 3, 1, PAD_VALID, 1, 2, 1, 1,
     ACT_NONE, true},
    {"3x3 dilation 2 same [1,12,12,8]->16", 1, 12, 12, 8, 16, 3, 3, 1, PAD_SAME, 1, 1, 2, 2,
     ACT_NONE, true},
    {"3x3 groups 3 same [1,8,8,12]->18", 1, 8, 8, 12, 18, 3, 3, 3, PAD_SAME, 1, 1, 1, 1, ACT_NONE,
     true},
    {"3x3 groups=channels [1,8,8,12]->12", 1, 8, 8, 12, 12, 3, 3, 12, PAD_SAME, 1, 1, 1, 1,
     ACT_NONE, true},
    {"3x3 no bias [1,7,7,8]->8 relu_n1_to_1", 1, 7, 7, 8, 8, 3, 3, 1, PAD_SAME, 1, 1, 1, 1,
     ACT_RELU_N1_TO_1, false},
    {"large 3x3 same [1,32,32,32]->32", 1, 32, 32, 32, 32, 3, 3, 1, PAD_SAME, 1, 1, 1, 1, ACT_NONE,
     true},
};
#define NUM_CONV_SPECS (sizeof conv_specs / sizeof conv_specs[0])

/* The activation/filter/bias schemes of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
 * TRANSPOSE_CONV. */
typedef enum scheme {
  SCHEME_FLOAT,
  SCHEME_INT8,          /* int8 activations, per-channel int8 weights, int32 bias */
  SCHEME_INT8_TENSOR,   /* int8 activations, one int8 weight scale */
  SCHEME_UINT8,         /* uint8 activations and weights (zero point 120), int32 bias */
  SCHEME_INT16,         /* int16 activations (zero points 0), int8 weights, int64 bias */
  SCHEME_INT16_B32,     /* the same with an int32 bias */
  SCHEME_HYBRID,        /* float activations, per-channel int8 weights */
  SCHEME_HYBRID_ASYM,   /* the same, inputs quantized asymmetrically (FULLY_CONNECTED) */
  SCHEME_HYBRID_TENSOR, /* float activations, one int8 weight scale */
  SCHEME_COUNT
} scheme;
static const char *const scheme_names[] = {"float32",          "int8",
                                           "int8 per-tensor",  "uint8",
                                           "int16x8",          "int16x8 bias32",
                                           "hybrid",           "hybrid asymmetric",
                                           "hybrid per-tensor"};

typedef struct scheme_types {
  wick_dtype act, weight, bias;
  double q_act, q_w, q_out; /* magnitudes in steps */
  int64_t zp_in, zp_out, zp_w;
  float s_in, s_w;
  bool per_channel, quantized;
} scheme_types;

static scheme_types scheme_of(scheme s) {
  scheme_types t = {WICK_DTYPE_FLOAT32,
                    WICK_DTYPE_FLOAT32,
                    WICK_DTYPE_FLOAT32,
                    2,
                    1,
                    1,
                    0,
                    0,
                    0,
                    1,
                    1,
                    false,
                    false};
  switch (s) {
    case SCHEME_FLOAT: break;
    case SCHEME_INT8:
    case SCHEME_INT8_TENSOR:
      t = (scheme_types){
          WICK_DTYPE_INT8, WICK_DTYPE_INT8, WICK_DTYPE_INT32, 128, 127, 128, -5, 3, 0,
          0.02f,           0.01f,           s == SCHEME_INT8, true};
      break;
    case SCHEME_UINT8:
      t = (scheme_types){WICK_DTYPE_UINT8,
                         WICK_DTYPE_UINT8,
                         WICK_DTYPE_INT32,
                         128,
                         128,
                         128,
                         128,
                         128,
                         120,
                         0.02f,
                         0.01f,
                         false,
                         true};
      break;
    case SCHEME_INT16:
    case SCHEME_INT16_B32:
      t = (scheme_types){WICK_DTYPE_INT16,
                         WICK_DTYPE_INT8,
                         s == SCHEME_INT16 ? WICK_DTYPE_INT64 : WICK_DTYPE_INT32,
                         32768,
                         127,
                         32768,
                         0,
                         0,
                         0,
                         0.0005f,
                         0.01f,
                         true,
                         true};
      break;
    case SCHEME_HYBRID:
    case SCHEME_HYBRID_ASYM:
    case SCHEME_HYBRID_TENSOR:
      t = (scheme_types){WICK_DTYPE_FLOAT32,
                         WICK_DTYPE_INT8,
                         WICK_DTYPE_FLOAT32,
                         2,
                         127,
                         1,
                         0,
                         0,
                         0,
                         1,
                         0.01f,
                         s != SCHEME_HYBRID_TENSOR,
                         false};
      break;
    default: break;
  }
  return t;
}

/* The activation input / output and the weights + bias of one scheme: `channels` output
 * channels along weight dimension `wdim`, `k` terms per output. */
static int32_t scheme_input(sweep_case *c, const scheme_types *t, const int32_t *shape,
                            size_t rank) {
  return t->quantized ? input(c, t->act, shape, rank, q(c, t->s_in, t->zp_in), FULL, 0)
                      : input(c, t->act, shape, rank, NULL, -2, 2);
}

static int32_t scheme_weights(sweep_case *c, const scheme_types *t, const int32_t *shape,
                              size_t rank, int32_t channels, int32_t wdim, float *scales) {
  if (t->weight == WICK_DTYPE_FLOAT32)
    return random_constant(c, WICK_DTYPE_FLOAT32, shape, rank, NULL, -1, 1);
  tm_node *quant;
  if (t->per_channel) {
    channel_scales(scales, (size_t)channels, t->s_w);
    quant = q_channels(c, scales, (size_t)channels, wdim);
  } else {
    for (int32_t i = 0; i < channels; i++) scales[i] = t->s_w;
    quant = q(c, t->s_w, t->zp_w);
  }
  return t->weight == WICK_DTYPE_UINT8
             ? random_constant(c, t->weight, shape, rank, quant, FULL, 0)
             : random_constant(c, t->weight, shape, rank, quant, -127, 127);
}

static int32_t scheme_bias(sweep_case *c, const scheme_types *t, int32_t channels,
                           const float *scales) {
  if (t->bias == WICK_DTYPE_FLOAT32)
    return random_constant(c, WICK_DTYPE_FLOAT32, &channels, 1, NULL, -1, 1);
  float bias_scales[256];
  for (int32_t i = 0; i < channels; i++) bias_scales[i] = t->s_in * scales[i];
  tm_node *quant =
      t->per_channel ? q_channels(c, bias_scales, (size_t)channels, 0) : q(c, bias_scales[0], 0);
  const double range = t->bias == WICK_DTYPE_INT64 ? 200000 : 3000;
  return random_constant(c, t->bias, &channels, 1, quant, -range, range);
}

static int32_t scheme_output(sweep_case *c, const scheme_types *t, int k) {
  if (!t->quantized) return output(c, WICK_DTYPE_FLOAT32, NULL);
  return output(c, t->act,
                q(c, dot_scale(k, t->s_in, t->q_act, t->s_w, t->q_w, t->q_out), t->zp_out));
}

static void conv_case(const conv_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "CONV_2D", EXACT, "%s %s", scheme_names[sc], sp->name);
  if (!t.quantized) c.tol = TOL_FLOAT;
  const int32_t cin_g = sp->cin / sp->groups;
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, (const int32_t[]){sp->n, sp->h, sp->w, sp->cin}, 4);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){sp->cout, sp->kh, sp->kw, cin_g}, 4, sp->cout,
                          0, scales);
  ins[2] = sp->bias ? scheme_bias(&c, &t, sp->cout, scales) : -1;
  scheme_output(&c, &t, sp->kh * sp->kw * cin_g);
  op(&c, WICK_BUILTIN_CONV_2D, ins, 3, OPT_CONV_2D,
     opt_conv(&c, sp->padding, sp->sh, sp->sw, sp->act, sp->dh, sp->dw));
  run_case(&c);
}

void sweep_conv(void) {
  for (size_t i = 0; i < NUM_CONV_SPECS; i++) {
    const conv_spec *sp = &conv_specs[i];
    const bool large = strncmp(sp->name, "large", 5) == 0;
    for (int sc = 0; sc < SCHEME_COUNT; sc++) {
      if (sc == SCHEME_HYBRID_ASYM || sc == SCHEME_HYBRID_TENSOR) continue; /* FC-only forms */
      if (large && sc != SCHEME_FLOAT && sc != SCHEME_INT8) continue;
      if ((sc == SCHEME_INT8_TENSOR || sc == SCHEME_INT16_B32) && i % 3 != 0) continue;
      conv_case(sp, (scheme)sc);
    }
  }
}

typedef struct dwconv_spec {
  const char *name;
  int32_t n, h, w, cin, multiplier, k;
  int padding, stride, dilation, act;
} dwconv_spec;

static void dwconv_case(const dwconv_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "DEPTHWISE_CONV_2D", t.quantized ? EXACT : TOL_FLOAT, "%s %s", scheme_names[sc],
             sp->name);
  const int32_t cout = sp->cin * sp->multiplier;
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, (const int32_t[]){sp->n, sp->h, sp->w, sp->cin}, 4);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){1, sp->k, sp->k, cout}, 4, cout, 3, scales);
  ins[2] = scheme_bias(&c, &t, cout, scales);
  scheme_output(&c, &t, sp->k * sp->k);
  op(&c, WICK_BUILTIN_DEPTHWISE_CONV_2D, ins, 3, OPT_DEPTHWISE_CONV_2D,
     opt_dwconv(&c, sp->padding, sp->stride, sp->multiplier, sp->act, sp->dilation));
  run_case(&c);
}

void sweep_dwconv(void) {
  static const dwconv_spec specs[] = {
      {"3x3 same [1,9,11,19]", 1, 9, 11, 19, 1, 3, PAD_SAME, 1, 1, ACT_NONE},
      {"3x3 stride 2 valid [2,10,9,24] relu6", 2, 10, 9, 24, 1, 3, PAD_VALID, 2, 1, ACT_RELU6},
      {"3x3 stride 2 same [1,9,9,35]", 1, 9, 9, 35, 1, 3, PAD_SAME, 2, 1, ACT_NONE},
      {"5x5 same [1,10,9,21]", 1, 10, 9, 21, 1, 5, PAD_SAME, 1, 1, ACT_RELU},
      {"5x5 stride 2 same [1,11,11,16]", 1, 11, 11, 16, 1, 5, PAD_SAME, 2, 1, ACT_NONE},
      {"3x3 multiplier 2 same [1,7,7,6]", 1, 7, 7, 6, 2, 3, PAD_SAME, 1, 1, ACT_NONE},
      {"5x5 multiplier 3 valid [1,9,8,5]", 1, 9, 8, 5, 3, 5, PAD_VALID, 1, 1, ACT_NONE},
      {"3x3 dilation 2 same [1,11,10,17]", 1, 11, 10, 17, 1, 3, PAD_SAME, 1, 2, ACT_NONE},
      {"7x7 same [1,9,9,20]", 1, 9, 9, 20, 1, 7, PAD_SAME, 1, 1, ACT_NONE},
      {"large 3x3 same [1,64,64,64]", 1, 64, 64, 64, 1, 3, PAD_SAME, 1, 1, ACT_NONE},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (int sc = 0; sc < SCHEME_COUNT; sc++) {
      if (sc == SCHEME_HYBRID_ASYM || sc == SCHEME_HYBRID_TENSOR) continue;
      if (i == 9 && sc != SCHEME_FLOAT && sc != SCHEME_INT8) continue;
      if ((sc == SCHEME_INT8_TENSOR || sc == SCHEME_INT16_B32) && i % 3 != 0) continue;
      dwconv_case(&specs[i], (scheme)sc);
    }
}

typedef struct fc_spec {
  const char *name;
  int32_t in[3];
  size_t rank;
  int32_t n;
  bool bias, keep_num_dims;
  int act;
} fc_spec;

static void fc_case(const fc_spec *sp, scheme sc) {
  const scheme_types t = scheme_of(sc);
  sweep_case c;
  case_begin(&c, "FULLY_CONNECTED", t.quantized ? EXACT : TOL_FLOAT, "%s %s", scheme_names[sc],
             sp->name);
  const int32_t k = sp->in[sp->rank - 1];
  float scales[256];
  int32_t ins[3];
  ins[0] = scheme_input(&c, &t, sp->in, sp->rank);
  ins[1] = scheme_weights(&c, &t, (const int32_t[]){sp->n, k}, 2, sp->n, 0, scales);
  ins[2] = sp->bias ? scheme_bias(&c, &t, sp->n, scales) : -1;
  scheme_output(&c, &t, k);
  op(&c, WICK_BUILTIN_FULLY_CONNECTED, ins, 3, OPT_FULLY_CONNECTED,
     opt_fc(&c, sp->act, sp->keep_num_dims, sc == SCHEME_HYBRID_ASYM));
  run_case(&c);
}

void sweep_fc(void) {
  static const fc_spec specs[] = {
      {"[1,67]x[37,67]", {1, 67}, 2, 37, true, false, ACT_NONE},
      {"[13,19]x[37,19] relu", {13, 19}, 2, 37, true, false, ACT_RELU},
      {"[2,3,45]x[33,45] keep_num_dims", {2, 3, 45}, 3, 33, true, true, ACT_NONE},
      {"[9,45]x[16,45] no bias", {9, 45}, 2, 16, false, false, ACT_NONE},
      {"[4,200]x[7,200] relu6", {4, 200}, 2, 7, true, false, ACT_RELU6},
      {"large [64,256]x[128,256]", {64, 256}, 2, 128, true, false, ACT_NONE},
      /* one row of an LLM's decode step: the hybrid form runs the dot kernel on the file's
       * int8 weights (no packed copy), split over the threads by columns */
      {"one row [1,288]x[256,288]", {1, 288}, 2, 256, true, false, ACT_NONE},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (int sc = 0; sc < SCHEME_COUNT; sc++) fc_case(&specs[i], (scheme)sc);
  /* int8 weights with a nonzero zero point (legacy per-tensor form): the reference path */
  sweep_case c;
  case_begin(&c, "FULLY_CONNECTED", EXACT, "int8 weight zero point 4 [5,31]x[9,31]");
  int32_t ins[3];
  ins[0] = input(&c, WICK_DTYPE_INT8, S(5, 31), q(&c, 0.02f, -5), FULL, 0);
  ins[1] = random_constant(&c, WICK_DTYPE_INT8, S(9, 31), q(&c, 0.01f, 4), -127, 127);
  ins[2] = random_constant(&c, WICK_DTYPE_INT32, S(9), q(&c, 0.0002f, 0), -3000, 3000);
  output(&c, WICK_DTYPE_INT8, q(&c, dot_scale(31, 0.02f, 128, 0.01f, 127, 128), 3));
  op(&c, WICK_BUILTIN_FULLY_CONNECTED, ins, 3, OPT_FULLY_CONNECTED, opt_fc(&c, 0, false, false));
  run_case(&c);
}

/* ---------------------------------------------------------------- BATCH_MATMUL */

typedef struct bmm_spec {
  const char *name;
  int32_t a[4], b[4];
  size_t ra, rb;
  bool adj_x, adj_y, b_const;
} bmm_spec;

static tm_node *opt_bmm(sweep_case *c, bool adj_x, bool adj_y, bool asymmetric) {
  tm_node *o = tm_table(c->b);
  tm_u8(o, 0, adj_x);
  tm_u8(o, 1, adj_y);
  tm_u8(o, 2, asymmetric);
  return o;
}

void sweep_bmm(void) {
  static const bmm_spec specs[] = {
      {"[2,9,19]x[2,19,37]", {2, 9, 19}, {2, 19, 37}, 3, 3, false, false, false},
      {"[3,1,5,8]x[1,2,8,17] broadcast", {3, 1, 5, 8}, {1, 2, 8, 17}, 4, 4, false, false, false},
      {"[2,7,13]x[2,21,13] adj_y", {2, 7, 13}, {2, 21, 13}, 3, 3, false, true, false},
      {"[2,13,7]x[2,13,21] adj_x", {2, 13, 7}, {2, 13, 21}, 3, 3, true, false, false},
      {"[2,9,19]x[19,37] constant rhs", {2, 9, 19}, {19, 37}, 3, 2, false, false, true},
      {"[1,1,33]x[33,40] constant rhs", {1, 1, 33}, {33, 40}, 3, 2, false, false, true},
      {"large [4,64,64]x[4,64,64]", {4, 64, 64}, {4, 64, 64}, 3, 3, false, false, false},
      {"attention [12,32,32]x[12,32,32] adj_y",
       {12, 32, 32},
       {12, 32, 32},
       3,
       3,
       false,
       true,
       false},
      {"[2,33,5]x[2,33,17] adj_x adj_y", {2, 33, 5}, {2, 17, 33}, 3, 3, true, true, false},
      /* a layer norm's sum of squares: one dot product per batch (operands read in place) */
      {"dots [40,1,384]x[40,384,1]", {40, 1, 384}, {40, 384, 1}, 3, 3, false, false, false},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    const bmm_spec *sp = &specs[i];
    {
      sweep_case c;
      case_begin(&c, "BATCH_MATMUL", TOL_FLOAT, "float32 %s", sp->name);
      int32_t ins[2];
      ins[0] = input(&c, WICK_DTYPE_FLOAT32, sp->a, sp->ra, NULL, -2, 2);
      ins[1] = sp->b_const ? random_constant(&c, WICK_DTYPE_FLOAT32, sp->b, sp->rb, NULL, -1, 1)
                           : input(&c, WICK_DTYPE_FLOAT32, sp->b, sp->rb, NULL, -1, 1);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
         opt_bmm(&c, sp->adj_x, sp->adj_y, false));
      run_case(&c);
    }
    const int32_t k = sp->adj_x ? sp->a[sp->ra - 2] : sp->a[sp->ra - 1];
    const int32_t n = sp->adj_y ? sp->b[sp->rb - 2] : sp->b[sp->rb - 1];
    if (sp->b_const) /* hybrid: a constant int8 rhs, one scale or one per column */
      for (int form = 0; form < 3; form++) {
        sweep_case c;
        case_begin(&c, "BATCH_MATMUL", TOL_FLOAT, "hybrid%s %s",
                   form == 0   ? ""
                   : form == 1 ? " per-column"
                               : " asymmetric",
                   sp->name);
        float scales[256];
        channel_scales(scales, (size_t)n, 0.01f);
        int32_t ins[2];
        ins[0] = input(&c, WICK_DTYPE_FLOAT32, sp->a, sp->ra, NULL, -2, 2);
        ins[1] = random_constant(&c, WICK_DTYPE_INT8, sp->b, sp->rb,
                                 form == 1 ? q_channels(&c, scales, (size_t)n, (int32_t)sp->rb - 1)
                                           : q(&c, 0.01f, 0),
                                 -127, 127);
        output(&c, WICK_DTYPE_FLOAT32, NULL);
        op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
           opt_bmm(&c, sp->adj_x, sp->adj_y, form == 2));
        run_case(&c);
      }
    if (i < 4 || i >= 6) /* integer: int8 x int8 (rhs zero point 0, and not) and int16 x int8 */
      for (int t = 0; t < 4; t++) { /* int8, int16 x int8, int8 rhs zp, int16 x int16 */
        const bool wide = t == 1 || t == 3;
        const wick_dtype type = wide ? WICK_DTYPE_INT16 : WICK_DTYPE_INT8;
        const wick_dtype rtype = t == 3 ? WICK_DTYPE_INT16 : WICK_DTYPE_INT8;
        const float s_a = wide ? 0.0005f : 0.02f, s_b = t == 3 ? 0.0005f : 0.01f;
        const double q_a = wide ? 32768 : 128, q_b = t == 3 ? 32768 : 127;
        const int32_t rhs_zp = t == 2 ? -37 : 0;
        sweep_case c;
        case_begin(&c, "BATCH_MATMUL", EXACT, "%s%s%s %s", wick_dtype_name(type),
                   t == 3 ? " x int16" : "", rhs_zp ? " rhs zp" : "", sp->name);
        int32_t ins[2];
        ins[0] = input(&c, type, sp->a, sp->ra, q(&c, s_a, wide ? 0 : 3), FULL, 0);
        ins[1] =
            t == 3 ? input(&c, rtype, sp->b, sp->rb, q(&c, s_b, 0), FULL, 0)
                   : input(&c, rtype, sp->b, sp->rb, q(&c, s_b, rhs_zp), t == 1 ? -127 : -128, 127);
        output(&c, type, q(&c, dot_scale(k, s_a, q_a, s_b, q_b, q_a), wide ? 0 : -4));
        op(&c, WICK_BUILTIN_BATCH_MATMUL, ins, 2, OPT_BATCH_MATMUL,
           opt_bmm(&c, sp->adj_x, sp->adj_y, false));
        run_case(&c);
      }
  }
}

/* ---------------------------------------------------------------- TRANSPOSE_CONV */

void sweep_transpose_conv(void) {
  static const struct {
    const char *name;
    int32_t n, h, w, cin, cout, k, stride;
    int padding;
    bool bias;
  } specs[] = {
      {"3x3 stride 2 same [1,5,5,5]->8", 1, 5, 5, 5, 8, 3, 2, PAD_SAME, true},
      {"3x3 stride 2 valid [2,4,6,7]->9", 2, 4, 6, 7, 9, 3, 2, PAD_VALID, true},
      {"3x3 stride 1 same [1,6,5,8]->17 no bias", 1, 6, 5, 8, 17, 3, 1, PAD_SAME, false},
      {"2x2 stride 2 valid [1,7,7,16]->19", 1, 7, 7, 16, 19, 2, 2, PAD_VALID, true},
      {"4x4 stride 2 same [1,6,6,12]->10", 1, 6, 6, 12, 10, 4, 2, PAD_SAME, true},
  };
  const scheme schemes[] = {SCHEME_FLOAT, SCHEME_INT8, SCHEME_UINT8, SCHEME_INT16};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
      const scheme_types t = scheme_of(schemes[s]);
      sweep_case c;
      case_begin(&c, "TRANSPOSE_CONV", t.quantized ? EXACT : TOL_FLOAT, "%s %s",
                 scheme_names[schemes[s]], specs[i].name);
      const int32_t oh = specs[i].padding == PAD_SAME
                             ? specs[i].h * specs[i].stride
                             : (specs[i].h - 1) * specs[i].stride + specs[i].k;
      const int32_t ow = specs[i].padding == PAD_SAME
                             ? specs[i].w * specs[i].stride
                             : (specs[i].w - 1) * specs[i].stride + specs[i].k;
      const int32_t out_shape[4] = {specs[i].n, oh, ow, specs[i].cout};
      float scales[256];
      int32_t ins[4];
      ins[0] = const_i32(&c, S(4), out_shape);
      ins[1] =
          scheme_weights(&c, &t,
                         (const int32_t[]){specs[i].cout, specs[i].k, specs[i].k, specs[i].cin}, 4,
                         specs[i].cout, 0, scales);
      ins[2] = scheme_input(&c, &t,
                            (const int32_t[]){specs[i].n, specs[i].h, specs[i].w, specs[i].cin}, 4);
      ins[3] = specs[i].bias ? scheme_bias(&c, &t, specs[i].cout, scales) : -1;
      scheme_output(&c, &t,
                    specs[i].k * specs[i].k * specs[i].cin / (specs[i].stride * specs[i].stride));
      tm_node *o = tm_table(c.b);
      tm_i8(o, TCONV_PADDING, (int8_t)specs[i].padding);
      tm_i32(o, TCONV_STRIDE_W, specs[i].stride);
      tm_i32(o, TCONV_STRIDE_H, specs[i].stride);
      op(&c, WICK_BUILTIN_TRANSPOSE_CONV, ins, specs[i].bias ? 4 : 3, OPT_TRANSPOSE_CONV, o);
      run_case(&c);
    }
}
