/* place.c - constructive placement: bind every task to a WG.
 *
 * The WGs of the SMs used are ordered SM-major-interleaved (wg0 of sm0, wg0
 * of sm1, ..., then wg1 of sm0, ...) so consecutive tasks land on different
 * SMs; tasks take them round-robin in program order.  Each WG runs its tasks
 * in program order, and a task only waits for events of earlier tasks, so
 * the placement can never deadlock.  The pacer task (role pacer) goes alone
 * to power.pacing_wg, which the round robin skips.  With attention.slice_map:
 * blocked, attention slices take the WGs SM by SM instead (wg0..3 of sm0,
 * then sm1, ...), so a head's slices share an SM; round_robin (the default)
 * spreads them like every other task. */
#include "ir.h"

gboolean pass_place(Ir *ir, GError **err) {
  const Schedule *pp = &ir->sched;
  int S = pp->sms_used > 0 ? pp->sms_used : ir->hw.sms, W = ir->hw.wgs_per_sm;
  int pacing = pp->pacing_wg; /* kept free for the pacer */
  ir->sms_used = S;
  if (S < 1 || S > ir->hw.sms) {
    ir_error(ir, err, ir_prov(ir, "sms_used"),
             "place: sms_used=%d out of range 1..%d", S, ir->hw.sms);
    return FALSE;
  }
  GArray *order = g_array_new(FALSE, FALSE, sizeof(int)), *blocked = g_array_new(FALSE, FALSE, sizeof(int));
  for (int slot = 0; slot < S * W; slot++) {
    int wg = (slot % S) * W + slot / S;
    if (wg != pacing) g_array_append_val(order, wg);
    if (slot != pacing) g_array_append_val(blocked, slot); /* SM by SM */
  }
  gboolean by_sm = pp->slice_map == SLICEMAP_BLOCKED;
  if (order->len == 0) {
    g_array_free(order, TRUE);
    g_array_free(blocked, TRUE);
    ir_error(ir, err,
             ir_prov(ir, "power.pacing_wg"),
             "place: no WG left for tasks besides the pacing WG %d", pacing);
    return FALSE;
  }
  guint next = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *t = ir_task_at(ir, (int)k);
    if (t->pin >= 0) { /* its RF holds what an earlier task kept there */
      t->wg = t->pin;
      continue;
    }
    if (t->role.kind == ROLE_PACER) {
      if (pacing < 0) {
        g_array_free(order, TRUE);
        g_array_free(blocked, TRUE);
        ir_error(ir, err, t->prov, "internal: a pacer task but no power.pacing_wg");
        return FALSE;
      }
      t->wg = pacing;
      continue;
    }
    const GArray *o = by_sm && t->role.slice >= 0 ? blocked : order;
    t->wg = g_array_index(o, int, next++ % o->len);
  }
  g_array_free(order, TRUE);
  g_array_free(blocked, TRUE);
  return TRUE;
}
