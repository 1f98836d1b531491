/*
 * test_nnapi.h — the shared structures of wick's test NNAPI implementation
 * (libwick_test_nnapi.so), a Linux stand-in for Android's
 * libneuralnetworks.so that exists only for tests:
 *
 *   test_nnapi.c      the C API (model, compilation, execution, event,
 *                     memory, device calls) with the runtime's validation per
 *                     feature level, fault injection, and the executor;
 *   test_nnapi_ops.c  each operation: its signature check per level (at
 *                     addOperation), its shape check (at finish) and its
 *                     computation, in plain C written from the NDK reference
 *                     (nothing of wick's kernels); test_nnapi_ops_logic.c
 *                     the comparisons, logic, SELECT, TILE, reductions and
 *                     BATCH_MATMUL, test_nnapi_ops_flow.c IF and WHILE,
 *                     test_nnapi_ops_detection.c DETECTION_POSTPROCESSING
 *                     and CAST, and test_nnapi_ops.h what they share.
 *
 * Feature level: $WICK_TEST_NNAPI_FEATURE_LEVEL (27, 28, 29, 30, 31, 1000006
 * ...; default 1000008), read at every call that depends on it.
 */
#ifndef WICK_TESTS_NNAPI_TEST_NNAPI_H
#define WICK_TESTS_NNAPI_TEST_NNAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delegates/nnapi/nnapi_types.h"

#define NN_MAX_RANK 4

enum { NN_TEMP, NN_CONST, NN_INPUT, NN_OUTPUT };

typedef struct nn_operand {
  int32_t type;
  uint32_t rank;
  uint32_t dims[NN_MAX_RANK];
  float scale;
  int32_t zp;
  int kind;          /* NN_TEMP ... */
  const void *value; /* NN_CONST: the bytes (owned copy or the caller's) */
  void *owned;
  size_t length;
  float *channel_scales; /* TENSOR_QUANT8_SYMM_PER_CHANNEL */
  uint32_t channel_dim, channel_count;
  const struct ANeuralNetworksModel *ref; /* MODEL: the referenced model (finished) */
} nn_operand;

#define NN_MAX_OUTPUTS 16

typedef struct nn_operation {
  int32_t type;
  uint32_t nin, nout;
  uint32_t ins[24], outs[NN_MAX_OUTPUTS];
} nn_operation;

struct ANeuralNetworksModel {
  nn_operand *operands;
  uint32_t num_operands, cap_operands;
  nn_operation *ops;
  uint32_t num_ops, cap_ops;
  uint32_t *inputs, *outputs;
  uint32_t num_inputs, num_outputs;
  bool identified, finished, relaxed;
  uint32_t *order;  /* operations in an order that computes every input first */
  int compilations; /* live compilations (a model must outlive them) */
};

/* One operation in a phase. */
enum { NN_CHECK_TYPES, NN_CHECK_SHAPES, NN_RUN };

typedef struct nn_ctx {
  const struct ANeuralNetworksModel *m;
  const nn_operation *op;
  int64_t level;
  int phase;
  void **buf; /* NN_RUN: every operand's data */
  char *msg;
  size_t msg_size;
} nn_ctx;

/* Runs one phase of one operation: ANEURALNETWORKS_NO_ERROR, or a result code
 * with the reason in c->msg. */
int nn_operation_phase(nn_ctx *c);
/* Computes finished model m on its inputs into its outputs (one buffer per model
 * input / output, of the operand's size): temporaries in fresh buffers, every
 * operation in order. IF and WHILE run their referenced models through it. */
int nn_execute(const struct ANeuralNetworksModel *m, const void *const *inputs,
               void *const *outputs, int64_t level, char *msg, size_t msg_size);
/* IF and WHILE (test_nnapi_ops_flow.c): the phase of one, and the level (0: not one). */
int nn_flow_operation_phase(nn_ctx *c);
int64_t nn_flow_operation_level(int32_t type);
/* DETECTION_POSTPROCESSING and CAST (test_nnapi_ops_detection.c), likewise. */
int nn_detection_operation_phase(nn_ctx *c);
int64_t nn_detection_operation_level(int32_t type);
/* The level an operation code appeared at (0: unknown to the test runtime). */
int64_t nn_operation_level(int32_t type);
/* Bytes of one element of a tensor operand type (0 for scalars / unknown). */
size_t nn_element_size(int32_t type);
size_t nn_operand_bytes(const nn_operand *o);

#endif /* WICK_TESTS_NNAPI_TEST_NNAPI_H */
