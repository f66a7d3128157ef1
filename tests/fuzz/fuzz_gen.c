/* fuzz_gen.c - libFuzzer target: the generator, as `tcc-gen --verify` runs
 * it: plan_parse, then for each problem section of the plan the pass
 * pipeline with the IR verifier after every pass, the assembly, and that
 * assembly through the assembler and a timing-only run (fuzz_section.h:
 * the invariants and the caps).
 * Replay outcome per section: "p1: ok", "p1: skipped", or the diagnostic;
 * "; "-separated; or the plan's diagnostic.
 */
#include "fuzz_section.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_glib_fatal();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GError *err = NULL;
  Plan *plan = plan_parse(FILE_NAME, (const char *)data, size, &err);
  if (!plan) {
    check_diagnostic(err);
    fuzz_outcome(err->message);
    g_error_free(err);
    return 0;
  }
  GString *out = g_string_new(NULL);
  if (plan->p1.present) compile(plan, PROB_P1, FALSE, out);
  if (plan->d1.present) compile(plan, PROB_D1, FALSE, out);
  fuzz_outcome(out->len ? out->str : "no section");
  g_string_free(out, TRUE);
  plan_free(plan);
  return 0;
}
