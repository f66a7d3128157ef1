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
#include <string.h>

#include "workload.h"

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

/* A diagnostic is one line "FILE:LINE:COL: error: ..." about `file`. */
static inline void fuzz_check_diagnostic(const GError *err, const char *file) {
  FUZZ_REQUIRE(err != NULL, "a failure without an error");
  const char *m = err->message;
  FUZZ_REQUIRE(g_str_has_prefix(m, file) && m[strlen(file)] == ':', "%s", m);
  FUZZ_REQUIRE(strstr(m, ": error: ") != NULL, "%s", m);
  FUZZ_REQUIRE(strpbrk(m, "\n\r") == NULL, "two lines: %s", m);
}

/* Multiply-adds of the workload's reference model, roughly: per token and
 * layer the four projections and attention over its context.  Above
 * FUZZ_MAX_WORK (the default P1 is; the default D1 is not) a target skips
 * the numerics or the section, to keep one input fast. */
#define FUZZ_MAX_WORK 50000000.0
static inline double fuzz_reference_work(const Problem *p) {
  double dm = p->d_model, dff = p->d_ff, tokens, ctx;
  if (p->kind == PROB_D1) {
    tokens = p->steps;
    ctx = (double)p->history + p->steps;
  } else {
    tokens = (double)p->seqs * p->rows;
    ctx = p->rows;
  }
  return (double)p->layers * tokens * (4.0 * dm * dm + 2.0 * dm * dff + 2.0 * ctx * dm);
}

/* GLib warnings and criticals are bugs too: make them abort. */
static inline void fuzz_glib_fatal(void) {
  g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

#endif
