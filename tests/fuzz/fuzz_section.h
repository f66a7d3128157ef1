/* fuzz_section.h - what the generator's fuzz targets share (fuzz_gen.c on
 * plan text, fuzz_knobs.c on plans drawn from the knob table): compile one
 * problem section of a plan as `tcc-gen --verify` does, assemble the result
 * and run it, and check the invariants:
 *   - the plan's and the compiler's diagnostics are one line
 *     "fuzz.yaml:LINE:COL: error: ...", never an internal error ("error:
 *     internal: ...": an invalid IR, a program that would deadlock);
 *   - what the compiler writes assembles, and runs without a run-time error
 *     (race, deadlock, bad address...) until it ends or reaches the cycle
 *     cap; with `numerics`, a run that ends passes the numerics check;
 *   - a run that ends keeps the 20 W limit, unless the plan says
 *     `power.fit: off`.
 * Caps that keep one input fast: a section whose workload is larger than
 * FUZZ_MAX_WORK multiply-adds (fuzz.h, fuzz_reference_work; the default P1 is
 * larger) is loaded only; placement.time_limit_s is cut to 1 s; the run
 * stops at FUZZ_MAX_CYCLES cycles.
 * The section's outcome goes into `out`: "p1: ok", "p1: skipped", or the
 * diagnostic, "; "-separated. */
#ifndef TCC_FUZZ_SECTION_H
#define TCC_FUZZ_SECTION_H

#include <string.h>

#include "fuzz.h"
#include "ir.h"
#include "fit.h"
#include "pipeline.h"
#include "plan.h"
#include "program.h"
#include "sim.h"

#define FILE_NAME "fuzz.yaml"
#define FUZZ_MAX_CYCLES 20000
static void check_diagnostic(const GError *err) { fuzz_check_diagnostic(err, FILE_NAME); }

/* Compile one section; its outcome into `out`. */
static void compile(Plan *plan, ProblemKind kind, gboolean numerics, GString *out) {
  PlanProblem *pp = kind == PROB_P1 ? &plan->p1 : &plan->d1;
  const char *name = kind == PROB_P1 ? "p1" : "d1";
  if (out->len) g_string_append(out, "; ");
  if (fuzz_reference_work(&pp->dims) > FUZZ_MAX_WORK) {
    g_string_append_printf(out, "%s: skipped", name);
    return;
  }
  pp->solver_time_limit_s = MIN(pp->solver_time_limit_s, 1);
  GError *err = NULL;
  Ir *ir = fit_pipeline(plan, kind, NULL, NULL, TRUE, NULL, &err);
  if (!ir) {
    check_diagnostic(err);
    /* "internal: ..." is the compiler's own bug (an invalid IR, a program
     * that would deadlock), never an answer to a plan */
    FUZZ_REQUIRE(strstr(err->message, ": error: internal: ") == NULL, "%s", err->message);
    g_string_append(out, err->message);
    g_error_free(err);
    return;
  }
  char *text = be_emit(ir);
  ir_free(ir);
  Program *prog = sim_asm_parse("gen.asm", text, strlen(text), &err);
  FUZZ_REQUIRE(prog != NULL, "%s: the compiler's assembly does not assemble: %s", name,
               err->message);
  SimOptions opt;
  sim_options_default(&opt);
  opt.max_cycles = FUZZ_MAX_CYCLES;
  opt.timing_only = !numerics;
  opt.seed = 7;
  SimResult res;
  if (sim_run(prog, &opt, &res, &err)) {
    FUZZ_REQUIRE(!numerics || res.check.pass, "%s: the compiler's program computes wrong values: "
                 "max abs error %g at %s", name, res.check.max_abs_err, res.check.worst);
    /* power.fit keeps every program under the limit */
    FUZZ_REQUIRE(pp->power_fit == FIT_OFF || res.peak_w <= POWER_LIMIT_W,
                 "%s: the compiler's program is over the power limit: %.3f W", name, res.peak_w);
    sim_result_clear(&res);
  } else {
    FUZZ_REQUIRE(strstr(err->message, ": cycle limit of ") != NULL,
                 "%s: the compiler's program fails: %s", name, err->message);
    g_error_free(err);
  }
  sim_program_free(prog);
  g_free(text);
  g_string_append_printf(out, "%s: ok", name);
}

#endif
