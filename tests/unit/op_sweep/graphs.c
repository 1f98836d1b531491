/*
 * op_sweep/graphs.c — the op sweep's cases for multi-operator graphs: DENSIFY, IF, CALL_ONCE with
 * the resource variables, and tiny_model.h's ready-made models (WHILE, the composite, a fused
 * chain) (tests/unit/test_op_sweep.c describes the sweep; op_sweep/sweep.h the harness they use).
 */
#include "op_sweep/sweep.h"

/* ---------------------------------------------------------------- ready-made graphs */

/* A ready-made model of tiny_model.h, its one float32 input of `shape` drawn from [-2, 2]. */
static void graph_case(const char *op_name, double tol, const char *variant,
                       uint8_t *(*make)(size_t *), const int32_t *shape, size_t rank) {
  sweep_case c;
  case_begin(&c, op_name, tol, "%s", variant);
  c.in[0].type = WICK_DTYPE_FLOAT32;
  c.in[0].count = elements(shape, rank);
  c.in[0].lo = -2;
  c.in[0].hi = 2;
  c.nin = 1;
  c.prebuilt = make(&c.prebuilt_size);
  run_case(&c);
}

/* x[2,4] + DENSIFY(k): k the [2,4] constant [[0,0,1,0],[2,0,0,3]] stored as level 0 DENSE
 * (2 rows), level 1 SPARSE_CSR (segments [0,1,3], indices [2,0,3], values 1,2,3). */
static void densify_case(void) {
  sweep_case c;
  case_begin(&c, "DENSIFY", EXACT, "float32 [2,4] CSR constant, then ADD");
  const float values[3] = {1, 2, 3};
  const int32_t segments[3] = {0, 1, 3}, indices[3] = {2, 0, 3}, order[2] = {0, 1};
  int32_t x = input(&c, WICK_DTYPE_FLOAT32, S(2, 4), NULL, -2, 2);
  c.g.buffers[c.g.nbuf] = tm_buffer(c.b, values, sizeof values);
  int32_t k = add_tensor(&c, WICK_DTYPE_FLOAT32, S(2, 4), (uint32_t)c.g.nbuf++, NULL);
  tm_node *dense = tm_table(c.b), *csr = tm_table(c.b);
  tm_i8(dense, DIMMETA_FORMAT, DIMENSION_DENSE);
  tm_i32(dense, DIMMETA_DENSE_SIZE, 2);
  tm_i8(csr, DIMMETA_FORMAT, DIMENSION_SPARSE_CSR);
  tm_node *seg = tm_table(c.b), *idx = tm_table(c.b);
  tm_ref(seg, INDEX_VECTOR_VALUES, tm_vec_i32(c.b, segments, 3));
  tm_ref(idx, INDEX_VECTOR_VALUES, tm_vec_i32(c.b, indices, 3));
  tm_u8(csr, DIMMETA_SEGMENTS_TYPE, INDEX_VECTOR_INT32);
  tm_ref(csr, DIMMETA_SEGMENTS, seg);
  tm_u8(csr, DIMMETA_INDICES_TYPE, INDEX_VECTOR_INT32);
  tm_ref(csr, DIMMETA_INDICES, idx);
  tm_node *sparsity = tm_table(c.b), *levels[2] = {dense, csr};
  tm_ref(sparsity, SPARSITY_TRAVERSAL_ORDER, tm_vec_i32(c.b, order, 2));
  tm_ref(sparsity, SPARSITY_DIM_METADATA, tm_tvec(c.b, levels, 2));
  tm_ref(c.g.tensors[k], TENSOR_SPARSITY, sparsity);
  int32_t kd = add_tensor(&c, WICK_DTYPE_FLOAT32, S(2, 4), 0, NULL);
  tm_g_op(&c.g, WICK_BUILTIN_DENSIFY, &k, 1, &kd, 1, OPT_NONE, NULL);
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  op(&c, WICK_BUILTIN_ADD, (const int32_t[]){x, kd}, 2, OPT_ADD, opt_i8(&c, 0));
  run_case(&c);
}

/* IF: cond = GREATER(SUM(x), threshold) picks ADD(x, x) (subgraph 1) or MUL(x, x) (subgraph 2)
 * for x[1,4]; a threshold of -100 always takes "then", +100 always "else". */
static uint8_t *if_model(float threshold, size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  const int32_t s_x[2] = {1, 4}, s_axes[1] = {2}, axes[2] = {0, 1};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t tax = tm_g_const(&g, "axes", TM_I32, s_axes, 1, axes, sizeof axes, NULL);
  int32_t sum = tm_g_tensor(&g, "sum", TM_F32, NULL, 0);
  int32_t th = tm_g_const(&g, "threshold", TM_F32, NULL, 0, &threshold, 4, NULL);
  int32_t cond = tm_g_tensor(&g, "cond", TM_BOOL, NULL, 0);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
  tm_g_op(&g, WICK_BUILTIN_SUM, (const int32_t[]){x, tax}, 2, &sum, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_GREATER, (const int32_t[]){sum, th}, 2, &cond, 1, 0, NULL);
  tm_node *o = tm_table(b); /* IfOptions (type 92): then 0, else 1 */
  tm_i32(o, 0, 1);
  tm_i32(o, 1, 2);
  tm_g_op(&g, WICK_BUILTIN_IF, (const int32_t[]){cond, x}, 2, &y, 1, 92, o);
  tm_node *sgs[3];
  const int32_t gin[1] = {x}, gout[1] = {y}, bin[1] = {0}, bout[1] = {1}, xx[2] = {0, 0};
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  for (int k = 0; k < 2; k++) {
    tm_node *bt[2] = {tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL),
                      tm_tensor(b, "y", TM_F32, s_x, 2, 0, NULL)};
    uint32_t code = tm_g_opcode(&g, k == 0 ? WICK_BUILTIN_ADD : WICK_BUILTIN_MUL, 1);
    tm_node *bop = tm_operator(b, code, xx, 2, bout, 1, 0, NULL);
    sgs[1 + k] = tm_subgraph(b, bt, 2, bin, 1, bout, 1, &bop, 1);
  }
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 3, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}
static uint8_t *if_then_model(size_t *size_out) { return if_model(-100.0f, size_out); }
static uint8_t *if_else_model(size_t *size_out) { return if_model(100.0f, size_out); }

/* A resource variable initialised once: subgraph 0 runs CALL_ONCE(init = 1), then
 * h = VAR_HANDLE("acc"); y = READ_VARIABLE(h) + x; ASSIGN_VARIABLE(h, y); out y. Subgraph 1
 * assigns the constant [0.5, -1, 2, 0.25] to "acc". One invoke per kernel set: y = x + init. */
static uint8_t *variables_model(size_t *size_out) {
  enum { TM_RESOURCE = 13 };
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  const int32_t s_x[2] = {1, 4};
  const float init[4] = {0.5f, -1.0f, 2.0f, 0.25f};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t h = tm_g_tensor(&g, "h", TM_RESOURCE, NULL, 0);
  int32_t r = tm_g_tensor(&g, "r", TM_F32, s_x, 2);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
  tm_node *once = tm_table(b); /* CallOnceOptions (type 103): init_subgraph_index 0 */
  tm_i32(once, 0, 1);
  tm_g_op(&g, WICK_BUILTIN_CALL_ONCE, NULL, 0, NULL, 0, 103, once);
  tm_node *var = tm_table(b); /* VarHandleOptions (type 111): container 0, shared_name 1 */
  tm_ref(var, 1, tm_str(b, "acc"));
  tm_g_op(&g, WICK_BUILTIN_VAR_HANDLE, NULL, 0, &h, 1, 111, var);
  tm_g_op(&g, WICK_BUILTIN_READ_VARIABLE, &h, 1, &r, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_ADD, (const int32_t[]){r, x}, 2, &y, 1, 0, NULL);
  tm_g_op(&g, WICK_BUILTIN_ASSIGN_VARIABLE, (const int32_t[]){h, y}, 2, NULL, 0, 0, NULL);
  /* the init subgraph: its own handle and a constant (a new model buffer) */
  g.buffers[g.nbuf] = tm_buffer(b, init, sizeof init);
  tm_node *it[2] = {tm_tensor(b, "h", TM_RESOURCE, NULL, 0, 0, NULL),
                    tm_tensor(b, "init", TM_F32, s_x, 2, (uint32_t)g.nbuf++, NULL)};
  tm_node *var2 = tm_table(b);
  tm_ref(var2, 1, tm_str(b, "acc"));
  tm_node *iops[2] = {tm_operator(b, tm_g_opcode(&g, WICK_BUILTIN_VAR_HANDLE, 1), NULL, 0,
                                  (const int32_t[]){0}, 1, 111, var2),
                      tm_operator(b, tm_g_opcode(&g, WICK_BUILTIN_ASSIGN_VARIABLE, 1),
                                  (const int32_t[]){0, 1}, 2, NULL, 0, 0, NULL)};
  tm_node *sgs[2];
  const int32_t gin[1] = {x}, gout[1] = {y};
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  sgs[1] = tm_subgraph(b, it, 2, NULL, 0, NULL, 0, iops, 2);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 2, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

void sweep_graphs(void) {
  graph_case("IF", EXACT, "float32 [1,4] cond = SUM(x) > -100: then ADD(x, x)", if_then_model,
             S(1, 4));
  graph_case("IF", EXACT, "float32 [1,4] cond = SUM(x) > 100: else MUL(x, x)", if_else_model,
             S(1, 4));
  graph_case("CALL_ONCE", EXACT, "float32 [1,4] init subgraph assigns; READ_VARIABLE + x; ASSIGN",
             variables_model, S(1, 4));
  mark_covered("VAR_HANDLE");
  mark_covered("READ_VARIABLE");
  mark_covered("ASSIGN_VARIABLE");
  densify_case();
  graph_case("WHILE", EXACT, "float32 [1,4] tm_demo_while: 3 x LESS, ADD", tm_demo_while, S(1, 4));
  graph_case("STABLEHLO_COMPOSITE", TOL_FLOAT,
             "float32 [1,2] tm_demo_composite: DEQUANTIZE, FC, ADD", tm_demo_composite, S(1, 2));
  /* a chain the optimized sets fuse (CONV_2D + RELU epilogue ...): fused against unfused */
  graph_case("(graph)", TOL_FLOAT, "tm_demo_chain: CONV_2D relu ... SOFTMAX, 3 outputs",
             tm_demo_chain, S(1, 4, 4, 2));
}
