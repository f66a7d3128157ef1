/* plan_space.c - the search space a tuner derives from the knob table
 * (plan.h, "Search spaces"): every knob that is implemented for the
 * problem, with the values the schema allows at the plan's shape and
 * machine, and the "has no effect unless" rules between them. */
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "plan_internal.h"

/* Knobs no search should move: the fitting owns the pacing and the SMs'
 * watts (power.fit itself, the buckets, the pacer, the stage rates); the placement's ILP
 * options only matter with the solver that has a wall-clock limit. */
static const char *const not_searched[] = {
    "power.fit",           "power.bucket_bytes",   "power.event_interval",    "power.pacing_wg",
    "power.stage_rate",    "power.stage_rate.ln",  "power.stage_rate.qkv",    "power.stage_rate.att",
    "power.stage_rate.wo", "power.stage_rate.w1",  "power.stage_rate.w2",
    "placement.solver",    "placement.time_limit_s", "placement.k_divisor",   "placement.partition_weight",
    "placement.active_weight"};

static gboolean searched(const char *path) {
  for (guint i = 0; i < G_N_ELEMENTS(not_searched); i++)
    if (strcmp(not_searched[i], path) == 0) return FALSE;
  return TRUE;
}

/* A ladder of about 1.5x steps over lo..hi: lo, then 1, 2, 3, 4, 6, 8,
 * 12, ... within the range, and hi: the values a search of cycles (the
 * spacings, up to 100,000) can tell apart. */
static void ladder(GArray *out, long lo, long hi) {
  g_array_append_val(out, lo);
  for (long p = 1; p <= hi; p *= 2) {
    long a = p, b = p + p / 2;
    if (a > lo) g_array_append_val(out, a);
    if (b > lo && b <= hi && b != a && p > 1) g_array_append_val(out, b);
  }
  long last = g_array_index(out, long, out->len - 1);
  if (last < hi) g_array_append_val(out, hi);
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The knob of values num (taken apart from), with the plan's value `now`
 * and, when add_def, the default among them. */
static PlanSpaceKnob *space_knob(const char *path, GArray *num, long def, gboolean add_def, long now,
                                 gboolean is_bool, const char *const *names) {
  if (add_def) g_array_append_val(num, def);
  g_array_append_val(num, now);
  g_array_sort(num, cmp_long);
  PlanSpaceKnob *k = g_new0(PlanSpaceKnob, 1);
  k->path = g_strdup(path);
  k->values = g_ptr_array_new_with_free_func(g_free);
  k->num = g_array_new(FALSE, FALSE, sizeof(long));
  k->def = -1;
  for (guint i = 0; i < num->len; i++) {
    long v = g_array_index(num, long, i);
    if (i > 0 && v == g_array_index(num, long, i - 1)) continue;
    if (v == def) k->def = (int)k->num->len;
    g_array_append_val(k->num, v);
    g_ptr_array_add(k->values, names ? g_strdup(names[v]) : is_bool ? g_strdup(v ? "true" : "false")
                                                                   : g_strdup_printf("%ld", v));
  }
  return k;
}

void plan_space_knob_free(PlanSpaceKnob *k) {
  if (!k) return;
  g_free(k->path);
  g_ptr_array_unref(k->values);
  g_array_unref(k->num);
  g_free(k);
}

/* The section knob's values: all of an enum or a bool; an int's values
 * that its check takes at this shape and machine (every one of a range of
 * at most 4096, thinned to a ladder past 64), else the ladder. */
static PlanSpaceKnob *section_knob(const Plan *plan, const PlanProblem *pp, int i) {
  const PlanKnobDef *k = &plan_knobs[i];
  g_autoptr(GArray) num = g_array_new(FALSE, FALSE, sizeof(long));
  long now = plan_knob_get(pp, k);
  gboolean add_def = TRUE; /* a default the shape does not take stays out */
  if (k->type == KT_BOOL) {
    for (long v = 0; v <= 1; v++) g_array_append_val(num, v);
  } else if (k->type == KT_ENUM) {
    for (long v = 0; k->names[v]; v++) g_array_append_val(num, v);
  } else {
    long lo = k->min, hi = k->max;
    if (strcmp(k->path, "sms_used") == 0) hi = plan->hw.sms;
    if ((long)hi - lo <= 4096) {
      add_def = k->check == NULL;
      PlanProblem probe = *pp;
      g_autoptr(GString) msg = g_string_new(NULL);
      for (long v = lo; v <= hi; v++) {
        g_string_truncate(msg, 0);
        if (plan_knob_check(k, &probe, &plan->hw, v, msg) == 0) g_array_append_val(num, v);
      }
      if (num->len > 64) { /* the ladder's values among them */
        g_autoptr(GArray) lad = g_array_new(FALSE, FALSE, sizeof(long));
        ladder(lad, lo, hi);
        g_autoptr(GArray) kept = g_array_new(FALSE, FALSE, sizeof(long));
        for (guint a = 0; a < num->len; a++)
          for (guint b = 0; b < lad->len; b++)
            if (g_array_index(num, long, a) == g_array_index(lad, long, b)) g_array_append_val(kept, g_array_index(num, long, a));
        g_array_set_size(num, 0);
        g_array_append_vals(num, kept->data, kept->len);
      }
    } else {
      ladder(num, lo, hi);
    }
    if (num->len == 0) return NULL;
  }
  g_autofree char *full = g_strdup_printf("%s.%s", wl_problem_name(pp->dims.kind), k->path);
  PlanSpaceKnob *s =
      space_knob(full, num, k->def, add_def, now, k->type == KT_BOOL, k->type == KT_ENUM ? k->names : NULL);
  if (s->values->len < 2) {
    plan_space_knob_free(s);
    return NULL;
  }
  return s;
}

/* A hardware key's values: its range (powers of two where it must be
 * one), the plan's value among them. */
static PlanSpaceKnob *hardware_knob(const Plan *plan, int i) {
  const char *sim = plan_hw_sim_key(i);
  for (int p = 0; p < sim_machine_nparams; p++) {
    const MachineParam *mp = &sim_machine_params[p];
    if (strcmp(mp->key, sim) != 0) continue;
    long now = *(const int *)((const char *)&plan->hw + mp->offset);
    g_autoptr(GArray) num = g_array_new(FALSE, FALSE, sizeof(long));
    if (mp->pow2) {
      for (long v = 1; v <= mp->max; v *= 2)
        if (v >= mp->min) g_array_append_val(num, v);
    } else if (mp->max - mp->min <= 64) {
      for (long v = mp->min; v <= mp->max; v++) g_array_append_val(num, v);
    } else {
      ladder(num, mp->min, mp->max);
    }
    gboolean is_bool = strcmp(plan_hw_key(i), "multicast") == 0;
    return space_knob(plan_hw_path(i), num, mp->def, TRUE, now, is_bool, NULL);
  }
  return NULL;
}

GPtrArray *plan_space(const Plan *plan, ProblemKind kind, gboolean hardware) {
  GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)plan_space_knob_free);
  for (int i = 0; hardware && i < PLAN_NHW; i++) {
    PlanSpaceKnob *k = hardware_knob(plan, i);
    if (k) g_ptr_array_add(out, k);
  }
  const PlanProblem *pp = plan_problem(plan, kind);
  PlanProblem dflt;
  if (!pp->present) {
    plan_default_problem(&dflt, kind, &plan->hw);
    pp = &dflt;
  }
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    if (k->type == KT_DIM || !(k->applies & (1u << kind)) || k->step[kind] != 0 || !searched(k->path)) continue;
    PlanSpaceKnob *s = section_knob(plan, pp, i);
    if (s) g_ptr_array_add(out, s);
  }
  return out;
}

/* The schema's definition of a full path ("p1.panels.w1") of problem
 * `kind`, or NULL. */
static const PlanKnobDef *def_of(const char *path, ProblemKind *kind) {
  for (int k = 0; k < 2; k++) {
    const char *name = wl_problem_name((ProblemKind)k);
    size_t n = strlen(name);
    if (strncmp(path, name, n) != 0 || path[n] != '.') continue;
    int i = plan_knob_index(path + n + 1);
    if (i < 0 || plan_knobs[i].type == KT_DIM || !(plan_knobs[i].applies & (1u << k))) return NULL;
    *kind = (ProblemKind)k;
    return &plan_knobs[i];
  }
  return NULL;
}

gboolean plan_value_number(const char *path, const char *text, long *v) {
  ProblemKind kind;
  const PlanKnobDef *k = def_of(path, &kind);
  if (!k) return FALSE;
  if (k->type == KT_BOOL) {
    if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0) return FALSE;
    *v = strcmp(text, "true") == 0;
    return TRUE;
  }
  if (k->type == KT_ENUM) {
    for (long i = 0; k->names[i]; i++)
      if (strcmp(k->names[i], text) == 0) {
        *v = i;
        return TRUE;
      }
    return FALSE;
  }
  char *end;
  long x = strtol(text, &end, 10);
  if (!*text || *end) return FALSE;
  *v = x;
  return TRUE;
}

gboolean plan_knob_default_number(const char *path, long *v) {
  ProblemKind kind;
  const PlanKnobDef *k = def_of(path, &kind);
  if (!k) return FALSE;
  *v = k->def;
  return TRUE;
}

gboolean plan_space_need(const char *path, int n, char **needs, long *min) {
  ProblemKind kind;
  const PlanKnobDef *k = def_of(path, &kind);
  if (!k) return FALSE;
  for (int j = 0; j < plan_nneeds; j++) {
    const PlanNeed *r = &plan_needs[j];
    if (strcmp(r->path, k->path) != 0 || (r->only && !(r->only & (1u << kind)))) continue;
    if (n-- > 0) continue;
    *needs = g_strdup_printf("%s.%s", wl_problem_name(kind), r->needs);
    *min = r->needs_min;
    return TRUE;
  }
  return FALSE;
}

gboolean plan_space_companion(const Plan *plan, const char *path, int n, long *min, char **companion, long *value) {
  ProblemKind kind;
  const PlanKnobDef *k = def_of(path, &kind);
  if (!k) return FALSE;
  const PlanProblem *pp = plan_problem(plan, kind);
  PlanProblem dflt;
  if (!pp->present) {
    plan_default_problem(&dflt, kind, &plan->hw);
    pp = &dflt;
  }
  for (int j = 0; j < plan_ncompanions; j++) {
    const PlanCompanion *c = &plan_companions[j];
    if (strcmp(c->path, k->path) != 0 || !(c->only & (1u << kind))) continue;
    int i = plan_knob_index(c->companion);
    if (i < 0 || !(plan_knobs[i].applies & (1u << kind))) continue;
    long v = c->value(&plan_knobs[i], pp, &plan->hw);
    if (v == PLAN_NO_COMPANION) continue;
    if (n-- > 0) continue;
    *min = c->min;
    *companion = g_strdup_printf("%s.%s", wl_problem_name(kind), c->companion);
    *value = v;
    return TRUE;
  }
  return FALSE;
}
