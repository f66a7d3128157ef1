/* fuzz_plan.c - libFuzzer target: the plan loader (YAML -> Plan, with every
 * semantic check: schema, ranges, divisibility, hardware, "has no effect
 * unless"), through plan_parse, the in-memory twin of plan_load.
 *
 * Invariants beyond "no crash": a NULL plan comes with exactly one error,
 * in PLAN_ERROR, one line "fuzz.yaml:LINE:COL: error: ..." (or
 * "fuzz.yaml: error: ..."); a loaded plan describes each of its knobs.
 * Replay outcome: "ok" or the diagnostic.
 */
#include <string.h>

#include "fuzz.h"
#include "plan.h"
#include "plan_internal.h"

#define FILE_NAME "fuzz.yaml"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_glib_fatal();
  return 0;
}

static void check_diagnostic(const GError *err) {
  fuzz_check_diagnostic(err, FILE_NAME);
  FUZZ_REQUIRE(err->domain == PLAN_ERROR, "domain %s", g_quark_to_string(err->domain));
  FUZZ_REQUIRE(err->code >= PLAN_ERROR_IO && err->code <= PLAN_ERROR_VERSION, "code %d",
               err->code);
  FUZZ_REQUIRE(g_utf8_validate(err->message, -1, NULL), "not UTF-8: %s", err->message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GError *err = NULL;
  Plan *p = plan_parse(FILE_NAME, (const char *)data, size, &err);
  if (!p) {
    check_diagnostic(err);
    fuzz_outcome(err->message);
    g_error_free(err);
    return 0;
  }
  FUZZ_REQUIRE(err == NULL, "a plan and an error: %s", err->message);
  FUZZ_REQUIRE(p->version == PLAN_VERSION, "version %d", p->version);
  for (int k = 0; k < 2; k++) {
    const PlanProblem *pp = plan_problem(p, (ProblemKind)k);
    for (int i = 0; i < PLAN_NKNOBS; i++) {
      PlanLoc loc = plan_knob_loc(pp, plan_knobs[i].path);
      char *d = plan_knob_describe(pp, plan_knobs[i].path);
      FUZZ_REQUIRE(!d || loc.path != NULL, "%s described without a location",
                   plan_knobs[i].path);
      g_free(d);
    }
  }
  fuzz_outcome("ok");
  plan_free(p);
  return 0;
}
