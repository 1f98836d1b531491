/* main.c — uses the installed public header and library: loads a file given
 * on the command line (or rejects garbage) and prints the version. */
#include <stdio.h>
#include <wick/wick.h>

int main(int argc, char **argv) {
  wick_error_info err;
  wick_model *model = NULL;
  static const unsigned char garbage[8] = {8, 0, 0, 0, 'T', 'F', 'L', '3'};
  wick_status st = wick_model_load_buffer(garbage, sizeof garbage, NULL, &err, &model);
  if (st != WICK_ERR_MALFORMED_MODEL || model != NULL) return 1;
  if (argc > 1) {
    st = wick_model_load_file(argv[1], NULL, &err, &model);
    if (st != WICK_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    wick_model_destroy(model);
  }
  printf("wick %s\n", wick_version());
  return 0;
}
