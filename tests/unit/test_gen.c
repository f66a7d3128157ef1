/* test_gen.c - tcc-gen end to end, through the library (pass_pipeline,
 * be_emit) and the simulator (sim_asm_parse, sim_run):
 *
 *   baseline    plans/baseline.yaml on P1 and D1, seeds 7, 13, 11, 23: correct,
 *               within area and power, and exactly the frozen reference cycles
 *               (docs/workloads.md §7), so the baseline scores 1000.00;
 *   passes      each pass run alone (ir_new + lower, place, pace, rf_alloc),
 *               ir_verify after each, and the result equal to pass_pipeline's,
 *               for the baseline and every good plan of tests/golden;
 *   pace        pass_pace alone on small IRs written by hand: a bucket
 *               filled exactly, bucket numbers along a WG's program, the
 *               lines of loads that end mid-line;
 *   determinism two compiles of a plan give byte-identical assembly and IR;
 *   diff        one knob changed: the assembly changes only in the tasks that
 *               knob affects (names, addresses and regions of the others stay);
 *   knobs       every implemented knob changes the output, the program stays
 *               correct, and where docs/plan.md predicts a direction (temp K/V
 *               writeback is slower and costs energy; pacing caps the peak) the
 *               simulator agrees.
 *
 * Small plans are written inline with small `problem:` dims so that the whole
 * suite stays fast; only the baseline runs at full size. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "builder.h"
#include "explain.h"
#include "fanout.h"
#include "ir_parse.h"
#include "lower.h"
#include "pipeline.h"
#include "resident.h"
#include "tests.h"
#include "trace.h" /* the MMA arrays test: TraceSlice */

static const uint64_t seeds[] = {7, 13, 11, 23};
enum { NSEEDS = G_N_ELEMENTS(seeds) };

/* Frozen reference cycles of the baseline (docs/workloads.md §7; the same
 * constants as SCORE_*_REF in src/driver/tcc_grade.c). */
#define REF_P1 802528
#define REF_D1 124192

/* Small dims: a few hundred instructions per program. */
#define D1_DIMS "{d_model: 64, heads: 2, d_ff: 128, layers: 1, history: 32, steps: 2}"
#define P1_DIMS "{d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 1, rows: 64}"

/* ------------------------------------------------------------ helpers */

static const char *pname(ProblemKind k) { return wl_problem_name(k); }

/* A plan from text, named `name` in messages and in the generated header. */
static Plan *plan_text(const char *name, const char *text) {
  g_autoptr(GError) err = NULL;
  Plan *p = plan_parse(name, text, strlen(text), &err);
  ck_assert_msg(p, "plan rejected: %s\n%.1000s", err ? err->message : "?", text);
  return p;
}

/* A plan file of the tree, named by its path relative to the top (as the
 * golden files are generated from the top). */
static Plan *plan_file(const char *rel) {
  g_autofree char *path = g_build_filename(TCC_TOP, rel, NULL), *text = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
  g_autoptr(GError) err = NULL;
  Plan *p = plan_parse(rel, text, len, &err);
  ck_assert_msg(p, "%s: %s", rel, err ? err->message : "?");
  return p;
}

/* One problem section of a small plan: "version: 1\nd1:\n  problem: DIMS\n  KNOBS". */
static Plan *small_plan(ProblemKind kind, const char *knobs) {
  g_autofree char *text =
      g_strdup_printf("version: 1\n%s:\n  problem: %s\n%s%s%s", pname(kind),
                      kind == PROB_D1 ? D1_DIMS : P1_DIMS, knobs ? "  " : "", knobs ? knobs : "",
                      knobs ? "\n" : "");
  return plan_text("small.yaml", text);
}

/* Compile through the pipeline; the IR must verify as allocated.  Returns
 * the assembly; *ir_text (optional) gets the IR's text. */
static char *compile(const Plan *plan, ProblemKind kind, char **ir_text) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, kind, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s --problem %s: %s", plan->file, pname(kind), err ? err->message : "?");
  ck_assert_msg(ir_verify(ir, TRUE, &err), "%s --problem %s: %s", plan->file, pname(kind),
                err ? err->message : "?");
  if (ir_text) *ir_text = ir_print(ir);
  return be_emit(ir);
}

/* Assemble and run `text` on `seed`; the run must succeed.  Returns the
 * program (for sim_verdict_exit and its hardware). */
static Program *simulate(const char *what, const char *text, uint64_t seed, SimResult *r) {
  g_autoptr(GError) err = NULL;
  Program *p = sim_asm_parse(what, text, strlen(text), &err);
  ck_assert_msg(p, "%s does not assemble: %s", what, err ? err->message : "?");
  SimOptions o;
  sim_options_default(&o);
  o.seed = seed;
  ck_assert_msg(sim_run(p, &o, r, &err), "%s seed %" G_GUINT64_FORMAT ": %s", what, seed,
                err ? err->message : "?");
  return p;
}

/* The program must be correct and within budgets on `seed`. */
static void assert_passes(const char *what, const Program *p, const SimResult *r, uint64_t seed) {
  ck_assert_msg(r->checked && r->check.pass,
                "%s seed %" G_GUINT64_FORMAT ": error %g at %s, %ld unwritten", what, seed,
                r->check.max_abs_err, r->check.worst, r->check.unwritten);
  ck_assert_msg(sim_machine_area(&p->hw) <= AREA_LIMIT_MM2, "%s: area %.4f mm2", what,
                sim_machine_area(&p->hw));
  ck_assert_msg(r->peak_w <= POWER_LIMIT_W, "%s seed %" G_GUINT64_FORMAT ": peak %.4f W", what,
                seed, r->peak_w);
  ck_assert_int_eq(sim_verdict_exit(p, r), 0);
}

/* What a run of a small plan measured. */
typedef struct Run {
  int64_t cycles;
  double energy_uj, peak_w;
  int64_t hbm_lines;
} Run;

/* Compile, run on seed 7, require a correct run within budgets; *asm_out
 * (optional) gets the assembly. */
static Run compile_run(const Plan *plan, ProblemKind kind, const char *what, char **asm_out) {
  char *text = compile(plan, kind, NULL);
  SimResult r;
  g_autoptr(Program) p = simulate(what, text, 7, &r);
  assert_passes(what, p, &r, 7);
  Run run = {r.cycles, r.energy_uj, r.peak_w, r.hbm_lines};
  sim_result_clear(&r);
  if (asm_out)
    *asm_out = text;
  else
    g_free(text);
  return run;
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The good plans of tests/golden (not bad_*), sorted by name. */
static GPtrArray *golden_plans(void) {
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) dir = g_dir_open(TCC_TOP "/tests/golden", 0, NULL);
  ck_assert_msg(dir, "cannot open tests/golden");
  for (const char *n; (n = g_dir_read_name(dir));)
    if (g_str_has_suffix(n, ".yaml") && !g_str_has_prefix(n, "bad_"))
      g_ptr_array_add(a, g_strconcat("tests/golden/", n, NULL));
  g_ptr_array_sort(a, cmp_str);
  return a;
}

/* ------------------------------------------------------------ baseline */

/* _i: problem (0 = P1, 1 = D1) x seed. */
START_TEST(test_baseline) {
  ProblemKind kind = _i / NSEEDS == 0 ? PROB_P1 : PROB_D1;
  uint64_t seed = seeds[_i % NSEEDS];
  int64_t ref = kind == PROB_P1 ? REF_P1 : REF_D1;
  g_autoptr(Plan) plan = plan_file("plans/baseline.yaml");
  g_autofree char *text = compile(plan, kind, NULL);
  g_autofree char *what = g_strdup_printf("baseline %s", pname(kind));
  SimResult r;
  g_autoptr(Program) p = simulate(what, text, seed, &r);
  assert_passes(what, p, &r, seed);
  ck_assert_msg(r.check.max_abs_err < 1e-4, "%s seed %" G_GUINT64_FORMAT ": error %g", what, seed,
                r.check.max_abs_err);
  /* Timing does not depend on the data: every seed takes the reference. */
  ck_assert_msg(r.cycles == ref, "%s seed %" G_GUINT64_FORMAT ": %" G_GINT64_FORMAT
                " cycles, the frozen reference is %" G_GINT64_FORMAT,
                what, seed, r.cycles, ref);
  sim_result_clear(&r);
}
END_TEST

/* ------------------------------------------------------------ passes */

static void verify(const Ir *ir, gboolean allocated, const char *what, const char *after) {
  g_autoptr(GError) err = NULL;
  ck_assert_msg(ir_verify(ir, allocated, &err), "%s, after %s: %s", what, after,
                err ? err->message : "?");
}

/* Run each pass of pass_table alone on `plan`/`kind`, verifying after each,
 * and compare every stage with pass_pipeline's --dump-after and its final
 * IR and asm. */
static void check_passes(const Plan *plan, ProblemKind kind) {
  g_autofree char *what = g_strdup_printf("%s --problem %s", plan->file, pname(kind));
  const PlanProblem *pp = plan_problem(plan, kind);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_new(&plan->hw, &pp->dims, plan->file);
  ir_set_schedule(ir, pp);
  g_autoptr(GPtrArray) stage = g_ptr_array_new_with_free_func(g_free);
  gboolean allocated = FALSE;
  for (const PassDef *p = pass_table; p->name; p++) {
    ck_assert_msg(p->run(ir, &err), "%s: %s: %s", what, p->name, err ? err->message : "?");
    allocated |= p->run == pass_rf_alloc;
    verify(ir, allocated, what, p->name);
    if (p->run == pass_place)
      for (guint k = 0; k < ir->tasks->len; k++)
        ck_assert_msg(ir_task_at(ir, (int)k)->wg >= 0, "%s: task %s not placed", what,
                      ir_task_at(ir, (int)k)->name);
    g_autofree char *text = ir_print(ir);
    g_ptr_array_add(stage, g_strdup_printf("; *** IR after %s ***\n%s", p->name, text)); /* as dumped */
  }
  ck_assert(allocated);
  for (guint i = 0; i < stage->len; i++) {
    char *dump = NULL;
    const char *name = pass_table[i].name;
    g_autoptr(Ir) full = pass_pipeline(plan, kind, name, &dump, TRUE, &err);
    ck_assert_msg(full && dump, "%s: pipeline --dump-after=%s: %s", what, name,
                  err ? err->message : "no dump");
    ck_assert_msg(strcmp(dump, g_ptr_array_index(stage, i)) == 0,
                  "%s: the IR after %s alone differs from --dump-after", what, name);
    if (i + 1 == stage->len) {
      g_autofree char *final = ir_print(full), *a = be_emit(full), *b = be_emit(ir);
      ck_assert_msg(strcmp(final, strchr(g_ptr_array_index(stage, i), '\n') + 1) == 0,
                    "%s: final IR differs from the dump", what);
      ck_assert_msg(strcmp(a, b) == 0, "%s: asm of the passes alone differs", what);
    }
    g_free(dump);
  }
}

START_TEST(test_passes_baseline) {
  g_autoptr(Plan) plan = plan_file("plans/baseline.yaml");
  check_passes(plan, _i == 0 ? PROB_P1 : PROB_D1);
}
END_TEST

START_TEST(test_passes_golden) {
  g_autoptr(GPtrArray) plans = golden_plans();
  ck_assert_msg(plans->len >= 4, "only %u good plans in tests/golden", plans->len);
  for (guint i = 0; i < plans->len; i++) {
    g_autoptr(Plan) plan = plan_file(g_ptr_array_index(plans, i));
    for (int k = PROB_D1; k <= PROB_P1; k++)
      if (plan_problem(plan, (ProblemKind)k)->present) check_passes(plan, (ProblemKind)k);
  }
}
END_TEST

/* A copy of task k (its ops and RF tensors; HBM views shared) named `name`,
 * in the same group and waiting for the same groups: one more task in its
 * stage, computing what k computes. */
static void clone_task(Ir *ir, int k, const char *name) {
  const IrTask *src = ir_task_at(ir, k);
  int c = ir_task(ir, name, src->stage, src->prov);
  IrTask *dst = ir_task_at(ir, c);
  src = ir_task_at(ir, k); /* (the task array may have moved) */
  dst->role = src->role;
  dst->signals = src->signals;
  for (guint w = 0; src->waits && w < src->waits->len; w++) ir_task_waits(ir, c, g_array_index(src->waits, int, w));
  guint T = ir->tensors->len;
  g_autofree int *map = g_new(int, T);
  for (guint t = 0; t < T; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    map[t] = (int)t;
    if (x->home != HOME_RF || x->task != k) continue;
    g_autofree char *n = g_strdup_printf("%s.%s", name, x->name);
    int y = ir_tensor_rf(ir, c, n, x->rows, x->cols);
    ir_tensor(ir, y)->used_rows = ir_tensor(ir, (int)t)->used_rows;
    map[t] = y;
  }
  for (guint i = 0; i < src->ops->len; i++) {
    IrOp op = g_array_index(src->ops, IrOp, i);
    ck_assert_int_eq(op.ntargets, 0);
    IrView *v[] = {&op.d, &op.a, &op.b, &op.c, &op.mem};
    for (unsigned j = 0; j < G_N_ELEMENTS(v); j++)
      if (v[j]->t >= 0) v[j]->t = map[v[j]->t];
    *ir_emit(ir, c, op.kind) = op;
  }
}

/* Synchronisation comes from dependencies: one more task in a producer stage
 * (a clone of a w1 task, in the w1 group of each step) changes no consumer,
 * the sync pass counts it, and the program still runs correctly. */
START_TEST(test_sync_counts_producers) {
  g_autoptr(Plan) plan = small_plan(PROB_D1, NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_new(&plan->hw, &plan->d1.dims, plan->file);
  ir_set_schedule(ir, &plan->d1);
  ck_assert(pass_lower(ir, &err));
  int w1 = 0, extra = 0;
  for (guint k = 0, n = ir->tasks->len; k < n; k++)
    if (ir_task_at(ir, (int)k)->role.kind == ROLE_W1) w1++;
  /* a second copy of the first w1 task of every step, at the end of the
   * program: waits and group as the original */
  for (guint k = 0, n = ir->tasks->len; k < n; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W1 || t->role.panel != 0) continue;
    g_autofree char *name = g_strdup_printf("%s.copy", t->name);
    clone_task(ir, (int)k, name);
    extra++;
  }
  ck_assert_int_eq(extra, ir->prob.steps * ir->prob.layers);
  /* the copies come last, so consumers that wait for them come before them:
   * move each copy right after its original instead */
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (!g_str_has_suffix(t->name, ".copy")) continue;
    gpointer copy = g_ptr_array_steal_index(ir->tasks, k);
    guint at = 0;
    g_autofree char *orig = g_strndup(((IrTask *)copy)->name, strlen(((IrTask *)copy)->name) - 5);
    while (strcmp(ir_task_at(ir, (int)at)->name, orig) != 0) at++;
    g_ptr_array_insert(ir->tasks, (gint)at + 1, copy);
  }
  /* the copies' RF tensors name their task by index: renumber */
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF || !strstr(x->name, ".copy")) continue;
    g_autofree char *owner = g_strndup(x->name, (gsize)(strstr(x->name, ".copy") - x->name + 5));
    for (guint k = 0; k < ir->tasks->len; k++)
      if (strcmp(ir_task_at(ir, (int)k)->name, owner) == 0) x->task = (int)k;
  }
  for (guint t = 0; t < ir->tensors->len; t++) { /* originals moved too */
    IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF || strstr(x->name, ".copy")) continue;
    for (guint k = 0; k < ir->tasks->len; k++)
      if (g_str_has_prefix(x->name, ir_task_at(ir, (int)k)->name) &&
          x->name[strlen(ir_task_at(ir, (int)k)->name)] == '.')
        x->task = (int)k;
  }
  for (const PassDef *p = pass_table + 1; p->name; p++) {
    ck_assert_msg(p->run(ir, &err), "%s: %s", p->name, err ? err->message : "?");
    ck_assert_msg(ir_verify(ir, p->run == pass_rf_alloc, &err), "after %s: %s", p->name, err->message);
  }
  /* every w2 task of step t waits for all w1 tasks of steps 0..t, copies included */
  int per_step = (w1 + extra) / ir->prob.steps;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    const IrOp *op = &g_array_index(t->ops, IrOp, 0);
    ck_assert_int_eq(op->kind, IR_WAIT);
    ck_assert_str_eq(g_ptr_array_index(ir->events, op->event), "w1_l0");
    ck_assert_int_eq(op->n, (int64_t)(t->role.step + 1) * per_step);
  }
  g_autofree char *asm_text = be_emit(ir);
  SimResult r;
  SimOptions o;
  sim_options_default(&o);
  ck_assert_msg(t_run(asm_text, &o, &r, &err), "%s", err ? err->message : "?");
  ck_assert_msg(r.checked && r.check.pass, "error %g at %s", r.check.max_abs_err, r.check.worst);
  sim_result_clear(&r);
}
END_TEST

/* The merge of attention slices (lw_attention_merge) on the seeds' example:
 * slice A (m = 10, z = 2, u = 1s) and slice B (m = 8, z = 3, u = 0s) give the
 * denominator 2 + 3e^-2 = 2.406 and o = 1 / 2.406 = 0.4156; averaging the
 * slices (0.25) or summing them unweighted (1/5) is wrong. */
START_TEST(test_slice_merge_example) {
  g_autoptr(Plan) plan = small_plan(PROB_D1, NULL);
  g_autoptr(Ir) ir = ir_new(&plan->hw, &plan->d1.dims, "merge.yaml");
  int t = ir_task(ir, "merge", 0, (IrProv){NULL, 0, 0});
  IrView m = ir_all(ir, ir_tensor_rf(ir, t, "m", 1, 2)), z = ir_all(ir, ir_tensor_rf(ir, t, "z", 1, 2));
  IrView u = ir_all(ir, ir_tensor_rf(ir, t, "u", 2, 32)), o = ir_all(ir, ir_tensor_rf(ir, t, "o", 1, 32));
  const struct {
    IrView v;
    float x;
  } fill[] = {{ir_win(m.t, 0, 1, 0, 1), 10.0f}, {ir_win(m.t, 0, 1, 1, 1), 8.0f},
              {ir_win(z.t, 0, 1, 0, 1), 2.0f},  {ir_win(z.t, 0, 1, 1, 1), 3.0f},
              {ir_win(u.t, 0, 1, 0, 32), 1.0f}, {ir_win(u.t, 1, 1, 0, 32), 0.0f}};
  for (unsigned i = 0; i < G_N_ELEMENTS(fill); i++) {
    IrOp *op = ir_emit(ir, t, IR_VFILL);
    op->d = fill[i].v, op->imm = fill[i].x;
  }
  lw_attention_merge(ir, t, "merge", m, z, u, o, (IrProv){NULL, 0, 0});
  lw_store(ir, t, o, "scratch", 0, 0, 32, (IrProv){NULL, 0, 0});
  ir_task_at(ir, t)->wg = 0;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(pass_rf_alloc(ir, &err), "%s", err ? err->message : "?");
  ck_assert_msg(ir_verify(ir, TRUE, &err), "%s", err ? err->message : "?");
  g_autofree char *text = be_emit(ir);
  SimOptions opt;
  sim_options_default(&opt);
  opt.keep_hbm = TRUE;
  SimResult r;
  ck_assert_msg(t_run(text, &opt, &r, &err), "%s\n%s", err ? err->message : "?", text);
  Abi abi;
  wl_abi_build(&ir->prob, &abi);
  const float *got = r.hbm + wl_abi_lookup(&abi, "scratch")->addr / 4;
  double want = 1.0 / (2.0 + 3.0 * exp(-2.0));
  ck_assert_msg(fabs(2.0 + 3.0 * exp(-2.0) - 2.406) < 1e-3, "the seeds' denominator");
  for (int j = 0; j < 32; j++) {
    ck_assert_msg(fabs(got[j] - want) < 1e-6, "o[%d] = %.9g, want %.9g", j, got[j], want);
    ck_assert(fabs(got[j] - 0.25) > 0.1 && fabs(got[j] - 0.2) > 0.1); /* neither average */
  }
  wl_abi_clear(&abi);
  sim_result_clear(&r);
}
END_TEST

/* Every task the lowering makes says what it computes (its role), each role
 * once; the counts per kind follow the dims and knobs. */
START_TEST(test_task_roles) {
  for (int k = 0; k < 2; k++) {
    ProblemKind kind = k == 0 ? PROB_P1 : PROB_D1;
    g_autoptr(Plan) plan = small_plan(kind, "panels: {qkv: 64, w1: 32}");
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(plan, kind, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int count[ROLE__COUNT] = {0};
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint t = 0; t < ir->tasks->len; t++) {
      const IrRole *r = &ir_task_at(ir, (int)t)->role;
      ck_assert_msg(r->kind > ROLE_NONE && r->kind < ROLE__COUNT, "task %s has no role",
                    ir_task_at(ir, (int)t)->name);
      count[r->kind]++;
      char *key = g_strdup_printf("%d %d %d %d %d %d %d %d %d %d", r->kind, r->step, r->layer, r->proj,
                                  r->panel, r->tile, r->seq, r->head, r->slice, r->kshard);
      ck_assert_msg(g_hash_table_add(seen, key), "two tasks with the role of %s",
                    ir_task_at(ir, (int)t)->name);
    }
    const Problem *d = &ir->prob;
    /* per layer (and D1 step): qkv 3d/64 panels, wo d/32, w1 f/32, w2 d/32 */
    int units = kind == PROB_D1 ? d->steps * d->layers : d->layers * (d->seqs * d->rows / 32);
    ck_assert_int_eq(count[ROLE_QKV], units * 3 * d->d_model / 64);
    ck_assert_int_eq(count[ROLE_WO], units * d->d_model / 32);
    ck_assert_int_eq(count[ROLE_W1], units * d->d_ff / 32);
    ck_assert_int_eq(count[ROLE_W2], units * d->d_model / 32);
    if (kind == PROB_D1) {
      ck_assert_int_eq(count[ROLE_ATT], d->steps * d->layers * d->heads);
      ck_assert_int_eq(count[ROLE_LN1] + count[ROLE_LN2], 0); /* D1 fuses LN into qkv, w1 */
    } else {
      ck_assert_int_eq(count[ROLE_ATT], units * d->heads);
      ck_assert_int_eq(count[ROLE_LN1], units);
      ck_assert_int_eq(count[ROLE_LN2], units);
    }
  }
}
END_TEST

/* lw_p1_layer_floor is a lower bound on what the lowering counts, for
 * every technique (those it does not model count 0), so the arithmetic
 * never refuses a program that fits; with streamed weights (the baseline's
 * and the default) it is within 20%.  Shapes and knobs that change what
 * it counts: the dims, row tiles, panels and K chunks, an RF that makes
 * the attention blocked, GELU factored, K/V through temp, spacing, resident
 * weights, query tile groups, rf_grid. */
START_TEST(test_size_floor) {
  static const char *const hw[] = {"", "hardware: {rf_kib: 16}\n", "hardware: {rf_kib: 256}\n"};
  static const char *const dims[] = {
      "{d_model: 32, heads: 1, d_ff: 64, layers: 2, seqs: 2, rows: 64}",
      "{d_model: 64, heads: 2, d_ff: 256, layers: 1, seqs: 1, rows: 256}",
      "{d_model: 128, heads: 4, d_ff: 128, layers: 1, seqs: 3, rows: 128}",
      "{d_model: 96, heads: 3, d_ff: 96, layers: 1, seqs: 2, rows: 192}"};
  static const struct { const char *knobs; gboolean streamed; } kn[] = {
      {"", TRUE},
      {"  row_tile: 64\n", TRUE},
      {"  panels: {qkv: 64, wo: 32, w1: 64, w2: 32}\n  k_chunk: {qkv: 32, wo: 64, w1: 32, w2: 64}\n", TRUE},
      {"  refinements: {gelu_factor: true}\n  kv_writeback: temp\n  store_spacing: 8\n", TRUE},
      {"  weights: resident\n", FALSE},
      {"  attention: {query_tiles: 2}\n", FALSE},
      {"  rf_grid: {rows: 2}\n", FALSE}};
  int checked = 0;
  for (guint h = 0; h < G_N_ELEMENTS(hw); h++)
    for (guint d = 0; d < G_N_ELEMENTS(dims); d++)
      for (guint k = 0; k < G_N_ELEMENTS(kn); k++) {
        g_autofree char *text = g_strdup_printf("version: 1\n%sp1:\n  problem: %s\n%s", hw[h], dims[d], kn[k].knobs);
        g_autoptr(GError) err = NULL;
        g_autoptr(Plan) p = plan_parse("floor.yaml", text, strlen(text), &err);
        if (!p) continue; /* a knob this shape does not take */
        g_autoptr(Ir) ir = ir_new(&p->hw, &p->p1.dims, p->file);
        ir_set_schedule(ir, &p->p1);
        int64_t fl = lw_p1_layer_floor(ir);
        if (!pass_lower_p1(ir, &err)) continue; /* a technique the machine cannot hold here */
        int64_t all = fl * p->p1.dims.layers, n = (int64_t)ir->nops;
        ck_assert_msg(all <= n, "%s: the bound %" G_GINT64_FORMAT " is over the program's %" G_GINT64_FORMAT, text, all, n);
        if (kn[k].streamed)
          ck_assert_msg(all * 10 >= n * 8, "%s: the bound %" G_GINT64_FORMAT " is far under the program's %" G_GINT64_FORMAT,
                        text, all, n);
        checked++;
      }
  ck_assert_int_ge(checked, 60);
}
END_TEST

/* The program size limit (ir->max_ops).  P1 is refused from the arithmetic
 * before anything is built (lw_p1_layer_floor: a lower bound on a layer)
 * when the bound is over the limit, at the dim that makes it large, with
 * the most that fit; a plan the bound lets through is checked as it is
 * built (the dim, about the largest value that fits, measured); a plan
 * under the limit lowers whole. */
START_TEST(test_program_size_limit) {
  g_autoptr(Plan) p1 = plan_text("big.yaml", "version: 1\np1:\n  problem: {d_model: 32, heads: 1, "
                                             "d_ff: 64, layers: 4, seqs: 2, rows: 64}\n");
  g_autoptr(Ir) whole = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(whole, &p1->p1);
  int64_t floor1 = lw_p1_layer_floor(whole);
  ck_assert(pass_lower_p1(whole, NULL));
  gsize per_layer = whole->nops / 4; /* layer 0 is a little smaller (no wait on a w2) */
  ck_assert_msg(floor1 * 4 <= (int64_t)whole->nops && floor1 * 4 * 10 >= (int64_t)whole->nops * 8,
                "floor %" G_GINT64_FORMAT " x 4 against %zu", floor1, (size_t)whole->nops);
  g_autoptr(GError) err = NULL;
  /* the bound over the limit for all layers: refused before building, at 'layers' */
  g_autoptr(Ir) ir = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(ir, &p1->p1);
  ir->max_ops = (gsize)(floor1 * 5 / 2);
  ck_assert(!pass_lower_p1(ir, &err));
  g_autofree char *lw = g_strdup_printf("big.yaml:3:46: error: layers=4 makes a program of at least %" G_GINT64_FORMAT
                                        " instructions (at least %" G_GINT64_FORMAT " per layer: projections 4 row tiles x (",
                                        floor1 * 4, floor1);
  ck_assert_msg(g_str_has_prefix(err->message, lw) && g_str_has_suffix(err->message, "; at most 2 fit"), "%s",
                err->message);
  ck_assert_uint_eq(ir->nops, 0); /* nothing built */
  g_clear_error(&err);
  /* one layer's bound over the limit: refused before building, at 'seqs' */
  g_autoptr(Ir) tiny = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(tiny, &p1->p1);
  tiny->max_ops = (gsize)(floor1 / 3);
  ck_assert(!pass_lower_p1(tiny, &err));
  ck_assert_msg(g_str_has_prefix(err->message, "big.yaml:3:57: error: seqs=2 makes one layer's "
                                               "program alone more than tcc-gen's limit of "),
                "%s", err->message);
  ck_assert_msg(g_str_has_suffix(err->message, "even seqs=1 does not fit: the other dims make it large"), "%s",
                err->message);
  ck_assert_uint_eq(tiny->nops, 0);
  g_clear_error(&err);
  g_autoptr(Ir) half = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(half, &p1->p1);
  half->max_ops = (gsize)(floor1 * 3 / 4);
  ck_assert(!pass_lower_p1(half, &err));
  ck_assert_msg(strstr(err->message, "error: seqs=2 ") && g_str_has_suffix(err->message, "; at most 1 fit"), "%s",
                err->message);
  g_clear_error(&err);
  /* the bound under the limit, the program over it: refused as it is built,
   * after layer 0, at 'layers' (measured) */
  g_autoptr(Ir) built = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(built, &p1->p1);
  built->max_ops = (gsize)(floor1 * 4); /* the bound passes, the program does not */
  ck_assert(!pass_lower_p1(built, &err));
  ck_assert_msg(g_str_has_prefix(err->message, "big.yaml:3:46: error: layers=4 makes a program of about ") &&
                    g_str_has_suffix(err->message, "; at most about 3 fit"),
                "%s", err->message);
  ck_assert(built->nops > 0 && built->nops <= per_layer); /* stopped after the first layer */
  g_clear_error(&err);
  /* exactly at the limit: accepted */
  g_autoptr(Ir) edge = ir_new(&p1->hw, &p1->p1.dims, p1->file);
  ir_set_schedule(edge, &p1->p1);
  edge->max_ops = whole->nops;
  ck_assert(pass_lower_p1(edge, NULL));
  /* D1: refused at 'steps' */
  g_autoptr(Plan) d1 = small_plan(PROB_D1, NULL);
  g_autoptr(Ir) dw = ir_new(&d1->hw, &d1->d1.dims, d1->file);
  ir_set_schedule(dw, &d1->d1);
  ck_assert(pass_lower_d1(dw, NULL));
  g_autoptr(Ir) dn = ir_new(&d1->hw, &d1->d1.dims, d1->file);
  ir_set_schedule(dn, &d1->d1);
  dn->max_ops = dw->nops / 2;
  ck_assert(!pass_lower_d1(dn, &err));
  ck_assert_msg(strstr(err->message, "error: steps=") && strstr(err->message, "at most about"), "%s",
                err->message);
}
END_TEST

/* A pass fails with a message naming the problem; a dump taken before the
 * failing pass is still returned. */
START_TEST(test_pipeline_errors) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) d1 = small_plan(PROB_D1, NULL);
  Ir *ir = pass_pipeline(d1, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert(ir == NULL);
  ck_assert_str_eq(err->message, "small.yaml:1:1: error: the plan has no p1 section");
  g_clear_error(&err);
  g_autoptr(Ir) alone = ir_new(&d1->hw, &d1->p1.dims, d1->file);
  ir_set_schedule(alone, &d1->p1);
  ck_assert(!pass_lower_p1(alone, &err));
  ck_assert_str_eq(err->message, "small.yaml:1:1: error: the plan has no p1 section");
  g_clear_error(&err);
  g_autoptr(Plan) big = plan_file("tests/golden/bad_rf_alloc.yaml");
  char *dump = NULL;
  ir = pass_pipeline(big, PROB_D1, "pace", &dump, TRUE, &err);
  ck_assert(ir == NULL);
  ck_assert_msg(strstr(err->message, "rf_alloc: ") && strstr(err->message, "'t0.l0.w1.p0.w'"),
                "%s", err->message);
  ck_assert_msg(dump && g_str_has_prefix(dump, "; *** IR after pace ***\n; tcc-gen IR of tests/golden/bad_rf_alloc.yaml"),
                "no dump after pace");
  g_free(dump);
}
END_TEST

/* ------------------------------------------------------------ determinism */

/* Two independent compiles (fresh plans), with another compile between
 * them: byte-identical assembly and IR. */
static void check_deterministic(const char *rel, ProblemKind kind) {
  char *asm_text[2], *ir_text[2];
  for (int k = 0; k < 2; k++) {
    g_autoptr(Plan) plan = plan_file(rel);
    asm_text[k] = compile(plan, kind, &ir_text[k]);
    g_autoptr(Plan) other = small_plan(kind == PROB_D1 ? PROB_P1 : PROB_D1, "kv_writeback: temp");
    g_free(compile(other, kind == PROB_D1 ? PROB_P1 : PROB_D1, NULL));
  }
  ck_assert_msg(strcmp(asm_text[0], asm_text[1]) == 0, "%s %s: two compiles differ (asm)", rel,
                pname(kind));
  ck_assert_msg(strcmp(ir_text[0], ir_text[1]) == 0, "%s %s: two compiles differ (IR)", rel,
                pname(kind));
  for (int k = 0; k < 2; k++) g_free(asm_text[k]), g_free(ir_text[k]);
}

START_TEST(test_determinism) {
  check_deterministic("plans/baseline.yaml", PROB_D1);
  check_deterministic("plans/baseline.yaml", PROB_P1);
  check_deterministic("plans/best-p1.yaml", PROB_P1); /* owners, issuers, events */
  g_autoptr(GPtrArray) plans = golden_plans();
  for (guint i = 0; i < plans->len; i++) {
    const char *rel = g_ptr_array_index(plans, i);
    g_autoptr(Plan) plan = plan_file(rel);
    for (int k = PROB_D1; k <= PROB_P1; k++)
      if (plan_problem(plan, (ProblemKind)k)->present) check_deterministic(rel, (ProblemKind)k);
  }
}
END_TEST

/* ------------------------------------------------------------ diff */

/* The assembly cut into its parts: the header (before the first .wg), each
 * WG section, and per task the instruction lines it owns (in order). */
typedef struct AsmParts {
  char *header;
  GHashTable *wgs;   /* "N" -> section text (.wg line to END)        */
  GHashTable *lists; /* "N" -> the section's task list (header line) */
  GHashTable *tasks; /* task name -> its instruction lines           */
  GPtrArray *names;  /* task names in order of appearance            */
} AsmParts;

static void parts_free(AsmParts *a) {
  g_free(a->header);
  g_hash_table_unref(a->wgs);
  g_hash_table_unref(a->lists);
  g_hash_table_unref(a->tasks);
  g_ptr_array_unref(a->names);
}

static void gstring_free(gpointer s) { g_string_free(s, TRUE); }

/* The first line where two texts differ, "line N:\n- A\n+ B" (for failure
 * messages, which Check limits in size). */
static char *first_diff(const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') line++, la = a + 1, lb = b + 1;
  int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
  return g_strdup_printf("line %d:\n- %.*s\n+ %.*s", line, MIN(na, 300), la, MIN(nb, 300), lb);
}

/* The task an instruction line belongs to: the token of its comment that
 * names one of its section's tasks. */
static const char *line_task(const char *line, char **list) {
  const char *c = strstr(line, "; ");
  ck_assert_msg(c, "instruction without a comment: %s", line);
  g_auto(GStrv) tok = g_strsplit(c + 2, " ", -1);
  for (int i = 0; tok[i]; i++)
    for (int j = 0; list[j]; j++)
      if (strcmp(tok[i], list[j]) == 0) return list[j];
  ck_abort_msg("instruction names none of its WG's tasks: %s", line);
  return NULL;
}

static void parse_asm(const char *text, AsmParts *a) {
  a->wgs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, gstring_free);
  a->lists = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  a->tasks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, gstring_free);
  a->names = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *header = g_string_new(NULL), *sec = NULL;
  g_auto(GStrv) list = NULL;
  for (int i = 0; lines[i]; i++) {
    const char *l = lines[i];
    if (g_str_has_prefix(l, ".wg ")) {
      int wg = atoi(l + 4);
      const char *tl = strstr(l, "tasks:");
      ck_assert_msg(tl, "WG header without tasks: %s", l);
      g_autofree char *names = g_strstrip(g_strdup(tl + 6));
      g_strfreev(list);
      list = g_strsplit(names, " ", -1);
      sec = g_string_new(NULL);
      g_hash_table_insert(a->wgs, g_strdup_printf("%d", wg), sec);
      g_hash_table_insert(a->lists, g_strdup_printf("%d", wg), g_strdup(tl + 6));
    }
    if (!sec) {
      g_string_append_printf(header, "%s\n", l);
      continue;
    }
    if (*l == '\0') continue;
    g_string_append_printf(sec, "%s\n", l);
    if (!g_str_has_prefix(l, "    ") || strcmp(l, "    END") == 0) continue;
    const char *task = line_task(l, list);
    GString *tl = g_hash_table_lookup(a->tasks, task);
    if (!tl) {
      tl = g_string_new(NULL);
      g_hash_table_insert(a->tasks, g_strdup(task), tl);
      g_ptr_array_add(a->names, g_strdup(task));
    }
    g_string_append_printf(tl, "%s\n", l);
  }
  a->header = g_string_free(header, FALSE);
}

static gboolean affected(const char *task, const char *const *marks) {
  for (int i = 0; marks[i]; i++)
    if (strstr(task, marks[i])) return TRUE;
  return FALSE;
}

/* `b` is `a` with one knob changed, which may only change the tasks whose
 * names contain one of `marks`: every other task has the same instruction
 * lines, every WG section with the same task list and no affected task is
 * byte-identical, and the headers are equal.  Returns the number of
 * unaffected tasks compared (so a test can insist it is not vacuous). */
static int check_diff(const char *what, const char *a_text, const char *b_text,
                      const char *const *marks, int *same_wgs) {
  AsmParts a, b;
  parse_asm(a_text, &a);
  parse_asm(b_text, &b);
  g_autofree char *hd = first_diff(a.header, b.header);
  ck_assert_msg(strcmp(a.header, b.header) == 0, "%s: headers differ, %s", what, hd);
  int n = 0;
  for (int k = 0; k < 2; k++) {
    AsmParts *x = k ? &b : &a, *y = k ? &a : &b;
    for (guint i = 0; i < x->names->len; i++) {
      const char *t = g_ptr_array_index(x->names, i);
      if (affected(t, marks)) continue;
      GString *lx = g_hash_table_lookup(x->tasks, t), *ly = g_hash_table_lookup(y->tasks, t);
      ck_assert_msg(ly, "%s: unaffected task %s is missing from one output", what, t);
      g_autofree char *d = first_diff(k ? ly->str : lx->str, k ? lx->str : ly->str);
      ck_assert_msg(strcmp(lx->str, ly->str) == 0, "%s: unaffected task %s changed, %s", what, t, d);
      n += k == 0;
    }
  }
  GHashTableIter it;
  gpointer key, val;
  *same_wgs = 0;
  g_hash_table_iter_init(&it, a.wgs);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    const char *la = g_hash_table_lookup(a.lists, key), *lb = g_hash_table_lookup(b.lists, key);
    if (!lb || strcmp(la, lb) != 0) continue;
    g_auto(GStrv) ts = g_strsplit(la, " ", -1);
    gboolean hit = FALSE;
    for (int i = 0; ts[i]; i++) hit |= *ts[i] && affected(ts[i], marks);
    if (hit) continue;
    GString *sb = g_hash_table_lookup(b.wgs, key);
    g_autofree char *d = first_diff(((GString *)val)->str, sb->str);
    ck_assert_msg(strcmp(((GString *)val)->str, sb->str) == 0, "%s: WG %s changed, %s", what,
                  (char *)key, d);
    (*same_wgs)++;
  }
  parts_free(&a);
  parts_free(&b);
  return n;
}

/* The lines of `text` without those that contain every one of `subs`. */
static char *drop_lines(const char *text, const char *const *subs, int *dropped) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *s = g_string_new(NULL);
  *dropped = 0;
  for (int i = 0; lines[i]; i++) {
    gboolean all = TRUE;
    for (int j = 0; subs[j]; j++) all &= strstr(lines[i], subs[j]) != NULL;
    if (all) {
      (*dropped)++;
      continue;
    }
    g_string_append(s, lines[i]);
    if (lines[i + 1]) g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

/* The instruction lines of `task` in `text`, with lines starting with
 * `skip` removed. */
static char *task_lines(const char *text, const char *task, const char *skip) {
  g_autofree char *tok = g_strdup_printf(" %s", task);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *s = g_string_new(NULL);
  for (int i = 0; lines[i]; i++) {
    const char *c = strstr(lines[i], "; ");
    if (!g_str_has_prefix(lines[i], "    ") || !c || g_str_has_prefix(lines[i], skip)) continue;
    const char *at = strstr(c, tok);
    if (at && (at[strlen(tok)] == '\0' || at[strlen(tok)] == ' '))
      g_string_append_printf(s, "%s\n", lines[i]);
  }
  return g_string_free(s, FALSE);
}

/* panels.w1 32 -> 64 on D1: W1 has half the tasks; only the W1 tasks and
 * the W2 tasks (whose WAIT counts the W1 tasks) change, W2 only in that
 * WAIT.  The placement shifts the tasks after W1 to other WGs, but their
 * code, region names and addresses stay. */
START_TEST(test_diff_panels) {
  static const char *const marks[] = {".w1.", ".w2.", NULL};
  g_autoptr(Plan) pa = small_plan(PROB_D1, "panels: {w1: 32}");
  g_autoptr(Plan) pb = small_plan(PROB_D1, "panels: {w1: 64}");
  g_autofree char *a = compile(pa, PROB_D1, NULL), *b = compile(pb, PROB_D1, NULL);
  ck_assert(strcmp(a, b) != 0);
  int wgs = 0, n = check_diff("d1 panels.w1 32 -> 64", a, b, marks, &wgs);
  ck_assert_msg(n >= 8 && wgs >= 4, "only %d tasks, %d WGs compared", n, wgs);
  ck_assert(strstr(a, "t0.l0.w1.p3") && !strstr(b, "t0.l0.w1.p2"));
  for (int t = 0; t < 2; t++)
    for (int p = 0; p < 2; p++) {
      g_autofree char *task = g_strdup_printf("t%d.l0.w2.p%d", t, p);
      g_autofree char *la = task_lines(a, task, "    WAIT      ev.w1_l0, ");
      g_autofree char *lb = task_lines(b, task, "    WAIT      ev.w1_l0, ");
      g_autofree char *d = first_diff(la, lb);
      ck_assert_msg(*la && strcmp(la, lb) == 0, "%s changed beyond its WAIT, %s", task, d);
      g_autofree char *wa = g_strdup_printf("    WAIT      ev.w1_l0, %d ", 4 * (t + 1));
      g_autofree char *wb = g_strdup_printf("    WAIT      ev.w1_l0, %d ", 2 * (t + 1));
      g_autofree char *fa = task_lines(a, task, "    L"), *fb = task_lines(b, task, "    L");
      ck_assert_msg(strstr(fa, wa) && strstr(fb, wb), "%s does not wait for %s / %s", task, wa, wb);
    }
}
END_TEST

/* k_chunk.w1 64 -> 32 on D1: same tasks, same placement; only the W1 tasks
 * change (two chunk loads instead of one), every other WG is identical. */
START_TEST(test_diff_k_chunk) {
  static const char *const marks[] = {".w1.", NULL};
  g_autoptr(Plan) pa = small_plan(PROB_D1, "k_chunk: {w1: 64}");
  g_autoptr(Plan) pb = small_plan(PROB_D1, "k_chunk: {w1: 32}");
  g_autofree char *a = compile(pa, PROB_D1, NULL), *b = compile(pb, PROB_D1, NULL);
  ck_assert(strcmp(a, b) != 0);
  int wgs = 0, n = check_diff("d1 k_chunk.w1 64 -> 32", a, b, marks, &wgs);
  ck_assert_msg(n >= 10 && wgs >= 10, "only %d tasks, %d WGs compared", n, wgs);
}
END_TEST

/* A knob that only inserts instructions: removing the inserted lines from
 * the new assembly gives the old one byte for byte, and each inserted line
 * is followed by an instruction starting with `next` (the store or load it
 * delays). */
static void check_insert_only(ProblemKind kind, const char *knob, const char *const *subs,
                              const char *next) {
  g_autoptr(Plan) pa = small_plan(kind, NULL);
  g_autoptr(Plan) pb = small_plan(kind, knob);
  g_autofree char *a = compile(pa, kind, NULL), *b = compile(pb, kind, NULL);
  int dropped = 0;
  g_autofree char *stripped = drop_lines(b, subs, &dropped);
  ck_assert_msg(dropped > 0, "%s %s: nothing inserted", pname(kind), knob);
  g_autofree char *d = first_diff(a, stripped);
  ck_assert_msg(strcmp(stripped, a) == 0, "%s %s: more than the inserted lines changed, %s",
                pname(kind), knob, d);
  g_auto(GStrv) lines = g_strsplit(b, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    gboolean all = TRUE;
    for (int j = 0; subs[j]; j++) all &= strstr(lines[i], subs[j]) != NULL;
    if (all)
      ck_assert_msg(lines[i + 1] && g_str_has_prefix(lines[i + 1], next),
                    "%s %s: inserted line not before %s:\n%.300s\n%.300s", pname(kind), knob,
                    next, lines[i], lines[i + 1] ? lines[i + 1] : "");
  }
}

/* store_spacing: a WAITT before each output store, nothing else. */
START_TEST(test_diff_store_spacing) {
  static const char *const d1[] = {"    WAITT     16 ", "; d1.store_spacing:4 ", NULL};
  static const char *const p1[] = {"    WAITT     16 ", "; p1.store_spacing:4 ", NULL};
  check_insert_only(PROB_D1, "store_spacing: 16", d1, "    ST ");
  check_insert_only(PROB_P1, "store_spacing: 16", p1, "    ST ");
  /* every store gets one */
  g_autoptr(Plan) pb = small_plan(PROB_D1, "store_spacing: 16");
  g_autofree char *b = compile(pb, PROB_D1, NULL);
  int waits = 0, stores = 0;
  for (const char *c = b; (c = strstr(c, "\n    WAITT     16 ")); c++) waits++;
  for (const char *c = b; (c = strstr(c, "\n    ST ")); c++) stores++;
  ck_assert_int_eq(waits, stores);
}
END_TEST

/* Self-paced power buckets of more than any load: a WAITT (citing the
 * interval) before some loads, nothing else (a load of more than a bucket
 * would be cut: pace_split.ir). */
START_TEST(test_diff_self_paced) {
  static const char *const d1[] = {"    WAITT     50 ", "; d1.power.event_interval:4 ", NULL};
  static const char *const p1[] = {"    WAITT     50 ", "; p1.power.event_interval:4 ", NULL};
  check_insert_only(PROB_D1, "power: {bucket_bytes: 16384, event_interval: 50}", d1, "    LD ");
  check_insert_only(PROB_P1, "power: {bucket_bytes: 16384, event_interval: 50}", p1, "    LD ");
}
END_TEST

/* ------------------------------------------------------------ knobs */

/* One knob and what it must do relative to the same plan without it. */
typedef struct Knob {
  ProblemKind kind;
  const char *knob; /* the line written in the section              */
  const char *cite; /* provenance the asm must show (NULL: none)    */
} Knob;

static const Knob knobs[] = {
    {PROB_D1, "sms_used: 2", NULL},
    {PROB_D1, "panels: {qkv: 64}", "; d1.panels.qkv:4 "},
    {PROB_D1, "panels: {wo: 16}", "; d1.panels.wo:4 "},
    {PROB_D1, "panels: {w1: 64}", "; d1.panels.w1:4 "},
    {PROB_D1, "panels: {w2: 16}", "; d1.panels.w2:4 "},
    {PROB_D1, "k_chunk: {qkv: 32}", NULL},
    {PROB_D1, "k_chunk: {wo: 32}", NULL},
    {PROB_D1, "k_chunk: {w1: 32}", NULL},
    {PROB_D1, "k_chunk: {w2: 64}", NULL},
    {PROB_D1, "kv_writeback: temp", "; d1.kv_writeback:4 "},
    {PROB_D1, "store_spacing: 16", "; d1.store_spacing:4 "},
    {PROB_D1, "power: {bucket_bytes: 2048, event_interval: 50}", "; d1.power.bucket_bytes:4 "},
    {PROB_D1, "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63}", " pacer"},
    {PROB_D1, "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63, in_flight: 2}",
     "    WAIT      ev.took, 1 "},
    {PROB_D1, "attention: {slices: 2}", "; d1.attention.slices:4 "},
    {PROB_D1, "stream_depth: 3\n  k_chunk: {w2: 32}", "; d1.stream_depth:4 "},
    {PROB_D1, "stream_prefetch: true", "; d1.stream_prefetch:4 "},
    {PROB_D1, "power: {stage_rate: 64}", "; d1.power.stage_rate:4 "},
    {PROB_D1, "power: {stage_rate: {default: 64, w1: 256}}", "; d1.power.stage_rate.w1:4 "},
    {PROB_P1, "sms_used: 2", NULL},
    /* row_tile is the provenance of its tasks only (the IR's task lines):
     * their ops all cite "p1", so the assembly never shows it */
    {PROB_P1, "row_tile: 64", NULL},
    {PROB_P1, "panels: {qkv: 64}", "; p1.panels.qkv:4 "},
    {PROB_P1, "panels: {wo: 16}", "; p1.panels.wo:4 "},
    {PROB_P1, "panels: {w1: 64}", "; p1.panels.w1:4 "},
    {PROB_P1, "panels: {w2: 16}", "; p1.panels.w2:4 "},
    {PROB_P1, "k_chunk: {qkv: 32}", NULL},
    {PROB_P1, "k_chunk: {wo: 32}", NULL},
    {PROB_P1, "k_chunk: {w1: 32}", NULL},
    {PROB_P1, "k_chunk: {w2: 64}", NULL},
    {PROB_P1, "kv_writeback: temp", "; p1.kv_writeback:4 "},
    {PROB_P1, "store_spacing: 16", "; p1.store_spacing:4 "},
    {PROB_P1, "power: {bucket_bytes: 2048, event_interval: 50}", "; p1.power.bucket_bytes:4 "},
    {PROB_P1, "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63}", " pacer"},
    {PROB_P1, "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63, in_flight: 2}",
     "    WAIT      ev.took, 1 "},
    {PROB_P1, "power: {stage_rate: 64}", "; p1.power.stage_rate:4 "},
    {PROB_P1, "power: {stage_rate: {default: 64, w2: 256}}", "; p1.power.stage_rate.w2:4 "},
    {PROB_P1, "power: {stage_rate: {qkv: 128}}", "; p1.power.stage_rate.qkv:4 "},
};

/* Each knob changes the assembly, cites itself where it decides ops, and
 * the program stays correct and within budgets. */
START_TEST(test_knob_changes_output) {
  const Knob *k = &knobs[_i];
  g_autofree char *what = g_strdup_printf("%s %s", pname(k->kind), k->knob);
  g_autoptr(Plan) base = small_plan(k->kind, NULL), plan = small_plan(k->kind, k->knob);
  g_autofree char *a = compile(base, k->kind, NULL), *b = NULL;
  compile_run(plan, k->kind, what, &b);
  ck_assert_msg(strcmp(a, b) != 0, "%s: the assembly did not change", what);
  if (k->cite) ck_assert_msg(strstr(b, k->cite), "%s: no '%s' in the assembly", what, k->cite);
}
END_TEST

/* slice_map: blocked puts a head's slices on consecutive WGs of one SM
 * (round_robin spreads them); the program stays correct either way. */
START_TEST(test_knob_slice_map) {
  g_autoptr(Plan) rr = small_plan(PROB_D1, "attention: {slices: 2}");
  g_autoptr(Plan) bl = small_plan(PROB_D1, "attention: {slices: 2, slice_map: blocked}");
  g_autofree char *x = NULL, *y = NULL;
  compile_run(rr, PROB_D1, "slices round_robin", &x);
  compile_run(bl, PROB_D1, "slices blocked", &y);
  ck_assert_msg(strcmp(x, y) != 0, "slice_map did not change the output");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(bl, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int sm[2] = {-1, -1};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.step == 0 && t->role.layer == 0 && t->role.head == 0 && t->role.slice >= 0)
      sm[t->role.slice] = ir_wg_sm(ir, t->wg);
  }
  ck_assert_int_ge(sm[0], 0);
  ck_assert_int_eq(sm[0], sm[1]); /* a head's slices share an SM */
}
END_TEST

/* weights: resident: every panel's weights and bias are loaded once, by the
 * preload task pinned to the WG that keeps them; every step's task of that
 * panel is pinned there and loads no weight; the program is correct, needs
 * fewer HBM lines than streaming and is faster.  preload_waves puts the
 * second wave's preloads after the first's. */
START_TEST(test_resident_weights) {
  g_autoptr(Plan) st = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}");
  g_autoptr(Plan) re = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  power: {preload_waves: 2}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(re, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int preloads = 0, weight_loads = 0, pinned = 0, waited = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    gboolean pre = t->role.kind == ROLE_PRELOAD;
    preloads += pre;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_WAIT && pre) waited++;
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      const char *sym = ir_tensor(ir, op->mem.t)->sym;
      gboolean weight = g_str_has_prefix(sym, "wqkv") || g_str_has_prefix(sym, "wo.") ||
                        g_str_has_prefix(sym, "w1.") || g_str_has_prefix(sym, "w2.") ||
                        g_str_has_prefix(sym, "bqkv") || g_str_has_prefix(sym, "bo.") ||
                        g_str_has_prefix(sym, "b1.") || g_str_has_prefix(sym, "b2.");
      ck_assert_msg(!weight || pre, "task %s loads %s", t->name, sym);
      weight_loads += weight;
    }
    if (t->role.proj >= 0) {
      ck_assert_int_ge(t->pin, 0);
      ck_assert_int_eq(t->wg, t->pin);
      pinned++;
    }
  }
  const Problem *d = &ir->prob;
  int panels = d->layers * (3 * d->d_model / 32 + d->d_model / 32 + d->d_ff / 32 + d->d_model / 16);
  ck_assert_int_eq(weight_loads, 2 * panels); /* each panel's weights and bias, once */
  ck_assert_int_eq(pinned, panels * d->steps);
  ck_assert_int_gt(preloads, 1);
  ck_assert_int_gt(waited, 0); /* the second wave waits for the first */
  Run a = compile_run(st, PROB_D1, "streamed", NULL), b = compile_run(re, PROB_D1, "resident", NULL);
  ck_assert_msg(b.cycles < a.cycles, "resident %" G_GINT64_FORMAT " cycles, streamed %" G_GINT64_FORMAT,
                b.cycles, a.cycles);
}
END_TEST

/* handoff: rf: no stage reads or writes scratch (every row goes from RF to
 * RF: an ST whose destination is another task's RF tensor, appended to the
 * producer), the program is correct and faster than through HBM; with
 * slices too (their partials are handed the same way). */
static void handoff_case(const char *knobs) {
  g_autofree char *hbm = g_strdup_printf("%s\n  handoff: hbm", knobs);
  g_autofree char *rf = g_strdup_printf("%s\n  handoff: rf", knobs);
  g_autoptr(Plan) ph = small_plan(PROB_D1, hbm);
  g_autoptr(Plan) pr = small_plan(PROB_D1, rf);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(pr, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int remote = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_LD && op->kind != IR_ST) continue;
      const IrTensor *m = ir_tensor(ir, op->mem.t);
      if (m->home == HOME_RF) {
        ck_assert_int_ne(m->task, (int)k);
        remote++;
        continue;
      }
      ck_assert_msg(strcmp(m->sym, "scratch") != 0, "%s: task %s still moves %s through scratch",
                    knobs, t->name, m->name);
    }
  }
  ck_assert_int_gt(remote, 0);
  Run a = compile_run(ph, PROB_D1, "handoff hbm", NULL), b = compile_run(pr, PROB_D1, "handoff rf", NULL);
  ck_assert_msg(b.cycles < a.cycles, "%s: rf %" G_GINT64_FORMAT " cycles, hbm %" G_GINT64_FORMAT,
                knobs, b.cycles, a.cycles);
}

START_TEST(test_handoff_rf) {
  handoff_case("panels: {w1: 32, w2: 16}");
  handoff_case("panels: {w1: 32, w2: 16}\n  weights: resident\n  attention: {slices: 2}");
}
END_TEST

/* weights: resident with attention slices keeps the history K/V and the
 * LayerNorm vectors too: after the preload no task loads k_cache/v_cache or
 * an LN vector; every slice task is pinned; the new K/V rows reach HBM from
 * tasks that nothing waits for (off the critical path).  Faster than the
 * same plan streaming the history (a history too long to keep). */
START_TEST(test_resident_history) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  attention: {slices: 2}\n  handoff: rf");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int kv_stores = 0, slices = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    gboolean pre = t->role.kind == ROLE_PRELOAD;
    if (t->role.kind == ROLE_ATT && t->role.slice >= 0) {
      ck_assert_int_ge(t->pin, 0);
      slices++;
    }
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if ((op->kind != IR_LD && op->kind != IR_ST) || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      const char *sym = ir_tensor(ir, op->mem.t)->sym;
      gboolean kv = g_str_has_prefix(sym, "k_cache") || g_str_has_prefix(sym, "v_cache");
      gboolean ln = g_str_has_prefix(sym, "ln");
      if (op->kind == IR_LD) ck_assert_msg(pre || (!kv && !ln), "task %s loads %s", t->name, sym);
      if (op->kind == IR_ST && kv) {
        ck_assert_msg(t->signals < 0, "task %s stores %s and is waited for", t->name, sym);
        kv_stores++;
      }
    }
  }
  ck_assert_int_gt(slices, 0);
  ck_assert_int_gt(kv_stores, 0);
  /* on one SM, 16 KiB of temp space leaves room for the history beside the
   * weights, 24 KiB does not: there the slices stream it, and are slower */
  const char *one = "panels: {w1: 32, w2: 16}\n  weights: resident\n  attention: {slices: 2}\n  handoff: rf\n  sms_used: 1";
  g_autofree char *k16 = g_strdup_printf("%s\n  rf_temp_kib: 16", one), *k24 = g_strdup_printf("%s\n  rf_temp_kib: 24", one);
  g_autoptr(Plan) pa = small_plan(PROB_D1, k16);
  g_autoptr(Plan) pb = small_plan(PROB_D1, k24);
  gboolean streamed[2] = {FALSE, FALSE};
  const Plan *pl[2] = {pa, pb};
  for (int v = 0; v < 2; v++) {
    g_autoptr(GError) e2 = NULL;
    g_autoptr(Ir) ir2 = pass_pipeline(pl[v], PROB_D1, NULL, NULL, TRUE, &e2);
    ck_assert_msg(ir2, "%s", e2 ? e2->message : "?");
    for (guint k = 0; k < ir2->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir2, (int)k);
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        if (op->kind == IR_LD && t->role.kind == ROLE_ATT &&
            g_str_has_prefix(ir_tensor(ir2, op->mem.t)->sym, "k_cache"))
          streamed[v] = TRUE;
      }
    }
  }
  ck_assert(!streamed[0] && streamed[1]);
  Run a = compile_run(pa, PROB_D1, "resident history", NULL), b = compile_run(pb, PROB_D1, "streamed history", NULL);
  ck_assert_msg(a.cycles < b.cycles, "resident %" G_GINT64_FORMAT ", streamed %" G_GINT64_FORMAT, a.cycles, b.cycles);
}
END_TEST

/* k_split.w2: 4 over the plan `base`: each W2 panel's K rows are split over
 * shards whose MMA's A is 1 x K/4 (its input columns), and the panel's
 * combiner, which waits for the shards, adds 4 partials, the bias and the
 * residual; correct and faster than unsplit (the W2 MMA is the longest of
 * the chain).  With resident weights the shards are pinned to the WGs
 * keeping their rows; streamed, they are tasks placed like any other, each
 * loading its K/4 rows of the panel from HBM (the combiner none). */
static void k_split_case(const char *base, gboolean resident) {
  g_autofree char *split = g_strdup_printf("%s\n  k_split: {w2: 4}", base);
  g_autoptr(Plan) p1 = small_plan(PROB_D1, base);
  g_autoptr(Plan) p4 = small_plan(PROB_D1, split);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p4, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int shards = 0, combiners = 0, K = ir->prob.d_ff;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    int vadds = 0, rows = 0;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_MMA && t->role.kshard >= 0) ck_assert_int_eq(op->a.cols % (K / 4), 0);
      if (op->kind == IR_MMA && resident) ck_assert_int_eq(op->a.cols, K / 4);
      if (op->kind == IR_LD && op->mem.t >= 0 && g_str_has_prefix(ir_tensor(ir, op->mem.t)->sym, "w2"))
        rows += op->mem.rows;
      vadds += op->kind == IR_VADD;
    }
    if (resident ? t->pin < 0 : t->pin >= 0) ck_abort_msg("%s: pin %d", t->name, t->pin);
    if (t->role.kshard >= 0) {
      if (!resident) ck_assert_int_eq(rows, K / 4);
      shards++;
    } else {
      ck_assert_int_eq(vadds, 3 + 2); /* 4 partials, bias, residual */
      ck_assert_int_eq(rows, 0);
      combiners++;
    }
  }
  ck_assert_int_eq(shards, 4 * combiners);
  ck_assert_int_gt(combiners, 0);
  Run a = compile_run(p1, PROB_D1, "unsplit", NULL), b = compile_run(p4, PROB_D1, "k_split 4", NULL);
  ck_assert_msg(b.cycles < a.cycles, "split %" G_GINT64_FORMAT ", unsplit %" G_GINT64_FORMAT, b.cycles, a.cycles);
}

START_TEST(test_k_split) { k_split_case("panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf", TRUE); }
END_TEST

START_TEST(test_k_split_streamed) { k_split_case("panels: {w1: 32, w2: 16}\n  handoff: rf\n  k_chunk: {w2: 32}", FALSE); }
END_TEST

/* The first task of `kind` in layer `layer` (one that waits): how many of
 * its ops before its first op of kind `stop` (its WAIT, its first MMA) load
 * W2 from HBM. */
static int w2_loads_before(const Ir *ir, IrRoleKind kind, int layer, IrOpKind stop) {
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != kind || t->role.layer != layer || !t->waits) continue;
    int lds = 0;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == stop) return lds;
      lds += op->kind == IR_LD && op->mem.t >= 0 && ir_tensor(ir, op->mem.t)->home == HOME_HBM &&
             g_str_has_prefix(ir_tensor(ir, op->mem.t)->sym, "w2");
    }
  }
  return -1;
}

/* stream_prefetch: a streamed W2 task's first stream_depth chunks load
 * before its WAIT (none without it), citing the knob; the program is
 * faster and correct.  A resident layer's tasks load nothing first. */
START_TEST(test_stream_prefetch) {
  const char *base = "k_chunk: {w2: 32}\n  stream_depth: 2";
  g_autofree char *pf = g_strdup_printf("%s\n  stream_prefetch: true", base);
  g_autoptr(Plan) p0 = small_plan(PROB_D1, base), p1 = small_plan(PROB_D1, pf);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) i0 = pass_pipeline(p0, PROB_D1, NULL, NULL, TRUE, &err);
  g_autoptr(Ir) i1 = pass_pipeline(p1, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(i0 && i1, "%s", err ? err->message : "?");
  ck_assert_int_eq(w2_loads_before(i0, ROLE_W2, 0, IR_WAIT), 0);
  ck_assert_int_eq(w2_loads_before(i1, ROLE_W2, 0, IR_WAIT), 2);
  g_autofree char *text = NULL;
  Run a = compile_run(p0, PROB_D1, "no prefetch", NULL), b = compile_run(p1, PROB_D1, "prefetch", &text);
  ck_assert_msg(b.cycles < a.cycles, "prefetch %" G_GINT64_FORMAT ", without %" G_GINT64_FORMAT, b.cycles, a.cycles);
  ck_assert_msg(strstr(text, "; d1.stream_prefetch:"), "no stream_prefetch in the assembly");
  g_autoptr(Plan) pr = plan_text("pre.yaml", "version: 1\nd1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, "
                                             "layers: 2, history: 32, steps: 2}\n  k_chunk: {w2: 32}\n  "
                                             "stream_prefetch: true\n  weights: resident\n  resident_layers: 1\n");
  g_autoptr(Ir) ir = pass_pipeline(pr, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  ck_assert_int_eq(w2_loads_before(ir, ROLE_W2, 0, IR_WAIT), 0);
  ck_assert_int_eq(w2_loads_before(ir, ROLE_W2, 1, IR_WAIT), 1);
}
END_TEST

/* stream_depth: a streamed W2 task of 4 chunks loads its first 3 chunks
 * before its first MMA (one with depth 1), into 3 buffers; the program is
 * faster and correct.  A layer streamed beside resident ones has
 * rf_temp_kib's room: 4 KiB take one buffer of 32 rows, so the depth does
 * not apply there. */

START_TEST(test_stream_depth) {
  g_autoptr(Plan) p1 = small_plan(PROB_D1, "k_chunk: {w2: 32}");
  g_autoptr(Plan) p3 = small_plan(PROB_D1, "k_chunk: {w2: 32}\n  stream_depth: 3");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) i1 = pass_pipeline(p1, PROB_D1, NULL, NULL, TRUE, &err);
  g_autoptr(Ir) i3 = pass_pipeline(p3, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(i1 && i3, "%s", err ? err->message : "?");
  ck_assert_int_eq(w2_loads_before(i1, ROLE_W2, 0, IR_MMA), 1);
  ck_assert_int_eq(w2_loads_before(i3, ROLE_W2, 0, IR_MMA), 3);
  Run a = compile_run(p1, PROB_D1, "depth 1", NULL), b = compile_run(p3, PROB_D1, "depth 3", NULL);
  ck_assert_msg(b.cycles < a.cycles, "depth 3 %" G_GINT64_FORMAT ", depth 1 %" G_GINT64_FORMAT, b.cycles, a.cycles);
  g_autoptr(Plan) pr = plan_text("room.yaml", "version: 1\nd1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, "
                                             "layers: 2, history: 32, steps: 2}\n  k_chunk: {w2: 32}\n  "
                                             "stream_depth: 3\n  weights: resident\n  resident_layers: 1\n  "
                                             "rf_temp_kib: 4\n");
  g_autoptr(Ir) ir = pass_pipeline(pr, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  ck_assert_int_eq(w2_loads_before(ir, ROLE_W2, 0, IR_MMA), 0); /* resident */
  ck_assert_int_eq(w2_loads_before(ir, ROLE_W2, 1, IR_MMA), 1);
}
END_TEST

/* refinements.ln_fold: the qkv and w1 tasks multiply x*g by the panel
 * before the row's statistics (the MMA is issued before the first
 * VEC.rsum) and normalise after; the folded constants come from the
 * preload tasks; numerics pass.  power.deferred_loads: layer 1's preload
 * tasks come after step 0's layer-0 tasks in every WG's program. */
START_TEST(test_ln_fold_deferred) {
  g_autoptr(Plan) p = plan_text("fold.yaml", "version: 1\nd1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 2, history: 32, steps: 2}\n"
                                "  panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n"
                                "  refinements: {ln_fold: true}\n  power: {deferred_loads: true}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int folded = 0, pre_l1 = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind == ROLE_PRELOAD && t->role.layer == 1) {
      for (guint q = k + 1; q < ir->tasks->len; q++) { /* no later step-0 layer-0 task on its WG */
        const IrTask *u = ir_task_at(ir, (int)q);
        ck_assert_msg(!(u->wg == t->wg && u->role.step == 0 && u->role.layer == 0 && u->role.kind != ROLE_PRELOAD),
                      "%s comes before %s", t->name, u->name);
      }
      pre_l1++;
    }
    if (t->role.kind != ROLE_QKV && t->role.kind != ROLE_W1) continue;
    int mma = -1, rsum = -1;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_MMA && mma < 0) mma = (int)i;
      if (op->kind == IR_VRSUM && rsum < 0) rsum = (int)i;
    }
    if (mma < 0) continue; /* the K/V writeback tasks */
    ck_assert_msg(rsum > mma, "%s: statistics before the MMA", t->name);
    folded++;
  }
  ck_assert_int_gt(folded, 0);
  ck_assert_int_gt(pre_l1, 0);
  compile_run(p, PROB_D1, "ln_fold + deferred_loads", NULL);
}
END_TEST

/* refinements.first_token: no preload task multiplies (the folded
 * constants come from step 0's 3-row MMA [x*g; g; b] . W, kept by that
 * task for the later steps of its WG); numerics pass. */
START_TEST(test_first_token) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  refinements: {ln_fold: true, first_token: true}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int three = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_MMA) continue;
      ck_assert_msg(t->role.kind != ROLE_PRELOAD, "%s multiplies", t->name);
      if (op->a.rows == 3) {
        ck_assert_int_eq(t->role.step, 0);
        three++;
      }
    }
  }
  ck_assert_int_gt(three, 0);
  compile_run(p, PROB_D1, "first_token", NULL);
}
END_TEST

/* refinements.q_first: the qkv panels with no q column signal a group of
 * their own; only each head's last slice waits for it (two groups), the
 * history slices wait for one; numerics pass. */
START_TEST(test_q_first) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  attention: {slices: 2}\n  refinements: {q_first: true}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, FALSE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int last = 0, hist = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_ATT || t->role.slice < 0) continue;
    int waits = 0;
    for (guint i = 0; i < t->ops->len; i++) waits += g_array_index(t->ops, IrOp, i).kind == IR_WAIT;
    if (t->role.slice == 1) {
      ck_assert_msg(waits == 2, "%s: %d WAITs", t->name, waits);
      last++;
    } else {
      ck_assert_msg(waits == 1, "%s: %d WAITs", t->name, waits);
      hist++;
    }
  }
  ck_assert_int_gt(last, 0);
  ck_assert_int_gt(hist, 0);
  compile_run(p, PROB_D1, "q_first", NULL);
}
END_TEST

/* attention.new_slice: each head's attention has slices + 1 slice tasks,
 * the history slices reading their block of 16 keys and the last one the
 * new positions alone (t + 1 keys at step t); without the knob the last
 * slice reads its block and the new positions (16 + t + 1).  With resident
 * K/V (resident weights) and with K/V streamed from HBM; numerics pass. */
static void check_new_slice(const char *knobs, gboolean own) {
  g_autoptr(Plan) p = small_plan(PROB_D1, knobs);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, FALSE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int S = own ? 3 : 2, slices[2][2][2] = {{{0}}}; /* step, head, layer 0 */
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_ATT || t->role.slice < 0) continue;
    ck_assert_int_lt(t->role.slice, S);
    slices[t->role.step][t->role.head][0]++;
    int keys = -1; /* the keys of the slice's first QK^T: its MMA's B rows */
    for (guint i = 0; i < t->ops->len && keys < 0; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_MMA) keys = op->b.rows;
    }
    int want = t->role.slice < S - 1 ? 16 : own ? t->role.step + 1 : 16 + t->role.step + 1;
    ck_assert_msg(keys == want, "%s: %d keys, want %d", t->name, keys, want);
  }
  for (int st = 0; st < 2; st++)
    for (int h = 0; h < 2; h++) ck_assert_int_eq(slices[st][h][0], S);
  compile_run(p, PROB_D1, knobs, NULL);
}

START_TEST(test_new_slice) {
  check_new_slice("panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  attention: {slices: 2, new_slice: true}", TRUE);
  check_new_slice("panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  attention: {slices: 2}", FALSE);
  check_new_slice("attention: {slices: 2, new_slice: true}", TRUE);
  check_new_slice("attention: {slices: 2}", FALSE);
  /* two layers, layer 1 preloaded after step 0's layer 0: the qkv tasks
   * store into layer 1's own slices before that preload runs, so the
   * slices' tensors belong to each WG's first preload task (layer 0's) */
  g_autoptr(Plan) p = plan_text("two.yaml", "version: 1\nd1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 2, history: 32, steps: 2}\n"
                                "  panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n"
                                "  power: {deferred_loads: true}\n  attention: {slices: 2, new_slice: true}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, FALSE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int own = 0;
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (!strstr(x->name, ".kv.h") || !g_str_has_suffix(x->name, ".s2.k")) continue;
    const char *task = ir_task_at(ir, x->task)->name;
    ck_assert_msg(g_str_has_prefix(task, "preload.l0."), "%s held by %s", x->name, task);
    own++;
  }
  ck_assert_int_eq(own, 4); /* 2 layers x 2 heads */
  compile_run(p, PROB_D1, "new_slice, two layers", NULL);
}
END_TEST

/* kv_writeback: temp with resident weights and slices: the new K/V rows
 * reach HBM only (through scratch), so the history K/V is not kept in the
 * slices' RF (which would read rows never written there); the slices read
 * the cache from HBM and the numerics pass, with and without new_slice. */
START_TEST(test_kv_temp_slices) {
  for (int own = 0; own < 2; own++) {
    g_autofree char *knobs = g_strdup_printf("panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  kv_writeback: temp\n  attention: {slices: 2, new_slice: %s}", own ? "true" : "false");
    g_autoptr(Plan) p = small_plan(PROB_D1, knobs);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, FALSE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    for (guint t = 0; t < ir->tensors->len; t++)
      ck_assert_msg(!strstr(ir_tensor(ir, (int)t)->name, ".kv.h"), "%s kept in the RF", ir_tensor(ir, (int)t)->name);
    compile_run(p, PROB_D1, knobs, NULL);
  }
}
END_TEST

/* multicast.pass with one wo panel (panels.wo = d_model): the pass has
 * nothing of wo's to merge (one owner per K shard), so W1's owners must not
 * pace their weights by wo's `full` events, which no one signals (the
 * program deadlocked; the pipeline now refuses such a program). */
START_TEST(test_p1_pass_one_panel) {
  g_autoptr(Plan) p = small_plan(PROB_P1, "weights: resident\n  multicast: {wo: true, w1: true, pass: true}\n  panels: {wo: 64}");
  compile_run(p, PROB_P1, "multicast.pass, one wo panel", NULL);
}
END_TEST

/* power.in_flight with resident weights: a WG's bucket sits behind a WAIT
 * for another stage's work, whose bucket the need order (made monotone
 * along each WG's program) numbered later, and the capped pacer waited for
 * the first while holding back the second (a deadlock; before that, numbers
 * no bucket had).  The buckets are now numbered in an order the program
 * can take them in (pace.c, number_capped); numerics pass. */
START_TEST(test_in_flight_resident) {
  g_autoptr(Plan) p = plan_text("in_flight.yaml", "version: 1\nd1:\n  problem: {d_model: 32, heads: 1, d_ff: 256}\n"
                                "  weights: resident\n"
                                "  power: {bucket_bytes: 8192, event_interval: 28, pacing_wg: 63, in_flight: 4}\n");
  compile_run(p, PROB_D1, "in_flight, resident", NULL);
}
END_TEST

/* refinements.gelu_factor: every w1 task has one op fewer (the GELU's 8
 * instead of 9); numerics pass. */
static int w1_ops(const Plan *p) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, FALSE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  for (guint k = 0; k < ir->tasks->len; k++)
    if (ir_task_at(ir, (int)k)->role.kind == ROLE_W1) return (int)ir_task_at(ir, (int)k)->ops->len;
  return -1;
}

START_TEST(test_gelu_factor) {
  g_autoptr(Plan) a = small_plan(PROB_D1, "panels: {w1: 32}");
  g_autoptr(Plan) b = small_plan(PROB_D1, "panels: {w1: 32}\n  refinements: {gelu_factor: true}");
  ck_assert_int_eq(w1_ops(b), w1_ops(a) - 1);
  compile_run(b, PROB_D1, "gelu_factor", NULL);
}
END_TEST

/* handoff_relays: on plans/best-mcpass.yaml's D1 (16 W1 panels, 12 q|k|v
 * panels, RF hand-offs, the default machine's 2 DMA slots per SM;
 * plans/best.yaml's machine has 8 and no relays), every wo panel task
 * stores its part of the row to the 4 relays only (not to the 16 W1 WGs
 * and W2's residual), each relay task is pinned and hands the whole row
 * on, every W1 task is written by exactly one relay; and the plan is
 * faster than with direct hand-offs (the producers' 2 DMA slots per SM no
 * longer queue 17 stores). */
/* text with its first `from` replaced by `to` (which must be there). */
static char *replace_once(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  ck_assert_msg(at, "'%s' not in the text", from);
  return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static int remote_stores(const IrTask *t) {
  int n = 0;
  for (guint i = 0; i < t->ops->len; i++) {
    const IrOp *op = &g_array_index(t->ops, IrOp, i);
    n += op->kind == IR_ST && op->mem.t >= 0 && op->mem.t != op->a.t;
  }
  return n;
}

START_TEST(test_handoff_relays) {
  g_autoptr(Plan) relayed = plan_file("plans/best-mcpass.yaml");
  ck_assert_int_eq(relayed->d1.handoff_relays, 4);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(relayed, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int relays = 0, w1 = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (strstr(t->name, ".relay")) {
      ck_assert_int_ge(t->pin, 0);
      ck_assert_int_ge(remote_stores(t), 1);
      relays++;
    }
    if (t->role.kind == ROLE_WO && t->role.kshard < 0)
      ck_assert_msg(remote_stores(t) == 4, "%s stores %d rows", t->name, remote_stores(t));
    if (t->role.kind != ROLE_W1) continue;
    w1++;
    /* who writes this task's input row x: one relay task */
    int writers = 0;
    for (guint j = 0; j < ir->tasks->len; j++) {
      const IrTask *u = ir_task_at(ir, (int)j);
      for (guint i = 0; i < u->ops->len; i++) {
        const IrOp *op = &g_array_index(u->ops, IrOp, i);
        if (op->kind != IR_ST || op->mem.t < 0 || ir_tensor(ir, op->mem.t)->task != (int)k) continue;
        if (!g_str_has_suffix(ir_tensor(ir, op->mem.t)->name, ".x")) continue;
        ck_assert_msg(strstr(u->name, ".relay") != NULL, "%s writes %s's x", u->name, t->name);
        writers++;
      }
    }
    ck_assert_int_eq(writers, 1);
  }
  /* 8 steps x 2 layers of wo relays, 8 x 1 of w2 relays (not after the last layer) */
  ck_assert_int_eq(relays, 4 * (8 * 2 + 8 * 1));
  ck_assert_int_eq(w1, 16 * 8 * 2);
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents(TCC_TOP "/plans/best-mcpass.yaml", &text, &len, NULL));
  g_autofree char *direct_text = replace_once(text, "handoff_relays: 4", "handoff_relays: 0");
  g_autoptr(Plan) direct = plan_text("best-direct.yaml", direct_text);
  Run a = compile_run(direct, PROB_D1, "direct hand-offs", NULL);
  Run b = compile_run(relayed, PROB_D1, "4 relays", NULL);
  ck_assert_msg(b.cycles < a.cycles, "relays %" G_GINT64_FORMAT " vs direct %" G_GINT64_FORMAT, b.cycles, a.cycles);
}
END_TEST

/* refinements.split_stats: on a 2-layer plan with RF hand-offs and folded
 * LayerNorm, no W1 task and no layer-1 q|k|v task reduces its whole input
 * row (every VEC.rsum reads at most a piece: the merge reads the 2 x np
 * statistics), layer 0's q|k|v tasks (x_in from HBM) still do, every wo
 * task computes its piece's statistics, and the program is correct with
 * and without relays (the merge is exact up to FP32 rounding). */
static int whole_row_rsums(const IrTask *t, int d) {
  int n = 0;
  for (guint i = 0; i < t->ops->len; i++) {
    const IrOp *op = &g_array_index(t->ops, IrOp, i);
    n += op->kind == IR_VRSUM && op->a.cols == d;
  }
  return n;
}

START_TEST(test_split_stats) {
  const char *base = "problem: {d_model: 64, heads: 2, d_ff: 128, layers: 2, history: 32, steps: 2}\n"
                     "  panels: {qkv: 32, wo: 16, w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n"
                     "  attention: {slices: 2}";
  for (int relays = 0; relays <= 2; relays += 2) {
    g_autofree char *knobs =
        g_strdup_printf("%s\n  handoff_relays: %d\n  refinements: {ln_fold: true, split_stats: true}", base, relays);
    g_autofree char *text = g_strdup_printf("version: 1\nd1:\n  %s\n", knobs);
    g_autoptr(Plan) p = plan_text("split.yaml", text);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int merged = 0, local = 0, pieces = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      gboolean consumer = t->role.kind == ROLE_W1 || (t->role.kind == ROLE_QKV && t->role.layer == 1);
      if (consumer) {
        ck_assert_msg(whole_row_rsums(t, 64) == 0, "%s reduces its whole row", t->name);
        merged++;
      }
      if (t->role.kind == ROLE_QKV && t->role.layer == 0) /* and their K/V stores' tasks */
        local += whole_row_rsums(t, 64);
      if (t->role.kind == ROLE_WO)
        for (guint i = 0; i < t->ops->len; i++) {
          const IrOp *op = &g_array_index(t->ops, IrOp, i);
          pieces += op->kind == IR_VRSUM && op->a.cols == 16;
        }
    }
    ck_assert_int_gt(merged, 0);
    ck_assert_int_eq(local, 2 * 6 * 2); /* 6 q|k|v panels, 2 steps: mean and variance */
    ck_assert_int_eq(pieces, 2 * 4 * 2 * 2); /* sum and M2, 4 pieces, 2 layers, 2 steps */
    compile_run(p, PROB_D1, relays ? "split_stats, relays" : "split_stats", NULL);
  }
}
END_TEST

/* A pacing WG releases buckets in the order their data is needed: the
 * buckets of preload tasks whose WGs keep qkv panels (stage 0) come before
 * those of WGs keeping only W2 panels, though the WGs' program order says
 * otherwise; numbers never decrease along a WG's program. */
START_TEST(test_pacing_by_need) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  power: {bucket_bytes: 4096, event_interval: 16, pacing_wg: 63}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int nwg = sim_machine_wgs(&ir->hw), ev = -1;
  for (guint e = 0; e < ir->events->len; e++)
    if (strcmp(g_ptr_array_index(ir->events, e), "bucket") == 0) ev = (int)e;
  ck_assert_int_ge(ev, 0);
  g_autofree int *rank = g_new(int, nwg);
  for (int w = 0; w < nwg; w++) rank[w] = 9;
  static const int proj_rank[PROJ__COUNT] = {0, 2, 3, 4};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_PRELOAD && t->role.proj >= 0 && t->pin >= 0)
      rank[t->pin] = MIN(rank[t->pin], proj_rank[t->role.proj]);
  }
  int64_t max_qkv = 0, min_w2 = G_MAXINT64;
  g_autofree int64_t *last = g_new0(int64_t, nwg);
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_WAIT || op->event != ev) continue;
      ck_assert_int_ge(op->n, last[t->wg]);
      last[t->wg] = op->n;
      if (t->role.kind != ROLE_PRELOAD) continue;
      if (rank[t->wg] == 0) max_qkv = MAX(max_qkv, op->n);
      if (rank[t->wg] == 4) min_w2 = MIN(min_w2, op->n);
    }
  }
  ck_assert_msg(max_qkv > 0 && min_w2 < G_MAXINT64 && max_qkv < min_w2,
                "qkv buckets up to %" G_GINT64_FORMAT ", W2 from %" G_GINT64_FORMAT, max_qkv, min_w2);
  compile_run(p, PROB_D1, "paced by need", NULL);
}
END_TEST

/* pass_pace alone on an IR written by hand (the form of tests/passes/),
 * which must parse and pace. */
static Ir *paced_ir(const char *what, const char *text) {
  g_autoptr(GError) err = NULL;
  Ir *ir = ir_parse(what, text, strlen(text), &err);
  ck_assert_msg(ir, "%s: %s", what, err ? err->message : "?");
  ck_assert_msg(pass_pace(ir, &err), "%s: %s", what, err ? err->message : "?");
  return ir;
}

/* A task's ops in short: "LD t0.x[0:16, :]", "WAIT bucket 2", "SIG took 1",
 * "WAITT 100", others by kind number; separated by "; ". */
static char *pace_ops(const Ir *ir, const char *task) {
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (strcmp(t->name, task) != 0) continue;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (i) g_string_append(s, "; ");
      if (op->kind == IR_LD) {
        g_autofree char *d = ir_view_str(ir, (int)k, op->d);
        g_string_append_printf(s, "LD %s", d);
      } else if (op->kind == IR_WAIT || op->kind == IR_SIG) {
        g_string_append_printf(s, "%s %s %" G_GINT64_FORMAT, op->kind == IR_WAIT ? "WAIT" : "SIG",
                               (const char *)g_ptr_array_index(ir->events, op->event), op->n);
      } else if (op->kind == IR_WAITT) {
        g_string_append_printf(s, "WAITT %" G_GINT64_FORMAT, op->n);
      } else {
        g_string_append_printf(s, "op%d", (int)op->kind);
      }
    }
  }
  return g_string_free(s, FALSE);
}

static void expect_ops(const Ir *ir, const char *task, const char *want) {
  g_autofree char *got = pace_ops(ir, task);
  ck_assert_msg(strcmp(got, want) == 0, "task %s:\n got: %s\nwant: %s", task, got, want);
}

#define PACED_HEAD                                                                                 \
  ".machine sms=2 wgs_per_sm=2\n.problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n" \
  "schedule\n  p1.power.bucket_bytes = 4096\n  p1.power.event_interval = 100\n"                    \
  "  p1.power.pacing_wg = 3\n"

/* Paced by a WG, a bucket holds loads up to exactly bucket_bytes: two
 * loads of 2048 bytes (32 lines each) fill the 4096-byte bucket 1
 * exactly and share its WAIT and SIG; the next load, which would
 * overflow it, opens bucket 2.  The pacer releases 2 buckets.  (A bucket
 * closed by a load that would just fill it, `>=` for `>`, would put the
 * second load in bucket 2 with the third: every other test fills its
 * buckets short or over.) */
START_TEST(test_paced_bucket_exact) {
  g_autoptr(Ir) ir = paced_ir("exact.ir", PACED_HEAD
                              "task t0 wg 0 stage 0\n  rf t0.x 32x32\n  rf t0.g 1x32\n"
                              "    0  LD t0.x[0:16, :], hbm[x_in]\n"
                              "    1  LD t0.x[16:32, :], hbm[x_in + 2048]\n"
                              "    2  LD t0.g, hbm[ln1_g.l0]\n"
                              "task pacer wg 3 stage -1 role pacer\n"
                              "hbm x_in = x_in 32x32 stride 32\nhbm g = ln1_g.l0 1x32 stride 32\n");
  expect_ops(ir, "t0",
             "WAIT bucket 1; LD t0.x[0:16, :]; LD t0.x[16:32, :]; SIG took 1; "
             "WAIT bucket 2; LD t0.g; SIG took 1");
  expect_ops(ir, "pacer", "WAITT 100; SIG bucket 1; WAITT 100; SIG bucket 1");
}
END_TEST

/* Paced by a WG, the need order differs from a WG's program order (as
 * resident weights' preloads: a WG loads a later stage's panel before an
 * earlier stage's data): wg 0 runs a (stage 1) then b (stage 0), wg 1 c
 * (stage 0).  By need b, c, a; a WG takes its buckets in program order,
 * so along each WG's program the numbers never decrease: b takes a's
 * number, and the numbers are 1..M without gaps (c 1, a and b 2; the
 * pacer releases number 2 once, for both).  Numbered by need alone, wg 0
 * would wait for bucket 3 and then 1. */
START_TEST(test_paced_monotone) {
  g_autoptr(Ir) ir = paced_ir("monotone.ir", PACED_HEAD
                              "task a wg 0 stage 1\n  rf a.g 1x32\n    0  LD a.g, hbm[ln1_g.l0]\n"
                              "task b wg 0 stage 0\n  rf b.x 32x32\n    0  LD b.x, hbm[x_in]\n"
                              "task c wg 1 stage 0\n  rf c.x 32x32\n    0  LD c.x, hbm[x_in]\n"
                              "task pacer wg 3 stage -1 role pacer\n"
                              "hbm x_in = x_in 32x32 stride 32\nhbm g = ln1_g.l0 1x32 stride 32\n");
  expect_ops(ir, "a", "WAIT bucket 2; LD a.g; SIG took 1");
  expect_ops(ir, "b", "WAIT bucket 2; LD b.x; SIG took 1");
  expect_ops(ir, "c", "WAIT bucket 1; LD c.x; SIG took 1");
  expect_ops(ir, "pacer", "WAITT 100; SIG bucket 1; WAITT 100; SIG bucket 1");
}
END_TEST

/* A load counts every HBM line its rows touch, a line it ends inside
 * too (panels of 8 columns load 32-byte rows).  Self-paced, bucket 2048
 * bytes (32 lines): t0 loads 30 rows of 8 columns at the start of 128-byte
 * rows (30 lines: each row ends mid-line), then 8 columns at byte 48 of
 * ln1_g (bytes 48..79: 2 lines), 32 lines in all, a full bucket: the wait
 * comes before the third load and nowhere else.  Counting a row's end
 * rounded down finds 0 and 1 lines and no full bucket; two lines a row
 * would wait before the second load. */
START_TEST(test_pace_partial_lines) {
  g_autoptr(Ir) ir = paced_ir("lines.ir", ".machine sms=1 wgs_per_sm=2\n"
                              ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n"
                              "schedule\n  p1.power.bucket_bytes = 2048\n  p1.power.event_interval = 100\n"
                              "task t0 wg 0 stage 0\n  rf t0.x 30x8\n  rf t0.g 1x8\n  rf t0.b 1x32\n"
                              "    0  LD t0.x, hbm[x_in stride 32]\n"
                              "    1  LD t0.g, hbm[ln1_g.l0 + 48]\n"
                              "    2  LD t0.b, hbm[ln1_b.l0]\n"
                              "hbm x = x_in 30x8 stride 32\nhbm g = ln1_g.l0 + 48 1x8 stride 8\n"
                              "hbm b = ln1_b.l0 1x32 stride 32\n");
  expect_ops(ir, "t0", "LD t0.x; LD t0.g; WAITT 100; LD t0.b");
}
END_TEST

/* ffn.fused: the FFN is producers (W1 columns -> GELU -> their W2 rows:
 * two MMAs, the second's A the GELU output) and consumers (producers - 1
 * VEC adds of the partials, then bias and residual); no other W2 task;
 * correct. */
START_TEST(test_ffn_fused) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "weights: resident\n  handoff: rf\n  ffn: {fused: true, producers: 4, channels: 32, consumers: 2}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int producers = 0, consumers = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    int mma = 0, vadd = 0;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      mma += op->kind == IR_MMA;
      vadd += op->kind == IR_VADD;
    }
    if (t->role.kind == ROLE_W1) {
      ck_assert_msg(mma == 2, "%s: %d MMAs", t->name, mma);
      producers++;
    }
    if (t->role.kind == ROLE_W2) {
      ck_assert_msg(mma == 0 && vadd == 3 + 2, "%s: %d MMAs, %d adds", t->name, mma, vadd);
      consumers++;
    }
  }
  ck_assert_int_eq(producers, 4 * ir->prob.steps * ir->prob.layers);
  ck_assert_int_eq(consumers, 2 * ir->prob.steps * ir->prob.layers);
  compile_run(p, PROB_D1, "ffn fused", NULL);
  /* producers x channels must be d_ff */
  g_autoptr(Plan) bad = small_plan(PROB_D1, "weights: resident\n  handoff: rf\n  ffn: {fused: true, producers: 3, channels: 32}");
  g_autoptr(GError) e2 = NULL;
  g_autoptr(Ir) none = pass_pipeline(bad, PROB_D1, NULL, NULL, TRUE, &e2);
  ck_assert(!none);
  ck_assert_msg(strstr(e2->message, "error: ffn.fused: producers (3) x channels (32) must be d_ff (128)"), "%s", e2->message);
  /* the ILP does not model the fused units: refused at ffn.fused */
  g_autoptr(Plan) ilp = small_plan(PROB_D1, "weights: resident\n  handoff: rf\n  placement: {solver: ilp}\n  ffn: {fused: true, producers: 4, channels: 32, consumers: 2}");
  g_autoptr(GError) e3 = NULL;
  g_autoptr(Ir) none3 = pass_pipeline(ilp, PROB_D1, NULL, NULL, TRUE, &e3);
  ck_assert(!none3);
  ck_assert_msg(g_str_has_prefix(e3->message, "small.yaml:") && strstr(e3->message, ": error: ffn.fused: the ILP placement does not model the fused units"), "%s", e3->message);
}
END_TEST

/* power.wave_order: need: the preload tasks of WGs keeping a qkv panel (the
 * first stage) are in the first wave (they wait for nothing), those whose
 * WGs keep only W2 panels in the last; by SM number (the default) a qkv
 * panel may be in any wave. */
START_TEST(test_wave_order_need) {
  g_autoptr(Plan) p = small_plan(PROB_D1, "panels: {w1: 32, w2: 16}\n  weights: resident\n  power: {preload_waves: 5, wave_order: need}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int *rank = g_new(int, nwg);
  for (int w = 0; w < nwg; w++) rank[w] = 9;
  static const int proj_rank[PROJ__COUNT] = {0, 2, 3, 4};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_PRELOAD && t->role.proj >= 0 && t->pin >= 0)
      rank[t->pin] = MIN(rank[t->pin], proj_rank[t->role.proj]);
  }
  int first = 0, last = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_PRELOAD) continue;
    gboolean waits = FALSE; /* a WAIT op (the sync pass made them) */
    for (guint i = 0; i < t->ops->len; i++) waits |= g_array_index(t->ops, IrOp, i).kind == IR_WAIT;
    if (rank[t->wg] == 0) {
      ck_assert_msg(!waits, "%s keeps a qkv panel but waits", t->name);
      first++;
    }
    if (rank[t->wg] == 4) {
      ck_assert_msg(waits, "%s keeps only W2 panels but is in the first wave", t->name);
      last++;
    }
  }
  ck_assert_int_gt(first, 0);
  ck_assert_int_gt(last, 0);
  compile_run(p, PROB_D1, "waves by need", NULL);
}
END_TEST

/* k_split on a machine with REDUCE units: the shards all-reduce their
 * partials with RED (no combiner tasks), shard 0 finishes; correct. */
START_TEST(test_k_split_red) {
  g_autoptr(Plan) p = plan_text("red.yaml", "version: 1\nhardware: {reduce_units: 1}\nd1:\n  problem: " D1_DIMS "\n"
                                "  panels: {w1: 32, w2: 16}\n  weights: resident\n  handoff: rf\n  k_split: {w2: 4}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int reds = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    ck_assert_msg(t->role.kshard >= 0, "%s: a combiner task", t->name);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_RED) {
        ck_assert_int_eq(op->n, 4);
        reds++;
      }
    }
  }
  ck_assert_int_gt(reds, 0);
  compile_run(p, PROB_D1, "k_split by RED", NULL);
}
END_TEST

/* ------------------------------------------------------------ ILP placement */

/* A small resident plan on 2 SMs with K shards and resident history: with
 * active_weight 100 the constructive placement (one unit per WG, round
 * robin) is far from optimal, so the ILP's own assignment is exercised. */
#define ILP_BASE "panels: {w1: 32, w2: 16}\n  weights: resident\n  attention: {slices: 2}\n  handoff: rf\n  k_split: {w2: 2}\n  sms_used: 2"
#define ILP_ACTIVE 100

/* The seeds' objective of the placement in `ir`, recomputed from its IR:
 * every resident unit is a preload task's "lL.PROJ.pP[.kK].w" tensor on
 * that task's WG; per stage (layer, projection) the busiest SM's load,
 * load = K_shard / 4 + 20 x partitions per unit + `active` per WG used;
 * summed.  Also checks that no unit is kept twice and no WG holds more
 * partitions than its room (less rf_temp_kib's and one for biases);
 * *units gets how many there are. */
static int64_t placement_objective(const Ir *ir, int active, int *units) {
  const Schedule *s = &ir->sched;
  int nwg = sim_machine_wgs(&ir->hw), nsm = ir->hw.sms, pb = sim_machine_part_bytes(&ir->hw);
  int ns = ir->prob.layers * PROJ__COUNT;
  g_autofree int64_t *load = g_new0(int64_t, (gsize)ns * nsm);
  g_autofree gboolean *uses = g_new0(gboolean, (gsize)ns * nwg);
  g_autofree int *parts = g_new0(int, nwg);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  *units = 0;
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF || x->task < 0 || !g_str_has_suffix(x->name, ".w")) continue;
    const IrTask *task = ir_task_at(ir, x->task);
    if (task->role.kind != ROLE_PRELOAD) continue;
    int l, p, j = -1;
    char proj[16];
    ck_assert_msg(sscanf(x->name, "l%d.%15[^.].p%d", &l, proj, &p) == 3, "unit %s", x->name);
    for (int k = 0; k < PROJ__COUNT; k++)
      if (strcmp(proj, sched_proj_name[k]) == 0) j = k;
    ck_assert_msg(j >= 0, "unit %s", x->name);
    ck_assert_msg(g_hash_table_add(seen, g_strdup(x->name)), "unit %s kept twice", x->name);
    int K = sched_proj_k(&ir->prob, (SchedProj)j) / s->k_split[j], P = s->panel[j];
    int np = (4 * K * P + pb - 1) / pb, st = l * PROJ__COUNT + j, w = task->wg;
    load[st * nsm + ir_wg_sm(ir, w)] += K / 4 + 20 * np;
    if (!uses[st * nwg + w]) load[st * nsm + ir_wg_sm(ir, w)] += active;
    uses[st * nwg + w] = TRUE;
    parts[w] += np;
    (*units)++;
  }
  int room = ir->hw.vl - (s->rf_temp_kib * 1024 + pb - 1) / pb;
  for (int w = 0; w < nwg; w++) ck_assert_msg(parts[w] <= room - 1, "wg%d holds %d partitions of %d", w, parts[w], room - 1);
  int64_t total = 0;
  for (int st = 0; st < ns; st++) {
    int64_t most = 0;
    for (int m = 0; m < nsm; m++) most = MAX(most, load[st * nsm + m]);
    total += most;
  }
  return total;
}

/* placement.solver: ilp: (a) every unit on exactly one WG, within each
 * WG's room; the account in ir->ilp says optimal, and its objective and
 * the constructive one are what the IRs give by the seeds' formula; (d)
 * the ILP's objective is below the constructive placement's; (b) two
 * compiles give the same assembly; and the program is correct. */
START_TEST(test_ilp_placement) {
  g_autofree char *knobs = g_strdup_printf(ILP_BASE "\n  placement: {solver: ilp, active_weight: %d}", ILP_ACTIVE);
  g_autoptr(Plan) pi = small_plan(PROB_D1, knobs);
  g_autoptr(Plan) pc = small_plan(PROB_D1, ILP_BASE);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ilp = pass_pipeline(pi, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ilp, "%s", err ? err->message : "?");
  g_autoptr(Ir) con = pass_pipeline(pc, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(con, "%s", err ? err->message : "?");
  ck_assert(con->ilp == NULL);
  ck_assert(ilp->ilp != NULL);
  const Problem *d = &ilp->prob;
  int want = d->layers * (3 * d->d_model / 32 + d->d_model / 32 + d->d_ff / 32 + 2 * d->d_model / 16);
  int ui = 0, uc = 0;
  int64_t oi = placement_objective(ilp, ILP_ACTIVE, &ui), oc = placement_objective(con, ILP_ACTIVE, &uc);
  ck_assert_int_eq(ui, want);
  ck_assert_int_eq(uc, want);
  ck_assert_int_eq(ilp->ilp->units, want);
  ck_assert_int_eq(ilp->ilp->status, IR_ILP_OPTIMAL);
  ck_assert_int_eq(ilp->ilp->objective, oi);
  ck_assert_int_eq(ilp->ilp->bound, oi);
  ck_assert_int_eq(ilp->ilp->constructive, oc);
  ck_assert_msg(oi < oc, "ilp %" G_GINT64_FORMAT ", constructive %" G_GINT64_FORMAT, oi, oc);
  g_autofree char *a = compile(pi, PROB_D1, NULL), *b = compile(pi, PROB_D1, NULL);
  ck_assert_msg(strcmp(a, b) == 0, "two compiles of the ILP plan differ");
  compile_run(pi, PROB_D1, "ilp placement", NULL);
}
END_TEST

/* (c) No placement: the exact one-line error at the knob, naming the
 * binding constraint (capacity: 32 partitions needed, 4 WGs x 5 kept), with
 * or without GLPK (the total check and the LP relaxation both see it). */
START_TEST(test_ilp_infeasible) {
  g_autoptr(Plan) p = plan_text("ilp.yaml", "version: 1\nd1:\n  problem: " D1_DIMS "\n"
                                            "  panels: {w1: 32, w2: 16}\n  weights: resident\n"
                                            "  rf_temp_kib: 40\n  sms_used: 1\n  placement: {solver: ilp}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert(ir == NULL);
  ck_assert_str_eq(err->message, "ilp.yaml:8:15: error: placement.solver: ilp: infeasible: capacity: the "
                                 "panels need 32 partitions, 4 WGs keep 20 (5 each after rf_temp_kib and one "
                                 "for biases)");
}
END_TEST

/* placement.time_limit_s when GLPK stops before its first incumbent
 * (lw_ilp_test_tm_lim_ms 1: GLPK's clock test, limit - 1 <= milliseconds
 * spent, holds at its first check on any machine, so this does not depend
 * on the machine's speed): the constructive placement is used (every task
 * on the WG the constructive solver gives it) with one warning at
 * placement.solver, and --explain says so (text and JSON); the program
 * runs correctly.  Before, the plan was refused ("no placement found
 * within placement.time_limit_s=10 (GLPK code 9)"). */
START_TEST(test_ilp_time_limit) {
  g_autofree char *knobs = g_strdup_printf(ILP_BASE "\n  placement: {solver: ilp, active_weight: %d}", ILP_ACTIVE);
  g_autoptr(Plan) pi = small_plan(PROB_D1, knobs);
  g_autoptr(Plan) pc = small_plan(PROB_D1, ILP_BASE);
  g_autoptr(GError) err = NULL;
  lw_ilp_test_tm_lim_ms = 1;
  Ir *raw = pass_pipeline(pi, PROB_D1, NULL, NULL, TRUE, &err);
  lw_ilp_test_tm_lim_ms = 0;
  g_autoptr(Ir) ir = raw;
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  g_autoptr(Ir) con = pass_pipeline(pc, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(con, "%s", err ? err->message : "?");
  ck_assert_int_eq(ir->tasks->len, con->tasks->len);
  for (guint k = 0; k < ir->tasks->len; k++)
    ck_assert_msg(ir_task_at(ir, (int)k)->wg == ir_task_at(con, (int)k)->wg, "task %s: wg%d, constructive wg%d",
                  ir_task_at(ir, (int)k)->name, ir_task_at(ir, (int)k)->wg, ir_task_at(con, (int)k)->wg);
  int units = 0;
  int64_t oc = placement_objective(con, ILP_ACTIVE, &units);
  ck_assert(ir->ilp != NULL);
  ck_assert_int_eq(ir->ilp->status, IR_ILP_FALLBACK);
  ck_assert_int_eq(ir->ilp->objective, oc);
  ck_assert_int_eq(ir->ilp->constructive, oc);
  ck_assert(ir->warnings && ir->warnings->len == 1);
  g_autofree char *want = g_strdup_printf("small.yaml:10:15: warning: placement.solver: ilp: GLPK found no placement "
                                          "within placement.time_limit_s=10 (GLPK code 9); using the constructive "
                                          "placement (objective %" G_GINT64_FORMAT "): raise the limit for the solver's", oc);
  ck_assert_str_eq(g_ptr_array_index(ir->warnings, 0), want);
  g_autofree char *text = explain_text(&pi->hw, &pi->d1, pi->file, ir, NULL);
  ck_assert_msg(strstr(text, "  status no placement within the time limit: the constructive one is used (time_limit_s 10; "
                             "see the warning); objective"), "%s", text);
  ck_assert_msg(strstr(text, "by the same formula: the placement used\n"), "%s", text);
  ck_assert_msg(strstr(text, want), "%s", text); /* among the fallbacks */
  g_autofree char *js = explain_json(&pi->hw, &pi->d1, pi->file, ir, NULL, &err);
  ck_assert_msg(js && strstr(js, "\"constructive_time_limit\""), "%s", js ? js : err->message);
  g_autofree char *prog = be_emit(ir);
  SimResult r;
  g_autoptr(Program) p = simulate("ilp time limit", prog, 7, &r);
  assert_passes("ilp time limit", p, &r, 7);
  sim_result_clear(&r);
}
END_TEST

/* Resident history K/V with deferred preloads (issue 30, item 8): each
 * step's qkv tasks store the new K/V rows into the last slice's tensors,
 * which layer l's preload task holds, and nothing orders those stores after
 * the preload task's start: on its WG the task right before it is a K/V
 * write-back to HBM (kv_writeback), which completes no group, and the
 * store may land while that still reads its acc.  So the preload task's
 * remotely written tensors are live from that task's first op (the first
 * op the store may land at, ir_order.c), not from the preload task's:
 * their bytes are nobody else's meanwhile.  Live only from the preload
 * task's start, l1.kv.h0.s1.k took the write-back's bytes and tcc-sim
 * reported "race: ST writes into wg5's region 'l1_kv_h0_s1_k' that wg5's
 * ST ... read with no event from wg5 since" (the golden
 * d1_kv_deferred_race).  The program runs correctly. */
START_TEST(test_kv_deferred_live) {
  g_autoptr(Plan) p = plan_text("kv.yaml", "version: 1\nhardware: {sms: 4}\nd1:\n"
                                           "  problem: {d_model: 64, heads: 2, d_ff: 128, history: 64, steps: 2}\n"
                                           "  k_split: {w2: 2}\n  weights: resident\n  handoff: rf\n"
                                           "  power: {deferred_loads: true, preload_window: 4, fit: off}\n"
                                           "  attention: {slices: 2}\n  refinements: {ln_fold: true}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int *nops = g_new0(int, nwg), *start = g_new(int, ir->tasks->len), *prev = g_new(int, ir->tasks->len);
  g_autofree int *last = g_new(int, nwg);
  for (int w = 0; w < nwg; w++) last[w] = -1;
  for (guint k = 0; k < ir->tasks->len; k++) { /* each task's first op on its WG, and the task before it */
    const IrTask *t = ir_task_at(ir, (int)k);
    start[k] = nops[t->wg], prev[k] = last[t->wg];
    nops[t->wg] += (int)t->ops->len, last[t->wg] = (int)k;
  }
  int checked = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_ST || ir_tensor(ir, op->mem.t)->home != HOME_RF) continue;
      const IrTensor *x = ir_tensor(ir, op->mem.t);
      const IrTask *c = ir_task_at(ir, x->task);
      if (c->role.kind != ROLE_PRELOAD || c->wg == t->wg || prev[x->task] < 0) continue;
      const IrTask *b = ir_task_at(ir, prev[x->task]);
      if (b->signals >= 0) continue; /* the task before completes a group: the writer knows it done */
      ck_assert_msg(x->first_op <= start[prev[x->task]],
                    "%s (task %s, wg%d) is live from op %d, but %s's store may land from op %d (task %s, "
                    "which completes no group)", x->name, c->name, c->wg, x->first_op, t->name,
                    start[prev[x->task]], b->name);
      checked++;
    }
  }
  ck_assert_int_gt(checked, 0);
  compile_run(p, PROB_D1, "kv deferred", NULL);
}
END_TEST

/* Every panel's RED K shards (wo, w2) of each step on different WGs. */
static void assert_red_apart(const Ir *ir) {
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int shards = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if ((t->role.kind != ROLE_WO && t->role.kind != ROLE_W2) || t->role.kshard < 0) continue;
    g_autofree char *key = g_strdup_printf("%d/%d/%d/%d/wg%d", t->role.step, t->role.layer, t->role.kind,
                                           t->role.panel, t->wg);
    ck_assert_msg(g_hash_table_add(seen, g_steal_pointer(&key)), "task %s: another shard of its panel is on wg%d",
                  t->name, t->wg);
    shards++;
  }
  ck_assert_int_gt(shards, 0);
}

/* placement.solver: ilp with RED K shards (k_split on a machine with a
 * REDUCE unit): a panel's shards stay on different WGs (shard 0 reads the
 * sum right after its own contribution, so a second shard behind it on
 * its WG never contributes: tcc-sim's "waits for RED round ... (1 of 2
 * contributions)").  (a) On 3 WGs the constructive placement ties the
 * optimum but puts wo's panel 1 shards together: not kept (the issue's
 * case, masked while the constructive placement won ties); (b) with
 * active_weight the solver's own placement gathers a stage's units on few
 * WGs, at most a panel's worth each; (c) fewer WGs than shards: refused at
 * k_split.wo.  Both programs run correctly. */
#define RED_ILP(hw, knobs) "version: 1\nhardware: {sms: 4, " hw ", reduce_units: 1}\nd1:\n  problem: " D1_DIMS "\n" \
                           "  sms_used: 1\n  weights: resident\n  handoff: rf\n  " knobs "\n"
START_TEST(test_ilp_red_apart) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) tie = plan_text("tie.yaml", RED_ILP("wgs_per_sm: 3", "panels: {qkv: 32, wo: 32, w1: 32, w2: 64}\n"
                                                      "  k_split: {wo: 2, w2: 2}\n  placement: {solver: ilp}"));
  g_autoptr(Ir) a = pass_pipeline(tie, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(a, "%s", err ? err->message : "?");
  ck_assert(a->ilp && a->ilp->constructive_red_shared);
  ck_assert_int_eq(a->ilp->status, IR_ILP_OPTIMAL);
  ck_assert_int_eq(a->ilp->objective, a->ilp->constructive); /* a tie, not kept */
  assert_red_apart(a);
  compile_run(tie, PROB_D1, "red ilp tie", NULL);
  g_autoptr(Plan) own = plan_text("own.yaml", RED_ILP("wgs_per_sm: 4", "panels: {qkv: 32, wo: 16, w1: 32, w2: 16}\n"
                                                      "  k_split: {wo: 2, w2: 2}\n"
                                                      "  placement: {solver: ilp, active_weight: 20}"));
  g_autoptr(Ir) b = pass_pipeline(own, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert_msg(b, "%s", err ? err->message : "?");
  ck_assert(b->ilp && !b->ilp->constructive_red_shared);
  ck_assert_int_lt(b->ilp->objective, b->ilp->constructive);
  assert_red_apart(b);
  compile_run(own, PROB_D1, "red ilp own", NULL);
  g_autoptr(Plan) few = plan_text("few.yaml", RED_ILP("wgs_per_sm: 1", "k_split: {wo: 2}\n  placement: {solver: ilp}"));
  g_autoptr(Ir) c = pass_pipeline(few, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert(c == NULL);
  ck_assert_msg(g_str_has_prefix(err->message, "few.yaml:8:13: error: k_split.wo=2: the K shards of a panel "
                                               "all-reduce with RED, each from a WG of its own, but the resident "
                                               "weights have 1 WG"), "%s", err->message);
}
END_TEST

/* Whether an HBM load reads a weight or bias symbol. */
static gboolean weight_sym(const char *sym) {
  static const char *const w[] = {"wqkv", "wo.", "w1.", "w2.", "bqkv", "bo.", "b1.", "b2."};
  for (unsigned i = 0; i < G_N_ELEMENTS(w); i++)
    if (g_str_has_prefix(sym, w[i])) return TRUE;
  return FALSE;
}

/* Bytes of weights and biases the program's HBM loads read. */
static int64_t weight_bytes(const Ir *ir) {
  int64_t n = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_LD && weight_sym(ir_tensor(ir, op->mem.t)->sym))
        n += 4 * (int64_t)op->mem.rows * op->mem.cols;
    }
  }
  return n;
}

/* p1 weights: resident (resident_owners.c): every weight and bias byte is read
 * from HBM exactly once per layer (streamed weights read them once per row
 * tile), every projection task is pinned, and the program is correct and
 * needs fewer HBM lines (on 2 row tiles it is not faster: the owners load
 * their panels before the first MMA; docs/techniques.md measures the
 * default P1).  Fails when the owners reload their panel per tile or are
 * not pinned. */
#define P1_RES "weights: resident\n  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  k_split: {w2: 2}"
START_TEST(test_p1_resident_weights) {
  g_autoptr(Plan) st = small_plan(PROB_P1, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}");
  g_autoptr(Plan) re = small_plan(PROB_P1, P1_RES);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) a = pass_pipeline(st, PROB_P1, NULL, NULL, TRUE, &err);
  g_autoptr(Ir) b = pass_pipeline(re, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(a && b, "%s", err ? err->message : "?");
  const Problem *d = &b->prob;
  int64_t once = 4 * (int64_t)d->layers *
                 (4 * d->d_model * d->d_model + 2 * d->d_model * d->d_ff + 3 * d->d_model + d->d_model + d->d_ff + d->d_model);
  ck_assert_int_eq(weight_bytes(b), once);
  ck_assert_int_gt(weight_bytes(a), once);
  for (guint k = 0; k < b->tasks->len; k++) {
    const IrTask *t = ir_task_at(b, (int)k);
    if (t->role.proj >= 0) ck_assert_msg(t->pin >= 0 && t->wg == t->pin, "task %s not pinned", t->name);
  }
  Run x = compile_run(st, PROB_P1, "streamed", NULL), y = compile_run(re, PROB_P1, "resident", NULL);
  ck_assert_msg(y.hbm_lines < x.hbm_lines, "resident %" G_GINT64_FORMAT " lines, streamed %" G_GINT64_FORMAT,
                y.hbm_lines, x.hbm_lines);
}
END_TEST

/* multicast.*: one LD.mc per A chunk feeds every owner of the K shard, so
 * the program reads fewer HBM lines than when each owner loads its own
 * chunks, and stays correct. */
START_TEST(test_p1_multicast) {
  g_autoptr(Plan) own = small_plan(PROB_P1, P1_RES);
  g_autoptr(Plan) mc = small_plan(PROB_P1, P1_RES "\n  multicast: {qkv: true, wo: true, w1: true, w2: true}");
  g_autofree char *text = NULL;
  Run x = compile_run(own, PROB_P1, "own loads", NULL), y = compile_run(mc, PROB_P1, "multicast", &text);
  ck_assert_ptr_nonnull(strstr(text, "LD.mc"));
  ck_assert_msg(y.hbm_lines < x.hbm_lines, "multicast %" G_GINT64_FORMAT " lines, own loads %" G_GINT64_FORMAT,
                y.hbm_lines, x.hbm_lines);
}
END_TEST

/* attention.query_tiles: 2 loads each K/V block once for two query tiles,
 * so attention reads fewer HBM lines; the result stays correct. */
START_TEST(test_p1_query_tiles) {
  g_autoptr(Plan) one = small_plan(PROB_P1, "sms_used: 4");
  g_autoptr(Plan) two = small_plan(PROB_P1, "sms_used: 4\n  attention: {query_tiles: 2}");
  Run x = compile_run(one, PROB_P1, "query_tiles 1", NULL), y = compile_run(two, PROB_P1, "query_tiles 2", NULL);
  ck_assert_msg(y.hbm_lines < x.hbm_lines, "query_tiles 2: %" G_GINT64_FORMAT " lines, 1: %" G_GINT64_FORMAT,
                y.hbm_lines, x.hbm_lines);
}
END_TEST

/* attention.waves: 2 makes the second half of the attention tasks wait,
 * before any load, until every first-half task has signalled that it is
 * through its first key block; waves 1 has no such event. */
START_TEST(test_p1_attention_waves) {
  for (int waves = 1; waves <= 2; waves++) {
    g_autofree char *knobs = g_strdup_printf("sms_used: 4\n  attention: {query_tiles: 2, waves: %d}", waves);
    if (waves == 1) {
      g_free(knobs);
      knobs = g_strdup("sms_used: 4\n  attention: {query_tiles: 2}");
    }
    g_autoptr(Plan) plan = small_plan(PROB_P1, knobs);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int tasks = 0, waiting = 0, signalling = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.kind != ROLE_ATT) continue;
      tasks++;
      gboolean loaded = FALSE;
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        const char *ev = op->event >= 0 ? g_ptr_array_index(ir->events, op->event) : "";
        if (op->kind == IR_LD) loaded = TRUE;
        if (strcmp(ev, "l0_att_go") != 0) continue;
        if (op->kind == IR_WAIT) {
          ck_assert_msg(!loaded, "task %s waits for its wave after a load", t->name);
          waiting++;
        }
        if (op->kind == IR_SIG) signalling++;
      }
    }
    ck_assert_int_eq(waiting, waves == 1 ? 0 : tasks / 2);
    ck_assert_int_eq(signalling, waves == 1 ? 0 : tasks);
  }
}
END_TEST

#define P1_MC P1_RES "\n  multicast: {qkv: true, wo: true, w1: true, w2: true}"

/* The lines of `text` that contain both `a` and `b`, and how many of them
 * are strided. */
static void lines_with(const char *text, const char *a, const char *b, int *n, int *strided) {
  *n = *strided = 0;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (!strstr(*l, a) || !strstr(*l, b)) continue;
    (*n)++;
    *strided += strstr(*l, ", stride") != NULL;
  }
}

/* The LD.mc lines of `text` that load an A chunk of projection `proj`
 * ("_wo_"), and how many of them are strided (row-major rows). */
static void mc_loads(const char *text, const char *proj, int *n, int *strided) {
  lines_with(text, "LD.mc", proj, n, strided);
}

/* layout: packed: wo's and w2's A (att, g) are written in 32 x 32 blocks,
 * so each multicast A chunk is one contiguous LD.mc (no stride) where the
 * row-major layout strides over 32 rows; both are correct. */
START_TEST(test_p1_packed) {
  g_autoptr(Plan) row = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) packed = small_plan(PROB_P1, P1_MC "\n  layout: packed");
  g_autofree char *a = NULL, *b = NULL;
  compile_run(row, PROB_P1, "row", &a);
  compile_run(packed, PROB_P1, "packed", &b);
  const char *proj[] = {"_wo_", "_w2_"};
  for (int k = 0; k < 2; k++) {
    int n, strided;
    mc_loads(a, proj[k], &n, &strided);
    ck_assert_msg(n > 0 && strided == n, "row %s: %d of %d LD.mc strided", proj[k], strided, n);
    mc_loads(b, proj[k], &n, &strided);
    ck_assert_msg(n > 0 && strided == 0, "packed %s: %d of %d LD.mc strided", proj[k], strided, n);
  }
  /* h (LayerNorm's output, qkv's A) stays row-major */
  int n, strided;
  mc_loads(b, "_qkv_", &n, &strided);
  ck_assert_msg(n > 0 && strided == n, "packed qkv: %d of %d LD.mc strided", strided, n);
}
END_TEST

/* A small P1 plan of two layers with P1_MC and `knobs` (YAML lines of its
 * section), compiled and run correct on seed 7 (compile_run); returns its
 * assembly.  Every plan is named p1.yaml, so that two programs differ only
 * in their code. */
static char *two_layers(const char *knobs, const char *what) {
  g_autofree char *text = g_strdup_printf(
      "version: 1\np1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 2, seqs: 1, rows: 64}\n"
      "  " P1_MC "\n  %s\n", knobs);
  g_autoptr(Plan) plan = plan_text("p1.yaml", text);
  char *out = NULL;
  compile_run(plan, PROB_P1, what, &out);
  return out;
}

/* layout: packed_x: x1 (Wo's output) and x (W2's, between the layers) are
 * stored in 32 x 32 blocks too, so Wo's stores into x1 and the residual
 * blocks W2 (x1) and layer 1's Wo (x) load are one segment each, where
 * layout: packed strides over 32 rows; the last W2 still writes `out`, the
 * ABI's row-major matrix.  Both layouts are correct on two layers. */
START_TEST(test_p1_packed_x) {
  g_autofree char *a = two_layers("layout: packed", "packed"), *b = two_layers("layout: packed_x", "packed_x");
  struct { const char *what, *x, *y; gboolean packed_x_strided; } want[] = {
      {"Wo's stores into x1", "ST        hbm[scratch", "l0.wo.", FALSE},
      {"the residual loads (x1, x)", "_res, hbm[scratch", "LD ", FALSE},
      {"the last W2's stores into out", "ST        hbm[out", "l1.w2.", TRUE},
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(want); k++) {
    int n, strided;
    lines_with(a, want[k].x, want[k].y, &n, &strided);
    ck_assert_msg(n > 0 && strided == n, "packed, %s: %d of %d strided", want[k].what, strided, n);
    lines_with(b, want[k].x, want[k].y, &n, &strided);
    ck_assert_msg(n > 0 && strided == (want[k].packed_x_strided ? n : 0), "packed_x, %s: %d of %d strided",
                  want[k].what, strided, n);
  }
  /* layer 1's Wo loads a residual block of x */
  int n, strided;
  lines_with(b, "l1_wo_", "_res, hbm[scratch", &n, &strided);
  ck_assert_msg(n > 0 && strided == 0, "packed_x, layer 1's Wo residual: %d of %d strided", strided, n);
}
END_TEST

/* tile_sync (tile_sync.c): W1's and W2's issuers wait per row tile for
 * the tile events of LN2 and W1, which those stages signal once per tile
 * (each LN2 task after its rows, each W1 finishing owner after its store),
 * instead of for the whole previous stage; without the knob there are no
 * tile events and the issuers wait for the stage's group.  Both programs
 * are correct (numerics on seed 7, no race). */
START_TEST(test_p1_tile_sync) {
  g_autoptr(Plan) stage = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) tile = small_plan(PROB_P1, P1_MC "\n  tile_sync: {w1: true, w2: true}");
  g_autofree char *a = NULL, *b = NULL;
  compile_run(stage, PROB_P1, "stage barrier", &a);
  compile_run(tile, PROB_P1, "tile sync", &b);
  ck_assert_ptr_null(strstr(a, "_t0,"));
  /* W2's issuers: one WAIT for W1's tile t before their chunks of tile t */
  g_autofree char *w2 = task_lines(b, "l0.w2.k0.mc0", "    END");
  g_autofree char *w2_stage = task_lines(a, "l0.w2.k0.mc0", "    END");
  ck_assert_msg(strstr(w2, "WAIT      ev.l0_w1_t0, 4"), "%s", w2); /* 4 W1 panels */
  ck_assert_ptr_nonnull(strstr(b, "WAIT      ev.l0_w1_t1, 4")); /* tile 1's chunks: another issuer */
  ck_assert_ptr_null(strstr(w2_stage, "ev.l0_w1_t"));
  ck_assert_ptr_nonnull(strstr(w2_stage, "WAIT      ev.w1_l0,")); /* the stage's group */
  ck_assert_ptr_null(strstr(w2, "WAIT      ev.w1_l0,"));
  /* W1's first issuer waits for LN2's tiles; the W1 owners and LN2 tasks signal */
  g_autofree char *w1 = task_lines(b, "l0.w1.k0.mc0", "    END");
  ck_assert_ptr_nonnull(strstr(w1, "WAIT      ev.l0_ln2_t0, 16")); /* LN2 tasks of 2 rows */
  g_autofree char *own = task_lines(b, "l0.w1.k0.p0", "    END");
  ck_assert_ptr_nonnull(strstr(own, "SIG       ev.l0_w1_t1, 1"));
  g_autofree char *ln = task_lines(b, "l0.ln2.r0", "    END");
  ck_assert_ptr_nonnull(strstr(ln, "SIG       ev.l0_ln2_t0, 1"));
}
END_TEST

/* refinements.ln_fold on P1 (ln_fold_centred.c): the LayerNorm tasks only
 * compute rstd (no gain, no h stored: fewer HBM lines), the qkv and W1
 * owners fold g and b into their panel (one MMA of [b; g] by W, one
 * VEC.fma) and finish each tile with acc * rstd + (bW + c) after that
 * tile's statistics; qkv's issuers read x_in at once (no wait for LN1).
 * With tile_sync.w1, W1's issuers wait for Wo's tiles (its owners signal
 * them).  Every program is correct. */
START_TEST(test_p1_ln_fold) {
  g_autoptr(Plan) ln = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) fold = small_plan(PROB_P1, P1_MC "\n  refinements: {ln_fold: true}");
  g_autoptr(Plan) sync = small_plan(PROB_P1, P1_MC "\n  refinements: {ln_fold: true}\n  tile_sync: {qkv: true, w1: true}");
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  Run x = compile_run(ln, PROB_P1, "LayerNorm stages", &a);
  Run y = compile_run(fold, PROB_P1, "LayerNorm folded", &b);
  compile_run(sync, PROB_P1, "folded, W1 synced on Wo's tiles", &c);
  /* h and h2 (N x d each) no longer stored; rstd (N floats per LayerNorm)
   * stored instead and loaded by every owner, g and b by every owner */
  const Problem d = fold->p1.dims;
  int64_t h_lines = 2 * (int64_t)d.layers * d.seqs * d.rows * d.d_model * 4 / 64;
  ck_assert_msg(x.hbm_lines - y.hbm_lines > h_lines / 2, "%" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT, x.hbm_lines,
                y.hbm_lines);
  g_autofree char *ln_a = task_lines(a, "l0.ln1.r0", "    END"), *ln_b = task_lines(b, "l0.ln1.r0", "    END");
  ck_assert_ptr_nonnull(strstr(ln_a, "hbm[ln1_g.l0]"));
  ck_assert_ptr_null(strstr(ln_b, "ln1_g"));
  ck_assert_ptr_nonnull(strstr(ln_b, "SIG       ev.l0_ln1_t0, 1"));
  ck_assert_ptr_nonnull(strstr(ln_b, "SFU.rsqrt"));
  g_autofree char *own = task_lines(b, "l0.qkv.k0.p0", "    END"), *own_a = task_lines(a, "l0.qkv.k0.p0", "    END");
  ck_assert_ptr_nonnull(strstr(own, "LD        l0_qkv_k0_p0_lng, hbm[ln1_g.l0]"));
  ck_assert_ptr_nonnull(strstr(own, "MMA.z     l0_qkv_k0_p0_lnbgw"));
  ck_assert_ptr_nonnull(strstr(own, "VEC.fma   l0_qkv_k0_p0_w, l0_qkv_k0_p0_w, l0_qkv_k0_p0_lng"));
  ck_assert_ptr_nonnull(strstr(own, "WAIT      ev.l0_ln1_t1, 16")); /* 16 LN tasks of 2 rows a tile */
  ck_assert_ptr_nonnull(strstr(own, "VEC.fma   l0_qkv_k0_p0_acc1, l0_qkv_k0_p0_acc1, l0_qkv_k0_p0_rstd"));
  ck_assert_ptr_null(strstr(own_a, "VEC.fma"));
  g_autofree char *iss_a = task_lines(a, "l0.qkv.k0.mc0", "    END"), *iss_b = task_lines(b, "l0.qkv.k0.mc0", "    END");
  ck_assert_ptr_nonnull(strstr(iss_a, "hbm[scratch"));
  ck_assert_ptr_null(strstr(iss_b, "hbm[scratch"));
  ck_assert_ptr_nonnull(strstr(iss_b, "hbm[x_in"));
  /* with tile_sync.w1 W1 waits per Wo tile (its 2 finishing owners), not for LN2 */
  g_autofree char *w1_b = task_lines(b, "l0.w1.k0.mc0", "    END"), *w1_c = task_lines(c, "l0.w1.k0.mc0", "    END");
  ck_assert_ptr_null(strstr(w1_b, "ev.l0_wo_t"));
  ck_assert_ptr_nonnull(strstr(w1_c, "WAIT      ev.l0_wo_t0, 2")); /* d_model 64: 2 Wo panels */
  g_autofree char *wo_c = task_lines(c, "l0.wo.k0.p1", "    END");
  ck_assert_ptr_nonnull(strstr(wo_c, "SIG       ev.l0_wo_t1, 1"));
}
END_TEST

/* refinements.ln_stats: producer (ln_stats.c) on 2 layers: the
 * statistics tasks of LN2 and of layer 1's LN1 load no row (no VEC.rsum
 * over d_model columns: they merge the 2 x 2 partials of their rows, one
 * LD), layer 0's LN1 still reduces x_in's rows, every finishing Wo owner
 * and layer 0's W2 owners store their blocks' [sums; M2s] and layer 1's W2
 * owners (out) none; fewer HBM lines; correct with and without tile_sync
 * {qkv, w1} (the tile events wait for the partials).  producer_ln1: only
 * W2's partials, for layer 1's LN1. */
static int ops_of(const IrTask *t, IrOpKind k, int cols) {
  int n = 0;
  for (guint i = 0; i < t->ops->len; i++) {
    const IrOp *op = &g_array_index(t->ops, IrOp, i);
    n += op->kind == k && (cols < 0 || op->a.cols == cols);
  }
  return n;
}

START_TEST(test_p1_ln_stats) {
#define P1_LNS_DIMS "{d_model: 64, heads: 2, d_ff: 128, layers: 2, seqs: 1, rows: 64}"
  const char *head = "version: 1\np1:\n  problem: " P1_LNS_DIMS "\n  " P1_MC "\n  refinements: {ln_fold: true";
  g_autofree char *rows_t = g_strdup_printf("%s}\n", head), *prod_t = g_strdup_printf("%s, ln_stats: producer}\n", head);
  g_autofree char *sync_t = g_strdup_printf("%s, ln_stats: producer}\n  tile_sync: {qkv: true, w1: true}\n", head);
  g_autoptr(Plan) rows = plan_text("rows.yaml", rows_t);
  g_autoptr(Plan) prod = plan_text("producer.yaml", prod_t);
  g_autoptr(Plan) sync = plan_text("sync.yaml", sync_t);
  Run a = compile_run(rows, PROB_P1, "statistics from the rows", NULL);
  Run b = compile_run(prod, PROB_P1, "statistics from the producers", NULL);
  compile_run(sync, PROB_P1, "producers' statistics, tile_sync {qkv, w1}", NULL);
  /* 3 LayerNorms' rows (64 x 64 floats, 256 lines each) no longer loaded */
  ck_assert_msg(a.hbm_lines - b.hbm_lines > 3 * 256 / 2, "%" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT, a.hbm_lines,
                b.hbm_lines);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(prod, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int merged = 0, local = 0, emits[2][2] = {{0}};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    IrRoleKind kind = t->role.kind;
    if (kind == ROLE_LN2 || (kind == ROLE_LN1 && t->role.layer == 1)) {
      ck_assert_msg(ops_of(t, IR_VRSUM, 64) == 0, "%s reduces its rows", t->name);
      ck_assert_int_eq(ops_of(t, IR_LD, -1), 1);
      merged++;
    }
    if (kind == ROLE_LN1 && t->role.layer == 0) local += ops_of(t, IR_VRSUM, 64);
    if ((kind == ROLE_WO || kind == ROLE_W2) && ops_of(t, IR_VRSUM, 32) > 0) /* 32-column panels */
      emits[kind == ROLE_W2][t->role.layer] += ops_of(t, IR_VRSUM, 32);
  }
  ck_assert_int_gt(merged, 0);
  ck_assert_int_gt(local, 0);
  /* a block's sum and its M2 in 2 halves of 16 rows: 3 VEC.rsum; 2 tiles x 2 panels */
  ck_assert_int_eq(emits[0][0], 3 * 2 * 2);
  ck_assert_int_eq(emits[0][1], 3 * 2 * 2);
  ck_assert_int_eq(emits[1][0], 3 * 2 * 2);
  ck_assert_int_eq(emits[1][1], 0);
  /* producer_ln1: W2's partials for layer 1's LN1 only; Wo stores none, LN2 reads x1's rows */
  g_autofree char *ln1_t = g_strdup_printf("%s, ln_stats: producer_ln1}\n", head);
  g_autoptr(Plan) ln1 = plan_text("ln1.yaml", ln1_t);
  Run c = compile_run(ln1, PROB_P1, "LN1's statistics from W2", NULL);
  ck_assert_msg(c.hbm_lines < a.hbm_lines && c.hbm_lines > b.hbm_lines, "%" G_GINT64_FORMAT, c.hbm_lines);
  g_autoptr(Ir) ir1 = pass_pipeline(ln1, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir1, "%s", err ? err->message : "?");
  int wo_emits = 0, w2_emits = 0, ln2_rows = 0, ln1_merged = 0;
  for (guint k = 0; k < ir1->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir1, (int)k);
    if (t->role.kind == ROLE_WO) wo_emits += ops_of(t, IR_VRSUM, 32);
    if (t->role.kind == ROLE_W2) w2_emits += ops_of(t, IR_VRSUM, 32);
    if (t->role.kind == ROLE_LN2) ln2_rows += ops_of(t, IR_VRSUM, 64);
    if (t->role.kind == ROLE_LN1 && t->role.layer == 1) ln1_merged += ops_of(t, IR_VRSUM, 64) == 0;
  }
  ck_assert_int_eq(wo_emits, 0);
  ck_assert_int_eq(w2_emits, 3 * 2 * 2);
  ck_assert_int_gt(ln2_rows, 0);
  ck_assert_int_gt(ln1_merged, 0);
#undef P1_LNS_DIMS
}
END_TEST

/* attention.tile_sync (tile_sync.c) and tile_sync.wo (tile_sync.c)
 * on two sequences of 4 row tiles (query_tiles 2: 2 tasks per sequence and
 * head, K/V shared).  Without the knobs every attention task waits for the
 * qkv stage's group and wo's issuers for attention's.  With
 * attention.tile_sync the qkv owners signal their tiles, the attention
 * tasks wait for the tiles they read (6 qkv panels a tile) instead of the
 * stage, a task of sequence 1 for global tiles 4.. only, and the tasks of
 * sequence 0 sit on WGs without a qkv task (those of sequence 1 on qkv's
 * WGs); the stagger comes after a task's last q tile's wait.  With
 * tile_sync.wo each attention task signals the row tiles it stored and wo's
 * issuers wait per tile for the 2 heads' tasks.  Every program is correct
 * on seed 7. */
#define P1_ATT_DIMS "{d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 2, rows: 128}"
#define P1_ATT P1_MC "\n  attention: {query_tiles: 2, kv: shared, interleave: 2, stagger: 40"
static Plan *att_plan(const char *att, const char *more) {
  g_autofree char *text = g_strdup_printf("version: 1\np1:\n  problem: " P1_ATT_DIMS "\n  " P1_ATT "%s}\n%s", att,
                                          more);
  return plan_text("att.yaml", text);
}

/* Is there a `.wg` line of text naming both task a and a task starting b? */
static gboolean wg_with(const char *text, const char *a, const char *b) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autofree char *ta = g_strdup_printf(" %s ", a);
  for (char **l = lines; *l; l++) {
    if (!g_str_has_prefix(*l, ".wg ")) continue;
    g_autofree char *line = g_strdup_printf("%s ", *l);
    if (strstr(line, ta) && strstr(line, b)) return TRUE;
  }
  return FALSE;
}

START_TEST(test_p1_att_tile_sync) {
  g_autoptr(Plan) stage = att_plan("", "");
  g_autoptr(Plan) sync = att_plan(", tile_sync: true", "");
  g_autoptr(Plan) wo = att_plan("", "  tile_sync: {wo: true}\n");
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  compile_run(stage, PROB_P1, "attention after qkv", &a);
  compile_run(sync, PROB_P1, "attention per qkv tile", &b);
  compile_run(wo, PROB_P1, "wo per attention tile", &c);
  g_autofree char *s0a = task_lines(a, "l0.att.s0.h0.g0", "    END"), *s0b = task_lines(b, "l0.att.s0.h0.g0", "    END");
  g_autofree char *s1b = task_lines(b, "l0.att.s1.h1.g1", "    END");
  ck_assert_ptr_nonnull(strstr(s0a, "WAIT      ev.qkv_l0,"));
  ck_assert_ptr_null(strstr(s0a, "ev.l0_qkv_t"));
  ck_assert_ptr_null(strstr(s0b, "ev.qkv_l0"));
  ck_assert_msg(strstr(s0b, "WAIT      ev.l0_qkv_t0, 6"), "%s", s0b); /* 6 qkv panels of 32 */
  ck_assert_ptr_nonnull(strstr(s0b, "WAIT      ev.l0_qkv_t3, 6"));
  ck_assert_ptr_null(strstr(s1b, "ev.l0_qkv_t3,"));                   /* sequence 1: tiles 4..7 */
  ck_assert_ptr_nonnull(strstr(s1b, "WAIT      ev.l0_qkv_t6, 6"));  /* its group: tiles 1 and 2 */
  g_autofree char *own = task_lines(b, "l0.qkv.k0.p5", "    END"), *own_a = task_lines(a, "l0.qkv.k0.p5", "    END");
  ck_assert_ptr_nonnull(strstr(own, "SIG       ev.l0_qkv_t7, 1"));
  ck_assert_ptr_null(strstr(own_a, "ev.l0_qkv_t"));
  /* the stagger (task 1 of its sequence: 40) after the wait for its last q tile */
  g_autofree char *g1 = task_lines(b, "l0.att.s0.h0.g1", "    END");
  const char *w = strstr(g1, "WAIT      ev.l0_qkv_t2, 6"), *st = strstr(g1, "WAITT     40 ");
  ck_assert_msg(w && st && w < st, "%s", g1);
  /* placement: sequence 0 off qkv's WGs, sequence 1 on them */
  ck_assert(!wg_with(a, "l0.att.s1.h0.g0", "l0.qkv.")); /* without the knob: keep_clear's WGs */
  const char *s0[] = {"l0.att.s0.h0.g0", "l0.att.s0.h0.g1", "l0.att.s0.h1.g0", "l0.att.s0.h1.g1"};
  const char *s1[] = {"l0.att.s1.h0.g0", "l0.att.s1.h0.g1", "l0.att.s1.h1.g0", "l0.att.s1.h1.g1"};
  for (int k = 0; k < 4; k++) {
    ck_assert_msg(!wg_with(b, s0[k], "l0.qkv."), "%s shares a WG with qkv", s0[k]);
    ck_assert_msg(wg_with(b, s1[k], "l0.qkv."), "%s not on a qkv WG", s1[k]);
  }
  /* tile_sync.wo: attention signals its stored tiles, wo's issuers wait per tile */
  g_autofree char *wo_a = task_lines(a, "l0.wo.k0.mc0", "    END"), *wo_c = task_lines(c, "l0.wo.k0.mc0", "    END");
  g_autofree char *att_c = task_lines(c, "l0.att.s1.h0.g0", "    END");
  ck_assert_ptr_nonnull(strstr(wo_a, "WAIT      ev.att_l0,"));
  ck_assert_ptr_null(strstr(wo_c, "ev.att_l0"));
  ck_assert_msg(strstr(c, "WAIT      ev.l0_att_t0, 2"), "no per-tile wait"); /* 2 heads */
  ck_assert_ptr_nonnull(strstr(c, "WAIT      ev.l0_att_t7, 2"));
  ck_assert_ptr_nonnull(strstr(att_c, "SIG       ev.l0_att_t4, 1")); /* group 0: tiles 0 and 3 of sequence 1 */
  ck_assert_ptr_nonnull(strstr(att_c, "SIG       ev.l0_att_t7, 1"));
  ck_assert_ptr_null(strstr(a, "ev.l0_att_t"));
}
END_TEST

/* weight_spacing.PROJ and weight_stagger.PROJ (spacing.c): WAITTs
 * before resident owners' weight pieces, nothing else.  weight_spacing.w1:
 * each W1 owner (paced by wo's chunks) waits 50 cycles before each of its
 * pieces but the first (4 owners x 1); weight_stagger.qkv: qkv owner p (the
 * first stage: 6 owners) waits 7 * p cycles before its first piece (owner 0
 * nothing).  Each WAITT sits right before a weight LD of its own task; the
 * program stays correct.  The RF declarations are not compared: inserted
 * ops may move rf_alloc's partitions. */
START_TEST(test_p1_weight_pacing) {
  g_autoptr(Plan) base = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) paced = small_plan(PROB_P1, P1_MC "\n  weight_spacing: {w1: 50}\n  weight_stagger: {qkv: 7}");
  g_autofree char *a = compile(base, PROB_P1, NULL), *b = NULL;
  compile_run(paced, PROB_P1, "weight pacing", &b);
  static const char *const sp[] = {"    WAITT     50 ", "; p1.weight_spacing.w1:", NULL};
  static const char *const sg[] = {"    WAITT ", "; p1.weight_stagger.qkv:", NULL};
  int n_sp = 0, n_sg = 0;
  g_autofree char *b1 = drop_lines(b, sp, &n_sp);
  g_autofree char *b2 = drop_lines(b1, sg, &n_sg);
  ck_assert_int_eq(n_sp, 4);
  ck_assert_int_eq(n_sg, 5);
  /* the instructions; RF partitions may move (rf_alloc's intervals are op indices) */
  static const char *const rf[] = {".rf ", NULL};
  int n_rf = 0;
  g_autofree char *a_ops = drop_lines(a, rf, &n_rf), *b_ops = drop_lines(b2, rf, &n_rf);
  g_autofree char *d = first_diff(a_ops, b_ops);
  ck_assert_msg(strcmp(a_ops, b_ops) == 0, "more than the WAITTs changed, %s", d);
  /* each before its task's weight piece: W1 owner p's second, qkv owner p's first */
  for (int p = 0; p < 6; p++) {
    char task[32], want[96];
    if (p < 4) {
      g_snprintf(task, sizeof task, "l0.w1.k0.p%d", p);
      g_autofree char *w1 = task_lines(b, task, "    END");
      g_snprintf(want, sizeof want, "WAITT     50 ");
      const char *at = strstr(w1, want);
      ck_assert_msg(at, "%s: no spacing\n%s", task, w1);
      g_snprintf(want, sizeof want, "\n    LD        l0_w1_k0_p%d_w[32:64, :]", p);
      ck_assert_msg(g_str_has_prefix(strchr(at, '\n'), want), "%s: spacing not before piece 1", task);
    }
    g_snprintf(task, sizeof task, "l0.qkv.k0.p%d", p);
    g_autofree char *qkv = task_lines(b, task, "    END");
    g_snprintf(want, sizeof want, "    WAITT     %d ", 7 * p);
    const char *at = strstr(qkv, want);
    if (p == 0) {
      ck_assert_msg(!strstr(qkv, "weight_stagger"), "owner 0 staggered:\n%s", qkv);
      continue;
    }
    ck_assert_msg(at == qkv, "%s: the stagger is not its first instruction\n%s", task, qkv);
    g_snprintf(want, sizeof want, "\n    LD        l0_qkv_k0_p%d_w[0:32, :]", p);
    ck_assert_msg(g_str_has_prefix(strchr(at, '\n'), want), "%s: stagger not before piece 0", task);
  }
}
END_TEST

/* shard_group.w2 (shard_group.c) and issue_spacing.w2 (spacing.c) on
 * 2 SMs, where W2's 4 owners (2 K shards x 2 panels) take the interleaved
 * order's WGs sm0, sm1, sm0, sm1: every SM holds both shards.  Grouped, the
 * same 4 WGs go by SM, so each SM holds the owners of one shard; the
 * spacing puts a WAITT 40 in W2's issuers between one LD.mc and the WAIT
 * for the next chunk's buffer (or, in the first round, the next LD.mc), and
 * nowhere else.  Both run correctly. */
#define P1_SG P1_MC "\n  sms_used: 2"
static void w2_owner_wgs(const Plan *plan, int wg[2][2]) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int n = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    int s, p;
    if (sscanf(t->name, "l0.w2.k%d.p%d", &s, &p) == 2 && !strstr(t->name, "mc")) {
      ck_assert(s >= 0 && s < 2 && p >= 0 && p < 2);
      wg[s][p] = t->wg, n++;
    }
  }
  ck_assert_int_eq(n, 4);
}
START_TEST(test_p1_shard_group) {
  g_autoptr(Plan) base = small_plan(PROB_P1, P1_SG);
  g_autoptr(Plan) grp = small_plan(PROB_P1, P1_SG "\n  shard_group: {w2: true}\n  issue_spacing: {w2: 40}");
  int a[2][2], b[2][2], W = 4; /* the default machine's WGs per SM */
  w2_owner_wgs(base, a);
  w2_owner_wgs(grp, b);
  /* the same WGs: sorted, they are equal */
  int sa[4] = {a[0][0], a[0][1], a[1][0], a[1][1]}, sb[4] = {b[0][0], b[0][1], b[1][0], b[1][1]};
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && sa[j - 1] > sa[j]; j--) { int x = sa[j]; sa[j] = sa[j - 1], sa[j - 1] = x; }
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && sb[j - 1] > sb[j]; j--) { int x = sb[j]; sb[j] = sb[j - 1], sb[j - 1] = x; }
  for (int i = 0; i < 4; i++) ck_assert_int_eq(sa[i], sb[i]);
  /* before: a shard's panels on different SMs; after: on one SM, the two shards on different ones */
  for (int s = 0; s < 2; s++) ck_assert_int_ne(a[s][0] / W, a[s][1] / W);
  for (int s = 0; s < 2; s++) ck_assert_int_eq(b[s][0] / W, b[s][1] / W);
  ck_assert_int_ne(b[0][0] / W, b[1][0] / W);
  /* the spacing: only WAITT 40s, each in a W2 issuer, each before a WAIT */
  g_autofree char *x = NULL, *y = NULL;
  compile_run(base, PROB_P1, "sms_used 2", &x);
  compile_run(grp, PROB_P1, "shard_group + issue_spacing", &y);
  ck_assert(!strstr(x, "issue_spacing"));
  g_auto(GStrv) lines = g_strsplit(y, "\n", -1);
  int n = 0;
  for (int i = 0; lines[i]; i++) {
    if (!strstr(lines[i], "; p1.issue_spacing.w2:")) continue;
    n++;
    ck_assert_msg(g_str_has_prefix(lines[i], "    WAITT     40 "), "%s", lines[i]);
    ck_assert_msg(strstr(lines[i], " l0.w2.k") && strstr(lines[i], ".mc"), "not an issuer: %s", lines[i]);
    ck_assert_msg(lines[i + 1] && (g_str_has_prefix(lines[i + 1], "    WAIT      ev.l0_w2_k") ||
                                   g_str_has_prefix(lines[i + 1], "    LD.mc     l0_w2_k")),
                  "%s\n%s", lines[i], lines[i + 1]);
  }
  ck_assert_msg(n > 0, "no issue_spacing WAITT");
}
END_TEST

/* ln_fold_stagger.PROJ, ln_fold_slots.PROJ, ln_fold_first_gap (ln_fold_centred.c):
 * the folds' pacing.  By default qkv owner p (6 owners) and W1 owner p (4)
 * wait (p mod 4) x 100 cycles before their fold and the first stage's (layer
 * 0's qkv) weight pieces are 400 cycles apart; with ln_fold_stagger {qkv: 30,
 * w1: 70}, ln_fold_slots {qkv: 2, w1: 3} and ln_fold_first_gap 150 they wait
 * (p mod 2) x 30, (p mod 3) x 70 and 150.  Each WAITT cites its knob; nothing
 * else changes, and both programs are correct. */
START_TEST(test_p1_ln_fold_pacing) {
  g_autoptr(Plan) def = small_plan(PROB_P1, P1_MC "\n  refinements: {ln_fold: true}");
  g_autoptr(Plan) paced = small_plan(PROB_P1, P1_MC "\n  refinements: {ln_fold: true}\n"
                                                  "  ln_fold_stagger: {qkv: 30, w1: 70}\n"
                                                  "  ln_fold_slots: {qkv: 2, w1: 3}\n  ln_fold_first_gap: 150");
  g_autofree char *a = NULL, *b = NULL;
  compile_run(def, PROB_P1, "folds paced by default", &a);
  compile_run(paced, PROB_P1, "folds paced by the knobs", &b);
  const char *text[2] = {a, b};
  const int gap[2] = {400, 150}, qkv_slots[2] = {4, 2}, qkv_st[2] = {100, 30}, w1_slots[2] = {4, 3}, w1_st[2] = {100, 70};
  for (int v = 0; v < 2; v++) {
    for (int p = 0; p < 6; p++) { /* the small problem's one layer */
      char task[32], want[96];
      g_snprintf(task, sizeof task, "l0.qkv.k0.p%d", p);
      g_autofree char *own = task_lines(text[v], task, "    END");
      int d = (p % qkv_slots[v]) * qkv_st[v];
      g_snprintf(want, sizeof want, "    WAITT     %d ", d);
      const char *at = strstr(own, want);
      ck_assert_msg((d > 0) == (at != NULL && strstr(at, "; p1.ln_fold_stagger.qkv") == strchr(at, ';')),
                    "%s (%d): fold delay %d\n%s", task, v, d, own);
      if (d == 0) ck_assert_msg(!strstr(own, "ln_fold_stagger"), "%s (%d): delayed\n%s", task, v, own);
      /* the first stage's 2 pieces: one gap, citing ln_fold_first_gap */
      g_snprintf(want, sizeof want, "    WAITT     %d ", gap[v]);
      at = strstr(own, want);
      ck_assert_msg(at != NULL && strstr(at, "; p1.ln_fold_first_gap") == strchr(at, ';'),
                    "%s (%d): first gap\n%s", task, v, own);
      if (p >= 4) continue;
      g_snprintf(task, sizeof task, "l0.w1.k0.p%d", p);
      g_autofree char *w1 = task_lines(text[v], task, "    END");
      d = (p % w1_slots[v]) * w1_st[v];
      g_snprintf(want, sizeof want, "    WAITT     %d ", d);
      at = strstr(w1, want);
      ck_assert_msg((d > 0) == (at != NULL && strstr(at, "; p1.ln_fold_stagger.w1") == strchr(at, ';')),
                    "%s (%d): fold delay %d\n%s", task, v, d, w1);
    }
  }
  /* nothing but those WAITTs (and RF partitions, which inserted ops may move) */
  static const char *const st[] = {"    WAITT ", "; p1.ln_fold_stagger.", NULL};
  static const char *const fg[] = {"    WAITT ", "; p1.ln_fold_first_gap", NULL};
  static const char *const rf[] = {".rf ", NULL};
  int n_st[2], n_fg[2], n_rf;
  char *ops[2];
  for (int v = 0; v < 2; v++) {
    g_autofree char *t1 = drop_lines(text[v], st, &n_st[v]);
    g_autofree char *t2 = drop_lines(t1, fg, &n_fg[v]);
    ops[v] = drop_lines(t2, rf, &n_rf);
  }
  ck_assert_int_eq(n_fg[0], 6);     /* 6 qkv owners x 1 gap */
  ck_assert_int_eq(n_fg[1], 6);
  ck_assert_int_eq(n_st[0], 7);     /* qkv p1-3, p5; w1 p1-3 */
  ck_assert_int_eq(n_st[1], 5);     /* qkv p1, p3, p5; w1 p1, p2 */
  g_autofree char *d = first_diff(ops[0], ops[1]);
  ck_assert_msg(strcmp(ops[0], ops[1]) == 0, "more than the WAITTs changed, %s", d);
  g_free(ops[0]);
  g_free(ops[1]);
}
END_TEST

/* A LayerNorm stagger (spacing.c) of 100 cycles written as `knob` (`base`
 * without it): in b, the task of row tile t of each of the `n` stages
 * waits t x 100 cycles before its loads (a WAITT citing the knob, after
 * any WAIT for the stage's producer; none for tile 0);
 * nothing else changes between a and b.  Returns the stages' tasks. */
static int check_ln_stagger(const char *a, const char *b, const char *knob, const char *const *stages, int n) {
  g_autofree char *cite_knob = g_strdup_printf("; p1.%s", knob);
  int tasks = 0;
  for (int s = 0; s < n; s++)
    for (int t = 0;; t++) {
      char task[32], want[64];
      g_snprintf(task, sizeof task, "%s.r%d", stages[s], t);
      g_autofree char *own = task_lines(b, task, "    END");
      if (!*own) break;
      tasks++;
      g_snprintf(want, sizeof want, "    WAITT     %d ", t * 100);
      /* the line citing the knob: the WAITT, before any load (after the
       * WAITs for the stage's producer) */
      const char *c = strstr(own, cite_knob), *line = c;
      while (line && line > own && line[-1] != '\n') line--;
      g_autofree char *before = line ? g_strndup(own, (gsize)(line - own)) : NULL;
      ck_assert_msg(t == 0 ? !c : c && g_str_has_prefix(line, want) && !strstr(before, "    LD"),
                    "%s: no WAITT of %d before its loads\n%s", task, t * 100, own);
    }
  const char *const cite[] = {"    WAITT ", cite_knob, NULL};
  static const char *const rf[] = {".rf ", NULL};
  int na, nb, n_rf;
  g_autofree char *a1 = drop_lines(a, cite, &na), *b1 = drop_lines(b, cite, &nb);
  g_autofree char *a2 = drop_lines(a1, rf, &n_rf), *b2 = drop_lines(b1, rf, &n_rf);
  ck_assert_int_eq(na, 0);
  ck_assert_int_eq(nb, tasks - n); /* every task but each stage's first */
  g_autofree char *d = first_diff(a2, b2);
  ck_assert_msg(strcmp(a2, b2) == 0, "more than the WAITTs changed, %s", d);
  return tasks;
}

/* ln_first_stagger: layer 0's LN1 staggered; layer 1's LN1 and both LN2
 * stages start as before; both programs are correct. */
START_TEST(test_p1_ln_first_stagger) {
  g_autofree char *a = two_layers("refinements: {ln_fold: true}", "ln1 not staggered");
  g_autofree char *b = two_layers("refinements: {ln_fold: true}\n  ln_first_stagger: 100", "ln1 staggered");
  static const char *const stages[] = {"l0.ln1"};
  ck_assert_int_gt(check_ln_stagger(a, b, "ln_first_stagger", stages, 1), 2);
}
END_TEST

/* ln_stagger: every LayerNorm stage but layer 0's LN1 (layer 1's LN1,
 * both LN2 stages) staggered; layer 0's LN1 starts as before; both
 * programs are correct. */
START_TEST(test_p1_ln_stagger) {
  g_autofree char *a = two_layers("refinements: {ln_fold: true}", "ln not staggered");
  g_autofree char *b = two_layers("refinements: {ln_fold: true}\n  ln_stagger: 100", "ln staggered");
  static const char *const stages[] = {"l1.ln1", "l0.ln2", "l1.ln2"};
  ck_assert_int_gt(check_ln_stagger(a, b, "ln_stagger", stages, 3), 6);
  g_autofree char *l0 = task_lines(b, "l0.ln1.r1", "    END");
  ck_assert_msg(*l0 && !strstr(l0, "ln_stagger"), "layer 0's LN1 staggered by ln_stagger\n%s", l0);
}
END_TEST

static void grid_counts(const Plan *plan, SchedProj proj, int *tasks, int *a_lds, int *w_lds, int *mmas, int *sets);

/* The W2 tasks of a compiled rf_grid.multicast plan: the most targets of
 * one of their LD.mc, and the WAITTs citing rf_grid.wave_wgs (each a
 * task's turn in its wave), how many and how many distinct values. */
static void grid_waves(const Plan *plan, int *most, int *waitts, int *distinct) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  *most = *waitts = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_LD && (op->mods & IR_MOD_MC)) *most = MAX(*most, op->ntargets);
      if (op->kind == IR_WAITT && op->prov.knob && strstr(op->prov.knob, "rf_grid.wave_wgs")) {
        (*waitts)++;
        g_hash_table_add(seen, GINT_TO_POINTER((int)op->n));
      }
    }
  }
  *distinct = (int)g_hash_table_size(seen);
}

/* rf_grid.wave_wgs: a wave takes at most that many WGs of each SM.  On 2
 * SMs W2's 4 tasks (1 x 1 grids) run in waves of 2 with wave_wgs 1 (one
 * chunk of each round shared) and of 4 (2 x 2) with 2, the default (both
 * shared), so fewer loads for the same MMAs and fewer HBM lines; refused
 * without rf_grid.multicast.  In a wave the task
 * of rank q > 0 waits q / n of the finishes' gap before its first finish
 * (grid.c): the WAITTs citing rf_grid.wave_wgs are one per task but each
 * wave's first, of as many values as ranks; both programs correct. */
START_TEST(test_p1_rf_grid_waves) {
  g_autoptr(Plan) one = small_plan(PROB_P1, "sms_used: 2\n  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n"
                                           "  rf_grid: {multicast: true, wave_wgs: 1}");
  g_autoptr(Plan) two = small_plan(PROB_P1, "sms_used: 2\n  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n"
                                           "  rf_grid: {multicast: true, wave_wgs: 2}");
  int m1, w1, d1, m2, w2, d2;
  grid_waves(one, &m1, &w1, &d1);
  grid_waves(two, &m2, &w2, &d2);
  ck_assert_int_eq(m1, 2); /* a set: the row group's or panel group's tasks of a wave */
  ck_assert_int_eq(m2, 2);
  int t0, a0, wl0, mm0, s0, t1, a1, wl1, mm1, s1;
  grid_counts(one, PROJ_W2, &t0, &a0, &wl0, &mm0, &s0);
  grid_counts(two, PROJ_W2, &t1, &a1, &wl1, &mm1, &s1);
  ck_assert_int_eq(mm1, mm0);
  ck_assert_msg(a1 + wl1 < a0 + wl0, "waves of 4: %d chunk loads, of 2: %d", a1 + wl1, a0 + wl0);
  ck_assert_int_eq(w1, 2); /* 2 waves of 2: rank 1 of each */
  ck_assert_int_eq(d1, 1);
  ck_assert_int_eq(w2, 3); /* 1 wave of 4: ranks 1, 2 and 3 */
  ck_assert_int_eq(d2, 3);
  Run r1 = compile_run(one, PROB_P1, "waves of 2", NULL);
  Run r2 = compile_run(two, PROB_P1, "waves of 4", NULL);
  ck_assert_msg(r2.hbm_lines < r1.hbm_lines, "waves of 4: %" G_GINT64_FORMAT " lines, of 2: %" G_GINT64_FORMAT,
                r2.hbm_lines, r1.hbm_lines);
  const char *text = "version: 1\np1:\n  problem: " P1_DIMS "\n  rf_grid: {wave_wgs: 1}\n";
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) bad = plan_parse("bad.yaml", text, strlen(text), &err);
  ck_assert_ptr_null(bad);
  ck_assert_msg(err && strstr(err->message, "'rf_grid.wave_wgs' has no effect unless rf_grid.multicast is true"), "%s",
                err ? err->message : "?");
}
END_TEST

/* k_split_last.w2: the last K shard's owners keep the bias and residual and
 * start the chain with them; shard 0's keep neither (without the knob it is
 * the other way round); both programs are correct. */
START_TEST(test_p1_k_split_last) {
  g_autoptr(Plan) first = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) last = small_plan(PROB_P1, P1_MC "\n  k_split_last: {w2: true}");
  g_autofree char *a = NULL, *b = NULL;
  compile_run(first, PROB_P1, "shard 0 finishes", &a);
  compile_run(last, PROB_P1, "last shard starts", &b);
  const char *k0[] = {".rf l0_w2_k0_p0_bias ", ".rf l0_w2_k0_p0_res "};
  const char *k1[] = {".rf l0_w2_k1_p0_bias ", ".rf l0_w2_k1_p0_res "};
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(strstr(a, k0[i]) && !strstr(a, k1[i]), "default: %s", k0[i]);
    ck_assert_msg(!strstr(b, k0[i]) && strstr(b, k1[i]), "k_split_last: %s", k1[i]);
  }
  /* the last shard loads the residual (x1) itself: an LD in its task */
  g_autofree char *k1_lines = task_lines(b, "l0.w2.k1.p0", "    END");
  ck_assert_ptr_nonnull(strstr(k1_lines, "LD        l0_w2_k1_p0_res"));
  /* shard 0 (of 2; 2 chunks a tile) takes tile 0's sum from shard 1 after
   * the second MMA of tile 1 (staggered: (S-1-s)*nk/S = 1 chunk in), not
   * after its first */
  for (int knob = 0; knob < 2; knob++) {
    g_autofree char *k0_lines = task_lines(knob ? b : a, "l0.w2.k0.p0", "    END");
    const char *w = strstr(k0_lines, "WAIT      ev.l0_w2_p0_sum1,");
    ck_assert_ptr_nonnull(w);
    int mmas = 0;
    for (const char *q = k0_lines; (q = strstr(q, "    MMA")) && q < w; q++) mmas++;
    ck_assert_int_eq(mmas, (knob ? 4 : 3));
  }
}
END_TEST

/* handoff: rf: W1's owners put their GELU blocks into W2's owners' A
 * buffers (ST wgN.x) and issue h2's chunks themselves: no W1 or W2 issuer
 * tasks, g never stored, fewer HBM lines (2 x N x d_ff floats less); correct. */
START_TEST(test_p1_handoff_rf) {
  g_autoptr(Plan) hbm = small_plan(PROB_P1, P1_MC);
  g_autoptr(Plan) rf = small_plan(PROB_P1, P1_MC "\n  handoff: rf");
  Run x = compile_run(hbm, PROB_P1, "g via HBM", NULL), y = compile_run(rf, PROB_P1, "g RF to RF", NULL);
  const Problem d = rf->p1.dims;
  int64_t g_lines = 2 * (int64_t)d.layers * d.seqs * d.rows * d.d_ff * 4 / 64;
  ck_assert_int_eq(x.hbm_lines - y.hbm_lines, g_lines);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(rf, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int w1 = 0, sends = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    ck_assert_msg(!(strstr(t->name, ".mc") && (strstr(t->name, ".w1.") || strstr(t->name, ".w2."))),
                  "issuer task %s", t->name);
    if (t->role.proj != PROJ_W1) continue;
    w1++;
    sends += remote_stores(t);
  }
  /* each W1 owner, each row tile, to every W2 owner of its K shard */
  int w2_panels = d.d_model / 32, tiles = d.seqs * d.rows / 32;
  ck_assert_int_eq(sends, w1 * tiles * w2_panels);
}
END_TEST

/* handoff_fanout (fanout.c): the chains.  Six owners on WGs 0, 5, 1, 4,
 * 9, 8 (4 WGs an SM: SMs 0, 1, 0, 1, 2, 2) sorted by SM, stably: 0, 2, 1, 3,
 * 4, 5; two chains 0 -> 2 -> 1 and 3 -> 4 -> 5; four chains of 2, 2, 1, 1;
 * 0 (or more than 6) is one chain per owner, no forwarding. */
START_TEST(test_p1_fanout_chains) {
  Ir *ir = g_new0(Ir, 1);
  ir->hw.wgs_per_sm = 4;
  const int wgs[6] = {0, 5, 1, 4, 9, 8};
  int next[6], head[6];
  ck_assert_int_eq(lw_p1_fanout_chains(ir, 2, wgs, 6, next, head), 2);
  const int n2[6] = {2, -1, 1, 4, 5, -1};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(next[i], n2[i]);
  ck_assert_int_eq(head[0], 0);
  ck_assert_int_eq(head[1], 3);
  ck_assert_int_eq(lw_p1_fanout_chains(ir, 4, wgs, 6, next, head), 4);
  const int n4[6] = {2, 3, -1, -1, -1, -1}, h4[4] = {0, 1, 4, 5};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(next[i], n4[i]);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(head[i], h4[i]);
  for (int f = 0; f <= 7; f += 7) {
    ck_assert_int_eq(lw_p1_fanout_chains(ir, f, wgs, 6, next, head), 6);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(next[i], -1);
  }
  g_free(ir);
}
END_TEST

/* handoff_fanout: 1 with handoff: rf (2 W2 panels a K shard): each W1 owner
 * stores a block once, not once per W2 owner, and each block is forwarded
 * once by the W2 owner that got it (an ST into the other owner's buffer,
 * citing the knob); the HBM traffic is the same and the program is correct. */
START_TEST(test_p1_handoff_fanout) {
  g_autoptr(Plan) rf = small_plan(PROB_P1, P1_MC "\n  handoff: rf");
  g_autoptr(Plan) fan = small_plan(PROB_P1, P1_MC "\n  handoff: rf\n  handoff_fanout: 1");
  Run x = compile_run(rf, PROB_P1, "g RF to RF", NULL), y = compile_run(fan, PROB_P1, "g along chains", NULL);
  ck_assert_int_eq(x.hbm_lines, y.hbm_lines);
  const Problem d = fan->p1.dims;
  int w2_panels = d.d_model / 32, tiles = d.seqs * d.rows / 32;
  ck_assert_int_eq(w2_panels, 2);
  for (int f = 0; f < 2; f++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(f ? fan : rf, PROB_P1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int w1 = 0, sends = 0, fwd = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.proj == PROJ_W1) w1++, sends += remote_stores(t);
      if (t->role.proj != PROJ_W2) continue;
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        if (op->kind == IR_ST && op->mem.t >= 0 && op->prov.knob && strstr(op->prov.knob, "handoff_fanout"))
          fwd++;
      }
    }
    ck_assert_int_eq(sends, w1 * tiles * (f ? 1 : w2_panels));
    ck_assert_int_eq(fwd, f ? w1 * tiles : 0);
  }
}
END_TEST

/* P1 on 128 rows (4 row tiles) with g RF to RF along one chain of W2's
 * owners a shard (handoff: rf, handoff_fanout: 1) and `more` (YAML lines,
 * each after a newline) appended to its section. */
static Plan *chain_plan(const char *more) {
  g_autofree char *text = g_strdup_printf("version: 1\np1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 1, "
                                          "seqs: 1, rows: 128}\n  " P1_MC "\n  handoff: rf\n  handoff_fanout: 1%s\n", more);
  return plan_text("chain.yaml", text);
}

/* The W1 tasks of `p`'s problem `kind`: their ops, SFU.tanh ops (one per
 * GELU) and ops attributed to refinements.gelu_factor. */
static void w1_census(const Plan *p, ProblemKind kind, int *ops, int *tanh, int *factored) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, kind, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  *ops = *tanh = *factored = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W1) continue;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      (*ops)++;
      *tanh += op->kind == IR_STANH;
      *factored += op->prov.knob && strstr(op->prov.knob, "gelu_factor") != NULL;
    }
  }
}

/* refinements.gelu_factor on P1, where W1 writes its GELU to HBM
 * (src/lower/p1.c) and where it hands it off RF to RF (ffn_rf.c, in halves
 * of the tile): each GELU is 8 ops instead of 9, all of them the
 * refinement's, and nothing else changes; both are correct. */
START_TEST(test_p1_gelu_factor) {
  for (int h = 0; h < 2; h++) {
    g_autoptr(Plan) a = h ? chain_plan("") : small_plan(PROB_P1, P1_MC);
    g_autoptr(Plan) b = h ? chain_plan("\n  refinements: {gelu_factor: true}")
                          : small_plan(PROB_P1, P1_MC "\n  refinements: {gelu_factor: true}");
    int ops[2], tanh[2], factored[2];
    w1_census(a, PROB_P1, &ops[0], &tanh[0], &factored[0]);
    w1_census(b, PROB_P1, &ops[1], &tanh[1], &factored[1]);
    ck_assert_int_gt(tanh[0], 0);
    ck_assert_int_eq(tanh[1], tanh[0]);
    ck_assert_int_eq(ops[1], ops[0] - tanh[0]);
    ck_assert_int_eq(factored[0], 0);
    ck_assert_int_eq(factored[1], 8 * tanh[1]);
    compile_run(b, PROB_P1, h ? "gelu_factor, handoff rf" : "gelu_factor", NULL);
  }
}
END_TEST

/* handoff_hop_flow (fanout.c), on 128 rows (4 row tiles: each W2
 * owner's 4 A buffers are used twice) with one chain of W2's 2 owners a
 * shard: each W2 owner SIGs its own free event per chunk, every store into
 * a reused buffer (the W1 owner's into the head, the head's forward into the
 * tail) first WAITs for that owner's, and no task waits for or signals the
 * shard's free events any more.  Without the knob it is the other way
 * round.  Both runs are correct and move the same HBM lines. */
START_TEST(test_p1_handoff_hop_flow) {
  Run run[2];
  for (int f = 0; f < 2; f++) {
    g_autoptr(Plan) plan = chain_plan(f ? "\n  handoff_hop_flow: true" : "");
    run[f] = compile_run(plan, PROB_P1, f ? "hop flow" : "shard flow", NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int shard_wait = 0, shard_sig = 0, own_wait = 0, own_sig = 0, w2_mma = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        if (op->kind == IR_MMA && t->role.proj == PROJ_W2) w2_mma++;
        if ((op->kind != IR_WAIT && op->kind != IR_SIG) || op->event < 0) continue;
        const char *ev = g_ptr_array_index(ir->events, op->event);
        gboolean own = g_regex_match_simple("^l0_w2_k[0-9]+_p[0-9]+_free[0-9]+$", ev, 0, 0);
        gboolean shard = g_regex_match_simple("^l0_w2_k[0-9]+_free[0-9]+$", ev, 0, 0);
        if (own && op->kind == IR_WAIT) { /* the second use of a buffer */
          own_wait++;
          ck_assert_int_eq(op->n, 1);
        }
        if (own && op->kind == IR_SIG) own_sig++;
        if (shard && op->kind == IR_WAIT) shard_wait++;
        if (shard && op->kind == IR_SIG) shard_sig++;
      }
    }
    /* 4 W2 owners x 8 chunks: one MMA and one free each; 4 owners x 4
     * reused buffers: one wait each with the knob; without it the W1
     * owners' 2 blocks a shard a reused round wait for the shard's */
    ck_assert_int_eq(w2_mma, 32);
    ck_assert_int_eq(own_sig, f ? 32 : 0);
    ck_assert_int_eq(shard_sig, f ? 0 : 32);
    ck_assert_int_eq(own_wait, f ? 16 : 0);
    ck_assert_int_eq(shard_wait > 0, !f);
  }
  ck_assert_int_eq(run[0].hbm_lines, run[1].hbm_lines);
}
END_TEST

/* issue_spacing.w1 with handoff: rf (resident_owners.c): W1's owners issue the
 * LD.mc of its chunks in turn, and each waits the knob's cycles before each
 * of its turns after the first round: a WAITT citing the knob right before
 * the turn's buffer wait and LD.mc, in W1's tasks only.  The run is correct,
 * moves the same HBM lines and takes longer (every chunk's load is later).
 * Without the knob there is no such WAITT. */
START_TEST(test_p1_issue_spacing_owners) {
  Run run[2];
  for (int f = 0; f < 2; f++) {
    g_autoptr(Plan) plan = chain_plan(f ? "\n  issue_spacing: {w1: 77}" : "");
    run[f] = compile_run(plan, PROB_P1, f ? "issue_spacing.w1" : "no spacing", NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int spaced = 0, w1_mc = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      const IrOp *ops = (const IrOp *)(const void *)t->ops->data;
      for (guint i = 0; i < t->ops->len; i++) {
        if (ops[i].kind == IR_LD && (ops[i].mods & IR_MOD_MC) && t->role.proj == PROJ_W1) w1_mc++;
        if (ops[i].kind != IR_WAITT || !ops[i].prov.knob || !strstr(ops[i].prov.knob, "issue_spacing.w1")) continue;
        spaced++;
        ck_assert_int_eq(ops[i].n, 77);
        ck_assert_int_eq(t->role.proj, PROJ_W1);
        guint j = i + 1; /* the turn: its buffer's WAIT, then the LD.mc, before any MMA */
        while (j < t->ops->len && ops[j].kind == IR_WAIT) j++;
        ck_assert_msg(j < t->ops->len && ops[j].kind == IR_LD && (ops[j].mods & IR_MOD_MC), "task %s op %u", t->name, i);
      }
    }
    /* 4 tiles x 2 chunks = 8 loads; the 3 the owners issue before their
     * MMAs (the ring's lead) unspaced */
    ck_assert_int_eq(w1_mc, 8);
    ck_assert_int_eq(spaced, (f ? 5 : 0));
  }
  ck_assert_int_eq(run[0].hbm_lines, run[1].hbm_lines);
  ck_assert_int_gt(run[1].cycles, run[0].cycles);
}
END_TEST

/* handoff: rf on P1's default shape (ffn_rf.c): W1's owners keep three
 * accumulators and their GELU temporary is half a tile (16 x 32, made in
 * two halves), so that it shares a partition with the bias and rstd and a
 * 4th A buffer fits beside the 256 x 32 weights: h2's ring runs 3 chunks
 * ahead, not 2.  A whole-tile temporary leaves 3 buffers. */
START_TEST(test_p1_handoff_rf_buffers) {
  g_autoptr(Plan) plan = plan_text("rf.yaml", "version: 1\np1:\n  weights: resident\n"
                                              "  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n"
                                              "  k_split: {w2: 4}\n  multicast: {w1: true}\n  handoff: rf\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int bufs = 0, gelu = 0;
  for (guint k = 0; k < ir->tensors->len; k++) {
    const IrTensor *t = g_ptr_array_index(ir->tensors, k);
    if (g_str_has_prefix(t->name, "l0.w1.k0.a")) bufs++;
    if (g_str_has_prefix(t->name, "l0.w1.k0.p0.gelu")) {
      gelu++;
      ck_assert_int_eq(t->used_rows, 16);
    }
  }
  ck_assert_int_eq(gelu, 1);
  int owners = 0; /* every W1 owner has its own buffers, named alike (LD.mc targets) */
  for (guint k = 0; k < ir->tasks->len; k++) owners += ir_task_at(ir, (int)k)->role.proj == PROJ_W1 &&
                                                       g_str_has_prefix(ir_task_at(ir, (int)k)->name, "l0.w1.");
  ck_assert_int_eq(owners, 32);
  ck_assert_int_eq(bufs, 4 * owners);
}
END_TEST

/* attention.stagger: 100 makes attention task n (of one wave) wait n * 100
 * cycles (WAITT) before its first load; without it no attention task has a
 * WAITT before its first load; both programs are correct. */
START_TEST(test_p1_attention_stagger) {
  for (int stagger = 0; stagger <= 100; stagger += 100) {
    g_autofree char *knobs = g_strdup_printf("sms_used: 4\n  attention: {query_tiles: 2%s}",
                                             stagger ? ", stagger: 100" : "");
    g_autoptr(Plan) plan = small_plan(PROB_P1, knobs);
    g_autoptr(GError) err = NULL;
    g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
    ck_assert_msg(ir, "%s", err ? err->message : "?");
    int n = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.kind != ROLE_ATT) continue;
      int64_t waited = 0;
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        if (op->kind == IR_LD) break;
        if (op->kind == IR_WAITT) waited += op->n;
      }
      ck_assert_msg(waited == (int64_t)n * stagger, "task %s waits %" G_GINT64_FORMAT " cycles before its first load",
                    t->name, waited);
      n++;
    }
    ck_assert_int_gt(n, 1);
    compile_run(plan, PROB_P1, stagger ? "stagger 100" : "no stagger", NULL);
  }
}
END_TEST

/* ---- rf_grid.* (grid.c) ---- */

/* Is RF tensor t a grid task's A or W chunk buffer ("TAG.a01", "TAG.w10"),
 * or the baseline's ("TAG.a", "TAG.w")? */
static gboolean grid_buffer(const Ir *ir, int t, char which) {
  const char *n = strrchr(ir_tensor(ir, t)->name, '.');
  if (!n || n[1] != which) return FALSE;
  for (const char *c = n + 2; *c; c++)
    if (!g_ascii_isdigit(*c)) return FALSE;
  return TRUE;
}

/* The projection `proj` tasks of a compiled plan: loads into A and W chunk
 * buffers and MMAs, summed; *tasks gets how many; *sets the buffer sets
 * (2: a1x tensors exist). */
static void grid_counts(const Plan *plan, SchedProj proj, int *tasks, int *a_lds, int *w_lds, int *mmas, int *sets) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  *tasks = *a_lds = *w_lds = *mmas = 0, *sets = 1;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.proj != (int)proj || (t->role.kind != ROLE_QKV && t->role.kind != ROLE_WO && t->role.kind != ROLE_W1 &&
                                 t->role.kind != ROLE_W2))
      continue;
    (*tasks)++;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind == IR_MMA) (*mmas)++;
      if (op->kind != IR_LD || op->d.t < 0) continue;
      if (grid_buffer(ir, op->d.t, 'a')) (*a_lds)++;
      if (grid_buffer(ir, op->d.t, 'w')) (*w_lds)++;
      if (grid_buffer(ir, op->d.t, 'a') && strlen(strrchr(ir_tensor(ir, op->d.t)->name, '.')) == 4 &&
          strrchr(ir_tensor(ir, op->d.t)->name, '.')[2] == '1')
        *sets = 2;
    }
  }
}

/* rf_grid rows x cols (streamed weights): per K round of 32 a task loads
 * rows A chunks and cols W chunks and issues rows x cols MMAs: R + C loads
 * per round, not the baseline's 2 per MMA (2 R C); the MMAs are as many;
 * fewer HBM lines; correct.  2 x 2 double-buffers (a1x buffers), 2 x 4 on
 * a 32 KiB RF cannot and is single-buffered. */
START_TEST(test_p1_rf_grid_loads) {
  g_autoptr(Plan) base = small_plan(PROB_P1, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}");
  Run rb = compile_run(base, PROB_P1, "rf_grid 1 x 1", NULL);
  const int shapes[][3] = {{2, 2, 64}, {2, 1, 64}, {1, 2, 64}, {2, 2, 32}};
  int tasks0, a0, w0, m0, sets0;
  grid_counts(base, PROJ_W2, &tasks0, &a0, &w0, &m0, &sets0);
  ck_assert_int_eq(a0 + w0, 2 * m0); /* the baseline: an A and a W chunk per MMA */
  for (unsigned v = 0; v < G_N_ELEMENTS(shapes); v++) {
    int R = shapes[v][0], C = shapes[v][1];
    g_autofree char *knobs = g_strdup_printf("k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {rows: %d, cols: %d}",
                                             R, C);
    g_autofree char *text = g_strdup_printf("version: 1\nhardware: {rf_kib: %d}\np1:\n  problem: %s\n  %s\n",
                                            shapes[v][2], P1_DIMS, knobs);
    g_autoptr(Plan) plan = plan_text("grid.yaml", text);
    int tasks, a, w, mmas, sets;
    grid_counts(plan, PROJ_W2, &tasks, &a, &w, &mmas, &sets);
    /* W2: K = d_ff = 128, 4 rounds of 32 per task */
    int rounds = 128 / 32;
    ck_assert_int_eq(tasks * R * C, tasks0);
    ck_assert_int_eq(mmas, m0);
    ck_assert_int_eq(a, tasks * rounds * R);
    ck_assert_int_eq(w, tasks * rounds * C);
    ck_assert_int_eq(a + w, tasks * rounds * (R + C));
    ck_assert_int_eq(sets, shapes[v][2] == 64 ? 2 : 1);
    Run rg = compile_run(plan, PROB_P1, text, NULL);
    if (shapes[v][2] == 64) ck_assert_int_lt(rg.hbm_lines, rb.hbm_lines);
  }
}
END_TEST

/* rf_grid.k_split 2: each grid is two tasks, shard 1 stores its partial
 * sums and SIGs, shard 0 WAITs for 1 of them and adds them; every shard 1
 * task comes before every shard 0 task (no WG holds a shard 0 task ahead
 * of the shard it waits for); correct. */
START_TEST(test_p1_rf_grid_k_split) {
  g_autoptr(Plan) plan =
      small_plan(PROB_P1, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {rows: 2, cols: 2, k_split: 2}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int shard0 = 0, shard1 = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    gboolean waits = FALSE, sigs = FALSE;
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      const char *ev = op->event >= 0 && (op->kind == IR_WAIT || op->kind == IR_SIG) ? (const char *)g_ptr_array_index(ir->events, op->event) : "";
      if (op->kind == IR_WAIT && g_str_has_suffix(ev, "_part")) {
        waits = TRUE;
        ck_assert_int_eq(op->n, 1);
      }
      if (op->kind == IR_SIG && g_str_has_suffix(ev, "_part")) sigs = TRUE;
    }
    if (t->role.kshard == 0) {
      ck_assert_msg(waits && !sigs, "%s", t->name);
      shard0++;
    } else {
      ck_assert_msg(sigs && !waits && shard0 == 0, "%s", t->name);
      shard1++;
    }
  }
  ck_assert_int_eq(shard0, 1); /* 2 row tiles x 2 panels: one grid */
  ck_assert_int_eq(shard1, 1);
  compile_run(plan, PROB_P1, "rf_grid k_split 2", NULL);
}
END_TEST

/* rf_grid is refused with weights: resident (at the knob), and a grid
 * that does not fit the RF at all is refused by rf_alloc naming rf_grid. */
START_TEST(test_p1_rf_grid_refused) {
  g_autoptr(Plan) res = small_plan(PROB_P1, "weights: resident\n  rf_grid: {cols: 2}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(res, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_ptr_null(ir);
  ck_assert_msg(err && strstr(err->message, "rf_grid.cols needs weights: streamed"), "%s", err ? err->message : "?");
  g_autoptr(Plan) big = plan_text("big.yaml", "version: 1\nhardware: {rf_kib: 32}\np1:\n  problem: " P1_DIMS
                                                "\n  k_chunk: {qkv: 64, wo: 64, w1: 64, w2: 64}\n  rf_grid: {rows: 2, cols: 2}\n");
  g_autoptr(GError) err2 = NULL;
  g_autoptr(Ir) ir2 = pass_pipeline(big, PROB_P1, NULL, NULL, TRUE, &err2);
  ck_assert_ptr_null(ir2);
  ck_assert_msg(err2 && strstr(err2->message, "rf_alloc:") && strstr(err2->message, "rf_grid.rows x rf_grid.cols"), "%s",
                err2 ? err2->message : "?");
}
END_TEST

/* rf_grid.multicast: a grid stage's tasks run in waves, and within a wave
 * the tasks of a row group load their A chunks as one LD.mc, those of a
 * panel group their W chunks (the multicast pass, a task in two sets).
 * On the small P1 (d_model 64, so W2 has 2 panels; 2 row tiles) a 1 x 1
 * grid's W2 is one wave of 2 x 2 tasks: every A and W chunk load is an
 * LD.mc to 2 WGs, half the loads of the plain grid, fewer HBM lines, the
 * same MMAs; correct.  Refused with resident weights and on a machine
 * without multicast. */
START_TEST(test_p1_rf_grid_multicast) {
  g_autoptr(Plan) plain = small_plan(PROB_P1, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {multicast: false}");
  g_autoptr(Plan) mc = small_plan(PROB_P1, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {multicast: true}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(mc, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int tasks = 0, a_mc = 0, w_mc = 0, plain_lds = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind != ROLE_W2) continue;
    tasks += t->role.panel >= 0; /* the pass's issuer tasks: -1 */
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_LD || op->d.t < 0) continue;
      gboolean a = grid_buffer(ir, op->d.t, 'a'), w = grid_buffer(ir, op->d.t, 'w');
      if (!(op->mods & IR_MOD_MC)) {
        plain_lds += a || w;
        continue;
      }
      ck_assert_int_eq(op->ntargets, 2);
      a_mc += a, w_mc += w;
    }
  }
  ck_assert_int_eq(tasks, 4);
  ck_assert_int_eq(plain_lds, 0);
  /* W2's K = d_ff = 128: 4 rounds; per round the wave reads 2 A and 2 W chunks */
  ck_assert_int_eq(a_mc, 2 * 4);
  ck_assert_int_eq(w_mc, 2 * 4);
  int t0, a0, w0, m0, s0, t1, a1, w1, m1, s1;
  grid_counts(plain, PROJ_W2, &t0, &a0, &w0, &m0, &s0);
  grid_counts(mc, PROJ_W2, &t1, &a1, &w1, &m1, &s1);
  ck_assert_int_eq(m1, m0);
  ck_assert_int_eq(a1 + w1, (a0 + w0) / 2);
  Run rp = compile_run(plain, PROB_P1, "rf_grid 1 x 1", NULL);
  Run rm = compile_run(mc, PROB_P1, "rf_grid 1 x 1, multicast", NULL);
  ck_assert_msg(rm.hbm_lines < rp.hbm_lines, "multicast %" G_GINT64_FORMAT " lines, plain %" G_GINT64_FORMAT,
                rm.hbm_lines, rp.hbm_lines);
  g_autoptr(Plan) res = small_plan(PROB_P1, "weights: resident\n  rf_grid: {multicast: true}");
  g_autoptr(GError) err2 = NULL;
  g_autoptr(Ir) ir2 = pass_pipeline(res, PROB_P1, NULL, NULL, TRUE, &err2);
  ck_assert_ptr_null(ir2);
  ck_assert_msg(err2 && strstr(err2->message, "rf_grid.multicast needs weights: streamed"), "%s",
                err2 ? err2->message : "?");
  g_autoptr(GError) err3 = NULL;
  const char *nomc_text = "version: 1\nhardware: {multicast: false}\np1:\n  problem: " P1_DIMS
                          "\n  rf_grid: {multicast: true}\n";
  g_autoptr(Plan) nomc = plan_parse("nomc.yaml", nomc_text, strlen(nomc_text), &err3);
  ck_assert_ptr_null(nomc);
  ck_assert_msg(err3 && strstr(err3->message, "'rf_grid.multicast: true' needs hardware.multicast: true"), "%s",
                err3 ? err3->message : "?");
}
END_TEST

/* kv_writeback: temp in a task that stores several q|k|v blocks (a
 * resident owner, one per row tile; an rf_grid task, rows x cols) names
 * each block's read-back tensors apart: the program assembles (no region
 * declared twice) and is correct.  Before, both made 'TASK.kvbackX' once
 * per block. */
START_TEST(test_p1_kv_temp_blocks) {
  const char *const knobs[] = {"sms_used: 4\n  " P1_RES "\n  kv_writeback: temp",
                               "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {rows: 2, cols: 2}\n  kv_writeback: temp"};
  for (unsigned k = 0; k < G_N_ELEMENTS(knobs); k++) {
    g_autoptr(Plan) plan = small_plan(PROB_P1, knobs[k]);
    compile_run(plan, PROB_P1, knobs[k], NULL);
  }
}
END_TEST

/* ---- hardware.mma_arrays > 1: the arrays of an SM busy at once ---- */

/* Run P1 of `plan` traced (seed 7, correct within budgets); per SM, the
 * cycles during which at least two of its arrays are busy, summed into
 * *both; *same gets those where the two MMAs come from one WG. */
static void array_overlap(const Plan *plan, int64_t *both, int64_t *same) {
  g_autofree char *text = compile(plan, PROB_P1, NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_parse("arrays.asm", text, strlen(text), &err);
  ck_assert_msg(p, "%s", err ? err->message : "?");
  SimOptions o;
  sim_options_default(&o);
  o.seed = 7, o.trace = TRUE;
  SimResult r;
  ck_assert_msg(sim_run(p, &o, &r, &err), "%s", err ? err->message : "?");
  assert_passes("mma_arrays", p, &r, 7);
  int A = p->hw.mma_arrays;
  *both = *same = 0;
  const GArray *sl = r.trace->mma;
  /* slices of one array never overlap; two of different arrays of one SM
   * overlap by max(0, min(ends) - max(starts)) (at most 4 arrays: pairs
   * count each cycle once per pair; fine for a > 0 test) */
  for (guint i = 0; i < sl->len; i++)
    for (guint j = i + 1; j < sl->len; j++) {
      const TraceSlice *x = &g_array_index(sl, TraceSlice, i), *y = &g_array_index(sl, TraceSlice, j);
      if (x->track / A != y->track / A || x->track == y->track) continue;
      int64_t ov = MIN(x->t1, y->t1) - MAX(x->t0, y->t0);
      if (ov <= 0) continue;
      *both += ov;
      if (x->wg == y->wg) *same += ov;
    }
  sim_result_clear(&r);
}

/* mma_arrays 2: P1's MMAs use both arrays of an SM at once: the resident
 * owners of an SM (one accumulator chain each) side by side, and a
 * streamed rf_grid task's independent accumulators even from one WG; on
 * one array nothing overlaps.  Fails if the simulator put every MMA on
 * one array, or the lowering left one MMA-issuing WG per SM. */
START_TEST(test_p1_mma_arrays) {
  const char *const knobs[] = {P1_MC, "k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  rf_grid: {rows: 2, cols: 2}"};
  for (int k = 0; k < 2; k++)
    for (int arrays = 1; arrays <= 2; arrays++) {
      g_autofree char *text = g_strdup_printf("version: 1\nhardware: {sms: 2, mma_arrays: %d}\np1:\n  problem: %s\n  %s\n",
                                              arrays, P1_DIMS, knobs[k]);
      g_autoptr(Plan) plan = plan_text("arrays.yaml", text);
      int64_t both, same;
      array_overlap(plan, &both, &same);
      if (arrays == 1) {
        ck_assert_int_eq(both, 0);
        continue;
      }
      ck_assert_msg(both > 0, "%s: no two MMAs of an SM at once", text);
      if (k == 1) ck_assert_msg(same > 0, "%s: no WG with two MMAs at once", text);
    }
}
END_TEST

/* P1 attention knobs on 2 sequences of 128 rows (4 row tiles, query_tiles 2:
 * two tasks per head, one with 4 key blocks, one with 3). */
#define ATT_DIMS "{d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 2, rows: 128}"
static Ir *att_ir(const char *att, char **asm_out, Run *run) {
  g_autofree char *text =
      g_strdup_printf("version: 1\np1:\n  problem: " ATT_DIMS "\n  sms_used: 4\n  attention: {query_tiles: 2%s}\n", att);
  g_autoptr(Plan) plan = plan_text("att.yaml", text);
  g_autoptr(GError) err = NULL;
  Ir *ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s: %s", att, err ? err->message : "?");
  if (run) *run = compile_run(plan, PROB_P1, att, asm_out);
  return ir;
}

/* In a task: the number of ops of `kind` (reading tensor `sym` through mem
 * when sym is set). */
static int count_ops(const Ir *ir, const IrTask *t, IrOpKind kind, const char *sym) {
  int n = 0;
  for (guint i = 0; i < t->ops->len; i++) {
    const IrOp *op = &g_array_index(t->ops, IrOp, i);
    if (op->kind != kind) continue;
    const char *from = op->mem.t >= 0 ? ir_tensor(ir, op->mem.t)->sym : NULL;
    if (sym && (!from || !g_str_has_prefix(from, sym))) continue;
    n++;
  }
  return n;
}

/* attention.interleave: 2 issues a second tile's QK^T MMA before the first
 * tile's row sum (one tile's chain no longer runs alone), scales each q once
 * instead of every score block (fewer VEC.muli), and the program is faster
 * and correct; with interleave 1 every row sum comes before the next MMA.t. */
START_TEST(test_p1_attention_interleave) {
  Run x, y;
  g_autoptr(Ir) a = att_ir("", NULL, &x), b = att_ir(", interleave: 2", NULL, &y);
  for (int pass = 0; pass < 2; pass++) {
    const Ir *ir = pass ? b : a;
    int overlapped = 0, muli = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.kind != ROLE_ATT) continue;
      int open = 0; /* score MMAs issued whose row sum has not come yet */
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        if (op->kind == IR_MMA && (op->mods & IR_MOD_T)) overlapped += open++ > 0;
        if (op->kind == IR_VRSUM && open > 0) open--;
        muli += op->kind == IR_VMULI;
      }
    }
    if (pass == 0) {
      ck_assert_int_eq(overlapped, 0);
      ck_assert_int_gt(muli, 0);
      x.hbm_lines = muli; /* kept: interleave must issue fewer */
    } else {
      ck_assert_msg(overlapped > 0, "interleave 2: no MMA.t issued before the previous tile's row sum");
      ck_assert_msg(muli < x.hbm_lines, "interleave 2: %d VEC.muli, interleave 1: %" G_GINT64_FORMAT, muli, x.hbm_lines);
    }
  }
  ck_assert_msg(y.cycles < x.cycles, "interleave 2: %" G_GINT64_FORMAT " cycles, 1: %" G_GINT64_FORMAT, y.cycles,
                x.cycles);
}
END_TEST

/* attention.kv: shared: one task per head loads every K/V block (LD.mc into
 * both tasks' buffers) and the other loads none; fewer HBM lines than each
 * task loading its own blocks; correct (a missing freed/ready event is a
 * race the simulator reports, failing compile_run). */
START_TEST(test_p1_attention_kv_shared) {
  Run x, y;
  g_autofree char *text = NULL;
  g_autoptr(Ir) a = att_ir(", interleave: 2", NULL, &x), b = att_ir(", interleave: 2, kv: shared", &text, &y);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(strstr(text, "LD.mc"));
  int leaders = 0, followers = 0;
  for (guint k = 0; k < b->tasks->len; k++) {
    const IrTask *t = ir_task_at(b, (int)k);
    if (t->role.kind != ROLE_ATT) continue;
    int kv = count_ops(b, t, IR_LD, "k_out") + count_ops(b, t, IR_LD, "v_out");
    if (kv > 0) {
      leaders++;
      ck_assert_int_eq(kv, 2 * 4); /* 4 blocks of 32 keys, K and V */
    } else {
      followers++;
    }
  }
  ck_assert_int_eq(leaders, 4); /* 2 sequences x 2 heads */
  ck_assert_int_eq(followers, 4);
  ck_assert_msg(y.hbm_lines < x.hbm_lines, "shared: %" G_GINT64_FORMAT " lines, streamed: %" G_GINT64_FORMAT,
                y.hbm_lines, x.hbm_lines);
}
END_TEST

/* attention.kv: resident: each task loads each K/V block it needs exactly
 * once, into a buffer of its own per block (k0..k3, v0..v3), and none into
 * the streamed double buffers; attention.softmax: staged then computes a
 * tile's scores against all its blocks in one tensor (s0 of R x keys) with
 * one exp per tile, and no rescaling (no VEC.mul of o by alpha); both
 * correct.  Where the K/V do not fit, the error is at attention.kv. */
START_TEST(test_p1_attention_kv_resident) {
  g_autoptr(Ir) on = att_ir(", kv: resident", NULL, NULL), st = att_ir(", kv: resident, softmax: staged", NULL, NULL);
  for (int pass = 0; pass < 2; pass++) {
    const Ir *ir = pass ? st : on;
    int tasks = 0;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.kind != ROLE_ATT) continue;
      int keys = 0, kl = count_ops(ir, t, IR_LD, "k_out"), exps = 0, sexp = 0, rescale = 0, tiles = 0;
      for (guint i = 0; i < t->ops->len; i++) {
        const IrOp *op = &g_array_index(t->ops, IrOp, i);
        const char *d = op->d.t >= 0 ? ir_tensor(ir, op->d.t)->name : "";
        const char *from = op->mem.t >= 0 ? ir_tensor(ir, op->mem.t)->sym : NULL;
        if (op->kind == IR_LD && from && g_str_has_prefix(from, "k_out"))
          ck_assert_msg(strstr(d, ".k") && !strstr(d, ".kb"), "%s loads K into %s", t->name, d);
        if (op->kind == IR_MMA && (op->mods & IR_MOD_T)) keys += 32;
        if (op->kind == IR_SEXP) exps++, sexp += op->d.rows * op->d.cols > 32;
        if (op->kind == IR_VMUL && op->a.t >= 0 && strstr(ir_tensor(ir, op->a.t)->name, ".o")) rescale++;
        if (op->kind == IR_ST) tiles++;
      }
      ck_assert_int_gt(kl, 0);
      ck_assert_int_le(kl * 32, 128);
      if (pass == 1) {
        ck_assert_msg(sexp == tiles, "%s: %d score exps for %d tiles", t->name, sexp, tiles);
        ck_assert_int_eq(exps, tiles);
        ck_assert_int_eq(rescale, tiles); /* only o /= z */
      } else {
        ck_assert_int_eq(sexp, keys / 32); /* one per tile and block */
        ck_assert_int_gt(rescale, tiles);
      }
      tasks++;
    }
    ck_assert_int_eq(tasks, 8);
  }
  /* both run correctly (compile_run asserts the numerics and budgets) */
  Run x, y;
  g_autoptr(Ir) a = att_ir(", kv: resident", NULL, &x), b = att_ir(", kv: resident, softmax: staged", NULL, &y);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_int_gt(x.cycles, 0);
  ck_assert_int_gt(y.cycles, 0);
}
END_TEST

/* attention.kv: resident with keys that do not fit a WG's RF (256 keys:
 * 64 KiB of K and V) fails at attention.kv's line and column. */
START_TEST(test_p1_attention_kv_resident_fit) {
  g_autoptr(Plan) plan = plan_text(
      "fit.yaml", "version: 1\np1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 1, rows: 256}\n"
                  "  attention: {query_tiles: 2, kv: resident}\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert(ir == NULL);
  ck_assert_msg(g_str_has_prefix(err->message, "fit.yaml:4:31: error: attention.kv=resident: the K and V of 256 keys"),
                "%s", err->message);
}
END_TEST

/* A panel larger than a WG's RF after rf_temp_kib is refused at its knob. */
START_TEST(test_resident_too_wide) {
  g_autoptr(Plan) p = plan_text("wide.yaml", "version: 1\nd1:\n  panels: {w2: 32}\n  weights: resident\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(p, PROB_D1, NULL, NULL, TRUE, &err);
  ck_assert(ir == NULL);
  ck_assert_msg(g_str_has_prefix(err->message, "wide.yaml:3:12: error: weights: resident: a w2 panel is 512 x 32 = 64 KiB, 16 partitions"),
                "%s", err->message);
}
END_TEST

/* in_flight changes the output of a plan that paces by a WG. */
START_TEST(test_knob_in_flight) {
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    g_autoptr(Plan) a = small_plan((ProblemKind)kind,
                                   "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63}");
    g_autoptr(Plan) b = small_plan(
        (ProblemKind)kind, "power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 63, in_flight: 2}");
    g_autofree char *x = compile(a, (ProblemKind)kind, NULL), *y = compile(b, (ProblemKind)kind, NULL);
    ck_assert_msg(strcmp(x, y) != 0, "%s: in_flight did not change the output", pname(kind));
    /* only with a cap does the pacer wait for finished buckets */
    ck_assert_msg(!strstr(x, "    WAIT      ev.took") && strstr(y, "    WAIT      ev.took"),
                  "%s: the pacer waits for ev.took without in_flight, or not with it", pname(kind));
  }
}
END_TEST

/* bucket_bytes and event_interval each matter on their own: changing one
 * changes the output, and the waits last event_interval cycles. */
START_TEST(test_knob_power_values) {
  static const char *const power[] = {"power: {bucket_bytes: 2048, event_interval: 50}",
                                      "power: {bucket_bytes: 512, event_interval: 50}",
                                      "power: {bucket_bytes: 2048, event_interval: 100}"};
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    char *text[3];
    for (int i = 0; i < 3; i++) {
      g_autoptr(Plan) plan = small_plan((ProblemKind)kind, power[i]);
      text[i] = compile(plan, (ProblemKind)kind, NULL);
    }
    ck_assert_msg(strcmp(text[0], text[1]) != 0, "%s: bucket_bytes changes nothing", pname(kind));
    ck_assert_msg(strcmp(text[0], text[2]) != 0, "%s: event_interval changes nothing", pname(kind));
    ck_assert(strstr(text[0], "    WAITT     50 ") && !strstr(text[0], "    WAITT     100 "));
    ck_assert(strstr(text[2], "    WAITT     100 ") && !strstr(text[2], "    WAITT     50 "));
    for (int i = 0; i < 3; i++) g_free(text[i]);
  }
}
END_TEST

/* The pacing WG runs the pacer alone (placement keeps it free). */
START_TEST(test_knob_pacing_wg_alone) {
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    g_autoptr(Plan) plan = small_plan(
        (ProblemKind)kind, "sms_used: 1\n  power: {bucket_bytes: 2048, event_interval: 50, pacing_wg: 1}");
    g_autofree char *text = compile(plan, (ProblemKind)kind, NULL);
    ck_assert_msg(strstr(text, "\n.wg 1   ; sm 0, tasks: pacer\n"), "%s: WG 1 is not the pacer's alone",
                  pname(kind));
    ck_assert(strstr(text, "\n.wg 0 ") && strstr(text, "\n.wg 2 ") && strstr(text, "\n.wg 3 "));
    ck_assert(!strstr(text, "\n.wg 4 "));
  }
}
END_TEST

/* How many times `what` occurs in `text`. */
static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* Direct K/V write-back is the pass kv_writeback: the lowering emits the
 * round trip (a fence and a read-back per K/V piece) for both settings;
 * with direct the pass leaves none of it and the same K/V stores as temp
 * makes, with temp every round trip stays.  The streamed lowering stores a
 * piece in one run of ops, P1's resident owners spread it over their
 * chunks (resident_owners.c): both shapes of the round trip. */
START_TEST(test_kv_writeback_pass) {
  const struct { ProblemKind kind; const char *knobs, *kv; } cases[] = {
      {PROB_D1, NULL, "k_cache.l0"}, {PROB_P1, NULL, "k_out.l0"}, {PROB_P1, P1_RES, "k_out.l0"}};
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *what = pname(cases[i].kind);
    g_autofree char *kd = g_strdup_printf("%s%skv_writeback: direct", cases[i].knobs ? cases[i].knobs : "",
                                          cases[i].knobs ? "\n  " : "");
    g_autofree char *kt = g_strdup_printf("%s%skv_writeback: temp", cases[i].knobs ? cases[i].knobs : "",
                                          cases[i].knobs ? "\n  " : "");
    g_autoptr(Plan) d = small_plan(cases[i].kind, kd);
    g_autoptr(Plan) t = small_plan(cases[i].kind, kt);
    g_autoptr(GError) err = NULL;
    g_autofree char *lowered = NULL;
    g_autoptr(Ir) ir = pass_pipeline(d, cases[i].kind, "lower", &lowered, TRUE, &err);
    ck_assert_msg(ir, "%s: %s", what, err ? err->message : "?");
    ck_assert_msg(count_of(lowered, "SIG ev.fence_") > 0 && count_of(lowered, ".kvback") > 0,
                  "%s case %u: the lowering made no round trip for the pass", what, i);
    g_autofree char *ad = compile(d, cases[i].kind, NULL), *at = compile(t, cases[i].kind, NULL);
    ck_assert_msg(count_of(ad, "fence_") == 0 && count_of(ad, "kvback") == 0,
                  "%s case %u: direct keeps a round trip", what, i);
    ck_assert_msg(count_of(at, "fence_") > 0 && count_of(at, "kvback") > 0,
                  "%s case %u: temp lost its round trips", what, i);
    g_autofree char *to = g_strdup_printf("hbm[%s", cases[i].kv); /* its stores, and its loads by attention */
    ck_assert_msg(count_of(ad, to) > 0 && count_of(ad, to) == count_of(at, to),
                  "%s case %u: %d K accesses direct, %d temp", what, i, count_of(ad, to), count_of(at, to));
  }
}
END_TEST

/* kv_writeback: temp is the slower path (docs/plan.md): more cycles and more
 * energy than direct, on both problems. */
START_TEST(test_knob_kv_temp_slower) {
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    g_autoptr(Plan) d = small_plan((ProblemKind)kind, "kv_writeback: direct");
    g_autoptr(Plan) t = small_plan((ProblemKind)kind, "kv_writeback: temp");
    Run rd = compile_run(d, (ProblemKind)kind, pname(kind), NULL);
    Run rt = compile_run(t, (ProblemKind)kind, pname(kind), NULL);
    ck_assert_msg(rt.cycles > rd.cycles, "%s: temp %" G_GINT64_FORMAT " cycles, direct %" G_GINT64_FORMAT,
                  pname(kind), rt.cycles, rd.cycles);
    ck_assert_msg(rt.energy_uj > rd.energy_uj, "%s: temp %.3f uJ, direct %.3f uJ", pname(kind),
                  rt.energy_uj, rd.energy_uj);
  }
}
END_TEST

/* store_spacing and self-paced buckets only add waits: never faster.
 * Pacing by a WG with a cap on buckets in flight lowers the hottest window. */
START_TEST(test_knob_power_directions) {
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    ProblemKind k = (ProblemKind)kind;
    g_autoptr(Plan) base = small_plan(k, NULL);
    g_autoptr(Plan) sp = small_plan(k, "store_spacing: 16");
    g_autoptr(Plan) big = small_plan(k, "store_spacing: 2000");
    g_autoptr(Plan) self = small_plan(k, "power: {bucket_bytes: 2048, event_interval: 50}");
    g_autoptr(Plan) cap = small_plan(k, "power: {bucket_bytes: 2048, event_interval: 100, pacing_wg: 63, in_flight: 1}");
    Run r0 = compile_run(base, k, "base", NULL), r1 = compile_run(sp, k, "store_spacing 16", NULL);
    Run r2 = compile_run(big, k, "store_spacing 2000", NULL);
    Run r3 = compile_run(self, k, "self-paced", NULL), r4 = compile_run(cap, k, "in_flight 1", NULL);
    ck_assert_msg(r1.cycles >= r0.cycles && r2.cycles > r0.cycles,
                  "%s: store_spacing 0/16/2000: %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
                  "/%" G_GINT64_FORMAT " cycles",
                  pname(k), r0.cycles, r1.cycles, r2.cycles);
    ck_assert_msg(r3.cycles >= r0.cycles, "%s: self-paced %" G_GINT64_FORMAT " < %" G_GINT64_FORMAT,
                  pname(k), r3.cycles, r0.cycles);
    ck_assert_msg(r4.peak_w < r0.peak_w, "%s: peak with in_flight 1 %.4f W, without pacing %.4f W",
                  pname(k), r4.peak_w, r0.peak_w);
  }
}
END_TEST

Suite *suite_gen(void) {
  Suite *s = suite_create("gen");
  TCase *tc = tcase_create("baseline");
  tcase_set_timeout(tc, 1800); /* full-size runs: minutes under ASan */
  tcase_add_loop_test(tc, test_baseline, 0, 2 * NSEEDS);
  suite_add_tcase(s, tc);
  tc = tcase_create("attention"); /* P1 attention.kv, softmax, interleave */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_p1_attention_interleave);
  tcase_add_test(tc, test_p1_attention_kv_shared);
  tcase_add_test(tc, test_p1_attention_kv_resident);
  tcase_add_test(tc, test_p1_attention_kv_resident_fit);
  suite_add_tcase(s, tc);
  tc = tcase_create("passes");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_passes_baseline, 0, 2);
  tcase_add_test(tc, test_passes_golden);
  tcase_add_test(tc, test_pipeline_errors);
  tcase_add_test(tc, test_program_size_limit);
  tcase_add_test(tc, test_size_floor);
  tcase_add_test(tc, test_task_roles);
  tcase_add_test(tc, test_slice_merge_example);
  tcase_add_test(tc, test_sync_counts_producers);
  suite_add_tcase(s, tc);
  tc = tcase_create("pace"); /* pass_pace alone on hand-written IR */
  tcase_add_test(tc, test_paced_bucket_exact);
  tcase_add_test(tc, test_paced_monotone);
  tcase_add_test(tc, test_pace_partial_lines);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_determinism);
  suite_add_tcase(s, tc);
  tc = tcase_create("diff");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_diff_panels);
  tcase_add_test(tc, test_diff_k_chunk);
  tcase_add_test(tc, test_diff_store_spacing);
  tcase_add_test(tc, test_diff_self_paced);
  suite_add_tcase(s, tc);
  tc = tcase_create("rf_grid"); /* grid.c */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_p1_rf_grid_loads);
  tcase_add_test(tc, test_p1_rf_grid_k_split);
  tcase_add_test(tc, test_p1_rf_grid_refused);
  tcase_add_test(tc, test_p1_rf_grid_multicast);
  tcase_add_test(tc, test_p1_rf_grid_waves);
  tcase_add_test(tc, test_p1_mma_arrays);
  tcase_add_test(tc, test_p1_kv_temp_blocks);
  suite_add_tcase(s, tc);
  tc = tcase_create("knobs");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_knob_changes_output, 0, G_N_ELEMENTS(knobs));
  tcase_add_test(tc, test_knob_power_values);
  tcase_add_test(tc, test_knob_in_flight);
  tcase_add_test(tc, test_knob_slice_map);
  tcase_add_test(tc, test_resident_weights);
  tcase_add_test(tc, test_resident_too_wide);
  tcase_add_test(tc, test_p1_resident_weights);
  tcase_add_test(tc, test_p1_multicast);
  tcase_add_test(tc, test_p1_query_tiles);
  tcase_add_test(tc, test_p1_attention_waves);
  tcase_add_test(tc, test_p1_packed);
  tcase_add_test(tc, test_p1_packed_x);
  tcase_add_test(tc, test_p1_k_split_last);
  tcase_add_test(tc, test_p1_tile_sync);
  tcase_add_test(tc, test_p1_ln_fold);
  tcase_add_test(tc, test_p1_ln_stats);
  tcase_add_test(tc, test_p1_weight_pacing);
  tcase_add_test(tc, test_p1_shard_group);
  tcase_add_test(tc, test_p1_att_tile_sync);
  tcase_add_test(tc, test_p1_ln_fold_pacing);
  tcase_add_test(tc, test_p1_ln_first_stagger);
  tcase_add_test(tc, test_p1_ln_stagger);
  tcase_add_test(tc, test_p1_handoff_rf);
  tcase_add_test(tc, test_p1_fanout_chains);
  tcase_add_test(tc, test_p1_handoff_fanout);
  tcase_add_test(tc, test_p1_handoff_hop_flow);
  tcase_add_test(tc, test_p1_gelu_factor);
  tcase_add_test(tc, test_p1_issue_spacing_owners);
  tcase_add_test(tc, test_p1_handoff_rf_buffers);
  tcase_add_test(tc, test_p1_attention_stagger);
  tcase_add_test(tc, test_ilp_placement);
  tcase_add_test(tc, test_ilp_infeasible);
  tcase_add_test(tc, test_ilp_red_apart);
  tcase_add_test(tc, test_ilp_time_limit);
  tcase_add_test(tc, test_handoff_rf);
  tcase_add_test(tc, test_resident_history);
  tcase_add_test(tc, test_k_split);
  tcase_add_test(tc, test_stream_depth);
  tcase_add_test(tc, test_k_split_streamed);
  tcase_add_test(tc, test_stream_prefetch);
  tcase_add_test(tc, test_k_split_red);
  tcase_add_test(tc, test_ln_fold_deferred);
  tcase_add_test(tc, test_wave_order_need);
  tcase_add_test(tc, test_first_token);
  tcase_add_test(tc, test_q_first);
  tcase_add_test(tc, test_new_slice);
  tcase_add_test(tc, test_kv_deferred_live);
  tcase_add_test(tc, test_kv_temp_slices);
  tcase_add_test(tc, test_p1_pass_one_panel);
  tcase_add_test(tc, test_in_flight_resident);
  tcase_add_test(tc, test_gelu_factor);
  tcase_add_test(tc, test_pacing_by_need);
  tcase_add_test(tc, test_ffn_fused);
  tcase_add_test(tc, test_handoff_relays);
  tcase_add_test(tc, test_split_stats);
  tcase_add_test(tc, test_knob_pacing_wg_alone);
  tcase_add_test(tc, test_knob_kv_temp_slower);
  tcase_add_test(tc, test_kv_writeback_pass);
  tcase_add_test(tc, test_knob_power_directions);
  suite_add_tcase(s, tc);
  return s;
}
