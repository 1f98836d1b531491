/*
 * test_op_sweep.c — every operator variant on every kernel set this host can run, against
 * the reference kernels: one command, one table (in the spirit of ggml's test-backend-ops).
 *
 * Each case builds a one-operator model in memory (tiny_model.h; a few run a ready-made graph
 * of it instead), fills its inputs from a generator seeded by the case's name, and runs it once
 * per kernel set:
 *
 *   reference   force_reference_kernels = 1, every ISA flag hidden, 1 thread: the baseline
 *   portable    no ISA (WICK_MAX_ISA=reference) but not forced: the ops' portable fast paths
 *   <level>     each ISA level of src/kernels/cpu.c above "reference" (x86-64: avx2, avx512,
 *               avx512vnni, avx512amx; AArch64: neon, neondot), the host's flags capped there
 *               (wick_cpu_set_features_for_testing: the same cap as WICK_MAX_ISA=<level>)
 *   ref-3t      the reference kernels on 3 threads, bit for bit against the baseline
 *   best-3t     the best level on 3 threads, bit for bit against that level on 1 thread
 *               (outputs are bit-identical for every thread count: wick.h)
 *   del-ref     the built-in delegate "reference" (src/delegates/reference.c: wick's reference
 *               kernels on the delegate's own buffers), bit for bit against the baseline
 *   del-nnapi   the NNAPI delegate on the test NNAPI implementation (tests/nnapi/,
 *               $WICK_NNAPI_LIBRARY or the one this build made) at its newest feature level:
 *               integer outputs bit for bit, float outputs within the tolerance below (it sums
 *               in its own order)
 *   A delegate set takes partitions of one node and runs the rest on the reference kernels; a
 *   case whose op the delegate declines reads "cpu" (nothing of the delegate to compare).
 *
 * Each cell compares the set's outputs with the baseline: integer (and bool) outputs bit for
 * bit; float outputs bit for bit where the optimized kernels are documented bit-identical to
 * the reference (src/kernels/template/elementwise.h: the RELU family, HARD_SWISH, the binary
 * arithmetic ops, the pools; kernels.h: QUANTIZE / DEQUANTIZE; copies), else within
 * max |got - ref| <= 1e-5 * max(1, max |ref|) (docs/testing.md, "Parity bars"). A cell reads
 * "ok" (identical), "~3e-07" (within the tolerance: the largest relative error), "DIFF ..."
 * (outside it, or any integer difference: the largest one), "ERR" (the set failed where the
 * reference ran), or "-" (the host lacks the level, or this build its kernels; WICK_MAX_ISA
 * caps what counts as the host). Details of every DIFF and ERR follow the table, and of every weak
 * case (the reference's output constant or mostly saturated: its scales would make it check
 * little); the exit status is 1 if there is any. Then the coverage: which op_table.inc entries no
 * case runs (informational).
 *
 * Run: build/tests/unit/test_op_sweep [OP_SUBSTRING] (ctest and `make op-sweep` run it all).
 *
 * Layout: this file is main (the families in table order); op_sweep/harness.c the machinery,
 * op_sweep/sweep.h its interface, op_sweep/{elementwise,conv,other,graphs}.c the cases.
 */
#include "op_sweep/sweep.h"

int main(int argc, char **argv) {
  if (!sweep_begin(argc, argv)) return 1;
  sweep_binary_float();
  sweep_binary_quantized();
  sweep_unary();
  sweep_unary_quantized();
  sweep_prelu();
  sweep_conv();
  sweep_dwconv();
  sweep_fc();
  sweep_bmm();
  sweep_transpose_conv();
  sweep_pools();
  sweep_softmax();
  sweep_reduce();
  sweep_pad();
  sweep_concat();
  sweep_transpose();
  sweep_resize();
  sweep_quantize();
  sweep_compare_logical();
  sweep_binary_more();
  sweep_movement();
  sweep_misc();
  sweep_recurrent();
  sweep_graphs();
  return sweep_end();
}
