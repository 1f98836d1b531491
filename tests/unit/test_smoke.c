#include "wick/wick.h"
int main(void) { return wick_version()[0] == '0' ? 0 : 1; }
