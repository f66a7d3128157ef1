/* preload_window.c - a sliding window over the preload tasks
 * (power.preload_window: K): the preload tasks (role preload: what a
 * resident strategy loads once before the steps) are put in need order -
 * by layer (role.layer; -1, one preload task per WG, first), then by the
 * first stage that reads what they load (qkv 0, attention 1, wo 2, w1 3,
 * w2 4: waves.c's rank), then in program order - and the i-th waits until
 * i - K + 1 of them have completed.  So at most about K preload tasks
 * stream at once, whichever they are: the HBM rate (and the hottest
 * window) stays near K tasks' worth all along, with no barrier between
 * waves (preload_waves: a wave waits for the whole previous wave, so its
 * slowest task and the small waves - D1's 4 wo panels - leave the channels
 * idle).
 *
 * One counter, ev.preload_win, counts the completed preload tasks (one
 * group of one task each, one family: the sync pass's cumulative count is
 * the number of groups up to the one waited for).  With K > 1 that count
 * is reached by any i - K + 1 of them, not by those groups in particular
 * (task i - K may still run when task i starts), so the groups are marked
 * any_order: what is known to have completed (ir_order.c, rf_alloc's live
 * ranges) takes nothing from these waits.  Every wait points at an
 * earlier task (the need order is applied inside each run of consecutive
 * preload tasks, as waves.c does, and the runs stay in program order), so
 * no placement can deadlock.  Runs after lower (and waves), before sync; a
 * no-op with preload_window 0; refused with preload_waves > 1 (two
 * schedules for the same loads). */
#include "ir.h"

gboolean pass_preload_window(Ir *ir, GError **err) {
  const Schedule *s = &ir->sched;
  int K = s->preload_window;
  if (K <= 0) return TRUE;
  if (s->preload_waves > 1) {
    ir_error(ir, err, ir_prov(ir, "power.preload_window"),
             "power.preload_window and power.preload_waves > 1 both schedule the preload: "
             "choose one");
    return FALSE;
  }
  guint T = ir->tasks->len;
  g_autofree int *rank = ir_preload_rank(ir);
  /* need order inside each run of consecutive preload tasks: layer, rank,
   * program order (stable) */
  int max_layer = -1;
  for (guint k = 0; k < T; k++) max_layer = MAX(max_layer, ir_task_at(ir, (int)k)->role.layer);
  g_autofree int *to = g_new(int, T + 1);
  for (guint k = 0; k < T; k++) to[k] = (int)k;
  for (guint a = 0; a < T;) {
    guint b = a + 1;
    gboolean pre = ir_task_at(ir, (int)a)->role.kind == ROLE_PRELOAD;
    while (pre && b < T && ir_task_at(ir, (int)b)->role.kind == ROLE_PRELOAD) b++;
    if (pre && b - a > 1) {
      g_autofree gpointer *run = g_new(gpointer, b - a);
      g_autofree int *runrank = g_new(int, b - a);
      guint n = 0;
      for (int l = -1; l <= max_layer; l++)
        for (int r = 0; r <= 5; r++)
          for (guint k = a; k < b; k++)
            if (rank[k] == r && ir_task_at(ir, (int)k)->role.layer == l) {
              run[n] = g_ptr_array_index(ir->tasks, k);
              runrank[n] = r;
              to[k] = (int)(a + n++);
            }
      if (n != b - a) {
        ir_error(ir, err, ir_prov(ir, "power.preload_window"),
                 "internal: preload task with a layer or rank out of range");
        return FALSE;
      }
      for (guint i = 0; i < n; i++) {
        ir->tasks->pdata[a + i] = run[i];
        rank[a + i] = runrank[i];
      }
    }
    a = b;
  }
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home == HOME_RF && x->task >= 0 && (guint)x->task < T) x->task = to[x->task];
  }
  /* the window: task i waits for the group of task i - K (the family's
   * count then needs i - K + 1 completions, of any preload tasks) */
  g_autoptr(GArray) grp = g_array_new(FALSE, FALSE, sizeof(int));
  IrProv prov = ir_prov(ir, "power.preload_window"); /* the waits and signals it adds */
  for (guint k = 0; k < T; k++) {
    if (ir_task_at(ir, (int)k)->role.kind != ROLE_PRELOAD) continue;
    int g = ir_group_for(ir, "preload_win", prov);
    ((IrGroup *)g_ptr_array_index(ir->groups, g))->any_order = K > 1;
    if ((int)grp->len >= K) ir_task_waits(ir, (int)k, g_array_index(grp, int, grp->len - (guint)K));
    ir_task_signals(ir, (int)k, g);
    g_array_append_val(grp, g);
  }
  return TRUE;
}
