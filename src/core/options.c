/*
 * options.c — reading a caller's option struct by its struct_size, so that a
 * program built against an older or newer wick.h gets either the fields it
 * set (the rest at their defaults) or a clear WICK_ERR_INVALID_ARGUMENT.
 */
#include <string.h>

#include "core/internal.h"

wick_status wick_read_options(const void *caller, size_t first_version_size, size_t ours, void *out,
                              const char *what, char *message, size_t message_size) {
  size_t theirs;
  memcpy(&theirs, caller, sizeof theirs); /* struct_size opens every option struct */
  if (theirs < first_version_size) {
    wick_format_message(message, message_size,
                        "%s.struct_size is %zu, less than the %zu bytes of its first version: "
                        "take the options from %s_default()",
                        what, theirs, first_version_size, what);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  if (theirs > ours) {
    const unsigned char *tail = (const unsigned char *)caller + ours;
    for (size_t i = 0; i < theirs - ours; i++)
      if (tail[i] != 0) {
        wick_format_message(message, message_size,
                            "%s.struct_size is %zu and sets byte %zu, past the %zu bytes this "
                            "library (wick %s) knows: the program was built against a newer "
                            "wick.h",
                            what, theirs, ours + i, ours, WICK_VERSION_STRING);
        return WICK_ERR_INVALID_ARGUMENT;
      }
    theirs = ours;
  }
  memcpy(out, caller, theirs); /* `out` holds the defaults for the fields not covered */
  memcpy(out, &ours, sizeof ours);
  return WICK_OK;
}
