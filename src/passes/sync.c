/* sync.c - synchronisation from dependencies.  The lowering records what
 * each task completes and waits for (IrTask.signals / .waits, groups of
 * tasks); this pass turns that into events:
 *
 * - a task that completes a group ends with `SIG ev.FAMILY, 1`;
 * - a task that waits for group g starts with `WAIT ev.FAMILY, N` (after its
 *   prelude, loads of weights that need no wait: stream_prefetch), N = the
 *   number of tasks in g and in every earlier group of its family (a family's
 *   counter is cumulative: D1's qkv_l0 counts the qkv tasks of every step);
 * - the events are then numbered in order of first use ("in" first), so the
 *   output does not depend on when the lowering named them.
 *
 * So a strategy that changes how many tasks a stage has never touches the
 * stage's consumers.  The dependencies stay on the tasks (ir_order.c reads
 * them: what is known to have completed when a task starts) and the IR is
 * marked synced, so a second run does nothing.  A task may only wait for groups completed by earlier tasks: with
 * every WG running its tasks in creation order, no placement can then
 * deadlock; anything else is an error. */
#include <string.h>

#include "ir.h"

/* A WAIT or SIG with no view operands. */
static IrOp sync_op(IrOpKind kind, int event, int64_t n) {
  IrOp op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.d.t = op.a.t = op.b.t = op.c.t = op.mem.t = -1;
  op.event = event;
  op.n = n;
  return op;
}

/* Renumber the events in order of first use, "in" (index 0) first; events
 * that no op uses are dropped. */
static void renumber_events(Ir *ir) {
  guint n = ir->events->len;
  g_autofree int *map = g_new(int, n);
  for (guint e = 0; e < n; e++) map[e] = -1;
  GPtrArray *order = g_ptr_array_new_with_free_func(g_free);
  map[0] = 0;
  g_ptr_array_add(order, g_strdup(g_ptr_array_index(ir->events, 0)));
  for (guint k = 0; k < ir->tasks->len; k++) {
    GArray *ops = ir_task_at(ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++) {
      IrOp *op = &g_array_index(ops, IrOp, i);
      if (op->event < 0 || (guint)op->event >= n) continue;
      if (map[op->event] < 0) {
        map[op->event] = (int)order->len;
        g_ptr_array_add(order, g_strdup(g_ptr_array_index(ir->events, op->event)));
      }
      op->event = map[op->event];
    }
  }
  ir_events_changed(ir);
  g_ptr_array_free(ir->events, TRUE);
  ir->events = order;
}

gboolean pass_sync(Ir *ir, GError **err) {
  if (ir->synced) return TRUE;
  guint G = ir->groups->len, T = ir->tasks->len;
  g_autofree int64_t *size = g_new0(int64_t, G + 1), *need = g_new0(int64_t, G + 1);
  g_autofree int *last = g_new(int, G + 1); /* the last task completing each group */
  for (guint g = 0; g < G; g++) last[g] = -1;
  for (guint k = 0; k < T; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->signals < 0) continue;
    if ((guint)t->signals >= G) {
      ir_error(ir, err, t->prov, "internal: task '%s' completes group %d of %u", t->name, t->signals, G);
      return FALSE;
    }
    size[t->signals]++;
    last[t->signals] = (int)k;
  }
  /* cumulative counts per family, in group creation order */
  g_autoptr(GHashTable) sum = g_hash_table_new(g_str_hash, g_str_equal);
  g_autofree int64_t *acc = g_new0(int64_t, G + 1);
  for (guint g = 0; g < G; g++) {
    const IrGroup *grp = g_ptr_array_index(ir->groups, g);
    gpointer at = g_hash_table_lookup(sum, grp->event);
    guint slot = at ? GPOINTER_TO_UINT(at) - 1 : g;
    if (!at) g_hash_table_insert(sum, grp->event, GUINT_TO_POINTER(g + 1));
    acc[slot] += size[g];
    need[g] = acc[slot];
  }
  g_autoptr(GArray) waits = g_array_new(FALSE, FALSE, sizeof(IrOp));
  for (guint k = 0; k < T; k++) {
    IrTask *t = ir_task_at(ir, (int)k);
    g_array_set_size(waits, 0);
    for (guint w = 0; t->waits && w < t->waits->len; w++) {
      int g = g_array_index(t->waits, int, w);
      if (g < 0 || (guint)g >= G || size[g] == 0 || last[g] >= (int)k) {
        const char *why = g < 0 || (guint)g >= G ? "no such group"
                          : size[g] == 0         ? "no task completes it"
                                                 : "a later task completes it (it could deadlock)";
        ir_error(ir, err, t->prov, "internal: task '%s' waits for group %d: %s", t->name, g, why);
        return FALSE;
      }
      const IrGroup *grp = g_ptr_array_index(ir->groups, g);
      IrOp op = sync_op(IR_WAIT, ir_event(ir, grp->event), need[g]);
      op.prov = grp->prov;
      g_array_append_val(waits, op);
    }
    /* one move per task; after the prelude (loads that need no wait) */
    if (waits->len) g_array_insert_vals(t->ops, MIN((guint)t->prelude, t->ops->len), waits->data, waits->len);
    t->prelude = 0; /* the WAITs' place says it from here on */
    if (t->signals >= 0) {
      const IrGroup *grp = g_ptr_array_index(ir->groups, t->signals);
      IrOp op = sync_op(IR_SIG, ir_event(ir, grp->event), 1);
      op.prov = grp->prov;
      g_array_append_val(t->ops, op);
    }
  }
  ir->synced = TRUE;
  renumber_events(ir);
  return TRUE;
}
