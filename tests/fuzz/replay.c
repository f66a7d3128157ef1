/* replay.c - runs a libFuzzer target's entry point without libFuzzer, on
 * the files named on the command line (`make check` builds it with gcc,
 * then under ASan+UBSan, once per target: BUILD/tests/replay-NAME).
 *
 *   replay-NAME FILE...
 *
 * For each FILE, prints "FILE: OUTCOME" (the outcome the target reports
 * with fuzz_outcome: "ok", a diagnostic, "exit N"...).  A crash, a
 * sanitizer report or a broken invariant of the target aborts; exit 2 when
 * a file cannot be read.  tests/fuzz/run_replay.sh compares the outcomes
 * with the expected ones.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

static char *outcome;

void fuzz_outcome(const char *text) {
  g_free(outcome);
  outcome = g_strdup(text);
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    char *data;
    gsize len;
    GError *err = NULL;
    if (!g_file_get_contents(argv[i], &data, &len, &err)) {
      fprintf(stderr, "%s:1:1: error: cannot read: %s\n", argv[i], err->message);
      g_error_free(err);
      return 2;
    }
    g_free(outcome);
    outcome = NULL;
    /* an exact-size copy, as libFuzzer passes it: no NUL after the end */
    uint8_t *copy = g_malloc(len ? len : 1);
    memcpy(copy, data, len);
    LLVMFuzzerTestOneInput(copy, len);
    g_free(copy);
    printf("%s: %s\n", argv[i], outcome ? outcome : "(no outcome)");
    fflush(stdout);
    g_free(data);
  }
  g_free(outcome);
  return 0;
}
