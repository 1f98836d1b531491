/*
 * test_nnapi_ops_flow.c — NNAPI's control flow in the test runtime, from the
 * NDK reference (feature level 30): IF and WHILE, whose branches, condition
 * and body are other finished models given as MODEL operands
 * (ANeuralNetworksModel_setOperandValueFromModel).
 *
 *   IF      inputs: 0 a TENSOR_BOOL8 [1] condition, 1 the then model, 2 the
 *           else model, 3.. the values passed to the model taken; outputs:
 *           the taken model's. Both models take the operation's inputs 3..
 *           and give its outputs, with the same types, shapes, scales and
 *           zero points.
 *   WHILE   inputs: 0 the condition model, 1 the body model, then m
 *           input-output values, k state-only values, n input-only values;
 *           outputs: the m input-output values after the loop. The condition
 *           takes all m + k + n and returns one TENSOR_BOOL8 [1]; the body
 *           takes all m + k + n and returns the next m + k. It runs
 *           `while (cond(vars)) vars[0, m + k) = body(vars)`, bounded by the
 *           execution's loop timeout (2 s, NNAPI's default): past it the
 *           execution fails with MISSED_DEADLINE_TRANSIENT.
 * The referenced models are checked when the referring model is finished
 * (NN_CHECK_SHAPES: their values may be set after addOperation), and computed
 * with nn_execute, the executor every model uses.
 */
#include <time.h>

#include "test_nnapi_ops.h"

enum { LOOP_TIMEOUT_NS = 2000000000 };

/* Two operands agree as NNAPI requires of a referenced model's input or output. */
static bool same_operand(const nn_operand *a, const nn_operand *b) {
  if (a->type != b->type || a->rank != b->rank || a->scale != b->scale || a->zp != b->zp)
    return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

static int model_input(nn_ctx *c, uint32_t i, const struct ANeuralNetworksModel **out) {
  const nn_operand *o = IN(c, i);
  if (o->type != ANEURALNETWORKS_MODEL)
    BAD("operation %d: input %u must be a MODEL", (int)c->op->type, i);
  if (c->phase == NN_CHECK_TYPES) return ANEURALNETWORKS_NO_ERROR;
  if (o->kind != NN_CONST || o->ref == NULL)
    BAD("operation %d: MODEL input %u has no model (setOperandValueFromModel)", (int)c->op->type,
        i);
  *out = o->ref;
  return ANEURALNETWORKS_NO_ERROR;
}

static const nn_operand *ref_input(const struct ANeuralNetworksModel *m, uint32_t j) {
  return &m->operands[m->inputs[j]];
}
static const nn_operand *ref_output(const struct ANeuralNetworksModel *m, uint32_t j) {
  return &m->operands[m->outputs[j]];
}

static int op_if(nn_ctx *c) {
  if (c->op->nin < 3) BAD("IF with %u inputs", c->op->nin);
  const nn_operand *cond = IN(c, 0);
  if (cond->type != ANEURALNETWORKS_TENSOR_BOOL8 || cond->rank != 1 || cond->dims[0] != 1)
    BAD("IF: the condition must be a TENSOR_BOOL8 of shape [1]");
  const struct ANeuralNetworksModel *branch[2] = {NULL, NULL};
  TRY(model_input(c, 1, &branch[0]));
  TRY(model_input(c, 2, &branch[1]));
  if (c->phase == NN_CHECK_TYPES) return ANEURALNETWORKS_NO_ERROR;
  uint32_t n = c->op->nin - 3;
  for (int b = 0; b < 2; b++) {
    const struct ANeuralNetworksModel *m = branch[b];
    if (m->num_inputs != n || m->num_outputs != c->op->nout)
      BAD("IF: the %s model has %u inputs and %u outputs; the operation %u and %u",
          b ? "else" : "then", m->num_inputs, m->num_outputs, n, c->op->nout);
    for (uint32_t j = 0; j < n; j++)
      if (!same_operand(ref_input(m, j), IN(c, 3 + j)))
        BAD("IF: input %u of the %s model differs from the operation's", j, b ? "else" : "then");
    for (uint32_t j = 0; j < c->op->nout; j++)
      if (!same_operand(ref_output(m, j), OUT(c, j)))
        BAD("IF: output %u of the %s model differs from the operation's", j, b ? "else" : "then");
  }
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  bool taken = *(const uint8_t *)in_data(c, 0) != 0;
  const void *ins[24];
  void *outs[NN_MAX_OUTPUTS];
  for (uint32_t j = 0; j < n; j++) ins[j] = in_data(c, 3 + j);
  for (uint32_t j = 0; j < c->op->nout; j++) outs[j] = out_data(c, j);
  return nn_execute(taken ? branch[0] : branch[1], ins, outs, c->level, c->msg, c->msg_size);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int op_while(nn_ctx *c) {
  if (c->op->nin < 3) BAD("WHILE with %u inputs", c->op->nin);
  const struct ANeuralNetworksModel *cond = NULL, *body = NULL;
  TRY(model_input(c, 0, &cond));
  TRY(model_input(c, 1, &body));
  if (c->phase == NN_CHECK_TYPES) return ANEURALNETWORKS_NO_ERROR;
  uint32_t vars = c->op->nin - 2, m = c->op->nout, mk = body->num_outputs;
  if (mk < m || mk > vars)
    BAD("WHILE: the body returns %u values for %u outputs and %u loop inputs", mk, m, vars);
  if (cond->num_inputs != vars || cond->num_outputs != 1)
    BAD("WHILE: the condition model takes %u inputs and returns %u (need %u and 1)",
        cond->num_inputs, cond->num_outputs, vars);
  const nn_operand *flag = ref_output(cond, 0);
  if (flag->type != ANEURALNETWORKS_TENSOR_BOOL8 || flag->rank != 1 || flag->dims[0] != 1)
    BAD("WHILE: the condition model must return a TENSOR_BOOL8 of shape [1]");
  if (body->num_inputs != vars)
    BAD("WHILE: the body takes %u inputs, not %u", body->num_inputs, vars);
  for (uint32_t j = 0; j < vars; j++) {
    if (!same_operand(ref_input(cond, j), IN(c, 2 + j)))
      BAD("WHILE: input %u of the condition model differs from the operation's", j);
    if (!same_operand(ref_input(body, j), IN(c, 2 + j)))
      BAD("WHILE: input %u of the body model differs from the operation's", j);
    if (j < mk && !same_operand(ref_output(body, j), IN(c, 2 + j)))
      BAD("WHILE: output %u of the body model differs from loop input %u", j, j);
    if (j < m && !same_operand(OUT(c, j), IN(c, 2 + j)))
      BAD("WHILE: output %u differs from loop input %u", j, j);
  }
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  void *state[24] = {0}, *next[24] = {0};
  const void *ins[24];
  int status = ANEURALNETWORKS_NO_ERROR;
  for (uint32_t j = 0; j < mk && status == ANEURALNETWORKS_NO_ERROR; j++) {
    size_t bytes = nn_operand_bytes(IN(c, 2 + j));
    state[j] = malloc(bytes + 1);
    next[j] = malloc(bytes + 1);
    if (state[j] == NULL || next[j] == NULL)
      status = ANEURALNETWORKS_OUT_OF_MEMORY;
    else
      memcpy(state[j], in_data(c, 2 + j), bytes);
  }
  int64_t start = now_ns();
  for (;;) {
    if (status != ANEURALNETWORKS_NO_ERROR) break;
    if (now_ns() - start > LOOP_TIMEOUT_NS) {
      snprintf(c->msg, c->msg_size, "WHILE: the loop ran past its timeout of 2 s");
      status = ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
      break;
    }
    for (uint32_t j = 0; j < vars; j++) ins[j] = j < mk ? state[j] : in_data(c, 2 + j);
    uint8_t again = 0;
    void *flag_out = &again;
    status = nn_execute(cond, ins, &flag_out, c->level, c->msg, c->msg_size);
    if (status != ANEURALNETWORKS_NO_ERROR || !again) break;
    status = nn_execute(body, ins, next, c->level, c->msg, c->msg_size);
    for (uint32_t j = 0; j < mk; j++) { /* the body's outputs are the next state */
      void *t = state[j];
      state[j] = next[j];
      next[j] = t;
    }
  }
  if (status == ANEURALNETWORKS_NO_ERROR)
    for (uint32_t j = 0; j < m; j++) memcpy(out_data(c, j), state[j], nn_operand_bytes(OUT(c, j)));
  for (uint32_t j = 0; j < mk; j++) {
    free(state[j]);
    free(next[j]);
  }
  return status;
}

int64_t nn_flow_operation_level(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_IF:
    case ANEURALNETWORKS_WHILE: return 30;
    default: return nn_detection_operation_level(type);
  }
}

int nn_flow_operation_phase(nn_ctx *c) {
  switch (c->op->type) {
    case ANEURALNETWORKS_IF: return op_if(c);
    case ANEURALNETWORKS_WHILE: return op_while(c);
    default: return nn_detection_operation_phase(c);
  }
}
