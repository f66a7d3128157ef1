/* place.c - constructive placement: bind every task to a WG.
 *
 * The WGs of the SMs used are ordered SM-major-interleaved (wg0 of sm0, wg0
 * of sm1, ..., then wg1 of sm0, ...) so consecutive tasks land on different
 * SMs; tasks take them round-robin in program order.  Each WG runs its tasks
 * in program order, and a task only waits for events of earlier tasks, so
 * the placement can never deadlock. */
#include "ir.h"

gboolean pass_place(Ir *ir, const Plan *plan, GError **err) {
  (void)plan;
  int S = ir->sms_used, W = ir->hw.wgs_per_sm, slots = S * W;
  if (S < 1 || S > ir->hw.sms) {
    g_set_error(err, IR_ERROR, 1, "place: sms_used=%d out of range 1..%d", S, ir->hw.sms);
    return FALSE;
  }
  for (guint k = 0; k < ir->tasks->len; k++) {
    int slot = (int)(k % (guint)slots);
    ir_task_at(ir, (int)k)->wg = (slot % S) * W + slot / S;
  }
  return TRUE;
}
