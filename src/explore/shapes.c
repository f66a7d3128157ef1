/* shapes.c - tcc-shapes' logic (shapes.h).
 *
 * One run per (plan, shape): the plan's text with the shape's dims written
 * into its section's `problem:` (plan_edit.c), compiled as tcc-gen does it
 * (fit_pipeline: the power fitting included), assembled and run on seed 7
 * with its numerics checked; then the verdicts of tcc-sim and the shape's
 * lower bound (docs/bounds.md).  Runs go on a thread pool; the table lists
 * them in plan-major, suite order whatever the threads did. */
#include "shapes.h"

#include <math.h>
#include <string.h>

#include "bounds.h"
#include "fit.h"
#include "ir.h"
#include "plan_edit.h"
#include "program.h"
#include "sim.h"

const char *const shape_status_name[] = {"PASS", "FAIL", "limit", "refused", "skipped"};

typedef struct Job {
  const ShapeSuite *s;
  const char *file, *text;
  gsize len;
  ShapeRun *run;
} Job;

/* The plan's text with the shape's dims in its section. */
static char *shaped_text(const Job *j, const Shape *sh, GError **err) {
  static const char *const dims[] = {"d_model", "heads", "d_ff", "layers", "history", "steps", "seqs", "rows"};
  const Problem *p = &sh->dims;
  const int val[] = {p->d_model, p->heads, p->d_ff, p->layers, p->history, p->steps, p->seqs, p->rows};
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
  for (unsigned i = 0; i < G_N_ELEMENTS(dims); i++) {
    gboolean d1_only = i == 4 || i == 5, p1_only = i == 6 || i == 7;
    if ((d1_only && p->kind != PROB_D1) || (p1_only && p->kind != PROB_P1)) continue;
    g_ptr_array_add(keys, g_strdup_printf("%s.problem.%s", wl_problem_name(p->kind), dims[i]));
    g_ptr_array_add(values, g_strdup_printf("%d", val[i]));
  }
  return plan_edit_text(j->file, j->text, j->len, "problem", keys, values, err);
}

static void run_one(gpointer data, gpointer unused) {
  (void)unused;
  Job *j = data;
  ShapeRun *r = j->run;
  const Shape *sh = &g_array_index(j->s->shapes, Shape, r->shape);
  g_autoptr(GError) err = NULL;
  g_autofree char *text = shaped_text(j, sh, &err);
  g_autoptr(Plan) plan = text ? plan_parse(j->file, text, strlen(text), &err) : NULL;
  if (plan && !plan_problem(plan, sh->dims.kind)->present) {
    r->status = SHAPE_SKIPPED;
    return;
  }
  FitResult fit = {0};
  FitKept kept = {0};
  g_autoptr(Ir) ir = plan ? fit_pipeline_kept(plan, sh->dims.kind, &fit, &kept, &err) : NULL;
  if (!ir) {
    r->status = err && strstr(err->message, "tcc-gen's limit") ? SHAPE_LIMIT : SHAPE_REFUSED;
    r->why = g_strdup(err ? err->message : "?");
    return;
  }
  r->fit_runs = fit.runs;
  r->fitted = fit.changed && !fit.relaxed;
  r->relaxed = fit.relaxed;
  SimResult res;
  gboolean ran;
  if (kept.timing) { /* the fitting's run of this very program: seed 7's numerics on it */
    ran = sim_check(kept.timing, 7, NULL, &res, &err);
    fit_kept_clear(&kept);
  } else {
    char *asm_text = be_emit(ir);
    g_autoptr(Program) prog = sim_asm_parse_take("shape.asm", asm_text, strlen(asm_text), &err);
    SimOptions opt;
    sim_options_default(&opt);
    opt.seed = 7;
    ran = prog && sim_run(prog, &opt, &res, &err);
  }
  if (!ran) {
    r->status = SHAPE_FAIL;
    r->why = g_strdup_printf("the program does not run: %s", err ? err->message : "?");
    return;
  }
  Bounds b;
  sim_bounds(&plan->hw, &sh->dims, &b);
  r->cycles = res.cycles;
  r->peak_w = res.peak_w;
  r->bound = b.bound;
  GString *bad = g_string_new(NULL);
  if (!res.check.pass) g_string_append_printf(bad, "numerics (max abs error %g) ", res.check.max_abs_err);
  if (res.area_mm2 > AREA_LIMIT_MM2) g_string_append_printf(bad, "area (%.2f mm^2) ", res.area_mm2);
  if (res.peak_w > POWER_LIMIT_W) g_string_append_printf(bad, "power (%.4f W) ", res.peak_w);
  r->status = bad->len ? SHAPE_FAIL : SHAPE_PASS;
  r->why = bad->len ? g_strchomp(g_string_free(bad, FALSE)) : (g_string_free(bad, TRUE), NULL);
  sim_result_clear(&res);
}

ShapeRun *shapes_run(const ShapeSuite *s, char **files, int nplans, gboolean quick, int jobs, guint *n,
                     GError **err) {
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) lens = g_array_new(FALSE, FALSE, sizeof(gsize));
  for (int i = 0; i < nplans; i++) {
    char *t = NULL;
    gsize len = 0;
    if (!plan_read_text(files[i], "plan", &t, &len, err)) return NULL;
    g_ptr_array_add(texts, t);
    g_array_append_val(lens, len);
  }
  GArray *runs = g_array_new(FALSE, TRUE, sizeof(ShapeRun));
  for (int i = 0; i < nplans; i++)
    for (guint k = 0; k < s->shapes->len; k++)
      if (!quick || g_array_index(s->shapes, Shape, k).quick) {
        ShapeRun r = {.plan = i, .shape = k};
        g_array_append_val(runs, r);
      }
  Job *job = g_new0(Job, runs->len);
  GThreadPool *pool = g_thread_pool_new(run_one, NULL, MAX(jobs, 1), FALSE, NULL);
  for (guint i = 0; i < runs->len; i++) {
    ShapeRun *r = &g_array_index(runs, ShapeRun, i);
    job[i] = (Job){s, files[r->plan], g_ptr_array_index(texts, r->plan), g_array_index(lens, gsize, r->plan), r};
    g_thread_pool_push(pool, &job[i], NULL);
  }
  g_thread_pool_free(pool, FALSE, TRUE);
  g_free(job);
  *n = runs->len;
  return (ShapeRun *)(void *)g_array_free(runs, FALSE);
}

void shapes_free(ShapeRun *runs, guint n) {
  for (guint i = 0; runs && i < n; i++) g_free(runs[i].why);
  g_free(runs);
}

char *shapes_table(const ShapeSuite *s, char **files, int nplans, const ShapeRun *runs, guint n, guint *bad,
                   guint *failed) {
  GString *o = g_string_new(NULL);
  *bad = *failed = 0;
  g_string_append_printf(o, "%-24s %-3s %-58s %-7s %9s %8s %8s %7s %4s\n", "plan", "pb", "shape", "status",
                         "cycles", "peak W", "bound", "c/bound", "fit");
  for (guint i = 0; i < n; i++) {
    const ShapeRun *r = &runs[i];
    const Shape *sh = &g_array_index(s->shapes, Shape, r->shape);
    g_autofree char *shape = shape_text(&sh->dims);
    g_string_append_printf(o, "%-24s %-3s %-58s %-7s", files[r->plan], wl_problem_name(sh->dims.kind), shape,
                           shape_status_name[r->status]);
    if (r->status == SHAPE_PASS || (r->status == SHAPE_FAIL && r->cycles > 0))
      g_string_append_printf(o, " %9" G_GINT64_FORMAT " %8.4f %8" G_GINT64_FORMAT " %7.2f %4d%s", r->cycles,
                             r->peak_w, r->bound, r->bound > 0 ? (double)r->cycles / (double)r->bound : 0.0,
                             r->fit_runs, r->fitted ? "*" : r->relaxed ? "r" : "");
    if (r->why) g_string_append_printf(o, "  %s", r->why);
    g_string_append_c(o, '\n');
    *bad += r->status == SHAPE_FAIL || r->status == SHAPE_REFUSED;
    *failed += r->status == SHAPE_FAIL;
  }
  g_string_append_c(o, '\n');
  for (int p = 0; p < nplans; p++) {
    int count[5] = {0}, m = 0;
    double logsum = 0;
    for (guint i = 0; i < n; i++) {
      const ShapeRun *r = &runs[i];
      if (r->plan != p) continue;
      count[r->status]++;
      if (r->status == SHAPE_PASS && r->bound > 0) logsum += log((double)r->cycles / (double)r->bound), m++;
    }
    g_string_append_printf(o, "%s: %d PASS, %d FAIL, %d refused, %d over the size limit, %d skipped", files[p],
                           count[SHAPE_PASS], count[SHAPE_FAIL], count[SHAPE_REFUSED], count[SHAPE_LIMIT],
                           count[SHAPE_SKIPPED]);
    if (m) g_string_append_printf(o, "; geometric mean of cycles/bound %.3f over %d", exp(logsum / m), m);
    g_string_append_c(o, '\n');
  }
  g_string_append(o, "(fit: the power fitting's runs; * it paced the loads or took SMs away, r it lowered the "
                     "spacings: power.fit: relax)\n");
  return g_string_free(o, FALSE);
}
