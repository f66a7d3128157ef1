/* defer.c - where the deferred preload goes (power.deferred_after): with
 * power.deferred_loads the lowering makes one preload task per WG and layer
 * and puts layer l's (l >= 1) after every task of step 0's layer l-1, so a
 * WG loads its layer-l data only once its own layer-(l-1) work of step 0 is
 * done.  A WG whose layer-(l-1) task comes late in that layer (D1: the W2
 * relays sit on the WGs of the next layer's q|k|v panels) then loads the
 * data the next layer needs first, last.  deferred_after: STAGE moves each
 * layer's preload tasks earlier in the program, before the first task of
 * step 0's layer l-1 that comes after STAGE (qkv, att, wo, w1: by role,
 * the relays and LayerNorm tasks going with the stage they follow or
 * precede); `layer` (the default) leaves them where the lowering put them.
 *
 * The tasks keep their order among themselves; only the block moves, so
 * every task still waits only for groups of earlier tasks (sync.c: no
 * placement can deadlock), and the tensors the preload tasks keep follow
 * them.  Runs after lower, before waves and preload_window (which then
 * order the preload tasks and make them wait for each other). */
#include "ir.h"

gboolean pass_defer(Ir *ir, GError **err) {
  const Schedule *s = &ir->sched;
  if (s->deferred_after == DEFER_AFTER_LAYER || !s->deferred_loads) return TRUE;
  int after = (int)s->deferred_after - 1; /* DEFER_AFTER_QKV .. W1 -> rank 0 .. 3 */
  guint T = ir->tasks->len;
  int max_layer = 0;
  for (guint k = 0; k < T; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->role.kind == ROLE_PRELOAD) max_layer = MAX(max_layer, t->role.layer);
  }
  g_autofree int *to = g_new(int, T + 1);
  for (int l = 1; l <= max_layer; l++) {
    /* layer l's preload block [a, b) and the first task after STAGE of step
     * 0's layer l-1 */
    int a = -1, b = -1, target = -1;
    for (guint k = 0; k < T; k++) {
      const IrTask *t = ir_task_at(ir, (int)k);
      if (t->role.kind == ROLE_PRELOAD && t->role.layer == l) {
        if (a < 0) a = (int)k;
        else if (b != (int)k) {
          ir_error(ir, err, ir_prov(ir, "power.deferred_after"),
                   "internal: layer %d's preload tasks are not consecutive", l);
          return FALSE;
        }
        b = (int)k + 1;
      } else if (target < 0 && t->role.step == 0 && t->role.layer == l - 1 &&
                 ir_stage_rank(t->role.kind) < 5 && ir_stage_rank(t->role.kind) > after) {
        target = (int)k;
      }
    }
    if (a < 0 || target < 0 || target >= a) continue; /* nothing to move earlier */
    /* [target, a) moves down by b - a, [a, b) up to target */
    for (guint k = 0; k < T; k++) to[k] = (int)k;
    g_autofree gpointer *block = g_new(gpointer, b - a);
    for (int k = a; k < b; k++) block[k - a] = g_ptr_array_index(ir->tasks, k);
    for (int k = a - 1; k >= target; k--) {
      ir->tasks->pdata[k + (b - a)] = ir->tasks->pdata[k];
      to[k] = k + (b - a);
    }
    for (int k = a; k < b; k++) {
      ir->tasks->pdata[target + (k - a)] = block[k - a];
      to[k] = target + (k - a);
    }
    for (guint t = 0; t < ir->tensors->len; t++) {
      IrTensor *x = ir_tensor(ir, (int)t);
      if (x->home == HOME_RF && x->task >= 0 && (guint)x->task < T) x->task = to[x->task];
    }
  }
  return TRUE;
}
