/* knobdiff.c - the differing knobs of two loaded plans, on effective
 * values (knobdiff.h). */
#include <string.h>

#include "knobdiff.h"

static void add(GArray *out, const char *path, const char *va, PlanLoc la, const char *vb, PlanLoc lb) {
  if (strcmp(va, vb) == 0) return;
  KnobDiff k = {.path = path, .a_loc = la, .b_loc = lb};
  g_strlcpy(k.a, va, sizeof k.a);
  g_strlcpy(k.b, vb, sizeof k.b);
  g_array_append_val(out, k);
}

GArray *diff_knobs(const Plan *a, const Plan *b, const gboolean problems[2]) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(KnobDiff));
  for (int i = 0; i < PLAN_NHW; i++) {
    g_autofree char *va = plan_hw_value_text(a, i), *vb = plan_hw_value_text(b, i);
    add(out, plan_hw_path(i), va, a->hw_loc[i], vb, b->hw_loc[i]);
  }
  static const ProblemKind order[] = {PROB_P1, PROB_D1};
  for (guint p = 0; p < G_N_ELEMENTS(order); p++) {
    if (!problems[order[p]]) continue;
    const PlanProblem *pa = plan_problem(a, order[p]), *pb = plan_problem(b, order[p]);
    for (int i = 0; i < PLAN_NKNOBS; i++) {
      if (!pa->loc[i].path) continue; /* the knob does not apply to this problem (nor in b) */
      /* written on neither side, a knob that follows another differs
       * exactly when that one does, which is listed */
      if (pa->loc[i].line == 0 && pb->loc[i].line == 0 && plan_knob_follows(pa->loc[i].path)) continue;
      add(out, pa->loc[i].path, pa->value[i], pa->loc[i], pb->value[i], pb->loc[i]);
    }
  }
  return out;
}

char *diff_knob_side(const char *value, PlanLoc loc) {
  if (loc.line == 0) return g_strdup_printf("%s (default)", value);
  return g_strdup_printf("%s (line %d)", value, loc.line);
}
