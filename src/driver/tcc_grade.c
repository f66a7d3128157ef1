/* tcc_grade.c - the tcc-grade command: compile both problems of a plan,
 * simulate each on the grading seed and the check seeds, print the verdicts
 * and the score (docs/workloads.md "Score").
 *
 * Exit codes: 0 = both problems correct and within budgets on every seed,
 * 1 = a constraint fails, 2 = bad input (plan, compile or a faulty program). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "sim.h"

/* Frozen reference cycles: plans/baseline.yaml on the default machine at
 * spec v1 (docs/workloads.md).  Changing them breaks every score. */
#define SCORE_P1_REF 802528.0
#define SCORE_D1_REF 124192.0

static const uint64_t seeds[] = {7, 13, 11, 23};
enum { NSEEDS = G_N_ELEMENTS(seeds) };

typedef struct Outcome {
  SimResult res[NSEEDS];
  gboolean pass;  /* numerics on every seed, area, power */
} Outcome;

/* Compile and run one problem on every seed. */
static gboolean grade_one(const Plan *plan, ProblemKind kind, Outcome *o, GError **err) {
  g_autoptr(Ir) ir = pass_pipeline(plan, kind, NULL, NULL, err);
  if (!ir) return FALSE;
  g_autofree char *text = be_emit(ir);
  g_autofree char *name = g_strdup_printf("%s[%s].asm", plan->file, wl_problem_name(kind));
  g_autoptr(Program) prog = sim_asm_parse(name, text, strlen(text), err);
  if (!prog) return FALSE;
  o->pass = TRUE;
  for (int i = 0; i < NSEEDS; i++) {
    SimOptions opt;
    sim_options_default(&opt);
    opt.seed = seeds[i];
    if (!sim_run(prog, &opt, &o->res[i], err)) return FALSE;
    o->pass &= sim_verdict_exit(prog, &o->res[i]) == 0;
  }
  return TRUE;
}

/* Which constraints failed, e.g. "numerics (seed 13), power". */
static char *failures(const Outcome *o) {
  GString *g = g_string_new(NULL);
  for (int i = 0; i < NSEEDS; i++)
    if (!o->res[i].check.pass) {
      g_string_append_printf(g, "%snumerics (seed %" G_GUINT64_FORMAT ")", g->len ? ", " : "", seeds[i]);
      break;
    }
  if (o->res[0].area_mm2 > AREA_LIMIT_MM2) g_string_append_printf(g, "%sarea", g->len ? ", " : "");
  if (o->res[0].peak_w > POWER_LIMIT_W) g_string_append_printf(g, "%spower", g->len ? ", " : "");
  return g_string_free(g, FALSE);
}

static void row(const char *name, const Outcome *o) {
  const SimResult *r = &o->res[0];
  printf("%-4s %9" G_GINT64_FORMAT "  %8.4f  %7.4f  [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", name,
         r->cycles, r->area_mm2, r->peak_w, r->peak_start, r->peak_start + POWER_WINDOW);
  for (int i = 0; i < NSEEDS; i++) printf("  %.1e", o->res[i].check.max_abs_err);
  g_autofree char *why = failures(o);
  printf("  %s%s%s\n", o->pass ? "PASS" : "FAIL", *why ? ": " : "", why);
}

int main(int argc, char **argv) {
  gboolean version = FALSE;
  GOptionEntry entries[] = {{"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
                            {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("PLAN.yaml - grade a plan on P1 and D1");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx, "Compiles both problems of a plan, simulates seeds 7 (graded),\n"
                                    "13, 11 and 23 (checks), prints the verdicts and the score.\n"
                                    "Exit: 0 all pass, 1 a constraint fails, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (g_option_context_parse(ctx, &argc, &argv, &err) && version) {
    printf("tcc-grade 0.1.0 (%s)\n", TCC_SIM_VERSION);
    return 0;
  }
  if (err || argc != 2) {
    fprintf(stderr, "tcc-grade: error: %s\n", err ? err->message : "expected one plan file (see --help)");
    return 2;
  }
  g_autoptr(Plan) plan = plan_load(argv[1], &err);
  if (!plan) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  Outcome p1 = {0}, d1 = {0};
  if (!grade_one(plan, PROB_P1, &p1, &err) || !grade_one(plan, PROB_D1, &d1, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  printf("%s  %s\n", TCC_SIM_VERSION, plan->file);
  printf("%-4s %9s  %8s  %7s  %-16s  error: seed 7 / 13 / 11 / 23       verdict\n", "", "cycles",
         "area mm2", "peak W", "hottest window");
  row("p1", &p1);
  row("d1", &d1);
  double c1 = (double)p1.res[0].cycles, c2 = (double)d1.res[0].cycles;
  Problem dp1, dd1;
  wl_problem_default(&dp1, PROB_P1);
  wl_problem_default(&dd1, PROB_D1);
  gboolean graded_dims = memcmp(&dp1, &plan->p1.dims, sizeof dp1) == 0 &&
                         memcmp(&dd1, &plan->d1.dims, sizeof dd1) == 0;
  if (!(p1.pass && d1.pass))
    printf("score -  (a constraint fails)\n");
  else if (!graded_dims)
    printf("score -  (problem dims differ from the graded defaults: no score)\n");
  else
    printf("score %.2f  = 1000 * sqrt(%.0f * %.0f / (%.0f * %.0f))\n",
           1000.0 * sqrt(SCORE_P1_REF * SCORE_D1_REF / (c1 * c2)), SCORE_P1_REF, SCORE_D1_REF, c1, c2);
  for (int i = 0; i < NSEEDS; i++) sim_result_clear(&p1.res[i]), sim_result_clear(&d1.res[i]);
  return p1.pass && d1.pass ? 0 : 1;
}
