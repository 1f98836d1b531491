/*
 * generate.h — the `wick generate` command (generate.c), called by main.c.
 */
#ifndef WICK_TOOLS_GENERATE_H
#define WICK_TOOLS_GENERATE_H

int wick_cmd_generate(int argc, char **argv);

#endif /* WICK_TOOLS_GENERATE_H */
