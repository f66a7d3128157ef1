/* tcc_diff.c - the tcc-diff command: how one plan differs from another.
 * Loads both plans, lists the knobs whose effective values differ,
 * compiles each problem of each plan as tcc-gen does, summarises the code's
 * difference per task and per WG, simulates all four programs as tcc-sim
 * does (one seed, with numerics) and prints the metric deltas
 * (docs/tools.md).
 *
 * Exit codes: 0 = compared and every program is correct and within
 * budgets (differences are not failures), 1 = a program of either plan
 * fails a constraint, 2 = bad input (a usage error, a plan, a compile or a
 * faulty program) or standard output that cannot be written. */
#include <stdio.h>
#include <string.h>

#include "diffreport.h"
#include "unified.h"
#include "fit.h"
#include "pipeline.h"
#include "stdout_check.h"
#include "text_escape.h"

/* One simulation, run on the thread pool. */
typedef struct Run {
  const Program *prog;
  SimOptions opt;
  SimResult *res;
  GError *err;
} Run;

static void run_sim(gpointer data, gpointer user) {
  Run *r = data;
  (void)user;
  sim_run(r->prog, &r->opt, r->res, &r->err);
}

/* Compile one problem of a plan and assemble it, as tcc-gen then tcc-sim
 * would; the program is named "PLAN[p1].asm" in diagnostics. */
static Program *build(const Plan *plan, ProblemKind kind, GError **err) {
  g_autoptr(Ir) ir = fit_pipeline(plan, kind, NULL, NULL, FALSE, NULL, err);
  if (!ir) return NULL;
  char *text = be_emit(ir);
  g_autofree char *name = g_strdup_printf("%s[%s].asm", plan->file, wl_problem_name(kind));
  return sim_asm_parse_take(name, text, strlen(text), err); /* takes the text */
}

/* The problems to compare: --problem's, or those with a section in either
 * plan (a plan without it then fails to compile, exit 2). */
static gboolean pick(const char *name, Plan *const plan[2], gboolean on[2], GError **err) {
  if (name) {
    if (strcmp(name, "p1") && strcmp(name, "d1")) {
      g_set_error(err, PLAN_ERROR, PLAN_ERROR_TYPE, "tcc-diff: error: --problem must be p1 or d1, got '%s'", name);
      return FALSE;
    }
    on[PROB_P1] = strcmp(name, "p1") == 0;
    on[PROB_D1] = !on[PROB_P1];
    return TRUE;
  }
  for (int k = 0; k < 2; k++)
    on[k] = plan_problem(plan[0], (ProblemKind)k)->present || plan_problem(plan[1], (ProblemKind)k)->present;
  if (on[0] || on[1]) return TRUE;
  g_autofree char *file = text_escape(plan[0]->file); /* one line, whatever the name holds */
  g_set_error(err, PLAN_ERROR, PLAN_ERROR_MISSING, "%s:1:1: error: neither plan has a p1 or d1 section", file);
  return FALSE;
}

static const ProblemKind order[] = {PROB_P1, PROB_D1};

/* The edits past which a WG's unified diff shows it whole (unified.h):
 * Myers' search keeps a frontier per edit, O(D^2) memory. */
#define DIFF_MAX_EDITS 4096

/* Changed tasks (and WGs) the text report lists one a row without --all. */
#define DIFF_ROWS 30

/* Build the four programs (p1 a, p1 b, d1 a, d1 b: the first error wins),
 * simulating each on the pool as soon as it is built, and diff the code
 * while they run.  FALSE with *err on the first error in that order. */
static gboolean compare(Plan *const plan[2], DiffReport *r, Program *prog[2][2], GError **err) {
  int nthreads = CLAMP((int)g_get_num_processors(), 1, 4);
  GThreadPool *pool = g_thread_pool_new(run_sim, NULL, nthreads, FALSE, NULL);
  Run runs[2][2] = {{{0}}};
  gboolean ok = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS(order) && ok; i++) {
    ProblemKind k = order[i];
    if (!r->prob[k].on) continue;
    for (int s = 0; s < 2 && ok; s++) {
      prog[k][s] = build(plan[s], k, err);
      if (!(ok = prog[k][s] != NULL)) break;
      Run *run = &runs[k][s];
      run->prog = prog[k][s];
      sim_options_default(&run->opt);
      run->opt.seed = r->seed;
      run->res = &r->prob[k].res[s];
      g_thread_pool_push(pool, run, NULL);
    }
  }
  for (guint i = 0; i < G_N_ELEMENTS(order) && ok; i++)
    if (r->prob[order[i]].on) r->prob[order[i]].code = diff_code(prog[order[i]][0], prog[order[i]][1]);
  g_thread_pool_free(pool, FALSE, TRUE); /* waits for the runs */
  for (guint i = 0; i < G_N_ELEMENTS(order); i++)
    for (int s = 0; s < 2; s++) {
      Run *run = &runs[order[i]][s];
      if (run->err && ok) {
        g_propagate_error(err, run->err);
        run->err = NULL;
        ok = FALSE;
      }
      g_clear_error(&run->err);
    }
  return ok;
}

int main(int argc, char **argv) {
  stdout_check_at_exit("tcc-diff", 2); /* a report that was not written is an error */
  g_autofree char *problem = NULL, *seed_arg = NULL;
  gboolean json = FALSE, all = FALSE, version = FALSE, strict = FALSE, stat = FALSE;
  int context = 3;
  GOptionEntry entries[] = {
      {"stat", 0, 0, G_OPTION_ARG_NONE, &stat,
       "the summary alone: the knobs, the changed lines per task and per WG, the metrics (no code)", NULL},
      {"unified", 'U', 0, G_OPTION_ARG_INT, &context, "lines of context around each change (default 3)", "N"},
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem,
       "compare p1 or d1 only (default: each problem with a section in either plan)", "P"},
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, "write the report as JSON (every changed task and WG)", NULL},
      {"all", 0, 0, G_OPTION_ARG_NONE, &all,
       "list every changed task and WG (default: the first " G_STRINGIFY(DIFF_ROWS) " of each, the rest summed in one row)",
       NULL},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed_arg, "workload data seed of the runs, 0..9223372036854775807 (default 7)",
       "N"},
      {"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
       "refuse values that do not fit the shape or the machine instead of falling back, as tcc-gen --strict", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("A.yaml B.yaml - how plan B differs from plan A");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx, "Lists the knobs whose values differ, the generated code's difference\n"
                                    "per task and per WG, the metric deltas of the simulated runs, then\n"
                                    "the code itself as a unified diff per WG (--stat: not the code).\n"
                                    "Exit: 0 compared, 1 a program of either plan fails a constraint,\n"
                                    "2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-diff: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("%s\nsimulator: %s\n", TCC_DIFF_VERSION, TCC_SIM_VERSION);
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "tcc-diff: error: expected two plan files (see --help)\n");
    return 2;
  }
  if (context < 0 || context > 1000) {
    fprintf(stderr, "tcc-diff: error: --unified must be 0..1000, got %d\n", context);
    return 2;
  }
  DiffReport r = {.file = {argv[1], argv[2]}, .seed = 7, .limit = all ? 0 : DIFF_ROWS};
  if (seed_arg) {
    guint64 v;
    if (!g_ascii_string_to_unsigned(seed_arg, 10, 0, G_MAXINT64, &v, NULL)) {
      g_autofree char *q = g_strescape(seed_arg, NULL);
      fprintf(stderr, "tcc-diff: error: --seed must be an integer 0..%" G_GINT64_FORMAT ", got '%s'\n",
              G_MAXINT64, q);
      return 2;
    }
    r.seed = v;
  }
  g_autoptr(Plan) a = plan_load_strict(argv[1], strict, &err);
  g_autoptr(Plan) b = a ? plan_load_strict(argv[2], strict, &err) : NULL;
  Plan *plans[2] = {a, b};
  gboolean on[2];
  if (!a || !b || !pick(problem, plans, on, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  for (int k = 0; k < 2; k++) r.prob[k].on = on[k];
  r.knobs = diff_knobs(a, b, on);
  Program *prog[2][2] = {{NULL}};
  gboolean ok = compare(plans, &r, prog, &err);
  int code = 2;
  if (ok) {
    g_autofree char *text = json ? diff_report_json(&r) : diff_report_text(&r);
    stdout_put(text);
    for (int i = 0; !json && !stat && i < 2; i++) { /* the code itself, WG by WG */
      ProblemKind k = order[i];
      if (!r.prob[k].on) continue;
      g_autofree char *la = g_strdup_printf("%s %s", argv[1], wl_problem_name(k));
      g_autofree char *lb = g_strdup_printf("%s %s", argv[2], wl_problem_name(k));
      int shown = 0;
      g_autofree char *u = diff_unified(prog[k][0], prog[k][1], la, lb, context, DIFF_MAX_EDITS, &shown);
      printf("\n%s code diff (unified, by WG): %d WG%s differ%s\n", wl_problem_name(k), shown, shown == 1 ? "" : "s",
             shown == 1 ? "s" : "");
      stdout_put(u);
    }
    code = 0;
    for (int k = 0; k < 2; k++)
      for (int s = 0; s < 2 && r.prob[k].on; s++)
        if (!diff_pass(&r.prob[k].res[s])) code = 1;
  } else {
    fprintf(stderr, "%s\n", err->message);
  }
  for (int k = 0; k < 2; k++) {
    diff_code_free(r.prob[k].code);
    for (int s = 0; s < 2; s++) {
      sim_result_clear(&r.prob[k].res[s]);
      sim_program_free(prog[k][s]);
    }
  }
  g_array_free(r.knobs, TRUE);
  return code;
}
