/* tcc_grade.c - the tcc-grade command: compile both problems of a plan,
 * simulate each on the grading seed and the check seeds, print the verdicts
 * and the score (docs/workloads.md "Score").
 *
 * With --record DIR, the run (failures too) is appended to DIR's experiment
 * records; --log DIR lists them, --log DIR --plan N prints the plan text
 * record N keeps (src/tools/record.c).  With --html FILE, the report is
 * also a self-contained page (src/tools/html.c).
 *
 * Exit codes: 0 = both problems correct and within budgets on every seed,
 * 1 = a constraint fails, 2 = bad input (plan, compile or a faulty program)
 * or standard output that cannot be written. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "bounds.h"
#include "heap.h"
#include "json_text.h"
#include "outfile.h"
#include "fit.h"
#include "html.h"
#include "pipeline.h"
#include "plot.h"
#include "record.h"
#include "sim.h"
#include "stdout_check.h"
#include "text_escape.h"

#define TCC_GRADE_VERSION "tcc-grade 0.1.0"

static const uint64_t seeds[] = WL_GRADE_SEEDS;
enum { NSEEDS = G_N_ELEMENTS(seeds) };

typedef struct Outcome {
  SimResult res[NSEEDS];
  gboolean pass;  /* numerics on every seed, area, power */
  Machine hw;     /* the program's hardware and problem (for the bound) */
  Problem prob;
  char prog_sha256[65], hw_sha256[65]; /* the report's hashes (--record) */
  char *hint;     /* area or power FAIL: where to look (sim_verdict_hint), owned */
  /* --html: a profiled run with its timeline (prof, when have_prof), the
   * power plot (or why none), the knobs the program was compiled with
   * and the compiler's warnings and fitting note */
  SimResult prof;
  gboolean have_prof;
  char *svg, *svg_note;
  Schedule sched;
  GPtrArray *warnings;
  char *fit_note;
} Outcome;

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

/* The verdict table: a header and one row per problem.  Every cell is
 * formatted first and each column is as wide as its widest cell, so the
 * columns line up whatever the widths (9-digit cycles, a window far into the
 * run, tens of watts, "inf" errors); numbers are right-aligned, text
 * left-aligned, columns two spaces apart, the verdict last and unpadded. */
enum { COL_NAME, COL_CYCLES, COL_AREA, COL_POWER, COL_WINDOW, COL_ERR, COL_VERDICT = COL_ERR + NSEEDS, NCOLS };

static char *cell(const Outcome *o, int col) {
  const SimResult *r = &o->res[0];
  switch (col) {
  case COL_CYCLES: return g_strdup_printf("%" G_GINT64_FORMAT, r->cycles);
  case COL_AREA: return g_strdup_printf("%.4f", r->area_mm2);
  case COL_POWER: return g_strdup_printf("%.4f", r->peak_w);
  case COL_WINDOW:
    return g_strdup_printf("[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", r->peak_start,
                           r->peak_start + POWER_WINDOW);
  case COL_VERDICT: {
    g_autofree char *why = failures(o);
    return g_strdup_printf("%s%s%s", o->pass ? "PASS" : "FAIL", *why ? ": " : "", why);
  }
  default: return g_strdup_printf("%.1e", o->res[col - COL_ERR].check.max_abs_err);
  }
}

static void print_table(const char *const names[], const Outcome *const outs[], int n) {
  char *t[3][NCOLS]; /* header, then the rows */
  g_assert(n <= 2);
  static const char *const head[COL_ERR] = {"", "cycles", "area mm2", "peak W", "hottest window"};
  for (int c = 0; c < NCOLS; c++)
    t[0][c] = c < COL_ERR       ? g_strdup(head[c])
              : c < COL_VERDICT ? g_strdup_printf("err s%" G_GUINT64_FORMAT, seeds[c - COL_ERR])
                                : g_strdup("verdict");
  for (int i = 0; i < n; i++)
    for (int c = 0; c < NCOLS; c++) t[i + 1][c] = c == COL_NAME ? g_strdup(names[i]) : cell(outs[i], c);
  int width[NCOLS] = {0};
  for (int i = 0; i <= n; i++)
    for (int c = 0; c < NCOLS; c++) width[c] = MAX(width[c], (int)strlen(t[i][c]));
  for (int i = 0; i <= n; i++) {
    for (int c = 0; c < NCOLS; c++) {
      gboolean left = c == COL_NAME || c == COL_WINDOW || c == COL_VERDICT;
      if (c == COL_VERDICT)
        printf("%s", t[i][c]);
      else
        printf(left ? "%-*s  " : "%*s  ", width[c], t[i][c]);
      g_free(t[i][c]);
    }
    putchar('\n');
  }
}

#ifndef TCC_GRADE_TABLE_TEST
/* What an outcome owns (a zeroed one owns nothing). */
static void outcome_clear(Outcome *o) {
  for (int i = 0; i < NSEEDS; i++) sim_result_clear(&o->res[i]);
  g_free(o->hint);
  if (o->have_prof) sim_result_clear(&o->prof);
  g_free(o->svg);
  g_free(o->svg_note);
  if (o->warnings) g_ptr_array_unref(o->warnings);
  g_free(o->fit_note);
  memset(o, 0, sizeof *o);
}

/* Grading, as tasks on a thread pool.  Timing, power and area do not depend
 * on the data, so each problem is timed once (sim_time) and each seed only
 * checks the numerics (sim_check): the same results and errors as a full
 * sim_run per seed (tests/run_grade.sh compares them).  A seed's reference
 * does not depend on the program at all: it is computed from the start,
 * while the plan compiles and the timing runs (up to EAGER_REF_HBM bytes of
 * problem data: past that, a reference takes seconds and gigabytes, and a
 * check computes it only when the outputs are all written, as wl_check).  The pool runs timings
 * first (they gate the checks), then checks, then references; a check whose
 * reference nobody has started computes it itself, so no task waits for a
 * task still queued.  Results land in fixed slots and are printed in a
 * fixed order, whatever thread ran what. */
typedef struct Grade {
  GThreadPool *pool;
  GMutex lock;
  GCond cond;              /* a task finished, or a reference is ready */
  int pending;             /* tasks pushed and not finished */
  unsigned seq;            /* tasks pushed so far (FIFO among equals) */
  gboolean cancel;         /* a compile failed: skip the references not started */
} Grade;

#define EAGER_REF_HBM (64u << 20)

typedef enum { REF_QUEUED, REF_RUNNING, REF_DONE } RefState;

typedef struct Job {
  Grade *g;
  Problem prob;            /* the plan's dims, and their ABI: the references' */
  Abi abi;
  const Program *prog;     /* set before the timing task is pushed */
  gboolean refs_eager;     /* references computed from the start (small problems) */
  gboolean refs_apply;     /* ... and of use: prog's problem is prob (else checks compute their own) */
  SimTiming *timing;       /* set by the timing task, then read by the checks */
  WlRef *ref[NSEEDS];
  RefState ref_state[NSEEDS]; /* under g->lock */
  SimResult res[NSEEDS];
  GError *err[NSEEDS];
  Schedule sched;          /* the compiled program's knobs (Ir.sched), warnings, fit note */
  GPtrArray *warnings;
  char *fit_note;
} Job;

typedef enum { T_TIME, T_CHECK, T_REF } TaskKind; /* in the order the pool runs them */

typedef struct Task {
  TaskKind kind;
  unsigned seq;
  Job *job;
  int seed;                /* index into seeds[] (T_CHECK, T_REF) */
} Task;

static gint task_order(gconstpointer a, gconstpointer b, gpointer user) {
  const Task *x = a, *y = b;
  (void)user;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void push(Grade *g, Job *job, TaskKind kind, int seed) {
  Task *t = g_new(Task, 1);
  g_mutex_lock(&g->lock);
  *t = (Task){kind, g->seq++, job, seed};
  g->pending++;
  g_mutex_unlock(&g->lock);
  g_thread_pool_push(g->pool, t, NULL);
}

/* The reference of seed i of job j, computed here unless another thread
 * has started it (then wait for it).  With need = FALSE (a T_REF task),
 * only if nobody has started it. */
static const WlRef *reference(Job *j, int i, gboolean need) {
  Grade *g = j->g;
  g_mutex_lock(&g->lock);
  if (j->ref_state[i] == REF_QUEUED) {
    j->ref_state[i] = REF_RUNNING;
    g_mutex_unlock(&g->lock);
    WlRef *r = wl_reference(&j->prob, &j->abi, seeds[i]);
    g_mutex_lock(&g->lock);
    j->ref[i] = r;
    j->ref_state[i] = REF_DONE;
    g_cond_broadcast(&g->cond);
  }
  while (need && j->ref_state[i] != REF_DONE) g_cond_wait(&g->cond, &g->lock);
  g_mutex_unlock(&g->lock);
  return j->ref[i];
}

static void run_task(gpointer data, gpointer user) {
  Task *t = data;
  Job *j = t->job;
  Grade *g = user;
  switch (t->kind) {
  case T_TIME: {
    SimOptions opt;
    sim_options_default(&opt);
    j->timing = sim_time(j->prog, &opt);
    for (int i = 0; i < NSEEDS; i++) push(g, j, T_CHECK, i);
    break;
  }
  case T_CHECK:
    sim_check(j->timing, seeds[t->seed], j->refs_apply ? reference(j, t->seed, TRUE) : NULL,
              &j->res[t->seed], &j->err[t->seed]);
    break;
  case T_REF:
    if (!g_atomic_int_get(&g->cancel)) reference(j, t->seed, FALSE);
    break;
  }
  g_free(t);
  g_mutex_lock(&g->lock);
  if (--g->pending == 0) g_cond_broadcast(&g->cond);
  g_mutex_unlock(&g->lock);
}

/* Start computing the references of a problem, from the plan's dims. */
static void start_refs(Grade *g, const Problem *dims, Job *j) {
  j->g = g;
  j->prob = *dims;
  wl_abi_build(&j->prob, &j->abi);
  if (j->abi.hbm_bytes > EAGER_REF_HBM) return;
  j->refs_eager = TRUE;
  for (int i = 0; i < NSEEDS; i++) push(g, j, T_REF, i);
}

/* Compile one problem and start its timing; FALSE on a compile error. */
static gboolean start_one(Grade *g, const Plan *plan, ProblemKind kind, Job *j, Program **prog,
                          GError **err) {
  FitKept kept;
  g_autoptr(Ir) ir = fit_pipeline_kept(plan, kind, NULL, &kept, err);
  if (!ir) return FALSE;
  j->sched = ir->sched;
  j->warnings = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; plan->warnings[kind] && i < plan->warnings[kind]->len; i++)
    g_ptr_array_add(j->warnings, g_strdup(g_ptr_array_index(plan->warnings[kind], i)));
  for (guint i = 0; ir->warnings && i < ir->warnings->len; i++)
    g_ptr_array_add(j->warnings, g_strdup(g_ptr_array_index(ir->warnings, i)));
  j->fit_note = g_strdup(ir->fit_note);
  if (kept.prog) { /* the fitting's last run is this program's: its timing, not a second one */
    *prog = kept.prog;
  } else {
    char *text = be_emit(ir);
    g_autofree char *name = g_strdup_printf("%s[%s].asm", plan->file, wl_problem_name(kind));
    *prog = sim_asm_parse_take(name, text, strlen(text), err); /* takes the text */
    if (!*prog) return FALSE;
  }
  /* the references were computed from the plan's dims: of use when the
   * program's problem is the same (tcc-gen writes the plan's) */
  g_autofree char *want = wl_problem_canonical(&j->prob), *got = wl_problem_canonical(&(*prog)->prob);
  j->refs_apply = j->refs_eager && strcmp(want, got) == 0;
  j->prog = *prog;
  if (kept.timing) {
    j->timing = kept.timing;
    for (int i = 0; i < NSEEDS; i++) push(g, j, T_CHECK, i);
  } else {
    push(g, j, T_TIME, -1);
  }
  return TRUE;
}

/* A started problem's outcome: FALSE with the first seed's error, as a run
 * of the seeds in order would stop at it. */
static gboolean finish_one(Job *j, Outcome *o, gboolean html, GError **err) {
  o->pass = TRUE;
  o->hw = j->prog->hw;
  o->prob = j->prog->prob;
  g_strlcpy(o->prog_sha256, j->prog->sha256, sizeof o->prog_sha256);
  g_autofree char *hh = sim_hardware_sha256(j->prog);
  g_strlcpy(o->hw_sha256, hh, sizeof o->hw_sha256);
  for (int i = 0; i < NSEEDS; i++) {
    if (j->err[i]) {
      g_propagate_error(err, j->err[i]);
      j->err[i] = NULL;
      return FALSE;
    }
    o->res[i] = j->res[i];
    o->pass &= sim_verdict_exit(j->prog, &o->res[i]) == 0;
  }
  const SimResult *r = &o->res[0];
  gboolean hot = r->peak_w > POWER_LIMIT_W;
  if (hot || html) {
    /* for a power FAIL's hint and the page: a profiled timing run (the
     * energy does not depend on the data), with its timeline for the
     * page's plot */
    SimOptions po;
    sim_options_default(&po);
    po.profile = TRUE, po.timing_only = TRUE, po.trace = html;
    o->have_prof = sim_run(j->prog, &po, &o->prof, NULL);
  }
  if (hot || r->area_mm2 > AREA_LIMIT_MM2) { /* where to look */
    g_autofree char *prefix = g_strdup_printf("hint %s  ", wl_problem_name(j->prog->prob.kind));
    o->hint = sim_verdict_hint(j->prog, r, hot && o->have_prof ? &o->prof : NULL, prefix);
  }
  if (html && o->have_prof) {
    g_autoptr(GError) perr = NULL;
    o->svg = plot_svg(j->prog, o->prof.trace, &perr);
    if (!o->svg) o->svg_note = g_strdup(perr->message);
  } else if (html) {
    o->svg_note = g_strdup("the profiled run failed");
  }
  if (o->have_prof && !html) {
    sim_result_clear(&o->prof);
    o->have_prof = FALSE;
  }
  o->sched = j->sched;
  o->warnings = g_steal_pointer(&j->warnings);
  o->fit_note = g_steal_pointer(&j->fit_note);
  return TRUE;
}

static void job_clear(Job *j) {
  sim_timing_free(j->timing);
  g_clear_pointer(&j->warnings, g_ptr_array_unref);
  g_clear_pointer(&j->fit_note, g_free);
  for (int i = 0; i < NSEEDS; i++) {
    g_clear_error(&j->err[i]);
    wl_reference_free(j->ref[i]);
  }
  wl_abi_clear(&j->abi);
}

/* "bound p1  56001 cycles (power); cycles / bound = 14.33" (docs/bounds.md):
 * the problem's lower bound on the plan's hardware and the graded run's
 * distance from it. */
static void print_bound(const char *name, const Outcome *o) {
  Bounds b;
  sim_bounds(&o->hw, &o->prob, &b);
  printf("bound %s  %" G_GINT64_FORMAT " cycles (%s); cycles / bound = %.2f\n", name, b.bound,
         sim_bound_name[b.binding], (double)o->res[0].cycles / (double)b.bound);
}

/* ---- --json: the same report for tools (tcc-sweep), through json-glib ---- */

static void record_problem(RecProblem *rp, const char *name, const Outcome *o);

/* A failing outcome's status: its first failing constraint. */
static const char *status_of(const Outcome *o) {
  for (int i = 0; i < NSEEDS; i++)
    if (!o->res[i].check.pass) return "numerics";
  return o->res[0].area_mm2 > AREA_LIMIT_MM2 ? "area" : "power";
}

/* A problem's result object of the schema, as --record writes it. */
static void json_problem(JsonBuilder *j, const char *name, const Outcome *o) {
  RecProblem rp = {0};
  record_problem(&rp, name, o);
  json_builder_set_member_name(j, name);
  json_builder_begin_object(j);
  rec_problem_members(j, &rp, seeds, NSEEDS);
  json_builder_end_object(j);
  g_free(rp.problem);
  g_free(rp.program_sha256);
  g_free(rp.hardware_sha256);
}

/* A result document's head (docs/tools.md "Results"), its object open:
 * the schema, tool and simulator versions and the plan. */
static JsonBuilder *json_head(const char *plan) {
  JsonBuilder *j = json_builder_new();
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "schema_version");
  json_builder_add_int_value(j, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(j, "tool");
  json_builder_add_string_value(j, TCC_GRADE_VERSION);
  json_builder_set_member_name(j, "simulator");
  json_builder_add_string_value(j, TCC_SIM_VERSION);
  json_builder_set_member_name(j, "plan");
  json_add_utf8(j, plan);
  return j;
}

/* The report as one JSON object of the result schema (docs/tools.md,
 * "Results"): versions, plan, status, the score (null with score_note
 * saying why when there is none) and per problem its result object. */
static void print_json(const Plan *plan, const Outcome *p1, const Outcome *d1, gboolean graded_dims) {
  /* --problem: one of them NULL, not graded */
  gboolean pass = (!p1 || p1->pass) && (!d1 || d1->pass);
  g_autoptr(JsonBuilder) j = json_head(plan->file);
  /* the first failing problem's status (numerics, area, power), else pass */
  json_builder_set_member_name(j, "status");
  json_builder_add_string_value(j, pass ? "pass" : status_of(p1 && !p1->pass ? p1 : d1));
  json_builder_set_member_name(j, "score");
  const char *note = !p1 || !d1    ? "one problem graded (--problem)"
                     : !pass       ? "a constraint fails"
                     : !graded_dims ? "problem dims differ from the graded defaults"
                                    : NULL;
  if (note)
    json_builder_add_null_value(j);
  else
    json_builder_add_double_value(j, wl_score(p1->res[0].cycles, d1->res[0].cycles));
  json_builder_set_member_name(j, "score_note");
  if (note)
    json_add_utf8(j, note);
  else
    json_builder_add_null_value(j);
  json_builder_set_member_name(j, "problems");
  json_builder_begin_object(j);
  if (p1) json_problem(j, "p1", p1);
  if (d1) json_problem(j, "d1", d1);
  json_builder_end_object(j);
  json_builder_end_object(j);
  g_autofree char *text = json_pretty_text(j);
  stdout_put(text);
}

/* Compile both problems and grade them: P1's compile, then D1's compile
 * while P1 runs; then the outcomes, P1's first (its error wins, as when
 * each problem ran to its end before the next was compiled). */
static gboolean grade(const Plan *plan, int nthreads, gboolean do_p1, gboolean do_d1, gboolean html, Outcome *p1,
                      Outcome *d1, gboolean *refused, GError **err) {
  Grade g = {0};
  g_mutex_init(&g.lock);
  g_cond_init(&g.cond);
  g.pool = g_thread_pool_new(run_task, &g, nthreads, FALSE, NULL);
  g_thread_pool_set_sort_function(g.pool, task_order, NULL);
  Job jp = {0}, jd = {0};
  g_autoptr(Program) pp = NULL, pd = NULL;
  g_autoptr(GError) derr = NULL;
  /* while this thread compiles, the pool leaves it a processor (with one
   * thread, the pool waits: one task at a time) */
  g_thread_pool_set_max_threads(g.pool, nthreads - 1, NULL);
  if (do_p1) start_refs(&g, &plan->p1.dims, &jp);
  if (do_d1) start_refs(&g, &plan->d1.dims, &jd);
  gboolean ok = !do_p1 || start_one(&g, plan, PROB_P1, &jp, &pp, err);
  gboolean dok = ok && (!do_d1 || start_one(&g, plan, PROB_D1, &jd, &pd, &derr));
  g_thread_pool_set_max_threads(g.pool, nthreads, NULL);
  *refused = !ok || !dok; /* tcc-gen's refusal, not a run's failure */
  if (!ok || !dok) g_atomic_int_set(&g.cancel, TRUE);
  g_mutex_lock(&g.lock);
  while (g.pending > 0) g_cond_wait(&g.cond, &g.lock);
  g_mutex_unlock(&g.lock);
  g_thread_pool_free(g.pool, FALSE, TRUE);
  if (ok && do_p1) ok = finish_one(&jp, p1, html, err);
  if (ok && !dok) {
    g_propagate_error(err, derr);
    derr = NULL;
    ok = FALSE;
  }
  if (ok && do_d1) ok = finish_one(&jd, d1, html, err);
  job_clear(&jp);
  job_clear(&jd);
  g_mutex_clear(&g.lock);
  g_cond_clear(&g.cond);
  return ok;
}

/* --record: one problem of a graded run as the record keeps it. */
static void record_problem(RecProblem *rp, const char *name, const Outcome *o) {
  const SimResult *r = &o->res[0];
  Bounds b;
  sim_bounds(&o->hw, &o->prob, &b);
  rp->bound = b.bound;
  rp->binding = sim_bound_name[b.binding];
  g_autofree char *prob = wl_problem_canonical(&o->prob);
  rp->name = name;
  rp->problem = g_strdup(prob + strlen(".problem "));
  rp->program_sha256 = g_strdup(o->prog_sha256);
  rp->hardware_sha256 = g_strdup(o->hw_sha256);
  rp->cycles = r->cycles;
  rp->peak_start = r->peak_start;
  rp->area_mm2 = r->area_mm2;
  rp->peak_w = r->peak_w;
  for (int i = 0; i < NSEEDS; i++) {
    rp->max_abs_err[i] = o->res[i].check.max_abs_err;
    rp->numerics_ok[i] = o->res[i].check.pass;
  }
  rp->area_ok = r->area_mm2 <= AREA_LIMIT_MM2;
  rp->power_ok = r->peak_w <= POWER_LIMIT_W;
}

/* The plan's bytes, read once (a FIFO or a pipe gives them once): what is
 * parsed, and what the record and the page hash and keep.  NULL when the
 * plan could not be read. */
static char *plan_bytes;
static gsize plan_nbytes;

static char *plan_bytes_sha256(void) {
  return plan_bytes ? g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)plan_bytes, plan_nbytes) : NULL;
}

/* --record DIR: append the run to DIR's records (a note on stderr says
 * where and its class); FALSE, with the diagnostic printed, when that
 * fails. */
static gboolean record(const char *dir, RecRun *r) {
  G_STATIC_ASSERT((int)NSEEDS <= (int)REC_MAX_SEEDS);
  r->time = rec_now();
  r->plan_sha256 = plan_bytes_sha256();
  r->plan_text = rec_plan_text_of(plan_bytes, plan_nbytes);
  r->grader = TCC_GRADE_VERSION;
  r->simulator = TCC_SIM_VERSION;
  r->spec = TCC_SPEC_VERSION;
  r->seeds = seeds;
  r->nseeds = NSEEDS;
  RecClass cls;
  int line;
  g_autoptr(GError) err = NULL;
  gboolean ok = rec_append(dir, r, &cls, &line, &err);
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  if (ok)
    fprintf(stderr, "tcc-grade: note: recorded in %s, line %d: %s\n", file, line, rec_class_name[cls]);
  else
    fprintf(stderr, "%s\n", err->message);
  g_free(r->time);
  g_free(r->plan_sha256);
  g_free(r->plan_text);
  for (int i = 0; i < 2; i++) {
    g_free(r->prob[i].problem);
    g_free(r->prob[i].program_sha256);
    g_free(r->prob[i].hardware_sha256);
  }
  return ok;
}

/* ---- --html: the page (src/tools/html.c) ---- */

/* A string the page points to, freed with `keep`. */
static const char *kept(GPtrArray *keep, char *s) {
  g_ptr_array_add(keep, s);
  return s;
}

/* The page's view of one graded problem; its strings and stages go into
 * `keep`. */
static void html_problem(HtmlProblem *hp, const char *name, const Outcome *o, const PlanProblem *planned,
                         GPtrArray *keep) {
  const SimResult *r = &o->res[0];
  g_autofree char *prob = wl_problem_canonical(&o->prob);
  g_autofree char *mach = sim_machine_canonical(&o->hw);
  hp->name = name;
  hp->problem = kept(keep, g_strdup(prob + strlen(".problem ")));
  hp->machine = kept(keep, g_strdup(mach + strlen(".machine ")));
  hp->pass = o->pass;
  hp->failures = kept(keep, failures(o));
  hp->hint = o->hint;
  hp->cycles = r->cycles;
  hp->peak_start = r->peak_start;
  hp->peak_w = r->peak_w;
  hp->area_mm2 = r->area_mm2;
  hp->static_w = r->static_w;
  hp->energy_uj = r->energy_uj;
  for (int i = 0; i < NSEEDS; i++) {
    hp->max_abs_err[i] = o->res[i].check.max_abs_err;
    hp->numerics_ok[i] = o->res[i].check.pass;
  }
  Bounds b;
  sim_bounds(&o->hw, &o->prob, &b);
  hp->nbounds = BOUND__COUNT;
  for (int k = 0; k < BOUND__COUNT; k++) {
    hp->bound_name[k] = sim_bound_name[k];
    hp->bound_cycles[k] = b.cycles[k];
  }
  hp->binding = (int)b.binding;
  hp->min_dynamic_uj = b.e_total_uj;
  hp->dynamic_budget_w = b.dyn_w;
  /* each unit class against the power bound's count for it */
  const SimResult *pr = o->have_prof ? &o->prof : r;
  hp->nunits = UC__COUNT;
  for (int u = 0; u < UC__COUNT; u++) {
    double min = u == UC_MMA ? b.e_mma_uj : u == UC_HBM ? b.e_hbm_uj : u == UC_NOC ? b.e_noc_uj
                 : u == UC_RF ? b.e_rf_uj : u == UC_VEC ? b.e_vec_uj : u == UC_SFU ? b.e_sfu_uj : NAN;
    hp->units[u] = (HtmlUnit){sim_unit_class_name[u], pr->unit_energy_uj[u], min};
  }
  if (o->have_prof) {
    HtmlStage *st = g_new0(HtmlStage, MAX(o->prof.nstages, 1));
    for (int i = 0; i < o->prof.nstages; i++) {
      const SimStage *x = &o->prof.stages[i];
      st[i] = (HtmlStage){x->name, x->start, x->end, x->wgs, x->insns, x->mma_blocks, x->hbm_lines,
                          sim_e_uj(x->energy)};
    }
    g_ptr_array_add(keep, st);
    hp->stages = st;
    hp->nstages = o->prof.nstages;
  }
  hp->svg = o->svg;
  hp->svg_note = o->svg_note;
  hp->planned = planned;
  hp->sched = &o->sched;
  hp->warnings = o->warnings ? (const char *const *)o->warnings->pdata : NULL;
  hp->nwarnings = o->warnings ? (int)o->warnings->len : 0;
  hp->fit_note = o->fit_note;
  hp->program_sha256 = o->prog_sha256;
  hp->hardware_sha256 = o->hw_sha256;
}

/* The page of a graded run, written through `out`; FALSE with the
 * diagnostic printed. */
static gboolean write_html(HtmlOut *out, const Plan *plan, const char *file, const Outcome *p1, const Outcome *d1,
                           gboolean has_score, double score, const char *score_note) {
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
  HtmlPage pg = {.plan = file, .grader = TCC_GRADE_VERSION, .simulator = TCC_SIM_VERSION, .loaded = plan,
                 .seeds = seeds, .nseeds = NSEEDS, .has_score = has_score, .score = score, .score_note = score_note};
  G_STATIC_ASSERT((int)NSEEDS <= (int)HTML_MAX_SEEDS && (int)UC__COUNT <= (int)HTML_MAX_UNITS &&
                  (int)BOUND__COUNT <= (int)HTML_MAX_BOUNDS);
  pg.plan_sha256 = kept(keep, plan_bytes_sha256());
  if (p1) html_problem(&pg.prob[pg.nprob++], "p1", p1, &plan->p1, keep);
  if (d1) html_problem(&pg.prob[pg.nprob++], "d1", d1, &plan->d1, keep);
  g_autofree char *text = html_page(&pg);
  g_autoptr(GError) err = NULL;
  if (!html_out_commit(out, text, strlen(text), &err)) {
    fprintf(stderr, "%s\n", err->message);
    return FALSE;
  }
  return TRUE;
}

/* A run that fails with a diagnostic (exit 2): printed, with --json also
 * as a result (status refused or error, the diagnostic), and recorded as a
 * tool error with --record. */
static int tool_error(const char *dir, const char *plan, const char *note, const char *msg, gboolean refused,
                      gboolean json) {
  fprintf(stderr, "%s\n", msg);
  if (json) {
    g_autoptr(JsonBuilder) j = json_head(plan);
    json_builder_set_member_name(j, "status");
    json_builder_add_string_value(j, refused ? "refused" : "error");
    json_builder_set_member_name(j, "error");
    json_add_utf8(j, msg);
    json_builder_end_object(j);
    g_autofree char *text = json_pretty_text(j);
    stdout_put(text);
  }
  if (dir) {
    RecRun r = {.plan = plan, .note = note, .error = msg, .refused = refused};
    record(dir, &r);
  }
  return 2;
}

int main(int argc, char **argv) {
  /* Each check allocates and frees tens of MB (an HBM image, RFs, a
   * reference) on whichever pool thread runs it: one heap for every thread,
   * grown in 256 MiB steps marked for huge pages, keeps them for the next
   * check instead of mapping fresh pages that the kernel must zero
   * (heap.c). */
  heap_setup(256u << 20, TRUE);
  stdout_check_at_exit("tcc-grade", 2); /* a report that was not written is an error */
  gboolean version = FALSE, json = FALSE;
  g_autofree char *rec_dir = NULL, *note = NULL, *log_dir = NULL, *problem = NULL, *html = NULL, *plan_n = NULL;
  GOptionEntry entries[] = {
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print the report as one JSON object (for tools: tcc-sweep)", NULL},
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem,
       "grade one problem, p1 or d1 (no score; the other is not compiled)", "P"},
      {"record", 0, 0, G_OPTION_ARG_FILENAME, &rec_dir,
       "append this run (failures too) to DIR/records.jsonl, one JSON line", "DIR"},
      {"note", 0, 0, G_OPTION_ARG_STRING, &note, "why this run: kept in its record (with --record)", "TEXT"},
      {"log", 0, 0, G_OPTION_ARG_FILENAME, &log_dir, "list the records of DIR as a table, oldest first", "DIR"},
      {"plan", 0, 0, G_OPTION_ARG_STRING, &plan_n,
       "with --log DIR: print the plan text that record N (its line, 1 = oldest) keeps, to grade it again", "N"},
      {"html", 0, 0, G_OPTION_ARG_FILENAME, &html,
       "also write the report as one self-contained HTML page (plots, stages, energy, knobs) to FILE", "FILE"},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("PLAN.yaml - grade a plan on P1 and D1");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx, "Compiles both problems of a plan, simulates seeds 7 (graded),\n"
                                    "13, 11 and 23 (checks), prints the verdicts and the score.\n"
                                    "tcc-grade --log DIR lists the runs recorded with --record DIR;\n"
                                    "--log DIR --plan N prints the plan text of record N.\n"
                                    "--html FILE writes a one-page report to share (docs/tools.md).\n"
                                    "Exit: 0 all pass, 1 a constraint fails, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (g_option_context_parse(ctx, &argc, &argv, &err) && version) {
    printf("%s\nsimulator: %s\n", TCC_GRADE_VERSION, TCC_SIM_VERSION);
    return 0;
  }
  if (!err && plan_n && !log_dir) {
    fprintf(stderr, "tcc-grade: error: --plan N needs --log DIR\n");
    return 2;
  }
  if (!err && log_dir && html) {
    fprintf(stderr, "tcc-grade: error: --html writes the report of a graded plan: not with --log\n");
    return 2;
  }
  if (!err && log_dir) {
    if (argc != 1 || rec_dir || note) {
      fprintf(stderr, "tcc-grade: error: --log DIR takes no plan, --record or --note\n");
      return 2;
    }
    if (plan_n) { /* one record's plan text, as it was graded */
      guint64 n;
      if (!g_ascii_string_to_unsigned(plan_n, 10, 1, G_MAXINT, &n, NULL)) {
        fprintf(stderr, "tcc-grade: error: --plan '%s': expected a record's line number, 1 or more\n", plan_n);
        return 2;
      }
      g_autofree char *text = rec_plan_text(log_dir, (int)n, &err);
      if (!text) {
        fprintf(stderr, "%s\n", err->message);
        return 2;
      }
      stdout_put(text);
      return 0;
    }
    /* a bad line is a warning and skipped: the other records still list
     * (docs/tools.md "Experiment records") */
    g_autoptr(GString) warn = g_string_new(NULL);
    g_autofree char *table = rec_log(log_dir, warn, &err);
    fputs(warn->str, stderr);
    if (!table) {
      fprintf(stderr, "%s\n", err->message);
      return 2;
    }
    stdout_put(table);
    return 0;
  }
  if (err || argc != 2) {
    fprintf(stderr, "tcc-grade: error: %s\n", err ? err->message : "expected one plan file (see --help)");
    return 2;
  }
  if (problem && strcmp(problem, "p1") != 0 && strcmp(problem, "d1") != 0) {
    fprintf(stderr, "tcc-grade: error: --problem must be p1 or d1, got '%s'\n", problem);
    return 2;
  }
  if (problem && rec_dir) {
    fprintf(stderr, "tcc-grade: error: --record keeps graded runs of both problems: not with --problem\n");
    return 2;
  }
  if (note && !rec_dir) {
    fprintf(stderr, "tcc-grade: error: --note needs --record DIR\n");
    return 2;
  }
  if (rec_dir && !*rec_dir) {
    fprintf(stderr, "tcc-grade: error: --record needs a directory name\n");
    return 2;
  }
  if (html && !*html) {
    fprintf(stderr, "tcc-grade: error: --html needs a file name\n");
    return 2;
  }
  /* the records are appended to DIR/records.jsonl: never to the plan */
  g_autofree char *rec_file = rec_dir ? g_build_filename(rec_dir, REC_FILE, NULL) : NULL;
  if (rec_file && outfile_is_input(rec_file, (const char *const[]){argv[1], NULL}, NULL)) {
    g_autofree char *q = text_escape(rec_file);
    fprintf(stderr, "tcc-grade: error: --record: %s is the plan itself\n", q);
    return 2;
  }
  /* a records directory that cannot be made or read fails before the run */
  g_autoptr(GString) rec_warn = g_string_new(NULL);
  gboolean rec_ok = !rec_dir || rec_prepare(rec_dir, rec_warn, &err);
  fputs(rec_warn->str, stderr); /* bad lines: skipped, the run still recorded */
  if (!rec_ok) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  /* the pool's threads: one per processor (up to one per task), or
   * TCC_GRADE_THREADS (docs/tools.md; the report is the same whatever it is) */
  int nthreads = CLAMP((int)g_get_num_processors(), 1, 2 * NSEEDS);
  const char *env = g_getenv("TCC_GRADE_THREADS");
  if (env) {
    guint64 v;
    if (!g_ascii_string_to_unsigned(env, 10, 1, 64, &v, NULL)) {
      fprintf(stderr, "tcc-grade: error: TCC_GRADE_THREADS='%s': expected a thread count from 1 to 64\n", env);
      return 2;
    }
    nthreads = (int)v;
  }
  /* --html: the plot module loaded and the page's file opened (not the
   * plan itself) before the run, so that neither fails after it */
  HtmlOut hout = {NULL, NULL};
  if (html && !plot_load(&err)) {
    const char *why = strstr(err->message, "cannot load");
    fprintf(stderr, "tcc-grade: error: --html: %s\n", why ? why : err->message);
    return 2;
  }
  if (html && !html_out_open(&hout, html, argv[1], &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  g_autoptr(Plan) plan = NULL; /* read once: a FIFO or a pipe gives its bytes once */
  if (plan_read_text(argv[1], "plan", &plan_bytes, &plan_nbytes, &err))
    plan = plan_parse(argv[1], plan_bytes, plan_nbytes, &err);
  if (!plan) {
    html_out_abort(&hout);
    return tool_error(rec_dir, argv[1], note, err->message, TRUE, json);
  }
  Outcome p1 = {0}, d1 = {0};
  gboolean do_p1 = !problem || strcmp(problem, "p1") == 0, do_d1 = !problem || strcmp(problem, "d1") == 0;
  gboolean refused = FALSE;
  if (!grade(plan, nthreads, do_p1, do_d1, html != NULL, &p1, &d1, &refused, &err)) {
    html_out_abort(&hout);
    outcome_clear(&p1); /* what a problem graded before the other failed holds */
    outcome_clear(&d1);
    return tool_error(rec_dir, argv[1], note, err->message, refused, json);
  }
  double c1 = (double)p1.res[0].cycles, c2 = (double)d1.res[0].cycles;
  double score = wl_score(p1.res[0].cycles, d1.res[0].cycles);
  Problem dp1, dd1;
  wl_problem_default(&dp1, PROB_P1);
  wl_problem_default(&dd1, PROB_D1);
  gboolean graded_dims = memcmp(&dp1, &plan->p1.dims, sizeof dp1) == 0 &&
                         memcmp(&dd1, &plan->d1.dims, sizeof dd1) == 0;
  int code = (!do_p1 || p1.pass) && (!do_d1 || d1.pass) ? 0 : 1;
  if (json) {
    print_json(plan, do_p1 ? &p1 : NULL, do_d1 ? &d1 : NULL, graded_dims);
  } else if (problem) { /* one problem: its row and bound, no score */
    const Outcome *o = do_p1 ? &p1 : &d1;
    printf("%s  %s\n", TCC_GRADE_VERSION, plan->file);
    printf("simulator: %s\n", TCC_SIM_VERSION);
    print_table((const char *const[]){problem}, (const Outcome *const[]){o}, 1);
    printf("score -  (one problem graded: --problem %s)\n", problem);
    print_bound(problem, o);
  } else {
    /* who graded it, with which simulator, then the table */
    printf("%s  %s\n", TCC_GRADE_VERSION, plan->file);
    printf("simulator: %s\n", TCC_SIM_VERSION);
    print_table((const char *const[]){"p1", "d1"}, (const Outcome *const[]){&p1, &d1}, 2);
    if (!(p1.pass && d1.pass))
      printf("score -  (a constraint fails)\n");
    else if (!graded_dims)
      printf("score -  (problem dims differ from the graded defaults: no score)\n");
    else
      printf("score %.2f  = 1000 * sqrt(%.0f * %.0f / (%.0f * %.0f))\n", score, WL_SCORE_P1_REF, WL_SCORE_D1_REF, c1,
             c2);
    print_bound("p1", &p1);
    print_bound("d1", &d1);
  }
  for (int k = 0; !json && k < 2; k++) { /* a FAIL's hint, after the report */
    const Outcome *o = k == 0 ? &p1 : &d1;
    if (o->hint && (k == 0 ? do_p1 : do_d1)) fputs(o->hint, stdout);
  }
  if (html) {
    fflush(stdout); /* the report, then any diagnostic */
    gboolean has = do_p1 && do_d1 && p1.pass && d1.pass && graded_dims;
    const char *why = problem       ? "one problem graded (--problem)"
                      : !(p1.pass && d1.pass) ? "a constraint fails"
                      : !graded_dims          ? "problem dims differ from the graded defaults"
                                              : NULL;
    if (!write_html(&hout, plan, argv[1], do_p1 ? &p1 : NULL, do_d1 ? &d1 : NULL, has, score, why)) code = 2;
    plot_release_fonts();
  }
  if (rec_dir) {
    fflush(stdout); /* the report, then the note */
    RecRun r = {.plan = argv[1], .note = note, .graded = TRUE, .has_score = p1.pass && d1.pass && graded_dims,
                .score = score};
    record_problem(&r.prob[0], "p1", &p1);
    record_problem(&r.prob[1], "d1", &d1);
    if (!record(rec_dir, &r)) code = 2;
  }
  outcome_clear(&p1);
  outcome_clear(&d1);
  return code;
}
#else
/* A driver of the table alone, for tests/run_grade.sh (built as
 * BUILD/tests/grade-table, not installed): the first line as tcc-grade
 * prints it, then the table with one row per argument
 * "NAME CYCLES AREA_MM2 PEAK_W WINDOW_START ERR7 ERR13 ERR11 ERR23" (one
 * string, fields separated by spaces), so that any cell width can be tried
 * without simulating for hours.  Verdicts follow the real rules: an error
 * above WL_TOLERANCE fails numerics, area and power their budgets. */
int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: grade-table ROW [ROW]\n");
    return 2;
  }
  const char *names[2];
  Outcome outs[2] = {0};
  const Outcome *po[2] = {&outs[0], &outs[1]};
  char name[2][16];
  for (int i = 0; i < argc - 1; i++) {
    SimResult r = {0};
    double e[NSEEDS];
    if (sscanf(argv[i + 1], "%15s %" SCNd64 " %lf %lf %" SCNd64 " %lf %lf %lf %lf", name[i], &r.cycles,
               &r.area_mm2, &r.peak_w, &r.peak_start, &e[0], &e[1], &e[2], &e[3]) != 9) {
      fprintf(stderr, "grade-table: bad row '%s'\n", argv[i + 1]);
      return 2;
    }
    names[i] = name[i];
    outs[i].pass = r.area_mm2 <= AREA_LIMIT_MM2 && r.peak_w <= POWER_LIMIT_W;
    for (int k = 0; k < NSEEDS; k++) {
      outs[i].res[k] = r;
      outs[i].res[k].check.max_abs_err = e[k];
      outs[i].res[k].check.pass = e[k] <= WL_TOLERANCE;
      outs[i].pass &= outs[i].res[k].check.pass;
    }
  }
  printf("%s  %s\n", TCC_GRADE_VERSION, "table-test");
  printf("simulator: %s\n", TCC_SIM_VERSION);
  print_table(names, po, argc - 1);
  return 0;
}
#endif
