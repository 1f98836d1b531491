/*
 * replay_main.h — a main() for fuzz targets built without libFuzzer (gcc,
 * or clang without -fsanitize=fuzzer): runs LLVMFuzzerTestOneInput once on
 * each file named on the command line. Used to replay regressions and to
 * debug a crash under gdb or a gcc sanitizer build.
 */
#ifndef WICK_FUZZ_REPLAY_MAIN_H
#define WICK_FUZZ_REPLAY_MAIN_H

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (f == NULL) {
      perror(argv[i]);
      return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) return 2;
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    fprintf(stderr, "%s: ok\n", argv[i]);
  }
  return 0;
}

#endif /* WICK_FUZZ_REPLAY_MAIN_H */
