/*
 * op_sweep/other.c — the op sweep's cases for pools, SOFTMAX, reductions, data movement, QUANTIZE /
 * DEQUANTIZE, the shape and misc ops and the recurrent ops (tests/unit/test_op_sweep.c describes
 * the sweep; op_sweep/sweep.h the harness they use).
 */
#include "op_sweep/sweep.h"

/* ---------------------------------------------------------------- pools */

void sweep_pools(void) {
  static const struct {
    const char *name;
    int32_t n, h, w, c, filter, stride;
    int padding, act;
  } specs[] = {
      {"2x2 stride 2 valid [1,8,10,19]", 1, 8, 10, 19, 2, 2, PAD_VALID, ACT_NONE},
      {"3x3 stride 2 same [2,9,11,24]", 2, 9, 11, 24, 3, 2, PAD_SAME, ACT_NONE},
      {"3x3 stride 1 same [1,7,6,37] relu6", 1, 7, 6, 37, 3, 1, PAD_SAME, ACT_RELU6},
      {"7x7 global [1,7,7,40]", 1, 7, 7, 40, 7, 1, PAD_VALID, ACT_NONE},
      {"large 3x3 stride 1 same [1,64,64,64]", 1, 64, 64, 64, 3, 1, PAD_SAME, ACT_NONE},
  };
  static const struct {
    const char *name;
    int32_t code;
  } pools[] = {{"MAX_POOL_2D", WICK_BUILTIN_MAX_POOL_2D},
               {"AVERAGE_POOL_2D", WICK_BUILTIN_AVERAGE_POOL_2D}};
  const wick_dtype types[] = {WICK_DTYPE_FLOAT32, WICK_DTYPE_INT8, WICK_DTYPE_UINT8,
                              WICK_DTYPE_INT16};
  for (size_t p = 0; p < 2; p++)
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
      for (size_t t = 0; t < 4; t++) {
        if (i == 4 && t > 1) continue;
        const wick_dtype type = types[t];
        sweep_case c;
        case_begin(&c, pools[p].name, EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
        int32_t in =
            input(&c, type, (const int32_t[]){specs[i].n, specs[i].h, specs[i].w, specs[i].c}, 4,
                  quant_for(&c, type), type == WICK_DTYPE_FLOAT32 ? -3 : FULL, 3);
        output(&c, type, quant_for(&c, type));
        op(&c, pools[p].code, &in, 1, OPT_POOL_2D,
           opt_pool(&c, specs[i].padding, specs[i].stride, specs[i].filter, specs[i].act));
        run_case(&c);
      }
}

/* ---------------------------------------------------------------- SOFTMAX */

void sweep_softmax(void) {
  static const struct {
    const char *name;
    int32_t shape[3];
    size_t rank;
    float beta;
  } specs[] = {{"[3,37] beta 1", {3, 37}, 2, 1.0f},
               {"[2,1000] beta 0.5", {2, 1000}, 2, 0.5f},
               {"[4,5,8] beta 1", {4, 5, 8}, 3, 1.0f},
               {"[7,3] beta 2", {7, 3}, 2, 2.0f}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    static const struct {
      wick_dtype type;
      qparams in, out;
    } schemes[] = {{WICK_DTYPE_FLOAT32, {0, 0}, {0, 0}},
                   {WICK_DTYPE_INT8, {0.02f, -3}, {1.0f / 256, -128}},
                   {WICK_DTYPE_UINT8, {0.02f, 130}, {1.0f / 256, 0}},
                   {WICK_DTYPE_INT16, {0.0005f, 0}, {1.0f / 32768, 0}}};
    for (size_t s = 0; s < 4; s++) {
      const wick_dtype type = schemes[s].type;
      const bool fl = type == WICK_DTYPE_FLOAT32;
      if (!fl && specs[i].shape[specs[i].rank - 1] > 100) continue; /* 8-bit steps: all ~0 */
      sweep_case c;
      case_begin(&c, "SOFTMAX", fl ? TOL_FLOAT : EXACT, "%s %s", wick_dtype_name(type),
                 specs[i].name);
      int32_t in = input(&c, type, specs[i].shape, specs[i].rank,
                         fl ? NULL : q(&c, schemes[s].in.scale, schemes[s].in.zero_point),
                         fl ? -8 : FULL, 8);
      output(&c, type, fl ? NULL : q(&c, schemes[s].out.scale, schemes[s].out.zero_point));
      op(&c, WICK_BUILTIN_SOFTMAX, &in, 1, OPT_SOFTMAX, opt_f32(&c, specs[i].beta));
      run_case(&c);
    }
    if (i < 2) {
      sweep_case c;
      case_begin(&c, "LOG_SOFTMAX", TOL_FLOAT, "float32 %s", specs[i].name);
      int32_t in = input(&c, WICK_DTYPE_FLOAT32, specs[i].shape, specs[i].rank, NULL, -8, 8);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_LOG_SOFTMAX, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  }
}

/* ---------------------------------------------------------------- reductions */

static void reduce_case(const char *name, int32_t code, wick_dtype type, const int32_t *shape,
                        size_t rank, const int32_t *axes, size_t naxes, bool keep_dims,
                        const char *shape_name, double tol) {
  sweep_case c;
  char axes_text[32] = "";
  for (size_t i = 0; i < naxes; i++)
    snprintf(axes_text + strlen(axes_text), sizeof axes_text - strlen(axes_text), "%s%d",
             i ? "," : "", axes[i]);
  case_begin(&c, name, tol, "%s %s axes [%s]%s", wick_dtype_name(type), shape_name, axes_text,
             keep_dims ? " keep_dims" : "");
  const bool quantized =
      type == WICK_DTYPE_INT8 || type == WICK_DTYPE_UINT8 || type == WICK_DTYPE_INT16;
  const bool raw = code == WICK_BUILTIN_REDUCE_MAX || code == WICK_BUILTIN_REDUCE_MIN;
  const int64_t zp = type == WICK_DTYPE_INT8 ? 3 : type == WICK_DTYPE_UINT8 ? 128 : 0;
  double lo = -2, hi = 2;
  if (code == WICK_BUILTIN_REDUCE_PROD) lo = 0.7, hi = 1.3;
  if (quantized) lo = FULL;
  int32_t ins[2];
  ins[0] = input(&c, type, shape, rank, quantized ? q(&c, 0.05f, zp) : NULL, lo, hi);
  ins[1] = const_i32(&c, (const int32_t[]){(int32_t)naxes}, 1, axes);
  const float out_scale = raw ? 0.05f : code == WICK_BUILTIN_SUM ? 0.5f : 0.04f;
  output(&c, type, quantized ? q(&c, out_scale, raw || !zp ? zp : zp - 1) : NULL);
  op(&c, code, ins, 2, OPT_REDUCER, opt_i8(&c, keep_dims));
  run_case(&c);
}

void sweep_reduce(void) {
  static const struct {
    const char *name;
    int32_t code;
    bool exact; /* float: the optimized sum reassociates; max/min/prod do not */
  } ops[] = {{"MEAN", WICK_BUILTIN_MEAN, false},
             {"SUM", WICK_BUILTIN_SUM, false},
             {"REDUCE_MAX", WICK_BUILTIN_REDUCE_MAX, true},
             {"REDUCE_MIN", WICK_BUILTIN_REDUCE_MIN, true},
             {"REDUCE_PROD", WICK_BUILTIN_REDUCE_PROD, false}};
  static const struct {
    int32_t axes[3];
    size_t n;
    bool keep;
  } axes[] = {
      {{1, 2}, 2, true}, {{3}, 1, false}, {{0, 2}, 2, false}, {{-1, 1}, 2, true}, {{0}, 1, true}};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
      const int32_t shape[4] = {2, 5, 6, 19};
      reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_FLOAT32, shape, 4, axes[a].axes, axes[a].n,
                  axes[a].keep, "[2,5,6,19]", ops[o].exact ? EXACT : TOL_FLOAT);
      if (ops[o].code == WICK_BUILTIN_REDUCE_PROD) continue;
      reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_INT8, shape, 4, axes[a].axes, axes[a].n,
                  axes[a].keep, "[2,5,6,19]", EXACT);
      if (a < 2) {
        reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_UINT8, shape, 4, axes[a].axes, axes[a].n,
                    axes[a].keep, "[2,5,6,19]", EXACT);
        reduce_case(ops[o].name, ops[o].code, WICK_DTYPE_INT16, shape, 4, axes[a].axes, axes[a].n,
                    axes[a].keep, "[2,5,6,19]", EXACT);
      }
    }
  const int32_t gap[2] = {1, 2}, last[1] = {-1};
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_FLOAT32, S(1, 7, 7, 1280), gap, 2, false,
              "global pool [1,7,7,1280]", TOL_FLOAT);
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_INT8, S(1, 7, 7, 1280), gap, 2, false,
              "global pool [1,7,7,1280]", EXACT);
  reduce_case("MEAN", WICK_BUILTIN_MEAN, WICK_DTYPE_FLOAT32, S(64, 384), last, 1, true, "[64,384]",
              TOL_FLOAT);
  reduce_case("SUM", WICK_BUILTIN_SUM, WICK_DTYPE_INT32, S(2, 5, 6, 19), gap, 2, false,
              "[2,5,6,19]", EXACT);
  static const struct {
    const char *name;
    int32_t code;
  } logical[] = {{"REDUCE_ANY", WICK_BUILTIN_REDUCE_ANY}, {"REDUCE_ALL", WICK_BUILTIN_REDUCE_ALL}};
  for (size_t o = 0; o < 2; o++)
    for (size_t a = 0; a < 3; a++)
      reduce_case(logical[o].name, logical[o].code, WICK_DTYPE_BOOL, S(2, 5, 6, 19), axes[a].axes,
                  axes[a].n, axes[a].keep, "[2,5,6,19]", EXACT);
}

/* ---------------------------------------------------------------- data movement */

void sweep_pad(void) {
  const int32_t pads[8] = {0, 1, 2, 0, 1, 1, 0, 3};
  for (size_t t = 0; t < 4; t++) {
    const wick_dtype type = movement_types[t];
    for (int v2 = 0; v2 < 2; v2++) {
      sweep_case c;
      case_begin(&c, v2 ? "PADV2" : "PAD", EXACT, "%s [2,3,4,5] pads [[0,1],[2,0],[1,1],[0,3]]",
                 wick_dtype_name(type));
      int32_t ins[3];
      ins[0] = input(&c, type, S(2, 3, 4, 5), quant_for(&c, type), lo_for(type), 2);
      ins[1] = const_i32(&c, S(4, 2), pads);
      if (v2) ins[2] = random_constant(&c, type, NULL, 0, quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      op(&c, v2 ? WICK_BUILTIN_PADV2 : WICK_BUILTIN_PAD, ins, v2 ? 3u : 2u, OPT_PAD, opt_empty(&c));
      run_case(&c);
    }
  }
  for (int mode = 0; mode < 2; mode++) {
    sweep_case c;
    case_begin(&c, "MIRROR_PAD", EXACT, "float32 [1,5,6,3] %s", mode ? "symmetric" : "reflect");
    int32_t ins[2];
    const int32_t mp[8] = {0, 0, 2, 3, 1, 4, 0, 0};
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(1, 5, 6, 3), NULL, -2, 2);
    ins[1] = const_i32(&c, S(4, 2), mp);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_MIRROR_PAD, ins, 2, OPT_MIRROR_PAD, opt_i8(&c, (int8_t)mode));
    run_case(&c);
  }
}

void sweep_concat(void) {
  static const struct {
    const char *name;
    int32_t shapes[3][4];
    int32_t axis;
  } specs[] = {{"axis 3 [2,3,4,5|2|7]", {{2, 3, 4, 5}, {2, 3, 4, 2}, {2, 3, 4, 7}}, 3},
               {"axis 1 [2,3|1|4,4,5]", {{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 4, 4, 5}}, 1},
               {"axis 0 [1|2|3,3,4,5]", {{1, 3, 4, 5}, {2, 3, 4, 5}, {3, 3, 4, 5}}, 0},
               {"axis -1 [2,3,4,5|2|7]", {{2, 3, 4, 5}, {2, 3, 4, 2}, {2, 3, 4, 7}}, -1}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t t = 0; t < 4; t++) {
      const wick_dtype type = movement_types[t];
      if (i == 3 && t > 0) continue;
      sweep_case c;
      case_begin(&c, "CONCATENATION", EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
      int32_t ins[3];
      for (int k = 0; k < 3; k++)
        ins[k] = input(&c, type, specs[i].shapes[k], 4, quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      tm_node *o = tm_table(c.b);
      tm_i32(o, 0, specs[i].axis);
      op(&c, WICK_BUILTIN_CONCATENATION, ins, 3, OPT_CONCATENATION, o);
      run_case(&c);
    }
  for (int t = 0; t < 2; t++) { /* 8-bit inputs quantized unlike the output: requantized */
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    sweep_case c;
    case_begin(&c, "CONCATENATION", EXACT, "%s requantized axis 3", wick_dtype_name(type));
    int32_t ins[2];
    ins[0] = input(&c, type, S(2, 3, 4, 5), q(&c, 0.05f, z + 3), FULL, 0);
    ins[1] = input(&c, type, S(2, 3, 4, 9), q(&c, 0.02f, z - 7), FULL, 0);
    output(&c, type, q(&c, 0.04f, z + 1));
    tm_node *o = tm_table(c.b);
    tm_i32(o, 0, 3);
    op(&c, WICK_BUILTIN_CONCATENATION, ins, 2, OPT_CONCATENATION, o);
    run_case(&c);
  }
}

void sweep_transpose(void) {
  static const struct {
    const char *name;
    int32_t shape[4], perm[4];
    size_t rank;
  } specs[] = {{"[2,3,4,5] perm [0,3,1,2]", {2, 3, 4, 5}, {0, 3, 1, 2}, 4},
               {"[2,3,4,5] perm [0,2,1,3]", {2, 3, 4, 5}, {0, 2, 1, 3}, 4},
               {"[37,53] perm [1,0]", {37, 53}, {1, 0}, 2},
               {"[3,5,7] perm [2,0,1]", {3, 5, 7}, {2, 0, 1}, 3},
               {"large [96,80,64] perm [2,1,0]", {96, 80, 64}, {2, 1, 0}, 3},
               {"large [8,128,160] perm [0,2,1]", {8, 128, 160}, {0, 2, 1}, 3}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    for (size_t t = 0; t < 4; t++) {
      const wick_dtype type = movement_types[t];
      if (i >= 4 && t != 0 && t != 1) continue;
      sweep_case c;
      case_begin(&c, "TRANSPOSE", EXACT, "%s %s", wick_dtype_name(type), specs[i].name);
      int32_t ins[2];
      ins[0] = input(&c, type, specs[i].shape, specs[i].rank, quant_for(&c, type), lo_for(type), 2);
      ins[1] = const_i32(&c, (const int32_t[]){(int32_t)specs[i].rank}, 1, specs[i].perm);
      output(&c, type, quant_for(&c, type));
      op(&c, WICK_BUILTIN_TRANSPOSE, ins, 2, OPT_TRANSPOSE, opt_empty(&c));
      run_case(&c);
    }
}

void sweep_resize(void) {
  static const struct {
    const char *name;
    int32_t shape[4], size[2];
    bool align_corners, half_pixel;
  } specs[] = {{"[1,5,7,3]->9x13", {1, 5, 7, 3}, {9, 13}, false, false},
               {"[1,5,7,3]->9x13 align_corners", {1, 5, 7, 3}, {9, 13}, true, false},
               {"[1,5,7,3]->9x13 half_pixel", {1, 5, 7, 3}, {9, 13}, false, true},
               {"[2,9,11,4]->4x5 half_pixel", {2, 9, 11, 4}, {4, 5}, false, true},
               {"[1,8,8,16]->16x16", {1, 8, 8, 16}, {16, 16}, false, false}};
  for (int nearest = 0; nearest < 2; nearest++)
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
      for (size_t t = 0; t < 4; t++) {
        const wick_dtype type = movement_types[t];
        sweep_case c;
        case_begin(&c, nearest ? "RESIZE_NEAREST_NEIGHBOR" : "RESIZE_BILINEAR",
                   nearest ? EXACT : TOL_FLOAT, "%s %s", wick_dtype_name(type), specs[i].name);
        if (type != WICK_DTYPE_FLOAT32) c.tol = EXACT;
        int32_t ins[2];
        ins[0] = input(&c, type, specs[i].shape, 4, quant_for(&c, type), lo_for(type), 2);
        ins[1] = const_i32(&c, S(2), specs[i].size);
        output(&c, type, quant_for(&c, type));
        tm_node *o = tm_table(c.b);
        tm_u8(o, nearest ? 0 : 2, specs[i].align_corners);
        tm_u8(o, nearest ? 1 : 3, specs[i].half_pixel);
        op(&c, nearest ? WICK_BUILTIN_RESIZE_NEAREST_NEIGHBOR : WICK_BUILTIN_RESIZE_BILINEAR, ins,
           2, nearest ? OPT_RESIZE_NEAREST_NEIGHBOR : OPT_RESIZE_BILINEAR, o);
        run_case(&c);
      }
}

/* ---------------------------------------------------------------- QUANTIZE / DEQUANTIZE */

void sweep_quantize(void) {
  static const struct {
    wick_dtype type;
    float scale;
    int64_t zp;
  } forms[] = {{WICK_DTYPE_INT8, 0.02f, 3},
               {WICK_DTYPE_UINT8, 0.02f, 128},
               {WICK_DTYPE_INT16, 0.0002f, 0}};
  static const struct {
    const char *name;
    int32_t shape[4];
    size_t rank;
  } shapes[] = {{"[3,37]", {3, 37}, 2},
                {"[1,5]", {1, 5}, 2},
                {"large [4,256,300]", {4, 256, 300}, 3}};
  for (size_t f = 0; f < 3; f++)
    for (size_t s = 0; s < 3; s++) {
      if (s == 2 && f == 1) continue; /* the large shape: int8 and int16 */
      sweep_case c;
      case_begin(&c, "QUANTIZE", EXACT, "float32->%s %s", wick_dtype_name(forms[f].type),
                 shapes[s].name);
      int32_t in = input(&c, WICK_DTYPE_FLOAT32, shapes[s].shape, shapes[s].rank, NULL, -2.5, 2.5);
      output(&c, forms[f].type, q(&c, forms[f].scale, forms[f].zp));
      op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
      case_begin(&c, "DEQUANTIZE", EXACT, "%s->float32 %s", wick_dtype_name(forms[f].type),
                 shapes[s].name);
      in = input(&c, forms[f].type, shapes[s].shape, shapes[s].rank,
                 q(&c, forms[f].scale, forms[f].zp), FULL, 0);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, WICK_BUILTIN_DEQUANTIZE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  { /* per-channel */
    float scales[8];
    channel_scales(scales, 5, 0.02f);
    sweep_case c;
    case_begin(&c, "QUANTIZE", EXACT, "float32->int8 per-channel [3,4,5]");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), NULL, -2, 2);
    shaped_output(&c, WICK_DTYPE_INT8, S(3, 4, 5), q_channels(&c, scales, 5, 2));
    op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "DEQUANTIZE", EXACT, "int8->float32 per-channel constant [3,4,5]");
    int32_t w =
        random_constant(&c, WICK_DTYPE_INT8, S(3, 4, 5), q_channels(&c, scales, 5, 2), FULL, 0);
    int32_t x = input(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), NULL, -2, 2);
    int32_t wf = add_tensor(&c, WICK_DTYPE_FLOAT32, S(3, 4, 5), 0, NULL);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    tm_g_op(&c.g, WICK_BUILTIN_DEQUANTIZE, &w, 1, &wf, 1, OPT_NONE, NULL);
    op(&c, WICK_BUILTIN_ADD, (const int32_t[]){x, wf}, 2, OPT_ADD, opt_i8(&c, 0));
    run_case(&c);
    case_begin(&c, "DEQUANTIZE", EXACT, "float16->float32 [3,37]");
    in = input(&c, WICK_DTYPE_FLOAT16, S(3, 37), NULL, 0, 0);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_DEQUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  static const struct {
    const char *name;
    wick_dtype from, to;
    qparams in, out;
  } requant[] = {{"int8->int8", WICK_DTYPE_INT8, WICK_DTYPE_INT8, {0.05f, 3}, {0.03f, -9}},
                 {"uint8->int8", WICK_DTYPE_UINT8, WICK_DTYPE_INT8, {0.05f, 128}, {0.05f, 0}},
                 {"int8->uint8", WICK_DTYPE_INT8, WICK_DTYPE_UINT8, {0.05f, 3}, {0.07f, 120}},
                 {"int16->int8", WICK_DTYPE_INT16, WICK_DTYPE_INT8, {0.001f, 0}, {0.2f, 2}},
                 {"int16->int16", WICK_DTYPE_INT16, WICK_DTYPE_INT16, {0.001f, 0}, {0.0015f, 0}},
                 {"int8->int16", WICK_DTYPE_INT8, WICK_DTYPE_INT16, {0.05f, 3}, {0.0004f, 0}},
                 {"uint8->uint8", WICK_DTYPE_UINT8, WICK_DTYPE_UINT8, {0.05f, 128}, {0.06f, 120}},
                 {"int16->int8 fine", WICK_DTYPE_INT16, WICK_DTYPE_INT8, {0.001f, 0}, {0.27f, -5}},
                 {"int16->int32", WICK_DTYPE_INT16, WICK_DTYPE_INT32, {0.001f, 0}, {0.0005f, 0}}};
  for (size_t r = 0; r < sizeof requant / sizeof requant[0]; r++) {
    sweep_case c;
    case_begin(&c, "QUANTIZE", EXACT, "%s [3,37]", requant[r].name);
    int32_t in = input(&c, requant[r].from, S(3, 37),
                       q(&c, requant[r].in.scale, requant[r].in.zero_point), FULL, 0);
    output(&c, requant[r].to, q(&c, requant[r].out.scale, requant[r].out.zero_point));
    op(&c, WICK_BUILTIN_QUANTIZE, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
}

typedef struct shape_op {
  const char *name, *variant;
  int32_t code;
  uint8_t opt;
  int32_t in[4];
  size_t rank;
  int32_t consts[3][8]; /* int32 constant operands after the input, each `const_len` long */
  size_t const_len[3], nconst;
  int32_t opt_a, opt_b; /* options fields 0 and 1 (i32), where the table has them */
  size_t nout;
} shape_op;

static void shape_op_case(const shape_op *so, wick_dtype type) {
  sweep_case c;
  case_begin(&c, so->name, EXACT, "%s %s", wick_dtype_name(type), so->variant);
  int32_t ins[4];
  const bool split = so->code == WICK_BUILTIN_SPLIT; /* SPLIT(axis, input) */
  ins[split ? 1 : 0] = input(&c, type, so->in, so->rank, quant_for(&c, type), lo_for(type), 2);
  for (size_t k = 0; k < so->nconst; k++)
    ins[split ? 0 : 1 + k] =
        so->const_len[k] == 0 ? const_i32(&c, NULL, 0, so->consts[k])
        : so->code == WICK_BUILTIN_GATHER_ND /* indices [n, 2] */
            ? const_i32(&c, (const int32_t[]){(int32_t)so->const_len[k] / 2, 2}, 2, so->consts[k])
            : const_i32(&c, (const int32_t[]){(int32_t)so->const_len[k]}, 1, so->consts[k]);
  const bool index_out = so->code == WICK_BUILTIN_ARG_MAX || so->code == WICK_BUILTIN_ARG_MIN;
  for (size_t k = 0; k < so->nout; k++)
    output(&c, index_out ? WICK_DTYPE_INT32 : type, index_out ? NULL : quant_for(&c, type));
  tm_node *o = NULL;
  if (so->opt != OPT_NONE) {
    o = tm_table(c.b);
    tm_i32(o, 0, so->opt_a);
    tm_i32(o, 1, so->opt_b);
  }
  op(&c, so->code, ins, 1 + so->nconst, so->opt, o);
  run_case(&c);
}

void sweep_movement(void) {
  static const shape_op ops[] = {
      {"RESHAPE",
       "[2,3,4,5]->[6,20]",
       WICK_BUILTIN_RESHAPE,
       OPT_NONE,
       {2, 3, 4, 5},
       4,
       {{6, 20}},
       {2},
       1,
       0,
       0,
       1},
      {"EXPAND_DIMS",
       "[3,37] axis 1",
       WICK_BUILTIN_EXPAND_DIMS,
       OPT_NONE,
       {3, 37},
       2,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
      {"SLICE",
       "[2,3,4,5] begin [0,1,1,2] size [2,2,-1,3]",
       WICK_BUILTIN_SLICE,
       OPT_NONE,
       {2, 3, 4, 5},
       4,
       {{0, 1, 1, 2}, {2, 2, -1, 3}},
       {4, 4},
       2,
       0,
       0,
       1},
      {"STRIDED_SLICE",
       "[5,6,7] [1:5:2, ::-1, 2:7:3]",
       WICK_BUILTIN_STRIDED_SLICE,
       OPT_STRIDED_SLICE,
       {5, 6, 7},
       3,
       {{1, 0, 2}, {5, 0, 7}, {2, -1, 3}},
       {3, 3, 3},
       3,
       2 /* begin_mask: axis 1 */,
       2 /* end_mask: axis 1 */,
       1},
      {"TILE",
       "[2,3,5] multiples [2,1,3]",
       WICK_BUILTIN_TILE,
       OPT_NONE,
       {2, 3, 5},
       3,
       {{2, 1, 3}},
       {3},
       1,
       0,
       0,
       1},
      {"REVERSE_V2",
       "[3,4,5] axis 1",
       WICK_BUILTIN_REVERSE_V2,
       OPT_NONE,
       {3, 4, 5},
       3,
       {{1}},
       {1},
       1,
       0,
       0,
       1},
      {"BROADCAST_TO",
       "[3,1,5]->[2,3,4,5]",
       WICK_BUILTIN_BROADCAST_TO,
       OPT_NONE,
       {3, 1, 5},
       3,
       {{2, 3, 4, 5}},
       {4},
       1,
       0,
       0,
       1},
      {"SPACE_TO_DEPTH",
       "[1,6,4,3] block 2",
       WICK_BUILTIN_SPACE_TO_DEPTH,
       OPT_SPACE_TO_DEPTH,
       {1, 6, 4, 3},
       4,
       {{0}},
       {0},
       0,
       2,
       0,
       1},
      {"DEPTH_TO_SPACE",
       "[1,3,2,12] block 2",
       WICK_BUILTIN_DEPTH_TO_SPACE,
       OPT_DEPTH_TO_SPACE,
       {1, 3, 2, 12},
       4,
       {{0}},
       {0},
       0,
       2,
       0,
       1},
      {"GATHER",
       "[5,6,7] axis 1 indices [4]",
       WICK_BUILTIN_GATHER,
       OPT_GATHER,
       {5, 6, 7},
       3,
       {{5, 0, 3, 3}},
       {4},
       1,
       1,
       0,
       1},
      {"GATHER_ND",
       "[5,6,7] indices [3,2]",
       WICK_BUILTIN_GATHER_ND,
       OPT_NONE,
       {5, 6, 7},
       3,
       {{4, 5, 0, 0, 2, 3}},
       {6},
       1,
       0,
       0,
       1},
      {"SPLIT",
       "[4,6,5] axis 1 in 3",
       WICK_BUILTIN_SPLIT,
       OPT_SPLIT,
       {4, 6, 5},
       3,
       {{1}},
       {0},
       1,
       3,
       0,
       3},
      {"SPLIT_V",
       "[4,6,5] axis 1 sizes [1,3,2]",
       WICK_BUILTIN_SPLIT_V,
       OPT_SPLIT_V,
       {4, 6, 5},
       3,
       {{1, 3, 2}, {1}},
       {3, 0},
       2,
       3,
       0,
       3},
      {"UNPACK",
       "[3,4,5] axis 1",
       WICK_BUILTIN_UNPACK,
       OPT_UNPACK,
       {3, 4, 5},
       3,
       {{0}},
       {0},
       0,
       4,
       1,
       4},
      {"ARG_MAX",
       "[3,4,37] axis 2",
       WICK_BUILTIN_ARG_MAX,
       OPT_NONE,
       {3, 4, 37},
       3,
       {{2}},
       {0},
       1,
       0,
       0,
       1},
      {"ARG_MIN",
       "[3,4,37] axis 1",
       WICK_BUILTIN_ARG_MIN,
       OPT_NONE,
       {3, 4, 37},
       3,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
      {"CUMSUM",
       "[3,4,5] axis 1",
       WICK_BUILTIN_CUMSUM,
       OPT_NONE,
       {3, 4, 5},
       3,
       {{1}},
       {0},
       1,
       0,
       0,
       1},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    shape_op so = ops[i];
    /* the gather indices are a [3,2] / [4] int32 tensor, the split axis comes first */
    shape_op_case(&so, WICK_DTYPE_FLOAT32);
    if (so.code != WICK_BUILTIN_CUMSUM) shape_op_case(&so, WICK_DTYPE_INT8);
  }
}

void sweep_misc(void) {
  sweep_case c;
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_INT8 : WICK_DTYPE_FLOAT32;
    case_begin(&c, "SQUEEZE", EXACT, "%s [3,1,5,1] dims [1]", wick_dtype_name(type));
    int32_t in = input(&c, type, S(3, 1, 5, 1), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    tm_node *o = tm_table(c.b);
    tm_ref(o, 0, tm_vec_i32(c.b, (const int32_t[]){1}, 1));
    op(&c, WICK_BUILTIN_SQUEEZE, &in, 1, OPT_SQUEEZE, o);
    run_case(&c);
    case_begin(&c, "PACK", EXACT, "%s 3 x [4,5] axis 1", wick_dtype_name(type));
    int32_t ins[3];
    for (int k = 0; k < 3; k++)
      ins[k] = input(&c, type, S(4, 5), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    o = tm_table(c.b);
    tm_i32(o, 0, 3);
    tm_i32(o, 1, 1);
    op(&c, WICK_BUILTIN_PACK, ins, 3, OPT_PACK, o);
    run_case(&c);
    if (type == WICK_DTYPE_FLOAT32) {
      case_begin(&c, "ZEROS_LIKE", EXACT, "%s [3,37]", wick_dtype_name(type));
      c.constant_ok = true;
      in = input(&c, type, S(3, 37), NULL, -2, 2);
      output(&c, type, NULL);
      op(&c, WICK_BUILTIN_ZEROS_LIKE, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
    case_begin(&c, "SHAPE", EXACT, "%s [3,1,5,2]", wick_dtype_name(type));
    in = input(&c, type, S(3, 1, 5, 2), quant_for(&c, type), lo_for(type), 2);
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_SHAPE, &in, 1, OPT_SHAPE, opt_i8(&c, WICK_DTYPE_INT32));
    run_case(&c);
  }
  static const struct {
    wick_dtype from, to;
  } casts[] = {{WICK_DTYPE_FLOAT32, WICK_DTYPE_INT32},
               {WICK_DTYPE_INT32, WICK_DTYPE_FLOAT32},
               {WICK_DTYPE_FLOAT32, WICK_DTYPE_UINT8},
               {WICK_DTYPE_BOOL, WICK_DTYPE_FLOAT32}};
  for (size_t k = 0; k < sizeof casts / sizeof casts[0]; k++) {
    case_begin(&c, "CAST", EXACT, "%s->%s [3,37]", wick_dtype_name(casts[k].from),
               wick_dtype_name(casts[k].to));
    int32_t in = input(&c, casts[k].from, S(3, 37), NULL,
                       casts[k].from == WICK_DTYPE_FLOAT32 ? -30 : -1000, 300);
    output(&c, casts[k].to, NULL);
    tm_node *o = tm_table(c.b);
    tm_i8(o, 0, (int8_t)casts[k].from);
    tm_i8(o, 1, (int8_t)casts[k].to);
    op(&c, WICK_BUILTIN_CAST, &in, 1, OPT_CAST, o);
    run_case(&c);
  }
  {
    case_begin(&c, "FILL", EXACT, "float32 dims [2,3,4]");
    c.constant_ok = true;
    int32_t ins[2];
    ins[0] = const_i32(&c, S(3), (const int32_t[]){2, 3, 4});
    ins[1] = input(&c, WICK_DTYPE_FLOAT32, NULL, 0, NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_FILL, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "RANGE", EXACT, "int32 [-7, 40) step 3");
    ins[0] = input(&c, WICK_DTYPE_INT32, NULL, 0, NULL, -7, -7);
    int32_t limit = const_i32(&c, NULL, 0, (const int32_t[]){40});
    int32_t delta = const_i32(&c, NULL, 0, (const int32_t[]){3});
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_RANGE, (const int32_t[]){ins[0], limit, delta}, 3, OPT_NONE, NULL);
    run_case(&c);
  }
  {
    case_begin(&c, "L2_NORMALIZATION", TOL_FLOAT, "float32 [3,5,37]");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 5, 37), NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_L2_NORMALIZATION, &in, 1, OPT_L2_NORM, opt_i8(&c, 0));
    run_case(&c);
    case_begin(&c, "L2_NORMALIZATION", EXACT, "int8 [3,5,37] (output 1/128)");
    in = input(&c, WICK_DTYPE_INT8, S(3, 5, 37), q(&c, 0.05f, -3), FULL, 0);
    output(&c, WICK_DTYPE_INT8, q(&c, 1.0f / 128.0f, 0));
    op(&c, WICK_BUILTIN_L2_NORMALIZATION, &in, 1, OPT_L2_NORM, opt_i8(&c, 0));
    run_case(&c);
  }
  {
    case_begin(&c, "TOPK_V2", EXACT, "float32 [3,37] k 5");
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2);
    ins[1] = const_i32(&c, NULL, 0, (const int32_t[]){5});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    output(&c, WICK_DTYPE_INT32, NULL);
    op(&c, WICK_BUILTIN_TOPK_V2, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "EMBEDDING_LOOKUP", EXACT, "float32 table [11,7] ids [5]");
    ins[0] = const_i32(&c, S(5), (const int32_t[]){3, 0, 10, 3, 7});
    ins[1] = input(&c, WICK_DTYPE_FLOAT32, S(11, 7), NULL, -2, 2);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_EMBEDDING_LOOKUP, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "SCATTER_ND", EXACT, "float32 indices [3,1] updates [3,4] shape [6,4]");
    int32_t sc[3];
    sc[0] = const_i32(&c, S(3, 1), (const int32_t[]){4, 0, 2});
    sc[1] = input(&c, WICK_DTYPE_FLOAT32, S(3, 4), NULL, -2, 2);
    sc[2] = const_i32(&c, S(2), (const int32_t[]){6, 4});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_SCATTER_ND, sc, 3, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "DYNAMIC_UPDATE_SLICE", EXACT, "float32 [4,6,5] update [2,3,5] at [1,2,0]");
    sc[0] = input(&c, WICK_DTYPE_FLOAT32, S(4, 6, 5), NULL, -2, 2);
    sc[1] = input(&c, WICK_DTYPE_FLOAT32, S(2, 3, 5), NULL, -2, 2);
    sc[2] = const_i32(&c, S(3), (const int32_t[]){1, 2, 0});
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_DYNAMIC_UPDATE_SLICE, sc, 3, OPT_NONE, NULL);
    run_case(&c);
  }
  { /* complex64 */
    case_begin(&c, "RFFT2D", TOL_FLOAT, "float32 [2,8,16] fft_length [8,16]");
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 8, 16), NULL, -2, 2);
    ins[1] = const_i32(&c, S(2), (const int32_t[]){8, 16});
    output(&c, WICK_DTYPE_COMPLEX64, NULL);
    op(&c, WICK_BUILTIN_RFFT2D, ins, 2, OPT_NONE, NULL);
    run_case(&c);
    static const struct {
      const char *name;
      int32_t code;
    } parts[] = {{"REAL", WICK_BUILTIN_REAL},
                 {"IMAG", WICK_BUILTIN_IMAG},
                 {"COMPLEX_ABS", WICK_BUILTIN_COMPLEX_ABS}};
    for (size_t k = 0; k < 3; k++) {
      case_begin(&c, parts[k].name, k == 2 ? TOL_FLOAT : EXACT, "complex64 [3,37]");
      int32_t in = input(&c, WICK_DTYPE_COMPLEX64, S(3, 37), NULL, -2, 2);
      output(&c, WICK_DTYPE_FLOAT32, NULL);
      op(&c, parts[k].code, &in, 1, OPT_NONE, NULL);
      run_case(&c);
    }
  }
  { /* CONV_3D (NDHWC, filter [kd,kh,kw,Cin,Cout]) and CONV_3D_TRANSPOSE */
    case_begin(&c, "CONV_3D", TOL_FLOAT, "float32 3x3x3 same [1,5,6,7,4]->6");
    int32_t ins[4];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(1, 5, 6, 7, 4), NULL, -2, 2);
    ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(3, 3, 3, 4, 6), NULL, -1, 1);
    ins[2] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6), NULL, -1, 1);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    tm_node *o = tm_table(c.b);
    tm_i8(o, CONV3D_PADDING, PAD_SAME);
    tm_i32(o, CONV3D_STRIDE_D, 1);
    tm_i32(o, CONV3D_STRIDE_W, 1);
    tm_i32(o, CONV3D_STRIDE_H, 1);
    op(&c, WICK_BUILTIN_CONV_3D, ins, 3, OPT_CONV_3D, o);
    run_case(&c);
    case_begin(&c, "CONV_3D_TRANSPOSE", TOL_FLOAT, "float32 2x2x2 stride 2 [1,3,4,5,4]->6");
    ins[0] = const_i32(&c, S(5), (const int32_t[]){1, 6, 8, 10, 6});
    ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(2, 2, 2, 6, 4), NULL, -1, 1);
    ins[2] = input(&c, WICK_DTYPE_FLOAT32, S(1, 3, 4, 5, 4), NULL, -2, 2);
    ins[3] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6), NULL, -1, 1);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    o = tm_table(c.b);
    tm_i8(o, CONV3D_PADDING, PAD_VALID);
    tm_i32(o, CONV3D_STRIDE_D, 2);
    tm_i32(o, CONV3D_STRIDE_W, 2);
    tm_i32(o, CONV3D_STRIDE_H, 2);
    op(&c, WICK_BUILTIN_CONV_3D_TRANSPOSE, ins, 4, OPT_CONV_3D, o);
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- recurrent ops (float32) */

/* A variable tensor (state the op updates in place), zeros at creation. */
static int32_t variable(sweep_case *c, const int32_t *shape, size_t rank) {
  int32_t t = add_tensor(c, WICK_DTYPE_FLOAT32, shape, rank, 0, NULL);
  tm_u8(c->g.tensors[t], 5 /* is_variable */, 1);
  return t;
}

void sweep_recurrent(void) {
  sweep_case c;
  case_begin(&c, "SVDF", TOL_FLOAT, "float32 [2,5] filters 6 rank 2 memory 4 relu");
  int32_t ins[24];
  ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 5), NULL, -2, 2);
  ins[1] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6, 5), NULL, -1, 1);
  ins[2] = random_constant(&c, WICK_DTYPE_FLOAT32, S(6, 4), NULL, -1, 1);
  ins[3] = random_constant(&c, WICK_DTYPE_FLOAT32, S(3), NULL, -1, 1);
  ins[4] = variable(&c, S(2, 24));
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  tm_node *o = tm_table(c.b);
  tm_i32(o, 0, 2);
  tm_i8(o, 1, ACT_RELU);
  op(&c, WICK_BUILTIN_SVDF, ins, 5, OPT_SVDF, o);
  run_case(&c);

  case_begin(&c, "UNIDIRECTIONAL_SEQUENCE_LSTM", TOL_FLOAT,
             "float32 batch 2 time 3 input 5 cell 4 tanh");
  for (int i = 0; i < 24; i++) ins[i] = -1;
  ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 3, 5), NULL, -2, 2);
  for (int i = 1; i <= 4; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4, 5), NULL, -0.5, 0.5);
  for (int i = 5; i <= 8; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4, 4), NULL, -0.5, 0.5);
  for (int i = 12; i <= 15; i++)
    ins[i] = random_constant(&c, WICK_DTYPE_FLOAT32, S(4), NULL, -0.5, 0.5);
  ins[18] = variable(&c, S(2, 4));
  ins[19] = variable(&c, S(2, 4));
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  o = tm_table(c.b);
  tm_i8(o, LSTM_ACTIVATION, 4 /* TANH */);
  op(&c, WICK_BUILTIN_UNIDIRECTIONAL_SEQUENCE_LSTM, ins, 24, OPT_UNIDIRECTIONAL_SEQUENCE_LSTM, o);
  run_case(&c);
}
