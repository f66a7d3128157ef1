/* fuzz.h - what the libFuzzer targets of tests/fuzz share (docs/testing.md).
 *
 * Each fuzz_NAME.c defines LLVMFuzzerInitialize and LLVMFuzzerTestOneInput.
 * Built with clang -fsanitize=fuzzer,address,undefined they are the fuzzers
 * of `make fuzz`; built with -DFUZZ_REPLAY and linked with replay.c (any
 * compiler, no libFuzzer) they replay the reproducers of tests/fuzz/repro/
 * in `make check`, and each input's outcome ("ok", or the one-line
 * diagnostic, or the exit code the command would give) goes to
 * fuzz_outcome() so that the replay can compare it with the expected one.
 * Any other misbehaviour (a crash, a sanitizer report, a GLib warning or
 * critical, a broken invariant) aborts.
 */
#ifndef TCC_FUZZ_H
#define TCC_FUZZ_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_REPLAY
/* replay.c: record the outcome of the current input. */
void fuzz_outcome(const char *text);
#else
static inline void fuzz_outcome(const char *text) { (void)text; }
#endif

/* A broken invariant: say which and abort (libFuzzer saves the input). */
#define FUZZ_REQUIRE(cond, ...)                                   \
  do {                                                            \
    if (!(cond)) {                                                \
      g_printerr("fuzz: %s: ", #cond);                            \
      g_printerr(__VA_ARGS__);                                    \
      g_printerr("\n");                                           \
      abort();                                                    \
    }                                                             \
  } while (0)

/* GLib warnings and criticals are bugs too: make them abort. */
static inline void fuzz_glib_fatal(void) {
  g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

#endif
