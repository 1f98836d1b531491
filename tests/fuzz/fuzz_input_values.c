/*
 * fuzz_input_values.c — libFuzzer target: fixed valid models, fuzzed input VALUES.
 *
 * The other two targets fuzz the file; this one keeps the file valid and
 * fuzzes what only exists at run time. Each model (VALUE_MODELS in
 * tests/fuzz/make_seeds.py, compiled in through the generated
 * value_models.h) is one operator whose indices, shape tensor, permutation,
 * begin/end/strides, pad amounts, multiples, sizes, axes or divisors are
 * graph inputs, so the kernels' run-time checks are all that stand between
 * the fuzzer's bytes and memory (docs/reliability.md, rule 4). An input is
 *
 *   byte 0      model = byte % model count (the list is append-only)
 *   byte 1      flags: bit 0 set -> resize graph input (byte 2 % its count)
 *               to the shape given by the next `rank` bytes (each 0..255)
 *               before filling; bit 1 set -> invoke a second time
 *   rest        the graph inputs' bytes, in order; missing bytes are zero
 *
 * and the check is the untrusted-input promise: create, resize and invoke
 * either succeed or fail with a known status and a message (a run-time value
 * out of range is WICK_ERR_INVALID_INPUT, an output too big for the 2 MiB
 * cap WICK_ERR_OUT_OF_MEMORY; the cap is small because the models are tiny and
 * big legitimate outputs only slow the fuzzer down); any other outcome aborts so libFuzzer records
 * the input. Outputs are read back in full so ASan sees their bounds.
 *
 * Build and run: tests/fuzz/run.sh (it generates value_models.h and the
 * seeds, one per model holding valid values).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "value_models.h"

#define MODEL_COUNT (sizeof wick_value_models / sizeof wick_value_models[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wick_model *loaded[MODEL_COUNT];

static wick_model *model_at(size_t k) {
  if (loaded[k] == NULL) {
    wick_error_info err;
    if (wick_model_load_buffer(wick_value_models[k].data, wick_value_models[k].size, NULL, &err,
                               &loaded[k]) != WICK_OK) {
      fprintf(stderr, "fuzz_input_values: model %s does not load: %s\n", wick_value_models[k].name,
              err.message);
      abort(); /* a broken generator, not a finding: fix make_seeds.py */
    }
  }
  return loaded[k];
}

static void check(const char *phase, wick_status st, const char *message) {
  if (st != WICK_OK && (!wick_fuzz_known_error(st) || message == NULL || message[0] == 0))
    wick_fuzz_die(phase, st, message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t k = data[0] % MODEL_COUNT;
  uint8_t flags = data[1];
  data += 2;
  size -= 2;

  wick_interpreter_options opt = wick_interpreter_options_default();
  opt.memory_limit_bytes = (size_t)2 << 20;
  wick_error_info err;
  err.message[0] = 0;
  wick_interpreter *it = NULL;
  wick_status st = wick_interpreter_create(model_at(k), NULL, &opt, &err, &it);
  if (st != WICK_OK) {
    /* The models are valid: only a resize below may make them fail. */
    fprintf(stderr, "fuzz_input_values: model %s: %s\n", wick_value_models[k].name, err.message);
    abort();
  }

  if ((flags & 1) && size >= 1 && wick_interpreter_input_count(it) > 0) {
    size_t which = data[0] % wick_interpreter_input_count(it);
    data++, size--;
    size_t rank = wick_tensor_rank(wick_interpreter_input(it, which));
    if (rank > size) rank = size;
    int32_t dims[WICK_MAX_RANK];
    for (size_t d = 0; d < rank; d++) dims[d] = data[d];
    data += rank, size -= rank;
    st = wick_interpreter_resize_input(it, which, dims, rank);
    check("resize", st, wick_interpreter_last_error(it));
    if (st != WICK_OK) goto done;
  }

  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    size_t n = wick_tensor_byte_size(t);
    uint8_t *buf = calloc(1, n ? n : 1);
    if (buf == NULL) abort();
    size_t take = n < size ? n : size;
    if (take) memcpy(buf, data, take);
    data += take, size -= take;
    st = wick_tensor_copy_from(t, buf, n);
    free(buf);
    if (st != WICK_OK) wick_fuzz_die("copy_from", st, "input of its own byte size refused");
  }

  for (int round = 0; round < ((flags & 2) ? 2 : 1); round++) {
    st = wick_fuzz_invoke(it);
    check("invoke", st, wick_interpreter_last_error(it));
    if (st != WICK_OK) goto done;
    for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
      const wick_tensor *t = wick_interpreter_output(it, i);
      size_t n = wick_tensor_byte_size(t);
      void *out = malloc(n ? n : 1);
      if (out == NULL) abort();
      if (wick_tensor_copy_to(t, out, n) != WICK_OK)
        wick_fuzz_die("copy_to", WICK_ERR_INVALID_ARGUMENT, "output of its own byte size refused");
      free(out);
    }
  }
done:
  wick_interpreter_destroy(it);
  return 0;
}

#ifdef WICK_FUZZ_REPLAY_MAIN
#include "replay_main.h"
#endif
