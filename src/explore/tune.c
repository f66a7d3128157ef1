/* tune.c - tcc-tune's seeded local search (tune.h). */
#include "tune.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "bounds.h"
#include "csv.h"
#include "file_read.h"
#include "jobs.h"
#include "ir.h"
#include "machine.h"
#include "outfile.h"
#include "fit.h"
#include "pipeline.h"
#include "plan.h"
#include "plan_edit.h"
#include "sim.h"
#include "text_escape.h"

G_DEFINE_QUARK(tcc-tune-error-quark, tune_error)

const char *const tune_status_name[] = {"pass", "power", "area", "error", "refused", "numerics", "slower"};
const char *const tune_target_name[] = {[TUNE_TARGET_D1] = "d1", [TUNE_TARGET_P1] = "p1", [TUNE_TARGET_BOTH] = "both"};

/* ---- knobs ------------------------------------------------------------ */

/* A decimal integer, all of s, within int64. */
static gboolean parse_int(const char *s, int64_t *v) {
  if (!*s || g_ascii_isspace(*s)) return FALSE;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end) return FALSE;
  *v = x;
  return TRUE;
}

TuneKnob *tune_knob_parse(const char *arg, GError **err) {
  const char *eq = strchr(arg, '=');
  g_autofree char *qarg = text_escape(arg); /* echoed on one line */
  if (!eq) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "--knob %s: expected KEY.PATH=LO..HI or KEY.PATH=V1,V2,...",
                qarg);
    return NULL;
  }
  g_autoptr(TuneKnob) k = g_new0(TuneKnob, 1);
  k->path = g_strndup(arg, (gsize)(eq - arg));
  if (!plan_edit_path_ok(k->path)) {
    g_autofree char *qpath = text_escape(k->path);
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE,
                "--knob %s: '%s' is not a plan path (keys of letters, digits and _, joined by dots: "
                "p1.store_spacing.wo)", qarg, qpath);
    return NULL;
  }
  const char *v = eq + 1, *dots = strstr(v, "..");
  if (dots && !strchr(v, ',')) {
    g_autofree char *lo = g_strstrip(g_strndup(v, (gsize)(dots - v)));
    g_autofree char *hi = g_strstrip(g_strdup(dots + 2));
    if (!parse_int(lo, &k->lo) || !parse_int(hi, &k->hi)) {
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "--knob %s: a range is two integers, LO..HI", qarg);
      return NULL;
    }
    if (k->lo >= k->hi || (uint64_t)k->hi - (uint64_t)k->lo >= TUNE_MAX_VALUES) { /* no overflow */
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "--knob %s: a range needs LO < HI and at most %d values",
                  qarg, TUNE_MAX_VALUES);
      return NULL;
    }
    k->range = TRUE;
    return g_steal_pointer(&k);
  }
  GError *e = NULL;
  k->values = plan_edit_values("--knob", arg, v, &e);
  if (!k->values) {
    g_set_error_literal(err, TUNE_ERROR, TUNE_ERROR_USAGE, e->message);
    g_error_free(e);
    return NULL;
  }
  if (k->values->len < 2) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "--knob %s: a knob needs at least two values", qarg);
    return NULL;
  }
  return g_steal_pointer(&k);
}

void tune_knob_free(TuneKnob *k) {
  if (!k) return;
  g_free(k->path);
  if (k->values) g_ptr_array_unref(k->values);
  g_free(k);
}

guint tune_knob_count(const TuneKnob *k) {
  return k->range ? (guint)(k->hi - k->lo + 1) : k->values->len;
}

char *tune_knob_value(const TuneKnob *k, guint i) {
  if (k->range) return g_strdup_printf("%" PRId64, k->lo + (int64_t)i);
  return g_strdup(g_ptr_array_index(k->values, i));
}

/* The index of `value` among the knob's values, or -1.  A range compares
 * integers: "08" and "8" are the same value. */
static int knob_index(const TuneKnob *k, const char *value) {
  if (k->range) {
    int64_t v;
    return parse_int(value, &v) && v >= k->lo && v <= k->hi ? (int)(v - k->lo) : -1;
  }
  for (guint i = 0; i < k->values->len; i++)
    if (strcmp(g_ptr_array_index(k->values, i), value) == 0) return (int)i;
  return -1;
}

/* ---- the default evaluator: compile here, simulate on a worker -------- */

static void measure_error(TuneMeasure *m, const GError *e) {
  m->status = TUNE_ERROR_POINT;
  m->error = g_strdup(e->message);
}

/* tcc-gen's refusal: the plan does not load or compile. */
static void measure_refused(TuneMeasure *m, const GError *e) {
  m->status = TUNE_REFUSED;
  m->error = g_strdup(e->message);
}

/* A point's programs, compiled: P1's then D1's, as the target needs.  A
 * program the power fitting measured (power.fit: on) has its figures
 * already (the fitting measures the very program it returns, as tcc-sim
 * does); only one it did not measure is simulated again. */
typedef struct Programs {
  Program *prog[2];     /* NULL: measured[] holds its figures           */
  SimResult measured[2];
  ProblemKind kind[2];
  int n;
} Programs;

static gpointer compile_prepare(const char *file, const char *text, TuneTarget target, double cap, gpointer data,
                                TuneMeasure *m) {
  (void)data;
  g_autoptr(GError) e = NULL;
  g_autoptr(Plan) plan = plan_parse(file, text, strlen(text), &e);
  if (!plan) {
    measure_refused(m, e);
    return NULL;
  }
  Programs *w = g_new0(Programs, 1);
  static const ProblemKind order[] = {PROB_P1, PROB_D1};
  for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
    if (target != TUNE_TARGET_BOTH && (ProblemKind)target != order[i]) continue;
    /* the cycles this problem must beat: the best's, or with both the best
     * P1 x D1 over the other problem's cycles (P1's before D1 is measured:
     * D1's lower bound, which no program beats) */
    int64_t lim = 0;
    if (cap > 0 && target != TUNE_TARGET_BOTH) {
      lim = (int64_t)ceil(cap);
    } else if (cap > 0) {
      Bounds b;
      sim_bounds(&plan->hw, &plan->d1.dims, &b);
      double other = order[i] == PROB_P1 ? (double)b.bound : (w->n > 0 && !w->prog[0] ? (double)w->measured[0].cycles : 0);
      lim = other > 0 ? (int64_t)ceil(cap / other) : 0;
    }
    FitResult fr;
    g_autoptr(Ir) ir = fit_pipeline_capped(plan, order[i], lim, NULL, NULL, FALSE, &fr, &e);
    if (!ir && fr.slower) { /* its figures: the program as written, over the limit */
      m->status = TUNE_SLOWER;
      m->error = g_strdup_printf("%s: %s", wl_problem_name(order[i]), e->message);
      m->peak_w = MAX(m->peak_w, fr.first_w);
      m->w[order[i] == PROB_D1] = fr.first_w;
      m->area_mm2 = sim_machine_area(&plan->hw);
      if (order[i] == PROB_D1 && target == TUNE_TARGET_BOTH) { /* P1's measure, then D1's */
        m->cycles = w->n > 0 ? w->measured[0].cycles : 0;
        m->peak_w = MAX(m->peak_w, w->n > 0 ? w->measured[0].peak_w : 0);
        m->w[0] = w->n > 0 ? w->measured[0].peak_w : 0;
        m->d1_cycles = fr.first_cycles;
      } else {
        m->cycles = fr.first_cycles;
      }
      for (int k = 0; k < w->n; k++)
        if (w->prog[k]) sim_program_free(w->prog[k]);
      g_free(w);
      return NULL;
    }
    if (ir && fr.measured && fr.cycles > 0) {
      w->kind[w->n] = order[i];
      w->measured[w->n] = (SimResult){.cycles = fr.cycles, .peak_w = fr.peak_w,
                                      .area_mm2 = sim_machine_area(&plan->hw)};
      w->n++;
      continue;
    }
    char *asm_text = ir ? be_emit(ir) : NULL;
    g_autofree char *name = g_strdup_printf("%s[%s].asm", file, wl_problem_name(order[i]));
    /* the assembler takes the text; it fails only on the compiler's bug:
     * say so rather than stop */
    Program *prog = asm_text ? sim_asm_parse_take(name, asm_text, strlen(asm_text), &e) : NULL;
    if (!prog) {
      (ir ? measure_error : measure_refused)(m, e);
      for (int k = 0; k < w->n; k++)
        if (w->prog[k]) sim_program_free(w->prog[k]);
      g_free(w);
      return NULL;
    }
    w->kind[w->n] = order[i];
    w->prog[w->n++] = prog;
  }
  return w;
}

static const int status_rank[] = {[TUNE_PASS] = 0,    [TUNE_POWER] = 1, [TUNE_AREA] = 2,  [TUNE_ERROR_POINT] = 3,
                                  [TUNE_REFUSED] = 3, [TUNE_WRONG] = 3, [TUNE_SLOWER] = 3};

static void simulate_finish(gpointer work, TuneMeasure *m) {
  Programs *w = work;
  m->status = TUNE_PASS;
  for (int k = 0; k < w->n; k++) {
    g_autoptr(Program) prog = w->prog[k];
    if (m->status == TUNE_ERROR_POINT) continue;
    SimResult r = w->measured[k];
    if (prog) {
      SimOptions opt;
      sim_options_default(&opt);
      opt.timing_only = TRUE;
      g_autoptr(GError) e = NULL;
      if (!sim_run(prog, &opt, &r, &e)) {
        measure_error(m, e);
        m->cycles = m->d1_cycles = 0;
        continue;
      }
    }
    if (w->n == 2 && w->kind[k] == PROB_D1)
      m->d1_cycles = r.cycles;
    else
      m->cycles = r.cycles;
    m->peak_w = MAX(m->peak_w, r.peak_w);
    m->w[w->kind[k] == PROB_D1] = r.peak_w;
    m->area_mm2 = r.area_mm2;
    TuneStatus st = r.area_mm2 > AREA_LIMIT_MM2 ? TUNE_AREA : r.peak_w > POWER_LIMIT_W ? TUNE_POWER : TUNE_PASS;
    if (status_rank[st] > status_rank[m->status]) m->status = st;
    if (prog) sim_result_clear(&r);
  }
  g_free(w);
}

const TuneEval tune_eval_compile = {compile_prepare, simulate_finish, NULL};

void tune_options_default(TuneOptions *o) {
  memset(o, 0, sizeof *o);
  o->target = TUNE_TARGET_P1;
  o->rounds = 20;
  o->candidates = 8;
  o->seed = 1;
  o->jobs = 2;
  o->step = 0.125;
  o->eval = tune_eval_compile;
}

/* ---- the search ------------------------------------------------------- */

static void point_free(gpointer p) {
  TunePoint *x = p;
  g_free(x->idx);
  g_free(x->m.error);
  g_free(x);
}

void tune_free(Tune *t) {
  if (!t) return;
  g_free(t->template_path);
  g_free(t->text);
  for (guint k = 0; t->num && t->knobs && k < t->knobs->len; k++)
    if (t->num[k]) g_array_unref(t->num[k]);
  g_free(t->num);
  g_free(t->def);
  if (t->rules) g_array_unref(t->rules);
  if (t->companions) g_array_unref(t->companions);
  if (t->cache) g_hash_table_unref(t->cache);
  if (t->knobs) g_ptr_array_unref(t->knobs);
  if (t->points) g_ptr_array_unref(t->points);
  g_free(t);
}

/* The value a loaded plan takes for `path` (a hardware key or a knob of
 * either problem, written or default) as a plan writes it, or NULL when
 * the path names no key of a plan.  `KNOB.default` is the mapping form's
 * spelling of KNOB (`store_spacing: {default: N, STAGE: N}`). */
static char *effective_value(const Plan *plan, const char *path) {
  if (g_str_has_suffix(path, ".default")) {
    g_autofree char *knob = g_strndup(path, strlen(path) - strlen(".default"));
    return effective_value(plan, knob);
  }
  for (int i = 0; i < PLAN_NHW; i++)
    if (strcmp(plan_hw_path(i), path) == 0) return plan_hw_value_text(plan, i);
  static const ProblemKind kinds[] = {PROB_P1, PROB_D1};
  for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
    const PlanProblem *pp = plan_problem(plan, kinds[k]);
    for (int i = 0; i < PLAN_NKNOBS; i++)
      if (pp->loc[i].path && strcmp(pp->loc[i].path, path) == 0) return g_strdup(pp->value[i]);
  }
  return NULL;
}

/* The knob of the space as a --knob list. */
static TuneKnob *knob_of_space(const PlanSpaceKnob *s) {
  TuneKnob *k = g_new0(TuneKnob, 1);
  k->path = g_strdup(s->path);
  k->values = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < s->values->len; i++) g_ptr_array_add(k->values, g_strdup(g_ptr_array_index(s->values, i)));
  return k;
}

/* The schema's space for the target (tune_new without knobs). */
static void derive_space(const Plan *plan, TuneTarget target, GPtrArray *knobs) {
  static const ProblemKind order[] = {PROB_P1, PROB_D1};
  for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
    if (target != TUNE_TARGET_BOTH && (ProblemKind)target != order[i]) continue;
    /* one machine serves both problems: its keys are searched only for both */
    g_autoptr(GPtrArray) space = plan_space(plan, order[i], target == TUNE_TARGET_BOTH && i == 0);
    for (guint k = 0; k < space->len; k++) g_ptr_array_add(knobs, knob_of_space(g_ptr_array_index(space, k)));
  }
}

/* One "has no effect unless" rule between two knobs of the space. */
typedef struct TuneRule {
  guint knob, needs;
  long min;
} TuneRule;

/* One technique companion in the space: knob `knob` switched on (from
 * below min to min or more) sets knob `target` to its value index
 * `value`. */
typedef struct TuneCompanion {
  guint knob, target, value;
  long min;
} TuneCompanion;

static int knob_named(const Tune *t, const char *path) {
  for (guint k = 0; k < t->knobs->len; k++)
    if (strcmp(((const TuneKnob *)g_ptr_array_index(t->knobs, k))->path, path) == 0) return (int)k;
  return -1;
}

/* The numbers the technique moves compare: each value's, each knob's
 * default, the rules among the knobs, and the knobs of residency.  A rule
 * whose needed knob is not searched holds with the template's value of it,
 * or keeps the knob at its default (needs = the knob itself). */
static void index_space(Tune *t, const Plan *plan) {
  guint n = t->knobs->len;
  t->def = g_new(int, n);
  t->num = g_new0(GArray *, n);
  t->rules = g_array_new(FALSE, FALSE, sizeof(TuneRule));
  for (guint k = 0; k < n; k++) {
    const TuneKnob *kn = g_ptr_array_index(t->knobs, k);
    guint count = tune_knob_count(kn);
    long def = G_MINLONG;
    gboolean has_def = plan_knob_default_number(kn->path, &def);
    t->def[k] = -1;
    t->num[k] = g_array_sized_new(FALSE, FALSE, sizeof(long), MIN(count, 4096u));
    for (guint i = 0; i < count && i < 4096; i++) { /* a range past 4096 values: no rules on it */
      g_autofree char *v = tune_knob_value(kn, i);
      long x;
      if (!plan_value_number(kn->path, v, &x)) x = G_MINLONG;
      g_array_append_val(t->num[k], x);
      if (has_def && x == def && t->def[k] < 0) t->def[k] = (int)i;
    }
    for (int r = 0;; r++) {
      g_autofree char *needs = NULL;
      long min;
      if (!plan_space_need(kn->path, r, &needs, &min)) break;
      int j = knob_named(t, needs);
      if (j >= 0) {
        g_array_append_val(t->rules, ((TuneRule){k, (guint)j, min}));
        continue;
      }
      g_autofree char *have = effective_value(plan, needs);
      long x;
      if (!have || !plan_value_number(needs, have, &x) || x < min) /* pinned: never moves */
        g_array_append_val(t->rules, ((TuneRule){k, k, min}));
    }
  }
  /* the companions whose knobs are both searched, each at the value of
   * its knob nearest the schema's (the largest not above it, else the
   * smallest) */
  t->companions = g_array_new(FALSE, FALSE, sizeof(TuneCompanion));
  for (guint k = 0; k < n; k++) {
    const TuneKnob *kn = g_ptr_array_index(t->knobs, k);
    for (int r = 0;; r++) {
      g_autofree char *target = NULL;
      long min, value;
      if (!plan_space_companion(plan, kn->path, r, &min, &target, &value)) break;
      int j = knob_named(t, target);
      if (j < 0) {
        g_autofree char *dflt = g_strconcat(target, ".default", NULL); /* store_spacing's mapping form */
        j = knob_named(t, dflt);
      }
      if (j < 0 || (guint)j == k || t->num[j]->len == 0) continue;
      guint at = 0;
      for (guint i = 0; i < t->num[j]->len; i++) {
        long x = g_array_index(t->num[j], long, i);
        if (x != G_MINLONG && x <= value) at = i;
      }
      g_array_append_val(t->companions, ((TuneCompanion){k, (guint)j, at, min}));
    }
  }
}

/* Value i of knob k as a number (G_MINLONG: none). */
static long num_at(const Tune *t, guint k, guint i) {
  return i < t->num[k]->len ? g_array_index(t->num[k], long, i) : G_MINLONG;
}

/* Would knob k at value index v have effect at idx: every rule of k holds
 * (its default always has). */
static gboolean needs_hold(const Tune *t, const guint *idx, guint k, guint v) {
  if (t->def[k] >= 0 && v == (guint)t->def[k]) return TRUE;
  for (guint r = 0; r < t->rules->len; r++) {
    const TuneRule *u = &g_array_index(t->rules, TuneRule, r);
    if (u->knob != k) continue;
    if (u->needs == k) return FALSE;
    long have = num_at(t, u->needs, idx[u->needs]);
    if (have != G_MINLONG && have < u->min) return FALSE;
  }
  return TRUE;
}

/* The technique moves of a draw (tune.h): idx, moved from `from`, made a
 * point whose knobs all have effect, and each technique switched on (from
 * below its companion's min to at least it) with its companions, unless
 * the draw moved that knob itself (a later companion row's value goes
 * over an earlier one's); returns the knobs it set. */
static int close_point(const Tune *t, guint *idx, const guint *from) {
  int repairs = 0;
  g_autofree gboolean *done = g_new0(gboolean, MAX(t->companions->len, 1u));
  g_autofree gboolean *by_companion = g_new0(gboolean, MAX(t->knobs->len, 1u));
  for (int pass = 0; pass < 16; pass++) {
    gboolean changed = FALSE;
    for (guint r = 0; r < t->rules->len; r++) {
      const TuneRule *u = &g_array_index(t->rules, TuneRule, r);
      int def = t->def[u->knob];
      if (def < 0 || idx[u->knob] == (guint)def) continue;
      if (u->needs == u->knob) { /* what it needs is not searched, and the template does not set it */
        idx[u->knob] = (guint)def;
        repairs++;
        changed = TRUE;
        continue;
      }
      long have = num_at(t, u->needs, idx[u->needs]);
      if (have == G_MINLONG || have >= u->min) continue;
      int up = -1;
      if (idx[u->knob] != from[u->knob]) /* switched on: what it needs comes with it */
        for (guint i = 0; i < t->num[u->needs]->len && up < 0; i++)
          if (num_at(t, u->needs, i) >= u->min) up = (int)i;
      if (up >= 0)
        idx[u->needs] = (guint)up;
      else
        idx[u->knob] = (guint)def; /* what it needed went: back to its default */
      repairs++;
      changed = TRUE;
    }
    for (guint c = 0; c < t->companions->len; c++) {
      const TuneCompanion *u = &g_array_index(t->companions, TuneCompanion, c);
      long now = num_at(t, u->knob, idx[u->knob]), was = num_at(t, u->knob, from[u->knob]);
      if (done[c] || now == G_MINLONG || now < u->min || (was != G_MINLONG && was >= u->min)) continue;
      if (idx[u->target] != from[u->target] && !by_companion[u->target]) { /* the draw's value stands */
        done[c] = TRUE;
        continue;
      }
      if (!needs_hold(t, idx, u->target, u->value)) continue; /* perhaps after another companion */
      done[c] = TRUE;
      by_companion[u->target] = TRUE; /* a later row's value over this one */
      if (idx[u->target] == u->value) continue;
      idx[u->target] = u->value;
      repairs++;
      changed = TRUE;
    }
    if (!changed) break;
  }
  return repairs;
}

Tune *tune_new(const char *template_path, GPtrArray *knobs, const TuneOptions *opt, GError **err) {
  g_autoptr(Tune) t = g_new0(Tune, 1);
  t->template_path = g_strdup(template_path);
  t->knobs = knobs;
  t->opt = *opt;
  t->points = g_ptr_array_new_with_free_func(point_free);
  t->best = -1;
  if (knobs->len > TUNE_MAX_KNOBS) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "give at most %d --knob options", TUNE_MAX_KNOBS);
    return NULL;
  }
  for (guint i = 0; i < knobs->len; i++)
    for (guint j = 0; j < i; j++)
      if (strcmp(((TuneKnob *)g_ptr_array_index(knobs, i))->path,
                 ((TuneKnob *)g_ptr_array_index(knobs, j))->path) == 0) {
        g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "--knob %s: the knob is given twice",
                    ((TuneKnob *)g_ptr_array_index(knobs, i))->path);
        return NULL;
      }
  g_autoptr(GError) rd = NULL;
  if (!plan_read_text(template_path, "plan", &t->text, &t->len, &rd)) {
    g_set_error_literal(err, TUNE_ERROR, TUNE_ERROR_PLACED, rd->message);
    return NULL;
  }
  /* the template itself must be a plan (its own diagnostics first) */
  g_autoptr(Plan) plan = plan_parse(template_path, t->text, t->len, err);
  if (!plan) return NULL;
  if (knobs->len == 0) {
    t->derived = TRUE;
    derive_space(plan, opt->target, knobs);
    /* a knob the template's text cannot take (store_spacing.wo where it
     * writes store_spacing as one number) stays as the template has it; a
     * value the template writes that the shape does not take (k_chunk 128
     * on d_model 64, which the loader takes as 64) is one of the knob's; a
     * knob that others refine (store_spacing: store_spacing.wo) and that
     * the template does not write is searched as the mapping form's
     * `default`, so that a point can set both */
    for (guint i = knobs->len; i-- > 0;) {
      TuneKnob *k = g_ptr_array_index(knobs, i);
      gboolean found;
      GError *e = NULL;
      g_autofree char *v = plan_edit_get(template_path, t->text, t->len, "--knob", k->path, &found, &e);
      if (e) {
        g_error_free(e);
        g_ptr_array_remove_index(knobs, i);
        continue;
      }
      if (found && knob_index(k, v) < 0) { /* a value the shape does not take (the loader falls back from it) */
        int64_t x, y;
        guint at = k->values->len;
        if (parse_int(v, &x))
          for (guint j = 0; j < k->values->len && at == k->values->len; j++)
            if (parse_int(g_ptr_array_index(k->values, j), &y) && y > x) at = j;
        g_ptr_array_insert(k->values, (gint)at, g_strdup(v));
      }
      g_autofree char *prefix = g_strconcat(k->path, ".", NULL);
      gboolean refined = FALSE;
      for (guint j = 0; j < knobs->len; j++)
        refined |= g_str_has_prefix(((const TuneKnob *)g_ptr_array_index(knobs, j))->path, prefix);
      if (!found && refined) {
        char *d = g_strconcat(k->path, ".default", NULL);
        g_free(k->path);
        k->path = d;
      }
    }
    if (knobs->len == 0) {
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "%s: the schema gives no knob to search for %s",
                  template_path, tune_target_name[opt->target]);
      return NULL;
    }
  }
  TunePoint *start = g_new0(TunePoint, 1);
  start->idx = g_new0(guint, knobs->len);
  g_ptr_array_add(t->points, start);
  for (guint i = 0; i < knobs->len; i++) {
    const TuneKnob *k = g_ptr_array_index(knobs, i);
    gboolean found;
    GError *e = NULL;
    g_autofree char *v = plan_edit_get(template_path, t->text, t->len, "--knob", k->path, &found, &e);
    if (e) {
      g_set_error_literal(err, TUNE_ERROR, e->code == PLAN_EDIT_ERROR_PLACED ? TUNE_ERROR_PLACED : TUNE_ERROR_USAGE,
                          e->message);
      g_error_free(e);
      return NULL;
    }
    if (!found) v = effective_value(plan, k->path); /* not written: its default */
    if (!v) {
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE,
                  "--knob %s: not a key of a plan (docs/plan.md lists the knobs, hardware keys under "
                  "hardware.)", k->path);
      return NULL;
    }
    int x = knob_index(k, v);
    if (x < 0) {
      g_autofree char *lo = tune_knob_value(k, 0), *hi = tune_knob_value(k, tune_knob_count(k) - 1);
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE,
                  "--knob %s: the template %s '%s'; the search starts from the template's value, one of "
                  "the knob's (%s%s%s)", k->path, found ? "sets it to" : "leaves it at its default,", v, lo,
                  k->range ? ".." : ", ..., ", hi);
      return NULL;
    }
    start->idx[i] = (guint)x;
  }
  index_space(t, plan);
  return g_steal_pointer(&t);
}

char *tune_point_text(const Tune *t, const TunePoint *p, GError **err) {
  g_autoptr(GPtrArray) keys = g_ptr_array_new(), values = g_ptr_array_new_with_free_func(g_free);
  const TunePoint *start = g_ptr_array_index(t->points, 0);
  for (guint i = 0; i < t->knobs->len; i++) {
    const TuneKnob *k = g_ptr_array_index(t->knobs, i);
    if (p->idx[i] == start->idx[i]) continue; /* as the template has it */
    g_ptr_array_add(keys, k->path);
    g_ptr_array_add(values, tune_knob_value(k, p->idx[i]));
  }
  return plan_edit_text(t->template_path, t->text, t->len, "--knob", keys, values, err);
}

/* SplitMix64 (tune.h: the same draws on every machine). */
typedef struct Rng {
  uint64_t state;
} Rng;
static uint64_t rng_next(Rng *r) { return wl_mix64(r->state += WL_GOLDEN); }
/* Uniform in [0, n), n >= 1 (the top 32 bits, scaled: no modulo bias
 * worth speaking of for n far below 2^32). */
static guint rng_below(Rng *r, guint n) { return (guint)(((rng_next(r) >> 32) * (uint64_t)n) >> 32); }

/* The objective of a passing point: cycles, or P1 x D1 (in double: exact
 * below 2^53, and the same rounding everywhere above). */
static double objective(const TuneMeasure *m) {
  return m->d1_cycles > 0 ? (double)m->cycles * (double)m->d1_cycles : (double)m->cycles;
}

/* How far over the limits, relative to them (0 within both). */
static double over(const TuneMeasure *m) {
  return MAX(m->peak_w - POWER_LIMIT_W, 0.0) / POWER_LIMIT_W + MAX(m->area_mm2 - AREA_LIMIT_MM2, 0.0) / AREA_LIMIT_MM2;
}

gboolean tune_better(const TuneMeasure *a, const TuneMeasure *b) {
  int ra = a->status == TUNE_PASS ? 0 : a->status == TUNE_POWER || a->status == TUNE_AREA ? 1 : 2;
  int rb = b->status == TUNE_PASS ? 0 : b->status == TUNE_POWER || b->status == TUNE_AREA ? 1 : 2;
  if (ra != rb) return ra < rb;
  if (ra == 2) return FALSE;
  if (ra == 1 && over(a) != over(b)) return over(a) < over(b);
  return objective(a) < objective(b);
}

static char *idx_key(const guint *idx, guint n) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < n; i++) g_string_append_printf(s, "%s%u", i ? "," : "", idx[i]);
  return g_string_free(s, FALSE);
}

/* A new point around `from`: 1 to 3 knobs, each moved by 1..step[k]
 * either way (clamped to its values), with its technique moves
 * (close_point; *repairs); NULL after 64 draws that only gave points
 * already measured. */
static guint *draw(Rng *r, const Tune *t, const guint *from, const guint *step, GHashTable *seen, int *repairs) {
  guint n = t->knobs->len;
  g_autofree guint *order = g_new(guint, n);
  for (int attempt = 0; attempt < 64; attempt++) {
    guint *idx = g_memdup2(from, sizeof(guint) * n);
    for (guint i = 0; i < n; i++) order[i] = i;
    guint moves = 1 + rng_below(r, MIN(n, 3u));
    for (guint m = 0; m < moves; m++) { /* a partial Fisher-Yates shuffle picks the knobs */
      guint j = m + rng_below(r, n - m), k = order[j];
      order[j] = order[m];
      order[m] = k;
      guint count = tune_knob_count(g_ptr_array_index(t->knobs, k));
      int64_t delta = 1 + rng_below(r, step[k]);
      int64_t v = (int64_t)idx[k] + (rng_below(r, 2) ? delta : -delta);
      idx[k] = (guint)CLAMP(v, 0, (int64_t)count - 1);
    }
    *repairs = close_point(t, idx, from);
    g_autofree char *key = idx_key(idx, n);
    if (!g_hash_table_contains(seen, key)) return idx;
    g_free(idx);
  }
  return NULL;
}

typedef struct Work {
  const Tune *t;
  TunePoint *p;
  gpointer job; /* the evaluator's, for finish */
  GMutex *lock;
  GCond *cond;
  int *pending;
} Work;

static void finish_one(gpointer data, gpointer user) {
  (void)user;
  Work *w = data;
  w->t->opt.eval.finish(w->job, &w->p->m);
  g_mutex_lock(w->lock);
  --*w->pending;
  g_cond_signal(w->cond);
  g_mutex_unlock(w->lock);
}

/* Measure the points [first, points->len): prepared here in order,
 * finished on the pool, with at most two per thread prepared and not
 * finished (a P1 program in memory is tens of MB). */
static gboolean measure_jobs(Tune *t, guint first, GError **err);

static double objective(const TuneMeasure *m);

/* What a point of this round must beat: the best's objective when it
 * passes (0: nothing yet). */
static double best_cap(const Tune *t) {
  const TunePoint *b = t->best >= 0 ? g_ptr_array_index(t->points, t->best) : NULL;
  return b && b->m.status == TUNE_PASS ? objective(&b->m) : 0;
}

/* The name a point's plan goes by in messages: the template's for the
 * start, "TEMPLATE[round R, point C]" for the others. */
static char *point_name(const Tune *t, const TunePoint *p) {
  return p->round == 0 ? g_strdup(t->template_path)
                       : g_strdup_printf("%s[round %d, point %d]", t->template_path, p->round, p->candidate);
}

/* Point p measured by the search this one resumes (tune_resume): its
 * measure taken, TRUE. */
static gboolean take_resumed(Tune *t, TunePoint *p) {
  g_autofree char *key = t->cache ? idx_key(p->idx, t->knobs->len) : NULL;
  const TuneMeasure *known = key ? g_hash_table_lookup(t->cache, key) : NULL;
  if (!known) return FALSE;
  p->m = *known;
  p->m.error = g_strdup(known->error);
  t->resumed++;
  return TRUE;
}

static gboolean measure(Tune *t, GThreadPool *pool, guint first, GError **err) {
  if (t->opt.engine != TUNE_ENGINE_THREADS) return measure_jobs(t, first, err);
  GMutex lock;
  GCond cond;
  g_mutex_init(&lock);
  g_cond_init(&cond);
  int pending = 0;
  guint n = t->points->len - first;
  g_autofree Work *work = g_new0(Work, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    TunePoint *p = g_ptr_array_index(t->points, first + i);
    Work *w = &work[i];
    *w = (Work){t, p, NULL, &lock, &cond, &pending};
    if (take_resumed(t, p)) continue;
    /* the start is the template itself: its diagnostics point into it */
    g_autofree char *text = p->round == 0 ? g_strdup(t->text) : tune_point_text(t, p, err);
    if (!text) {
      ok = FALSE;
      break;
    }
    g_autofree char *file = point_name(t, p);
    w->job = t->opt.eval.prepare(file, text, t->opt.target, best_cap(t), t->opt.eval.data, &p->m);
    if (!w->job) continue;
    g_mutex_lock(&lock);
    while (pending >= 2 * CLAMP(t->opt.jobs, 1, 256)) g_cond_wait(&cond, &lock);
    pending++;
    g_mutex_unlock(&lock);
    g_thread_pool_push(pool, w, NULL);
  }
  g_mutex_lock(&lock);
  while (pending > 0) g_cond_wait(&cond, &lock);
  g_mutex_unlock(&lock);
  g_mutex_clear(&lock);
  g_cond_clear(&cond);
  return ok;
}

/* The screening round (TuneOptions.screen): from `from`, every value of
 * every technique of at most SCREEN_VALUES values, one knob at a time, with
 * its technique moves; in knob and value order, no draw.  A technique is
 * a knob that brings companions (a bundle: weights,
 * attention.query_tiles, handoff, k_split), an enum or a bool, a knob that
 * others need (attention.slices, power.preload_waves), or a hardware key
 * (with both problems: the machine's choices); the bundles come first, so
 * that a budget that ends the round has tried them.  The other knobs
 * (panels, chunks, spacings) are left to the draws. */
#define SCREEN_VALUES 8
static gboolean is_bundle(const Tune *t, guint k) {
  for (guint c = 0; c < t->companions->len; c++)
    if (g_array_index(t->companions, TuneCompanion, c).knob == k) return TRUE;
  return FALSE;
}

static gboolean is_technique(const Tune *t, guint k) {
  if (is_bundle(t, k) || g_str_has_prefix(((const TuneKnob *)g_ptr_array_index(t->knobs, k))->path, "hardware."))
    return TRUE;
  for (guint r = 0; r < t->rules->len; r++) {
    const TuneRule *u = &g_array_index(t->rules, TuneRule, r);
    if (u->needs == k && u->knob != k) return TRUE;
  }
  g_autofree char *v = tune_knob_value(g_ptr_array_index(t->knobs, k), 0);
  int64_t x;
  return !parse_int(v, &x); /* an enum's or a bool's */
}

static void screen(Tune *t, int round, const guint *from, GHashTable *seen, guint budget) {
  guint n = t->knobs->len;
  int c = 0;
  for (int pass = 0; pass < 2; pass++)
    for (guint k = 0; k < n && t->points->len < budget; k++) {
      if (is_bundle(t, k) != (pass == 0)) continue;
      if (!is_technique(t, k)) continue;
      guint count = tune_knob_count(g_ptr_array_index(t->knobs, k));
      for (guint v = 0; count <= SCREEN_VALUES && v < count && t->points->len < budget; v++) {
        if (v == from[k]) continue;
        guint *idx = g_memdup2(from, sizeof(guint) * n);
        idx[k] = v;
        int repairs = close_point(t, idx, from);
        g_autofree char *key = idx_key(idx, n);
        if (g_hash_table_contains(seen, key)) {
          g_free(idx);
          continue;
        }
        g_hash_table_add(seen, g_steal_pointer(&key));
        TunePoint *p = g_new0(TunePoint, 1);
        p->round = round;
        p->candidate = ++c;
        p->idx = idx;
        p->repairs = repairs;
        g_ptr_array_add(t->points, p);
      }
    }
}

/* The combination rounds after a screen: the screened points that beat
 * its base (`base`, the points [first, last)) by more than the screened
 * points they contain (a point that switched ln_fold on brought residency
 * with it: what it adds is its gain less residency's) are ranked by that
 * marginal gain, largest first (rank_winners); then, one point a round,
 * the best so far takes the next winner's moves (combine_next; a winner
 * that sets a knob the best sets otherwise, or adds nothing, is passed
 * over), and the point, measured, is the best when it beats it: a greedy
 * sum of the techniques that pay together, each kept only if it still
 * pays (techniques near the power or area limit rarely add), at most
 * COMBINE_POINTS of them. */
#define COMBINE_POINTS 8
#define SCREENS 3

/* The knobs point p moves from base; does q's set lie within p's (q moves
 * a knob, and p sets each of them as q does)? */
static gboolean within(guint n, const guint *base, const guint *q, const guint *p) {
  gboolean any = FALSE;
  for (guint k = 0; k < n; k++) {
    if (q[k] == base[k]) continue;
    if (p[k] != q[k]) return FALSE;
    any = TRUE;
  }
  return any;
}

static gboolean disjoint(guint n, const guint *base, const guint *a, const guint *b) {
  for (guint k = 0; k < n; k++)
    if (a[k] != base[k] && b[k] != base[k]) return FALSE;
  return TRUE;
}

typedef struct Winner {
  guint at;
  double gain, marginal;
} Winner;

static int by_marginal(gconstpointer x, gconstpointer y) {
  const Winner *a = x, *b = y;
  if (a->marginal != b->marginal) return a->marginal > b->marginal ? -1 : 1;
  return (a->at > b->at) - (a->at < b->at);
}

static GArray *rank_winners(const Tune *t, const TunePoint *base, guint first, guint last) {
  guint n = t->knobs->len;
  gboolean by_gain = base->m.status == TUNE_PASS; /* else by rank alone */
  g_autoptr(GArray) win = g_array_new(FALSE, FALSE, sizeof(Winner));
  for (guint i = first; i < last; i++) {
    const TunePoint *p = g_ptr_array_index(t->points, i);
    if (!tune_better(&p->m, &base->m)) continue;
    Winner w = {i, by_gain && p->m.status == TUNE_PASS ? objective(&base->m) - objective(&p->m) : 0, 0};
    g_array_append_val(win, w);
  }
  /* each winner's gain less the gains of the winners it contains, taken
   * largest first while their moves are disjoint */
  for (guint i = 0; i < win->len; i++) {
    Winner *w = &g_array_index(win, Winner, i);
    const TunePoint *p = g_ptr_array_index(t->points, w->at);
    g_autoptr(GArray) in = g_array_new(FALSE, FALSE, sizeof(Winner));
    for (guint j = 0; j < win->len; j++) {
      const Winner *v = &g_array_index(win, Winner, j);
      if (j != i && within(n, base->idx, ((const TunePoint *)g_ptr_array_index(t->points, v->at))->idx, p->idx)) {
        Winner c = *v;
        c.marginal = c.gain;
        g_array_append_val(in, c);
      }
    }
    g_array_sort(in, by_marginal);
    g_autoptr(GPtrArray) taken = g_ptr_array_new();
    double sum = 0;
    for (guint j = 0; j < in->len; j++) {
      const guint *q = ((const TunePoint *)g_ptr_array_index(t->points, g_array_index(in, Winner, j).at))->idx;
      gboolean free_ = TRUE;
      for (guint u = 0; u < taken->len && free_; u++) free_ = disjoint(n, base->idx, q, g_ptr_array_index(taken, u));
      if (!free_) continue;
      g_ptr_array_add(taken, (gpointer)q);
      sum += g_array_index(in, Winner, j).gain;
    }
    w->marginal = w->gain - sum;
  }
  if (by_gain) { /* only what adds to what it contains */
    for (guint i = win->len; i-- > 0;)
      if (g_array_index(win, Winner, i).marginal <= 0) g_array_remove_index(win, i);
    g_array_sort(win, by_marginal);
  } else { /* by rank, stable */
    for (guint i = 1; i < win->len; i++)
      for (guint j = i; j > 0; j--) {
        Winner *a = &g_array_index(win, Winner, j - 1), *b = &g_array_index(win, Winner, j);
        if (!tune_better(&((const TunePoint *)g_ptr_array_index(t->points, b->at))->m,
                         &((const TunePoint *)g_ptr_array_index(t->points, a->at))->m))
          break;
        Winner x = *a;
        *a = *b;
        *b = x;
      }
  }
  GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), win->len);
  for (guint w = 0; w < win->len; w++) g_array_append_val(order, g_array_index(win, Winner, w).at);
  return order;
}

/* The next combination (rank_winners' order from *next): the best point
 * with the moves of the next winner that neither clashes with it nor adds
 * nothing new, made a point whose knobs have effect (technique moves from
 * the best); FALSE when no winner is left. */
static gboolean combine_next(Tune *t, int round, const TunePoint *base, const GArray *win, guint *next,
                             GHashTable *seen) {
  guint n = t->knobs->len;
  const TunePoint *best = g_ptr_array_index(t->points, t->best);
  while (*next < win->len) {
    const TunePoint *p = g_ptr_array_index(t->points, g_array_index(win, guint, (*next)++));
    gboolean clash = FALSE;
    for (guint k = 0; k < n && !clash; k++)
      clash = p->idx[k] != base->idx[k] && best->idx[k] != base->idx[k] && best->idx[k] != p->idx[k];
    if (clash) continue;
    guint *idx = g_memdup2(best->idx, sizeof(guint) * n);
    for (guint k = 0; k < n; k++)
      if (p->idx[k] != base->idx[k]) idx[k] = p->idx[k];
    int repairs = close_point(t, idx, best->idx);
    g_autofree char *key = idx_key(idx, n);
    if (g_hash_table_contains(seen, key)) {
      g_free(idx);
      continue;
    }
    g_hash_table_add(seen, g_steal_pointer(&key));
    TunePoint *q = g_new0(TunePoint, 1);
    q->round = round;
    q->candidate = 1;
    q->idx = idx;
    q->repairs = repairs;
    g_ptr_array_add(t->points, q);
    return TRUE;
  }
  return FALSE;
}

/* A restart (--restarts): the steps of restart r are the first steps
 * times 2^r, at most each knob's whole range, around the best so far; a
 * wider neighbourhood each time the search converges.  FALSE when every
 * step already spans its knob's range: nothing wider to draw from. */
static gboolean restart(Tune *t, guint *step, const guint *step0) {
  gboolean wider = FALSE;
  int r = MIN(t->restarts + 1, 30);
  for (guint k = 0; k < t->knobs->len; k++) {
    guint span = MAX(tune_knob_count(g_ptr_array_index(t->knobs, k)) - 1, 1u);
    guint s = (guint)MIN((uint64_t)step0[k] << r, (uint64_t)span);
    wider |= s > step[k];
    step[k] = MAX(s, step[k]);
  }
  if (!wider) return FALSE;
  t->restarts++;
  return TRUE;
}

gboolean tune_run(Tune *t, TuneProgress progress, gpointer data, GError **err) {
  guint n = t->knobs->len;
  GThreadPool *pool = g_thread_pool_new(finish_one, NULL, CLAMP(t->opt.jobs, 1, 256), FALSE, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree guint *step = g_new(guint, n);
  gboolean ok = measure(t, pool, 0, err), stop = FALSE;
  TunePoint *start = g_ptr_array_index(t->points, 0);
  if (ok && (start->m.status == TUNE_ERROR_POINT || start->m.status == TUNE_REFUSED)) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_PLACED, "%s", start->m.error);
    ok = FALSE;
  }
  if (ok) {
    g_hash_table_add(seen, idx_key(start->idx, n));
    start->best = TRUE;
    t->best = 0;
    for (guint k = 0; k < n; k++) {
      guint count = tune_knob_count(g_ptr_array_index(t->knobs, k));
      step[k] = (guint)CLAMP((double)count * t->opt.step, 1.0, (double)count - 1);
    }
    if (progress && !progress(t, 0, data)) stop = TRUE;
  }
  g_autofree guint *step0 = g_memdup2(step, sizeof(guint) * n);
  int stale = 0;
  /* the screens (TuneOptions.screen): a screen, its combination round,
   * and while a screen's best is new, another from it, at most
   * SCREENS of them */
  enum { PHASE_SCREEN, PHASE_COMBINE, PHASE_DRAW } phase = t->opt.screen ? PHASE_SCREEN : PHASE_DRAW;
  int screens = 0, screen_base = 0, combos = 0;
  guint screen_first = 0, screen_last = 0;
  g_autoptr(GArray) winners = NULL;
  guint next_winner = 0;
  Rng rng = {t->opt.seed};
  guint budget = t->opt.max_evals > 0 ? (guint)t->opt.max_evals : G_MAXUINT;
  t->stopped = "its rounds";
  for (int round = 1; ok && !stop && round <= t->opt.rounds; round++) {
    const TunePoint *best = g_ptr_array_index(t->points, t->best);
    guint first = t->points->len;
    if (first >= budget) {
      t->stopped = "its evaluation budget";
      break;
    }
    gboolean screened = FALSE;
    if (phase == PHASE_SCREEN) {
      screen_base = t->best;
      screen(t, round, best->idx, seen, budget);
      screen_first = first;
      screen_last = t->points->len;
      screens++;
      phase = PHASE_COMBINE;
      screened = TRUE;
      if (winners) g_array_unref(winners);
      winners = NULL;
    } else if (phase == PHASE_COMBINE) {
      const TunePoint *base = g_ptr_array_index(t->points, screen_base);
      if (!winners) {
        winners = rank_winners(t, base, screen_first, screen_last);
        next_winner = 0;
        combos = 0;
      }
      if (combos < COMBINE_POINTS && combine_next(t, round, base, winners, &next_winner, seen)) {
        combos++;
        screened = TRUE;
      } else if (t->best != screen_base && screens < SCREENS) { /* another screen, from the new best */
        phase = PHASE_SCREEN;
        round--;
        continue;
      } else {
        phase = PHASE_DRAW;
      }
    }
    for (int c = 0; c < t->opt.candidates && t->points->len < budget && !screened; c++) {
      int repairs = 0;
      guint *idx = draw(&rng, t, best->idx, step, seen, &repairs);
      if (!idx) continue;
      g_hash_table_add(seen, idx_key(idx, n));
      TunePoint *p = g_new0(TunePoint, 1);
      p->round = round;
      p->candidate = c + 1;
      p->idx = idx;
      p->repairs = repairs;
      g_ptr_array_add(t->points, p);
    }
    if (t->points->len == first && phase != PHASE_DRAW) { /* a screen with nothing new: the next phase */
      round--;
      continue;
    }
    if (t->points->len == first) { /* every point within the steps is measured */
      if (t->opt.restarts && restart(t, step, step0)) {
        stale = 0;
        round--; /* the same round, drawn again */
        continue;
      }
      t->stopped = "every point within its steps is measured";
      break;
    }
    ok = measure(t, pool, first, err);
    int winner = -1;
    for (guint i = first; ok && i < t->points->len; i++) {
      const TunePoint *p = g_ptr_array_index(t->points, i);
      if (tune_better(&p->m, &(winner < 0 ? best : (const TunePoint *)g_ptr_array_index(t->points, winner))->m))
        winner = (int)i;
    }
    if (winner >= 0) {
      ((TunePoint *)g_ptr_array_index(t->points, winner))->best = TRUE;
      t->best = winner;
      stale = 0;
    } else if (!screened) {
      gboolean at_one = TRUE;
      for (guint k = 0; k < n; k++) {
        at_one &= step[k] == 1;
        step[k] = MAX(step[k] / 2, 1u);
      }
      /* two rounds without a better point at the smallest steps: a restart */
      if (t->opt.restarts && at_one && ++stale >= 2 && restart(t, step, step0)) stale = 0;
    }
    t->rounds_run = round;
    if (ok && progress && !progress(t, round, data)) stop = TRUE;
    if (ok && t->points->len >= budget && round < t->opt.rounds) {
      t->stopped = "its evaluation budget";
      break;
    }
  }
  if (stop) t->stopped = "its caller";
  g_thread_pool_free(pool, FALSE, TRUE);
  return ok;
}

/* ---- output ----------------------------------------------------------- */

/* The log's header line, with its line end. */
static void log_header(const Tune *t, GString *o) {
  g_string_append(o, "round,candidate");
  for (guint k = 0; k < t->knobs->len; k++) {
    g_string_append_c(o, ',');
    csv_field(o, ((const TuneKnob *)g_ptr_array_index(t->knobs, k))->path);
  }
  g_string_append(o, ",status,p1_status,p1_cycles,p1_peak_w,d1_status,d1_cycles,d1_peak_w,area_mm2,score,error,best,"
                    "repairs\n");
}

/* A measure's cycles of problem K (0 P1, 1 D1), 0 when not measured. */
static int64_t cycles_of(const Tune *t, const TuneMeasure *m, int k) {
  if (t->opt.target == TUNE_TARGET_BOTH) return k ? m->d1_cycles : m->cycles;
  return (t->opt.target == TUNE_TARGET_D1) == (k == 1) ? m->cycles : 0;
}

/* The result columns of a point (the result schema's, docs/tools.md
 * "Results"), after its status: each problem's status, cycles and peak W
 * (empty when not measured), the area, the score with both, the error. */
static void log_result(const Tune *t, const TuneMeasure *m, GString *o) {
  gboolean measured = m->status != TUNE_ERROR_POINT && m->status != TUNE_REFUSED;
  for (int k = 0; k < 2; k++) {
    int64_t c = measured ? cycles_of(t, m, k) : 0;
    double w = t->opt.target == TUNE_TARGET_BOTH ? m->w[k] : m->peak_w; /* one problem: its peak */
    if (c > 0)
      g_string_append_printf(o, ",%s,%" PRId64 ",%.4f",
                             m->area_mm2 > AREA_LIMIT_MM2 ? "area" : w > POWER_LIMIT_W ? "power" : "pass", c, w);
    else
      g_string_append(o, ",,,");
  }
  if (measured)
    g_string_append_printf(o, ",%.4f", m->area_mm2);
  else
    g_string_append(o, ",");
  if (measured && m->cycles > 0 && m->d1_cycles > 0)
    g_string_append_printf(o, ",%.2f,", wl_score(m->cycles, m->d1_cycles));
  else
    g_string_append(o, ",,");
  if (m->error) csv_field(o, m->error);
}

char *tune_log_csv(const Tune *t) {
  GString *o = g_string_new(NULL);
  log_header(t, o);
  for (guint i = 0; i < t->points->len; i++) {
    const TunePoint *p = g_ptr_array_index(t->points, i);
    g_string_append_printf(o, "%d,%d", p->round, p->candidate);
    for (guint k = 0; k < t->knobs->len; k++) {
      g_autofree char *v = tune_knob_value(g_ptr_array_index(t->knobs, k), p->idx[k]);
      g_string_append_c(o, ',');
      csv_field(o, v);
    }
    g_string_append_printf(o, ",%s", tune_status_name[p->m.status]);
    log_result(t, &p->m, o);
    g_string_append_printf(o, ",%d,%d\n", p->best ? 1 : 0, p->repairs);
  }
  return g_string_free(o, FALSE);
}

char *tune_best_text(const Tune *t, GError **err) {
  if (t->best < 0) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "%s: no point has been measured", t->template_path);
    return NULL;
  }
  const TunePoint *b = g_ptr_array_index(t->points, t->best);
  g_autofree char *body = tune_point_text(t, b, err);
  if (!body) return NULL;
  /* the first line names the template and the knobs' values: escaped
   * (text_escape.h), since a line break in them would end the comment and
   * what followed would be YAML of the plan */
  g_autoptr(GString) first = g_string_new(NULL);
  GString *o = first;
  g_string_append_printf(o, "# tcc-tune: the best of %u point%s for %s from %s (seed %" PRIu32 "):", t->points->len,
                         t->points->len == 1 ? "" : "s",
                         t->opt.target == TUNE_TARGET_BOTH ? "p1 and d1" : tune_target_name[t->opt.target],
                         t->template_path, t->opt.seed);
  /* a --knob list: every knob's value; the schema's space: the knobs moved */
  const TunePoint *start = g_ptr_array_index(t->points, 0);
  if (t->derived) g_string_append_printf(o, " %u knobs of the plan schema searched; moved from the template:",
                                         t->knobs->len);
  int listed = 0;
  for (guint k = 0; k < t->knobs->len; k++) {
    if (t->derived && b->idx[k] == start->idx[k]) continue;
    g_autofree char *v = tune_knob_value(g_ptr_array_index(t->knobs, k), b->idx[k]);
    g_string_append_printf(o, "%s %s=%s", listed++ ? "," : "", ((const TuneKnob *)g_ptr_array_index(t->knobs, k))->path, v);
  }
  if (t->derived && listed == 0) g_string_append(o, " none");
  g_autofree char *line = text_escape(first->str);
  o = g_string_new(line);
  if (t->verified) {
    g_string_append(o, "\n# its numerics pass on the grade seeds");
    static const uint64_t seeds[] = WL_GRADE_SEEDS;
    for (guint i = 0; i < G_N_ELEMENTS(seeds); i++) g_string_append_printf(o, "%s %" PRIu64, i ? "," : "", seeds[i]);
  } else {
    g_string_append(o, "\n# the best so far: not yet checked on the grade seeds (the search is running)");
  }
  g_string_append(o, "\n# (comments of the template are not kept)\n");
  g_string_append(o, body);
  return g_string_free(o, FALSE);
}

/* ---- the best point's numerics ---------------------------------------- */

/* Point p's programs checked on every grade seed: TRUE when all pass;
 * FALSE with *why (the first failure) when one does not; FALSE with *err
 * when the text cannot be made. */
static gboolean numerics_pass(const Tune *t, const TunePoint *p, char **why, GError **err) {
  g_autofree char *text = p->round == 0 ? g_strdup(t->text) : tune_point_text(t, p, err);
  if (!text) return FALSE;
  g_autoptr(GError) e = NULL;
  g_autoptr(Plan) plan = plan_parse(t->template_path, text, strlen(text), &e);
  static const ProblemKind order[] = {PROB_P1, PROB_D1};
  static const uint64_t seeds[] = WL_GRADE_SEEDS;
  for (guint i = 0; plan && i < G_N_ELEMENTS(order); i++) {
    if (t->opt.target != TUNE_TARGET_BOTH && (ProblemKind)t->opt.target != order[i]) continue;
    g_autoptr(Ir) ir = fit_pipeline(plan, order[i], NULL, NULL, FALSE, NULL, &e);
    char *asm_text = ir ? be_emit(ir) : NULL;
    g_autoptr(Program) prog = asm_text ? sim_asm_parse_take(t->template_path, asm_text, strlen(asm_text), &e) : NULL;
    if (!prog) break;
    SimOptions opt;
    sim_options_default(&opt);
    g_autoptr(SimTiming) timing = sim_time(prog, &opt);
    for (guint s = 0; s < G_N_ELEMENTS(seeds); s++) {
      SimResult r;
      if (!sim_check(timing, seeds[s], NULL, &r, &e)) break;
      gboolean pass = r.check.pass;
      double err_abs = r.check.max_abs_err;
      sim_result_clear(&r);
      if (!pass) {
        *why = g_strdup_printf("%s: the numerics fail on seed %" PRIu64 " (max abs error %g)",
                               wl_problem_name(order[i]), seeds[s], err_abs);
        return FALSE;
      }
    }
    if (e) break;
  }
  if (e) { /* it compiled and ran when measured: the same again, or a bug */
    *why = g_strdup(e->message);
    return FALSE;
  }
  return TRUE;
}

gboolean tune_verify_best(Tune *t, int tries, GError **err) {
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < t->points->len; i++) {
    const TunePoint *p = g_ptr_array_index(t->points, i);
    if (p->m.status != TUNE_PASS) continue;
    guint at = order->len; /* insertion by tune_better, stable */
    while (at > 0 && tune_better(&p->m, &((const TunePoint *)g_ptr_array_index(
                                                t->points, g_array_index(order, guint, at - 1)))->m))
      at--;
    g_array_insert_val(order, at, i);
  }
  for (guint k = 0; k < order->len && (int)k < tries; k++) {
    TunePoint *p = g_ptr_array_index(t->points, g_array_index(order, guint, k));
    g_autofree char *why = NULL;
    GError *e = NULL;
    if (numerics_pass(t, p, &why, &e)) {
      t->best = (int)g_array_index(order, guint, k);
      t->verified = TRUE;
      return TRUE;
    }
    if (e) {
      g_propagate_error(err, e);
      return FALSE;
    }
    p->m.status = TUNE_WRONG;
    g_free(p->m.error);
    p->m.error = g_steal_pointer(&why);
  }
  g_set_error(err, TUNE_ERROR, TUNE_ERROR_USAGE, "%s: no point measured passes %s", t->template_path,
              order->len ? "the numerics on the grade seeds" : "the power and area limits");
  return FALSE;
}

void tune_counts(const Tune *t, TuneCounts *c) {
  memset(c, 0, sizeof *c);
  for (guint i = 0; i < t->points->len; i++) {
    const TunePoint *p = g_ptr_array_index(t->points, i);
    c->status[p->m.status]++;
    c->repaired += p->repairs > 0;
  }
}

/* ---- resuming a search from its log --------------------------------- */

static void measure_free(gpointer p) {
  TuneMeasure *m = p;
  g_free(m->error);
  g_free(m);
}

static gboolean parse_count(const char *s, int64_t *v) { return parse_int(s, v) && *v >= 0; }

gboolean tune_resume(Tune *t, const char *file, const char *text, GError **err) {
  g_autoptr(GString) want = g_string_new(NULL);
  log_header(t, want);
  g_string_truncate(want, want->len - 1);
  const char *p = text;
  g_autoptr(GPtrArray) head = csv_record(&p);
  g_autoptr(GString) got = g_string_new(NULL);
  for (guint i = 0; head && i < head->len; i++) {
    if (i) g_string_append_c(got, ',');
    csv_field(got, g_ptr_array_index(head, i));
  }
  if (!head || strcmp(got->str, want->str) != 0) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_PLACED,
                "%s:1:1: error: not the log of this search: its columns are not this search's knobs and "
                "problem (resume with the template, --problem and --knob options of the search that wrote it)",
                file);
    return FALSE;
  }
  if (!t->cache) t->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, measure_free);
  guint n = t->knobs->len, cols = head->len;
  gboolean both = t->opt.target == TUNE_TARGET_BOTH;
  g_autofree guint *idx = g_new(guint, n);
  for (int line = 2; *p; line++) {
    g_autoptr(GPtrArray) f = csv_record(&p);
    if (!f || f->len != cols) {
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_PLACED, "%s:%d:1: error: a row of %u fields, not %u", file, line,
                  f ? f->len : 0, cols);
      return FALSE;
    }
#define FIELD(i) ((const char *)g_ptr_array_index(f, (i)))
    for (guint k = 0; k < n; k++) {
      int x = knob_index(g_ptr_array_index(t->knobs, k), FIELD(2 + k));
      if (x < 0) {
        g_set_error(err, TUNE_ERROR, TUNE_ERROR_PLACED, "%s:%d:1: error: %s=%s is not one of the knob's values",
                    file, line, ((const TuneKnob *)g_ptr_array_index(t->knobs, k))->path, FIELD(2 + k));
        return FALSE;
      }
      idx[k] = (guint)x;
    }
    TuneMeasure *m = g_new0(TuneMeasure, 1);
    guint c = 2 + n; /* status, then the result columns of log_result */
    int st = -1;
    for (int s = 0; s <= TUNE_SLOWER; s++)
      if (strcmp(FIELD(c), tune_status_name[s]) == 0) st = s;
    gboolean measured = st >= 0 && st != TUNE_ERROR_POINT && st != TUNE_REFUSED;
    int64_t cyc[2] = {0, 0};
    gboolean ok = st >= 0;
    for (int k = 0; ok && measured && k < 2; k++) {
      /* a problem measured: its cycles and peak; with both, a slower
       * point's D1 may be missing (not measured after P1) */
      const char *cf = FIELD(c + 2 + 3 * k), *wf = FIELD(c + 3 + 3 * k);
      gboolean want = both ? k == 0 || *cf || st != TUNE_SLOWER : (t->opt.target == TUNE_TARGET_D1) == (k == 1);
      if (!want) continue;
      char *end = NULL;
      m->w[k] = g_ascii_strtod(wf, &end);
      ok = parse_count(cf, &cyc[k]) && *wf && !*end;
      m->peak_w = MAX(m->peak_w, m->w[k]);
    }
    if (ok && measured) {
      char *end = NULL;
      m->area_mm2 = g_ascii_strtod(FIELD(c + 7), &end);
      ok = *FIELD(c + 7) && !*end;
    }
    if (!ok) {
      measure_free(m);
      g_set_error(err, TUNE_ERROR, TUNE_ERROR_PLACED, "%s:%d:1: error: a malformed measure ('%s')", file, line,
                  FIELD(c));
      return FALSE;
    }
    /* the check of the numerics is made again at the end: a point it
     * failed was measured as passing */
    m->status = st == TUNE_WRONG ? TUNE_PASS : (TuneStatus)st;
    m->cycles = both || t->opt.target == TUNE_TARGET_P1 ? cyc[0] : cyc[1];
    m->d1_cycles = both ? cyc[1] : 0;
    m->error = st == TUNE_WRONG || !*FIELD(c + 9) ? NULL : g_strdup(FIELD(c + 9));
#undef FIELD
    g_hash_table_replace(t->cache, idx_key(idx, n), m);
  }
  return TRUE;
}

/* ---- points as jobs: GNU parallel, Slurm ----------------------------- */

/* PATH written whole as every output file is (outfile.h), never over
 * `input` (the template, or a job's plan); FALSE with *err (TUNE_ERROR_IO). */
static gboolean write_file(const char *path, const char *text, gssize len, const char *input, GError **err) {
  g_autoptr(GError) e = NULL;
  if (outfile_write(path, text, len, (const char *const[]){input, NULL}, OUTFILE_DEFAULT, &e)) return TRUE;
  g_autofree char *q = text_escape(path);
  g_autofree char *in = text_escape(e->message);
  if (g_error_matches(e, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_IO, "cannot write '%s': it is the plan %s itself", q, in);
  else
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_IO, "cannot write '%s': %s", q, e->message);
  return FALSE;
}

static char *measure_path(const char *job) {
  size_t n = strlen(job);
  return g_str_has_suffix(job, ".yaml") ? g_strdup_printf("%.*s.measure", (int)(n - 5), job)
                                         : g_strconcat(job, ".measure", NULL);
}

gboolean tune_eval_job(const char *job, const char *name, TuneTarget target, double cap, GError **err) {
  g_autofree char *text = NULL;
  gsize len = 0;
  int errnum = 0;
  if (!(text = file_read(job, PLAN_MAX_BYTES, 0, &len, &errnum))) {
    g_autofree char *why = file_read_why(errnum, PLAN_MAX_BYTES);
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_IO, "cannot read '%s': %s", job, why);
    return FALSE;
  }
  TuneMeasure m = {0};
  gpointer w = compile_prepare(name, text, target, cap, NULL, &m);
  if (w) simulate_finish(w, &m);
  g_autoptr(GString) o = g_string_new(tune_status_name[m.status]);
  g_string_append_printf(o, ",%" PRId64 ",%" PRId64 ",%.17g,%.17g,%.17g,%.17g,", m.cycles, m.d1_cycles, m.peak_w,
                         m.area_mm2, m.w[0], m.w[1]);
  csv_field(o, m.error ? m.error : "");
  g_string_append_c(o, '\n');
  g_free(m.error);
  g_autofree char *out = measure_path(job);
  return write_file(out, o->str, (gssize)o->len, job, err);
}

/* A job's measure file into *m; FALSE when it is absent or malformed. */
static gboolean read_measure(const char *path, TuneMeasure *m) {
  gsize len = 0;
  int errnum = 0;
  g_autofree char *text = file_read(path, TCC_DATA_MAX_BYTES, 0, &len, &errnum);
  if (!text) return FALSE;
  const char *p = text;
  g_autoptr(GPtrArray) f = csv_record(&p);
  if (!f || f->len != 8) return FALSE;
  int st = -1;
  for (int s = 0; s <= TUNE_SLOWER; s++)
    if (strcmp(g_ptr_array_index(f, 0), tune_status_name[s]) == 0) st = s;
  int64_t c, d;
  char *e1, *e2;
  char *e3, *e4;
  double w = g_ascii_strtod(g_ptr_array_index(f, 3), &e1), a = g_ascii_strtod(g_ptr_array_index(f, 4), &e2);
  double w1 = g_ascii_strtod(g_ptr_array_index(f, 5), &e3), w2 = g_ascii_strtod(g_ptr_array_index(f, 6), &e4);
  if (st < 0 || !parse_int(g_ptr_array_index(f, 1), &c) || !parse_int(g_ptr_array_index(f, 2), &d) || *e1 || *e2 ||
      *e3 || *e4)
    return FALSE;
  *m = (TuneMeasure){(TuneStatus)st, c, d, w, a, NULL, {w1, w2}};
  const char *msg = g_ptr_array_index(f, 7);
  if (*msg) m->error = g_strdup(msg);
  return TRUE;
}

/* The points [first, points->len) as jobs of WORKDIR/rounds/R: each
 * point's plan pC.yaml, the job lines in jobs.txt, run by the engine,
 * each measure read back from pC.measure (a job that left none is an
 * error point).  The same names in messages as measure's. */
static gboolean measure_jobs(Tune *t, guint first, GError **err) {
  const TunePoint *p0 = g_ptr_array_index(t->points, first);
  g_autofree char *round = g_strdup_printf("%d", p0->round);
  g_autofree char *dir = g_build_filename(t->opt.workdir, "rounds", round, NULL);
  if (g_mkdir_with_parents(dir, 0777) != 0) {
    int e = errno;
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_IO, "cannot create '%s': %s", dir, g_strerror(e));
    return FALSE;
  }
  g_autoptr(GString) lines = g_string_new(NULL);
  g_autoptr(GPtrArray) pending = g_ptr_array_new(); /* TunePoint* */
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *qself = g_shell_quote(t->opt.self);
  for (guint i = first; i < t->points->len; i++) {
    TunePoint *p = g_ptr_array_index(t->points, i);
    if (take_resumed(t, p)) continue;
    g_autofree char *text = p->round == 0 ? g_strdup(t->text) : tune_point_text(t, p, err);
    if (!text) return FALSE;
    g_autofree char *base = g_strdup_printf("p%d.yaml", p->candidate);
    char *job = g_build_filename(dir, base, NULL);
    g_autofree char *old = measure_path(job);
    g_unlink(old); /* a result from another search in this directory */
    if (!write_file(job, text, -1, t->template_path, err)) {
      g_free(job);
      return FALSE;
    }
    g_autofree char *name = point_name(t, p);
    g_autofree char *qjob = g_shell_quote(job), *qname = g_shell_quote(name);
    char capt[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(capt, sizeof capt, "%.17g", best_cap(t));
    g_string_append_printf(lines, "%s --eval-job %s --eval-as %s --eval-cap %s --problem %s\n", qself, qjob, qname,
                           capt, tune_target_name[t->opt.target]);
    g_ptr_array_add(pending, p);
    g_ptr_array_add(paths, job);
  }
  if (pending->len == 0) return TRUE;
  g_autofree char *jobs_txt = g_build_filename(dir, "jobs.txt", NULL);
  if (!write_file(jobs_txt, lines->str, (gssize)lines->len, t->template_path, err)) return FALSE;
  g_autoptr(GError) e = NULL;
  gboolean ran;
  if (t->opt.engine == TUNE_ENGINE_PARALLEL) {
    ran = jobs_run_parallel(jobs_txt, CLAMP(t->opt.jobs, 1, 256), t->opt.sshlogin, &e);
  } else {
    g_autofree char *script = jobs_slurm_script("tcc-tune", dir, jobs_txt, pending->len, &e);
    g_autofree char *path = g_build_filename(dir, "tune.slurm", NULL);
    ran = script && write_file(path, script, -1, t->template_path, &e) && jobs_run_slurm(path, &e);
  }
  if (!ran) {
    g_set_error(err, TUNE_ERROR, TUNE_ERROR_IO, "round %s's jobs (%s): %s", round, jobs_txt, e->message);
    return FALSE;
  }
  for (guint i = 0; i < pending->len; i++) {
    TunePoint *p = g_ptr_array_index(pending, i);
    g_autofree char *mp = measure_path(g_ptr_array_index(paths, i));
    if (!read_measure(mp, &p->m)) {
      p->m = (TuneMeasure){.status = TUNE_ERROR_POINT};
      p->m.error = g_strdup_printf("%s: the job left no measure (its log: the engine's)", mp);
    }
  }
  return TRUE;
}
