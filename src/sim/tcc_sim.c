/* tcc_sim.c - the tcc-sim command: assemble, simulate, report.
 *
 * Exit codes: 0 = correct and within budgets, 1 = a constraint fails
 * (numerics, area, power), 2 = bad input or a faulty program (or a trace
 * file, or standard output, that cannot be written). */
#include <stdio.h>
#include <stdlib.h>

#include "heap.h"
#include "jdoc.h"
#include "outfile.h"
#include "plot.h"
#include "sim.h"
#include "trace.h"
#include "stdout_check.h"
#include "text_escape.h"

/* A decimal integer without sign or blanks in lo..hi into *v; FALSE on
 * anything else (a sign, garbage, empty, out of range). */
static gboolean parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *v) {
  uint64_t x = 0;
  if (!s || !*s) return FALSE;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return FALSE;
    uint64_t d = (uint64_t)(*p - '0');
    if (d > hi || x > (hi - d) / 10) return FALSE; /* x*10 + d > hi */
    x = x * 10 + d;
  }
  if (x < lo) return FALSE;
  *v = x;
  return TRUE;
}

/* `--NAME must be an integer LO..HI, got 'TEXT'` on stderr (one line). */
static int bad_number(const char *name, uint64_t lo, uint64_t hi, const char *text) {
  g_autofree char *q = g_strescape(text, NULL);
  fprintf(stderr, "tcc-sim: error: --%s must be an integer %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                  ", got '%s'\n", name, lo, hi, q);
  return 2;
}

/* The output FILE of --OPTION (trace, plot) opened before the run, as
 * every output file is (outfile.h): the program itself is refused; on
 * failure the one line `FILE:1:1: error: cannot write: REASON` (or the
 * refusal) is printed. */
static OutFile *open_output(const char *option, const char *file, const char *program) {
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open(file, (const char *const[]){program, NULL}, OUTFILE_DEFAULT, &err);
  if (o) return o;
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  if (g_error_matches(err, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    fprintf(stderr, "tcc-sim: error: --%s %s is the program itself\n", option, name);
  else
    fprintf(stderr, "%s:1:1: error: cannot write: %s\n", name, err->message);
  return NULL;
}

/* The outputs of a run: the trace, then the plots. */
typedef struct Outputs {
  OutFile *trace;
  OutFile **plots; /* one per --plot */
  int nplots;
} Outputs;

/* Nothing of a run that did not finish, or whose outputs could not all be
 * written, replaces a file: the temporary files go. */
static void outputs_abandon(Outputs *o) {
  outfile_abandon(o->trace);
  o->trace = NULL;
  for (int i = 0; i < o->nplots; i++) {
    outfile_abandon(o->plots[i]);
    o->plots[i] = NULL;
  }
  g_free(o->plots);
  o->plots = NULL;
}

int main(int argc, char **argv) {
  heap_in_one_step();
  stdout_check_at_exit("tcc-sim", 2); /* a report that was not written is an error */
  g_autofree char *seed_arg = NULL, *max_arg = NULL, *trace_file = NULL;
  g_autofree char *max_slices_arg = NULL, *max_unit_arg = NULL, *max_flows_arg = NULL;
  g_auto(GStrv) plots = NULL;
  gboolean json = FALSE, profile = FALSE, timing_only = FALSE, version = FALSE;
  GOptionEntry entries[] = {
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed_arg,
       "workload data seed, 0..18446744073709551615 (grading: 7)", "N"},
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, "machine-readable report", NULL},
      {"profile", 0, 0, G_OPTION_ARG_NONE, &profile,
       "per-unit utilisation and energy, and the instructions in the hottest window", NULL},
      {"timing-only", 0, 0, G_OPTION_ARG_NONE, &timing_only,
       "skip numerics (faster; no correctness verdict)", NULL},
      {"max-cycles", 0, 0, G_OPTION_ARG_STRING, &max_arg,
       "cycle limit, 1..10^18 (default 100000000)", "N"},
      {"trace", 0, 0, G_OPTION_ARG_FILENAME, &trace_file,
       "write a Chrome trace-event timeline (Perfetto, chrome://tracing) to FILE", "FILE"},
      {"trace-max-slices", 0, 0, G_OPTION_ARG_STRING, &max_slices_arg,
       "--trace: instruction slices before they are aggregated, 1..10000000 (default 100000)", "N"},
      {"trace-max-unit-slices", 0, 0, G_OPTION_ARG_STRING, &max_unit_arg,
       "--trace: MMA and DMA slices before they merge, 1..10000000 (default 50000)", "N"},
      {"trace-max-flows", 0, 0, G_OPTION_ARG_STRING, &max_flows_arg,
       "--trace: SIG -> WAIT arrows, 0..10000000 (default 50000; the longest WAITs kept)", "N"},
      {"plot", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &plots,
       "draw power over time, stacked by unit, into FILE.svg or FILE.png (repeatable)", "FILE"},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the simulator version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("PROG.asm - simulate a TCC program");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
                               "Runs a TCC assembly program on its problem's workload and reports\n"
                               "cycles, area, peak power and numerics (docs/machine.md).\n"
                               "Exit: 0 correct and within budgets, 1 a constraint fails, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-sim: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("%s\n", TCC_SIM_VERSION);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "tcc-sim: error: expected one program file (see --help)\n");
    return 2;
  }
  SimOptions opt;
  sim_options_default(&opt);
  uint64_t v;
  if (seed_arg) {
    if (!parse_uint(seed_arg, 0, G_MAXUINT64, &v)) return bad_number("seed", 0, G_MAXUINT64, seed_arg);
    opt.seed = v;
  }
  if (max_arg) {
    if (!parse_uint(max_arg, 1, (uint64_t)TCC_MAX_COUNT, &v))
      return bad_number("max-cycles", 1, (uint64_t)TCC_MAX_COUNT, max_arg);
    opt.max_cycles = (int64_t)v;
  }
  if (trace_file && !*trace_file) {
    fprintf(stderr, "tcc-sim: error: --trace needs a file name\n");
    return 2;
  }
  TraceLimits lim;
  trace_limits_default(&lim);
  struct {
    const char *name, *arg;
    uint64_t lo;
    int *v;
  } limits[] = {{"trace-max-slices", max_slices_arg, 1, &lim.max_insn_slices},
                {"trace-max-unit-slices", max_unit_arg, 1, &lim.max_unit_slices},
                {"trace-max-flows", max_flows_arg, 0, &lim.max_flows}};
  for (size_t i = 0; i < G_N_ELEMENTS(limits); i++) {
    if (!limits[i].arg) continue;
    if (!parse_uint(limits[i].arg, limits[i].lo, TRACE_MAX_LIMIT, &v))
      return bad_number(limits[i].name, limits[i].lo, TRACE_MAX_LIMIT, limits[i].arg);
    if (!trace_file) {
      fprintf(stderr, "tcc-sim: error: --%s has no effect without --trace\n", limits[i].name);
      return 2;
    }
    *limits[i].v = (int)v;
  }
  opt.timing_only = timing_only;
  opt.profile = profile;
  for (int i = 0; plots && plots[i]; i++) {
    if (!*plots[i]) {
      fprintf(stderr, "tcc-sim: error: --plot needs a file name\n");
      return 2;
    }
    if (plot_format_of(plots[i]) == PLOT_NONE) {
      g_autofree char *name = text_escape(plots[i]);
      fprintf(stderr, "%s: error: a plot file name ends in .svg or .png\n", name);
      return 2;
    }
  }
  /* cairo is loaded only now, and only for --plot (plot.h) */
  if (plots && !plot_load(&err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  /* json-glib too, only for --trace and --json (jdoc.h) */
  if ((trace_file || json) && !jdoc_load(&err)) {
    fprintf(stderr, "tcc-sim: error: %s: %s\n", trace_file ? "--trace" : "--json", err->message);
    return 2;
  }
  opt.trace = trace_file != NULL || plots != NULL; /* the plot draws the recorded timeline */
  g_autoptr(Program) prog = sim_asm_load(argv[1], &err);
  if (!prog) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  /* an output that cannot be written fails before the run, not after;
   * each is written whole once the run is done (or not at all) */
  Outputs outs = {NULL, NULL, 0};
  if (trace_file && !(outs.trace = open_output("trace", trace_file, argv[1]))) return 2;
  outs.plots = g_new0(OutFile *, plots ? g_strv_length(plots) : 1);
  for (int i = 0; plots && plots[i]; i++, outs.nplots++)
    if (!(outs.plots[i] = open_output("plot", plots[i], argv[1]))) {
      outputs_abandon(&outs);
      return 2;
    }
  SimResult res;
  if (!sim_run(prog, &opt, &res, &err)) {
    fprintf(stderr, "%s\n", err->message);
    outputs_abandon(&outs); /* no run, no timeline: any file there stays as it was */
    return 2;
  }
  g_autofree char *note = NULL;
  gboolean written = !trace_file || trace_write_to(prog, res.trace, &lim, outfile_stream(outs.trace), trace_file,
                                                   &note, &err);
  for (int i = 0; written && plots && plots[i]; i++)
    written = plot_write_to(prog, res.trace, outfile_stream(outs.plots[i]), plots[i], &err);
  if (plots) plot_release_fonts();
  if (!written) {
    fprintf(stderr, "%s\n", err->message);
    outputs_abandon(&outs);
    sim_result_clear(&res);
    return 2;
  }
  for (int i = -1; i < outs.nplots; i++) { /* the trace (if any), then the plots */
    OutFile **o = i < 0 ? &outs.trace : &outs.plots[i];
    const char *file = i < 0 ? trace_file : plots[i];
    if (!*o) continue;
    gboolean ok = outfile_commit(*o, &err);
    *o = NULL;
    if (!ok) {
      g_autofree char *name = text_escape(file);
      fprintf(stderr, "%s:1:1: error: cannot write: %s\n", name, err->message);
      outputs_abandon(&outs);
      sim_result_clear(&res);
      return 2;
    }
  }
  outputs_abandon(&outs); /* all committed: frees the array */
  if (note) {
    g_autofree char *name = text_escape(trace_file);
    fprintf(stderr, "tcc-sim: note: %s: %s\n", name, note);
  }
  ReportOptions ro = {json, profile, opt.seed};
  g_autofree char *rep = sim_report(prog, &res, &ro, &err);
  if (!rep) {
    fprintf(stderr, "tcc-sim: error: --json: %s\n", err->message);
    sim_result_clear(&res);
    return 2;
  }
  stdout_put(rep);
  if (!json && (res.peak_w > POWER_LIMIT_W || res.area_mm2 > AREA_LIMIT_MM2)) {
    /* a FAIL says where to look: for power, the profile of a second run
     * (timing only: the timing and the energy do not depend on the data) */
    SimResult prof;
    SimOptions po = opt;
    po.profile = TRUE, po.timing_only = TRUE, po.trace = FALSE;
    /* not after --timing-only, a run for speed: the hint then points to --profile */
    gboolean again = res.peak_w > POWER_LIMIT_W && !profile && !timing_only && sim_run(prog, &po, &prof, NULL);
    g_autofree char *hint = sim_verdict_hint(prog, &res, profile ? &res : again ? &prof : NULL, "hint      ");
    if (hint) fputs(hint, stdout);
    if (again) sim_result_clear(&prof);
  }
  int code = sim_verdict_exit(prog, &res);
  sim_result_clear(&res);
  return code;
}
