/* kv_writeback.c - direct K/V write-back (kv_writeback: direct): the
 * round trip of a q|k|v piece through scratch removed.
 *
 * The lowering stores every K and V piece of a q|k|v projection the plain
 * way (src/lower/qkv_store.c): to its place in the temp area of scratch,
 * then a fence (a SIG of the task's own event and a WAIT for it: memory is
 * not hazard-tracked), a load back into a fresh RF tensor, and the store of
 * that tensor to the cache or output rows:
 *
 *     ST   hbm[scratch + T], x          ; kv_writeback
 *     SIG  ev.fence_TASK                ; kv_writeback
 *     WAIT ev.fence_TASK, n             ; kv_writeback
 *     LD   back, hbm[scratch + T]       ; kv_writeback
 *     ST   hbm[k_cache.l0 + C], back    ; kv_writeback
 *
 * With kv_writeback: direct this pass forwards x to the last store and
 * removes the other four ops, the tensor `back`, the two HBM windows and,
 * once unused, the fence event; the later WAITs on a fence the task keeps
 * count the removed SIGs out.  The forward is legal when the five ops are
 * adjacent in one task and cite the kv_writeback knob, the load reads
 * exactly the window the store wrote, the fence's event is the task's own
 * (no other task signals or waits for it), `back` is read by nothing but
 * the last store, and x is not `back`.  The temp area is then never
 * written: with kv_writeback: direct the lowering counts it as dead space
 * (P1's K-split partial sums may use it), so this pass must forward every
 * round trip; a plan with kv_writeback: temp keeps them all.
 *
 * Runs right after lower, before anything reads the tasks' ops. */
#include <string.h>

#include "ir.h"

/* Does prov cite the kv_writeback knob ("kv_writeback" or "p1.kv_writeback")? */
static gboolean cites_knob(IrProv p) {
  static const char knob[] = "kv_writeback";
  if (!p.knob) return FALSE;
  size_t n = strlen(p.knob), k = sizeof knob - 1;
  return n >= k && strcmp(p.knob + n - k, knob) == 0 && (n == k || p.knob[n - k - 1] == '.');
}

static gboolean same_view(IrView a, IrView b) {
  return a.t == b.t && a.r0 == b.r0 && a.rows == b.rows && a.c0 == b.c0 && a.cols == b.cols;
}

/* The same HBM window: symbol, offset, stride and shape (the lowering makes
 * one HBM tensor per transfer, so the store's and the load's differ). */
static gboolean same_window(const Ir *ir, IrView a, IrView b) {
  const IrTensor *x = ir_tensor(ir, a.t), *y = ir_tensor(ir, b.t);
  return x->home == HOME_HBM && y->home == HOME_HBM && strcmp(x->sym, y->sym) == 0 &&
         x->offset == y->offset && x->stride == y->stride && a.r0 == b.r0 && a.rows == b.rows &&
         a.c0 == b.c0 && a.cols == b.cols;
}

/* Per tensor: how many operands of ops use it, and whether a task other
 * than its owner writes it (a remote ST, an LD.mc target).  Per event: the
 * one task whose ops use it, -2 for several, -1 for none. */
typedef struct Uses {
  int *uses, *owner;
  gboolean *remote;
} Uses;

static void count_uses(const Ir *ir, Uses *u) {
  for (guint k = 0; k < ir->tasks->len; k++) {
    const GArray *ops = ir_task_at(ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++) {
      const IrOp *op = &g_array_index(ops, IrOp, i);
      const IrView v[] = {op->d, op->a, op->b, op->c}; /* c: mem on LD and ST */
      for (unsigned j = 0; j < G_N_ELEMENTS(v); j++)
        if (v[j].t >= 0) u->uses[v[j].t]++;
      for (unsigned j = 0; j < op->ntargets; j++) u->uses[op->targets[j]]++, u->remote[op->targets[j]] = TRUE;
      if (op->kind == IR_ST && op->mem.t >= 0 && ir_tensor(ir, op->mem.t)->home == HOME_RF &&
          ir_tensor(ir, op->mem.t)->task != (int)k)
        u->remote[op->mem.t] = TRUE;
      int e = op->event;
      if (e >= 0) u->owner[e] = u->owner[e] == -1 || u->owner[e] == (int)k ? (int)k : -2;
    }
  }
}

/* ops[i], ops[i+1]: a store to HBM and the SIG of the task's own fence? */
static gboolean trip_head(const Ir *ir, const IrOp *o, guint i, guint len, int k, const Uses *u) {
  if (i + 1 >= len || o[i].kind != IR_ST || o[i + 1].kind != IR_SIG) return FALSE;
  if (!cites_knob(o[i].prov) || !cites_knob(o[i + 1].prov)) return FALSE;
  if (o[i].a.t < 0 || o[i].mem.t < 0 || ir_tensor(ir, o[i].mem.t)->home != HOME_HBM) return FALSE;
  return o[i + 1].event >= 0 && u->owner[o[i + 1].event] == k && o[i + 1].n == 1;
}

/* ops[j .. j+2]: the fence's WAIT, the load back into a tensor that only
 * the final store reads, that store? */
static gboolean trip_tail(const Ir *ir, const IrOp *o, guint j, guint len, int k, const Uses *u) {
  if (j + 2 >= len || o[j].kind != IR_WAIT || o[j + 1].kind != IR_LD || o[j + 2].kind != IR_ST) return FALSE;
  for (guint x = j; x < j + 3; x++)
    if (!cites_knob(o[x].prov)) return FALSE;
  int back = o[j + 1].d.t;
  if (back < 0 || ir_tensor(ir, back)->home != HOME_RF || u->uses[back] != 2 || u->remote[back]) return FALSE;
  if (o[j + 1].mem.t < 0 || !same_view(o[j + 2].a, o[j + 1].d)) return FALSE;
  return o[j].event >= 0 && u->owner[o[j].event] == k;
}

/* Does an op of ops[from, to) write RF tensor t? */
static gboolean written(const IrOp *o, guint from, guint to, int t) {
  for (guint x = from; x < to; x++)
    if (o[x].d.t == t || (o[x].kind == IR_ST && o[x].mem.t == t)) return TRUE;
  return FALSE;
}

/* Task k's round trips: each tail (WAIT, LD, ST) pairs with the earliest
 * open head (ST, SIG) before it on the same fence and temp window whose
 * piece nothing writes in between; the final store then reads the piece,
 * and gone[] marks the other four ops.  Returns the trips forwarded. */
static guint forward_task(Ir *ir, int k, const Uses *u, gboolean *gone, gboolean *dead_t, GArray *heads) {
  GArray *ops = ir_task_at(ir, k)->ops;
  IrOp *o = (IrOp *)(void *)ops->data;
  guint len = ops->len, trips = 0;
  g_array_set_size(heads, 0);
  for (guint j = 0; j < len; j++) {
    if (trip_head(ir, o, j, len, k, u)) {
      g_array_append_val(heads, j);
      continue;
    }
    if (!trip_tail(ir, o, j, len, k, u)) continue;
    for (guint h = 0; h < heads->len; h++) {
      guint i = g_array_index(heads, guint, h);
      IrView x = o[i].a, b = o[j + 1].d;
      if (o[i + 1].event != o[j].event || !same_window(ir, o[i].mem, o[j + 1].mem) || x.rows != b.rows ||
          x.cols != b.cols || x.t == b.t || u->remote[x.t] || written(o, i + 1, j + 2, x.t))
        continue;
      gone[i] = gone[i + 1] = gone[j] = gone[j + 1] = TRUE;
      dead_t[o[i].mem.t] = dead_t[o[j + 1].mem.t] = dead_t[b.t] = TRUE;
      o[j + 2].a = x;
      g_array_remove_index(heads, h);
      trips++;
      break;
    }
  }
  return trips;
}

/* An HBM tensor's window as a key: symbol, offset, shape, stride. */
static char *window_key(const IrTensor *x) {
  return g_strdup_printf("%s\x1f%" G_GUINT64_FORMAT "\x1f%d\x1f%d\x1f%d", x->sym, x->offset, x->rows, x->cols,
                         x->stride);
}

/* Also drop the HBM tensors no op uses any more that are windows of a
 * dropped one: the IR's text form names a window, so an IR read back
 * (ir_parse) has the round trips' stores and loads on one tensor per
 * window and its twins unused. */
static void drop_twins(Ir *ir, gboolean *dead_t) {
  guint nt = ir->tensors->len;
  Uses now = {g_new0(int, nt), g_new(int, ir->events->len), g_new0(gboolean, nt)};
  for (guint e = 0; e < ir->events->len; e++) now.owner[e] = -1;
  count_uses(ir, &now);
  g_autoptr(GHashTable) windows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < nt; i++)
    if (dead_t[i] && ir_tensor(ir, (int)i)->home == HOME_HBM)
      g_hash_table_add(windows, window_key(ir_tensor(ir, (int)i)));
  for (guint i = 0; i < nt; i++) {
    const IrTensor *x = ir_tensor(ir, (int)i);
    if (dead_t[i] || now.uses[i] > 0 || x->home != HOME_HBM) continue;
    g_autofree char *key = window_key(x);
    dead_t[i] = g_hash_table_contains(windows, key);

  }
  g_free(now.uses);
  g_free(now.owner);
  g_free(now.remote);
}

gboolean pass_kv_writeback(Ir *ir, GError **err) {
  (void)err;
  if (ir->sched.kv_writeback != KV_DIRECT) return TRUE;
  guint nt = ir->tensors->len, ne = ir->events->len;
  Uses u = {g_new0(int, nt), g_new(int, ne), g_new0(gboolean, nt)};
  for (guint e = 0; e < ne; e++) u.owner[e] = -1;
  count_uses(ir, &u);
  gboolean *dead_t = g_new0(gboolean, nt), *dead_e = g_new0(gboolean, ne), *kept = g_new0(gboolean, ne);
  int *removed = g_new0(int, ne); /* SIGs of each fence removed so far */
  GArray *heads = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *drop = g_array_new(FALSE, TRUE, sizeof(gboolean));
  gboolean any = FALSE;
  for (guint k = 0; k < ir->tasks->len; k++) {
    GArray *ops = ir_task_at(ir, (int)k)->ops;
    guint len = ops->len;
    g_array_set_size(drop, 0);
    g_array_set_size(drop, len); /* zeroed */
    gboolean *gone = (gboolean *)(void *)drop->data;
    guint trips = forward_task(ir, (int)k, &u, gone, dead_t, heads);
    IrOp *o = (IrOp *)(void *)ops->data;
    guint n = 0;
    for (guint i = 0; i < len; i++) {
      IrOp op = o[i];
      if (gone[i]) {
        if (op.kind == IR_SIG) removed[op.event]++;
        continue;
      }
      if (op.event >= 0) {
        kept[op.event] = TRUE;
        if (op.kind == IR_WAIT && u.owner[op.event] == (int)k) op.n -= removed[op.event];
      }
      o[n++] = op;
    }
    if (trips == 0) continue;
    any = TRUE;
    /* the removed ops own no target lists; the tail's copies must not be freed */
    for (guint i = n; i < len; i++) o[i].targets = NULL;
    g_array_set_size(ops, n); /* ir->nops: the lowering never counted them */
  }
  for (guint e = 0; e < ne; e++) dead_e[e] = removed[e] > 0 && !kept[e];
  if (any) {
    drop_twins(ir, dead_t);

    ir_drop(ir, dead_t, dead_e);
  }
  g_array_free(heads, TRUE);
  g_array_free(drop, TRUE);
  g_free(u.uses);
  g_free(u.owner);
  g_free(u.remote);
  g_free(dead_t);
  g_free(dead_e);
  g_free(kept);
  g_free(removed);
  return TRUE;
}
