/* ir_order.c - what the tasks' dependencies guarantee about time (ir.h,
 * ir_remote_first_op).
 *
 * A task T has completed before task P starts when P (or a task before P on
 * P's WG) waits for a group that T, or a later task of T's WG, signals:
 * the group's SIG fires only once every earlier instruction of the
 * signalling WG has completed (docs/machine.md §4, Events).  Walking the
 * tasks in program order, each task gets the vector "per WG, how many of
 * its first tasks are known to have completed", the max of its WG's
 * previous vector and the vectors of the groups it waits for; a group's
 * vector is the max over its members of theirs, with the member's own WG
 * counted up to and including the member.  A group whose members come
 * after a waiter in program order contributes only what is known when the
 * waiter is reached: fewer facts, a longer live range, never a wrong one.
 * A group of an any_order family (power.preload_window's) contributes
 * nothing: the family's count, which the WAIT reads, is reached by any that
 * many of its tasks, not by that group's (taking its vector made a writer
 * "know" that a WG's preload task had completed while it could still be
 * loading into bytes the write then landed in: tcc-sim's "race: ST writes
 * into wg3's region 't0_l1_qkv_p0_x' that wg3's LD ... wrote with no event
 * from wg3 since").
 *
 * A remote write (ST wgN.x, an LD.mc target) into a tensor of WG w by task
 * P may land once P has started, so at any op of w from the first task of
 * w not known complete when P starts: that op is where the tensor's live
 * range must begin (rf_alloc), instead of op 0.  That is the case when the
 * tensor's task C waits (through groups) for P: a hand-off into a task that
 * has not started.  When it does not, P must be ordered after C's start by
 * events of its own (a lowering that streams into a running task makes the
 * writer wait for an event the receiving task signals: resident_owners.c), and
 * the tensor is live from C's first op; a write ordered by neither is a
 * race, which the simulator reports.  Except into a preload task's tensor
 * (role preload: resident weights and history K/V, loaded once): a preload
 * task signals nothing a writer waits for, so nothing orders the write
 * after C's start, and it may land while a task before C on w still runs -
 * D1's qkv tasks store each step's K/V rows into the slice that layer l's
 * deferred preload task holds, and the task before it may be a K/V
 * write-back to HBM (kv_writeback) that completes no group.  Such a tensor
 * is live from the first op the write may land at, as if C waited for P
 * (its bytes are then not another tensor's while that task runs).
 *
 * Cost: O(tasks + groups) vectors of `wgs` ints, one pass over the ops
 * (tcc-gen's P1 has 22 MB of them), O(remote writes) otherwise. */
#include "ir.h"

static inline IrTensor *tensor(const Ir *ir, int t) { return g_ptr_array_index(ir->tensors, t); }

/* Tensor t is an RF tensor of a WG other than `wg`: a remote destination. */
static gboolean remote_rf(const Ir *ir, int t, int wg, int *to) {
  if (t < 0 || (guint)t >= ir->tensors->len) return FALSE;
  const IrTensor *x = tensor(ir, t);
  if (x->home != HOME_RF || x->task < 0 || (guint)x->task >= ir->tasks->len) return FALSE;
  *to = ir_task_at(ir, x->task)->wg;
  return *to >= 0 && *to != wg;
}

static void vmax(int *a, const int *b, int n) {
  for (int i = 0; i < n; i++)
    if (b[i] > a[i]) a[i] = b[i];
}

/* A remote write: by task P (at its position pos on its WG wp), into
 * tensor t of WG w, landing no earlier than op `f` by P's dependencies. */
typedef struct Write {
  int p, wp, pos, t, w, f;
} Write;

int *ir_remote_first_op(const Ir *ir) {
  int W = sim_machine_wgs(&ir->hw);
  guint K = ir->tasks->len, T = ir->tensors->len, G = ir->groups->len;
  int *first = g_new(int, T + 1);
  for (guint t = 0; t < T; t++) first[t] = -1;
  /* every remote write, in task and op order (their f comes below); the
   * tasks that own remotely written tensors: their vectors are kept */
  g_autofree gboolean *owner = g_new0(gboolean, K + 1);
  g_autoptr(GArray) writes = g_array_new(FALSE, FALSE, sizeof(Write));
  for (guint k = 0; k < K; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    if (tk->wg < 0 || tk->wg >= W) continue;
    const IrOp *ops = (const IrOp *)(const void *)tk->ops->data;
    for (guint i = 0; i < tk->ops->len; i++) {
      int n = ops[i].ntargets + (ops[i].kind == IR_ST), w;
      for (int j = 0; j < n; j++) {
        int t = j < ops[i].ntargets ? ops[i].targets[j] : ops[i].mem.t;
        if (!remote_rf(ir, t, tk->wg, &w)) continue;
        owner[ir_tensor(ir, t)->task] = TRUE;
        Write wr = {(int)k, tk->wg, 0, t, w, 0};
        g_array_append_val(writes, wr);
      }
    }
  }
  g_autoptr(GHashTable) saved = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  /* per WG: its tasks' first ops, in order (a task's op count may be 0) */
  g_autofree int *ntasks = g_new0(int, W), *nops = g_new0(int, W);
  g_autofree int *pos = g_new(int, K + 1), *start = g_new(int, K + 1);
  for (guint k = 0; k < K; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    if (tk->wg < 0 || tk->wg >= W) {
      pos[k] = start[k] = -1;
      continue;
    }
    pos[k] = ntasks[tk->wg]++;
    start[k] = nops[tk->wg];
    nops[tk->wg] += (int)tk->ops->len;
  }
  g_autofree int *off = g_new0(int, W + 1);
  for (int w = 0; w < W; w++) off[w + 1] = off[w] + ntasks[w];
  g_autofree int *task_start = g_new(int, off[W] + 1); /* by (WG, position) */
  for (guint k = 0; k < K; k++)
    if (pos[k] >= 0) task_start[off[ir_task_at(ir, (int)k)->wg] + pos[k]] = start[k];
  g_autofree int *wgvec = g_new0(int, (gsize)W * W), *grpvec = g_new0(int, (gsize)(G + 1) * W);
  g_autofree int *cur = g_new(int, W);
  guint next = 0; /* the first write of task k or a later one */
  for (guint k = 0; k < K; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    int u = tk->wg;
    if (u < 0 || u >= W) continue;
    memcpy(cur, wgvec + (gsize)u * W, sizeof(int) * (gsize)W);
    for (guint i = 0; tk->waits && i < tk->waits->len; i++) {
      int g = g_array_index(tk->waits, int, i);
      if (g >= 0 && (guint)g < G && !((const IrGroup *)g_ptr_array_index(ir->groups, g))->any_order)
        vmax(cur, grpvec + (gsize)g * W, W);
    }
    for (; next < writes->len && g_array_index(writes, Write, next).p == (int)k; next++) {
      Write *wr = &g_array_index(writes, Write, next);
      int w = wr->w;
      wr->pos = pos[k];
      wr->f = cur[w] < ntasks[w] ? task_start[off[w] + cur[w]] : nops[w];
    }
    if (owner[k]) g_hash_table_insert(saved, GINT_TO_POINTER((int)k), g_memdup2(cur, sizeof(int) * (gsize)W));
    memcpy(wgvec + (gsize)u * W, cur, sizeof(int) * (gsize)W);
    if (tk->signals >= 0 && (guint)tk->signals < G) {
      if (pos[k] + 1 > cur[u]) cur[u] = pos[k] + 1;
      vmax(grpvec + (gsize)tk->signals * W, cur, W);
    }
  }
  for (guint i = 0; i < writes->len; i++) {
    const Write *wr = &g_array_index(writes, Write, i);
    int c = ir_tensor(ir, wr->t)->task;
    const int *vc = g_hash_table_lookup(saved, GINT_TO_POINTER(c));
    /* C waits for P: wr->f; else from C's start (its own task); a
     * preload task: from where the write may land, at the latest C's start */
    int f = vc && vc[wr->wp] > wr->pos ? wr->f : start[c];
    if (ir_task_at(ir, c)->role.kind == ROLE_PRELOAD) f = MIN(f, wr->f);
    if (first[wr->t] < 0 || f < first[wr->t]) first[wr->t] = f;
  }
  return first;
}
