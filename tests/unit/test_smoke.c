/*
 * test_smoke.c — the library links and identifies itself: wick_version() is the header's
 * WICK_VERSION_STRING, and both are CMake's project version (WICK_PROJECT_VERSION, passed by
 * tests/unit/CMakeLists.txt), so the header, the library and the package cannot drift apart.
 */
#include <stdio.h>
#include <string.h>

#include "wick/wick.h"

int main(void) {
  const char *v = wick_version();
  if (v == NULL || strcmp(v, WICK_VERSION_STRING) != 0 || strcmp(v, WICK_PROJECT_VERSION) != 0) {
    fprintf(stderr, "wick_version() is \"%s\"; the header says \"%s\", CMake \"%s\"\n",
            v ? v : "(null)", WICK_VERSION_STRING, WICK_PROJECT_VERSION);
    return 1;
  }
  printf("wick %s\n", v);
  return 0;
}
