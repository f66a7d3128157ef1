/* pacer.c - the pacing WG's task (power.pacing_wg with byte buckets): made
 * here, empty and unplaced, with role "pacer", so that one pass, place, binds
 * every task to its WG (the pacer to power.pacing_wg, which no other task
 * gets), and pace, after placement, fills it with the bucket releases. */
#include "ir.h"

gboolean pass_pacer(Ir *ir, GError **err) {
  (void)err;
  const Schedule *s = &ir->sched;
  if (s->pacing_wg < 0 || s->bucket_bytes <= 0 || s->event_interval <= 0) return TRUE;
  int task = ir_task(ir, "pacer", -1, ir_prov(ir, "power.pacing_wg"));
  ir_task_at(ir, task)->role = ir_role(ROLE_PACER);
  return TRUE;
}
