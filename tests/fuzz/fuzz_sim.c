/* fuzz_sim.c - libFuzzer target: assemble and simulate, as `tcc-sim
 * --max-cycles=20000 --profile --trace=...` does, then grade the same
 * program the way tcc-grade does (sim_time once, sim_check on the seed).
 *
 * Caps that keep one input fast (the fuzzer looks for bugs, not for slow
 * workloads): at most FUZZ_MAX_CYCLES simulated cycles; programs whose
 * workload needs more than FUZZ_MAX_HBM bytes of HBM or whose reference
 * computation is larger than FUZZ_MAX_WORK multiply-adds run timing-only
 * (`tcc-sim --timing-only`: no data, no check, no grader comparison).
 *
 * Invariants beyond "no crash": one-line diagnostics "fuzz.asm:LINE:COL:
 * error: ..." (assembler and run); the grader's path gives the result (or
 * the error) of sim_run; the --json report and the trace are valid JSON.
 * Replay outcome: the assembler's or the run's diagnostic, or "exit N" with
 * N what tcc-sim would exit with (0 pass, 1 constraint fails); prefixed
 * with "timing-only: " for the large workloads.
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "jdoc.h"
#include "program.h"
#include "sim.h"
#include "trace.h"

#define FILE_NAME "fuzz.asm"
#define FUZZ_MAX_CYCLES 20000
#define FUZZ_MAX_HBM (64u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_glib_fatal();
  jdoc_use_renderers(jdoc_render, jdoc_render_compact); /* linked in: no module beside the target */
  return 0;
}

static void check_diagnostic(const GError *err) { fuzz_check_diagnostic(err, FILE_NAME); }


static void check_json(const char *text, const char *what) {
  JsonParser *jp = json_parser_new();
  GError *err = NULL;
  gboolean ok = json_parser_load_from_data(jp, text, -1, &err);
  FUZZ_REQUIRE(ok, "%s is not JSON: %s", what, err ? err->message : "?");
  g_object_unref(jp);
}

static gboolean same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* What sim_check promises: the same SimResult as sim_run (profile, trace
 * and keep_hbm aside). */
static void same_result(const SimResult *a, const SimResult *b) {
  FUZZ_REQUIRE(a->cycles == b->cycles && a->insns == b->insns &&
                   a->mma_blocks == b->mma_blocks && a->hbm_lines == b->hbm_lines,
               "cycles %" G_GINT64_FORMAT " / %" G_GINT64_FORMAT, a->cycles, b->cycles);
  FUZZ_REQUIRE(same_double(a->area_mm2, b->area_mm2) && same_double(a->static_w, b->static_w) &&
                   same_double(a->peak_w, b->peak_w) && a->peak_start == b->peak_start &&
                   same_double(a->energy_uj, b->energy_uj),
               "power: %g W / %g W", a->peak_w, b->peak_w);
  FUZZ_REQUIRE(a->peak_e == b->peak_e && a->dyn_e == b->dyn_e, "energy units: window %" G_GINT64_FORMAT
               " / %" G_GINT64_FORMAT, a->peak_e, b->peak_e);
  for (int u = 0; u < UC__COUNT; u++)
    FUZZ_REQUIRE(a->unit_e[u] == b->unit_e[u] && same_double(a->unit_energy_uj[u], b->unit_energy_uj[u]) &&
                     same_double(a->unit_busy[u], b->unit_busy[u]),
                 "unit %s", sim_unit_class_name[u]);
  FUZZ_REQUIRE(a->checked == b->checked, "checked");
  FUZZ_REQUIRE(same_double(a->check.max_abs_err, b->check.max_abs_err) &&
                   strcmp(a->check.worst, b->check.worst) == 0,
               "check: %g at %s / %g at %s", a->check.max_abs_err, a->check.worst,
               b->check.max_abs_err, b->check.worst);
}

/* The text and --json reports, the trace and the verdict of a run; frees
 * the run and the program. */
static void report(Program *prog, SimResult *res, uint64_t seed, const char *mode) {
  ReportOptions ro = {FALSE, TRUE, seed};
  g_free(sim_report(prog, res, &ro, NULL));
  ro.json = TRUE;
  char *json = sim_report(prog, res, &ro, NULL);
  check_json(json, "the --json report");
  g_free(json);
  TraceLimits lim;
  trace_limits_default(&lim);
  char *note = NULL;
  char *trace = trace_json(prog, res->trace, &lim, &note, NULL);
  FUZZ_REQUIRE(trace != NULL, "no trace");
  check_json(trace, "the trace");
  g_free(trace);
  g_free(note);
  int code = sim_verdict_exit(prog, res);
  FUZZ_REQUIRE(code == 0 || code == 1, "exit %d", code);
  char buf[64];
  g_snprintf(buf, sizeof buf, "%sexit %d", mode, code);
  fuzz_outcome(buf);
  sim_result_clear(res);
  sim_program_free(prog);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GError *err = NULL;
  Program *prog = sim_asm_parse(FILE_NAME, (const char *)data, size, &err);
  if (!prog) {
    check_diagnostic(err);
    fuzz_outcome(err->message);
    g_error_free(err);
    return 0;
  }
  SimOptions opt;
  sim_options_default(&opt);
  opt.max_cycles = FUZZ_MAX_CYCLES;
  opt.profile = TRUE;
  opt.trace = TRUE;
  opt.timing_only =
      prog->abi.hbm_bytes > FUZZ_MAX_HBM || fuzz_reference_work(&prog->prob) > FUZZ_MAX_WORK;
  const char *mode = opt.timing_only ? "timing-only: " : "";
  SimResult res;
  gboolean ran = sim_run(prog, &opt, &res, &err);
  if (opt.timing_only) {
    if (!ran) {
      check_diagnostic(err);
      g_autofree char *o = g_strconcat(mode, err->message, NULL);
      fuzz_outcome(o);
      g_error_free(err);
      sim_program_free(prog);
      return 0;
    }
    report(prog, &res, opt.seed, mode);
    return 0;
  }

  /* the grader's way: timing once, then the check on the seed */
  SimOptions gopt = opt;
  gopt.profile = FALSE;
  gopt.trace = FALSE;
  SimTiming *t = sim_time(prog, &gopt);
  SimResult gres;
  GError *gerr = NULL;
  gboolean graded = sim_check(t, gopt.seed, NULL, &gres, &gerr);
  FUZZ_REQUIRE(ran == graded, "sim_run: %s, sim_check: %s", ran ? "ok" : err->message,
               graded ? "ok" : gerr->message);
  if (!ran) {
    check_diagnostic(err);
    check_diagnostic(gerr);
    FUZZ_REQUIRE(strcmp(err->message, gerr->message) == 0, "sim_run: %s, sim_check: %s",
                 err->message, gerr->message);
    fuzz_outcome(err->message);
    g_error_free(err);
    g_error_free(gerr);
    sim_timing_free(t);
    sim_program_free(prog);
    return 0;
  }
  same_result(&res, &gres);
  sim_result_clear(&gres);
  sim_timing_free(t);
  report(prog, &res, opt.seed, mode);
  return 0;
}
