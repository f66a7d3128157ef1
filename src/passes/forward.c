/* forward.c - handoff_forward: a copy forwarded by a consumer that already
 * holds it (D1, RF hand-offs).
 *
 * An RF hand-off (handoff.c) appends to the producer one `ST wgN.x` per
 * consumer window, and a producer's SM has engines x depth DMA slots: a row
 * that goes to more consumers than that queues in rounds of ~30 cycles on
 * the chain (D1's wo panel: 16 W1 panels and W2's residual, 17 stores on 8
 * slots, three rounds).  Some of those consumers come later in the chain
 * than others that get the very same window: W2's residual is wo's row,
 * which every W1 panel also receives, and W2 runs after W1.  This pass
 * moves such a store out of the producer P into one of the earlier
 * consumers Q, which stores its own copy of the window (the destination of
 * P's store to Q) to the later consumer C off the chain, during Q's MMA.
 *
 * A store of P into a task C's RF tensor moves when P also stores a window
 * that holds its source window to a task Q (Q != C) that C is ordered after (C waits,
 * through groups, for a group Q signals) and that is ordered after P; Q
 * must not write that tensor before the point the store goes.  Q is the one
 * on C's SM (a store within an SM is ~12 cycles, not ~30) if any, else the
 * one holding the fewest stores so far, else the first; the store goes
 * right after Q's first MMA (its issue slot costs the chain nothing while
 * the MMA runs), or at Q's end when Q has none.  Ordering stays safe: C
 * read its window only after Q completed (Q's SIG waits for the store), and
 * the next writer of C's window (Q of the next step) comes after C through
 * the chain, as P did.
 *
 * Runs after lower (and the preload passes), before sync: it moves ops
 * between tasks and reads the tasks' groups and pins only.  A no-op with
 * handoff_forward false. */
#include <stdlib.h>

#include "ir.h"

/* How many group hops the ordering search follows back from a consumer:
 * the chains this pass needs are short (W2's combiner -> its shards -> W1;
 * layer 1's wo -> merge -> slices -> qkv), and an unbounded search from a
 * task that is not ordered after the other would walk back over the whole
 * program, for every pair of a producer's stores.  A longer chain is only
 * a store not moved. */
enum { FORWARD_DEPTH = 4 };

typedef struct Reach {
  const Ir *ir;
  GPtrArray *signalers; /* per group: GArray of int, the tasks signalling it */
  int *seen;            /* per group: the query stamp that reached it        */
  int stamp;
  GArray *cur, *next;   /* the groups of this hop and of the next            */
  GArray **from;        /* per task: the tasks it is ordered after within
                         * FORWARD_DEPTH hops, sorted; NULL until asked */
} Reach;

static void push_waits(Reach *r, GArray *to, int task) {
  const IrTask *t = ir_task_at(r->ir, task);
  for (guint i = 0; t->waits && i < t->waits->len; i++) {
    int g = g_array_index(t->waits, int, i);
    if (g < 0 || (guint)g >= r->signalers->len || r->seen[g] == r->stamp) continue;
    r->seen[g] = r->stamp;
    g_array_append_val(to, g);
  }
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The tasks `later` is ordered after within FORWARD_DEPTH hops (chains of
 * waits from `later` to a group they signal), found once per task: the
 * groups do not change while the pass moves stores, and each consumer is
 * asked about for every pair of its producer's stores. */
static const GArray *reach_of(Reach *r, int later) {
  if (r->from[later]) return r->from[later];
  GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
  r->stamp++;
  g_array_set_size(r->cur, 0);
  push_waits(r, r->cur, later);
  for (int hop = 0; hop < FORWARD_DEPTH && r->cur->len > 0; hop++) {
    g_array_set_size(r->next, 0);
    for (guint i = 0; i < r->cur->len; i++) {
      GArray *sig = g_ptr_array_index(r->signalers, g_array_index(r->cur, int, i));
      for (guint k = 0; k < sig->len; k++) {
        int s = g_array_index(sig, int, k);
        g_array_append_val(out, s);
        push_waits(r, r->next, s);
      }
    }
    GArray *x = r->cur;
    r->cur = r->next, r->next = x;
  }
  g_array_sort(out, cmp_int);
  return r->from[later] = out;
}

/* Is task `later` ordered after task `earlier` within FORWARD_DEPTH hops? */
static gboolean ordered_after(Reach *r, int later, int earlier) {
  const GArray *a = reach_of(r, later);
  return a->len > 0 && bsearch(&earlier, a->data, a->len, sizeof(int), cmp_int) != NULL;
}

/* Does window `outer` hold window `in` (same tensor)? */
static gboolean holds(IrView outer, IrView in) {
  return outer.t == in.t && in.r0 >= outer.r0 && in.r0 + in.rows <= outer.r0 + outer.rows &&
         in.c0 >= outer.c0 && in.c0 + in.cols <= outer.c0 + outer.cols;
}

/* The task whose RF tensor an ST writes, or -1 (HBM, or its own). */
static int st_target(const Ir *ir, int task, const IrOp *op) {
  if (op->kind != IR_ST || op->mem.t < 0) return -1;
  const IrTensor *m = ir_tensor(ir, op->mem.t);
  if (m->home != HOME_RF || m->task == task) return -1;
  return m->task;
}

static int task_sm(const Ir *ir, int task) {
  const IrTask *t = ir_task_at(ir, task);
  int w = t->pin >= 0 ? t->pin : t->wg;
  return w >= 0 ? ir_wg_sm(ir, w) : -1;
}

/* Where in Q the forwarded store goes: after its first MMA, else at its
 * end; -1 when an op before that point writes tensor `t`. */
static int insert_at(const Ir *ir, int q, int t) {
  const IrTask *tq = ir_task_at(ir, q);
  guint at = tq->ops->len;
  for (guint i = 0; i < tq->ops->len; i++)
    if (g_array_index(tq->ops, IrOp, i).kind == IR_MMA) {
      at = i + 1;
      break;
    }
  for (guint i = 0; i < at; i++) {
    const IrOp *op = &g_array_index(tq->ops, IrOp, i);
    if (op->kind != IR_ST && op->d.t == t) return -1;
  }
  return (int)at;
}

gboolean pass_forward(Ir *ir, GError **err) {
  (void)err;
  if (!ir->sched.handoff_forward) return TRUE;
  guint T = ir->tasks->len, G = ir->groups->len;
  Reach r = {.ir = ir, .signalers = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref),
             .seen = g_new0(int, G + 1), .stamp = 0, .cur = g_array_new(FALSE, FALSE, sizeof(int)),
             .next = g_array_new(FALSE, FALSE, sizeof(int)), .from = g_new0(GArray *, T + 1)};
  for (guint g = 0; g < G; g++) g_ptr_array_add(r.signalers, g_array_new(FALSE, FALSE, sizeof(int)));
  for (guint k = 0; k < T; k++) {
    int g = ir_task_at(ir, (int)k)->signals;
    if (g >= 0 && (guint)g < G) g_array_append_val(g_ptr_array_index(r.signalers, g), k);
  }
  g_autofree int *nst = g_new0(int, T); /* stores per task, as the pass moves them */
  for (guint k = 0; k < T; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) nst[k] += g_array_index(t->ops, IrOp, i).kind == IR_ST;
  }
  for (guint p = 0; p < T; p++) {
    IrTask *tp = ir_task_at(ir, (int)p);
    for (guint i = 0; i < tp->ops->len;) {
      IrOp op = g_array_index(tp->ops, IrOp, i);
      int c = st_target(ir, (int)p, &op);
      int best = -1, best_at = -1;
      gboolean best_local = FALSE;
      IrView best_src = {.t = -1};
      for (guint j = 0; c >= 0 && j < tp->ops->len; j++) {
        const IrOp *o = &g_array_index(tp->ops, IrOp, j);
        int q = st_target(ir, (int)p, o);
        if (j == i || q < 0 || q == c || !holds(o->a, op.a)) continue;
        if (!ordered_after(&r, c, q) || !ordered_after(&r, q, (int)p)) continue;
        int at = insert_at(ir, q, o->mem.t);
        if (at < 0) continue;
        gboolean local = task_sm(ir, q) >= 0 && task_sm(ir, q) == task_sm(ir, c);
        if (best < 0 || (local && !best_local) || (local == best_local && nst[q] < nst[best])) {
          best = q, best_at = at, best_local = local;
          /* the part of Q's copy that holds op's source window */
          best_src = ir_win(o->mem.t, o->mem.r0 + op.a.r0 - o->a.r0, op.a.rows,
                            o->mem.c0 + op.a.c0 - o->a.c0, op.a.cols);
        }
      }
      if (best < 0) {
        i++;
        continue;
      }
      g_array_remove_index(tp->ops, i); /* ops after i shift down: i stays */
      if ((int)i < tp->prelude) tp->prelude--;
      nst[p]--;
      IrOp fw = op;
      fw.a = best_src;
      fw.prov = ir_prov(ir, "handoff_forward"); /* the store is where it is for this knob */
      g_array_insert_val(ir_task_at(ir, best)->ops, (guint)best_at, fw);
      if (best_at < ir_task_at(ir, best)->prelude) ir_task_at(ir, best)->prelude++;
      nst[best]++;
    }
  }
  g_ptr_array_unref(r.signalers);
  g_free(r.seen);
  g_array_unref(r.cur);
  g_array_unref(r.next);
  for (guint k = 0; k < T; k++)
    if (r.from[k]) g_array_unref(r.from[k]);
  g_free(r.from);
  return TRUE;
}
