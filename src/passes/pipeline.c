/* pipeline.c - plan -> IR: the passes in order, readable top to bottom.
 *
 *   lower     the problem's strategy (baseline) -> tasks, tensors, ops, events
 *   place     bind tasks to WGs
 *   pace      byte-bucket load pacing per WG (power knobs)
 *   rf_alloc  partitions and offsets for every RF tensor
 *
 * `dump_after` returns the IR text after the named pass. */
#include <string.h>

#include "ir.h"

const char *const pass_names[] = {"lower", "place", "pace", "rf_alloc", NULL};

static gboolean dump(const Ir *ir, const char *pass, const char *want, char **out) {
  if (want && out && !*out && strcmp(pass, want) == 0) *out = ir_print(ir);
  return TRUE;
}

Ir *pass_pipeline(const Plan *plan, ProblemKind kind, const char *dump_after, char **out,
                  GError **err) {
  const PlanProblem *pp = plan_problem(plan, kind);
  g_autoptr(Ir) ir = ir_new(&plan->hw, &pp->dims, plan->file);
  ir->section = (IrProv){wl_problem_name(kind), pp->where.line, pp->where.col};
  if (!pp->present) {
    ir_error(ir, err, ir->section, "the plan has no %s section", wl_problem_name(kind));
    return NULL;
  }
  ir->sms_used = pp->sms_used; /* shown by dumps before placement, which sets it */
  gboolean ok = kind == PROB_D1 ? pass_lower_d1(ir, plan, err) : pass_lower_p1(ir, plan, err);
  if (ok) dump(ir, "lower", dump_after, out);
  ok = ok && pass_place(ir, plan, kind, err) && dump(ir, "place", dump_after, out);
  ok = ok && pass_pace(ir, plan, kind, err) && dump(ir, "pace", dump_after, out);
  ok = ok && pass_rf_alloc(ir, err) && dump(ir, "rf_alloc", dump_after, out);
  if (!ok) return NULL; /* the passes' messages are ir_error's, with the plan's place */
  return g_steal_pointer(&ir);
}
