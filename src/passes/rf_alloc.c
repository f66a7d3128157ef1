/* rf_alloc.c - RF partition allocation (docs/machine.md §2, the partition
 * rule).  Runs after placement: every task has a WG.
 *
 * Per WG, the ops of its tasks are numbered 0..n-1 in task order (the order
 * the backend emits them).  An RF tensor's live range is [first use, last
 * use] in that numbering; a tensor that another WG writes (an ST wgN.x or an
 * LD.mc target) is live from the first op at which such a write may arrive
 * (ir_order.c: the first task of its WG that the writer's dependencies do
 * not order before the write, for a preload task's tensor even when that is
 * before its task), since those writes are ordered by events, not by this
 * WG's program.  Tensors
 * never used get no space (part stays -1; the backend declares only
 * allocated tensors).
 *
 * Tensors are placed in order of first_op (ties: tensor index), first fit:
 * - B = 4*rows*cols <= part_bytes: the lowest (partition, offset), offset a
 *   multiple of 64, where it overlaps no tensor whose live range meets its;
 * - larger: B must be a whole number k of partitions; the lowest run of k
 *   partitions that no such tensor touches.
 * Live ranges are closed: a tensor dying at op i and one born at op i never
 * share bytes (an op may read the one and write the other).  Deterministic:
 * no hashing, a fixed order, first fit.
 *
 * Cost: O(T log T) to order the T tensors (one sort of (WG, first_op,
 * index) keys), then per tensor O(B + vl) where B is the number of tensors
 * live at its first op: those are kept sorted by address, and they never
 * overlap (each was placed clear of all the others), so one walk in address
 * order visits every partition's intervals in order.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { RF_ALIGN = 64 };

/* A placed tensor occupying bytes [lo, hi) of its WG's RF until op `last`. */
typedef struct Busy {
  int t;
  int last;
  int64_t lo, hi;
} Busy;

/* A used RF tensor to place: its WG, live range and index (WG, first op
 * and index are the order of placement), its size, and where it went. */
typedef struct Use {
  int wg, first, t, last;
  int64_t bytes;
  int part, nparts, part_off;
} Use;

typedef struct Alloc {
  Ir *ir;
  int wg;
  int pb, vl;   /* partition bytes, partitions                                */
  GArray *busy; /* Busy: placed tensors that may still be live, sorted by lo;  */
                /* pairwise disjoint                                          */
} Alloc;

static int64_t tensor_bytes(const IrTensor *x) { return 4 * (int64_t)x->rows * x->cols; }

static inline IrTensor *tensor(const Ir *ir, int t) { return g_ptr_array_index(ir->tensors, t); }

/* ------------------------------------------------------- live ranges */

/* Per tensor, while numbering the ops: its WG (-1 for HBM), live range and
 * whether another WG writes it. */
typedef struct Live {
  int *wg, *first, *last;
  gboolean *remote;
} Live;

/* A use of tensor t by the op numbered idx of WG wg; `write` marks a
 * destination (another WG's write makes t live from op 0). */
static inline void use(Live *L, int wg, int idx, int t, gboolean write) {
  if (L->wg[t] < 0) return;
  if (L->wg[t] != wg) {
    L->remote[t] |= write;
    return;
  }
  if (L->first[t] < 0 || idx < L->first[t]) L->first[t] = idx;
  if (idx > L->last[t]) L->last[t] = idx;
}

/* The RF tensors an op touches: d/a/b/c, ST's remote destination, LD.mc's
 * targets (its d is one of them). */
static void op_uses(Live *L, int wg, int idx, const IrOp *op) {
  if (op->d.t >= 0 && !(op->mods & IR_MOD_MC)) use(L, wg, idx, op->d.t, FALSE);
  if (op->a.t >= 0) use(L, wg, idx, op->a.t, FALSE);
  if (op->b.t >= 0) use(L, wg, idx, op->b.t, FALSE);
  if (ir_op_c(op).t >= 0) use(L, wg, idx, op->c.t, FALSE);
  if (op->kind == IR_ST && op->mem.t >= 0) use(L, wg, idx, op->mem.t, TRUE);
  for (int j = 0; j < op->ntargets; j++) use(L, wg, idx, op->targets[j], TRUE);
}

/* Forget every tensor's placement and live range. */
static void reset(Ir *ir) {
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = tensor(ir, (int)t);
    x->part = -1, x->nparts = 0, x->part_off = 0, x->first_op = x->last_op = -1;
  }
}

/* Number the ops of each WG (nops: their count) and set every tensor's
 * first_op/last_op, resetting its placement; `uses` gets the used RF
 * tensors, unsorted.  FALSE when a task is not placed. */
static gboolean live_ranges(Ir *ir, int *nops, GArray *uses, GError **err) {
  int nwgs = sim_machine_wgs(&ir->hw);
  guint T = ir->tensors->len;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    if (tk->wg < 0 || tk->wg >= nwgs) {
      reset(ir);
      ir_error(ir, err, tk->prov, "rf_alloc: task '%s' is not placed (wg %d)",
                  tk->name, tk->wg);
      return FALSE;
    }
  }
  g_autofree int *ints = g_new(int, 3 * (gsize)T + 1);
  g_autofree gboolean *remote = g_new0(gboolean, T + 1);
  Live L = {ints, ints + T, ints + 2 * (gsize)T, remote};
  for (guint t = 0; t < T; t++) {
    const IrTensor *x = tensor(ir, (int)t);
    gboolean rf = x->home == HOME_RF && x->task >= 0 && (guint)x->task < ir->tasks->len;
    L.wg[t] = rf ? ir_task_at(ir, x->task)->wg : -1;
    L.first[t] = L.last[t] = -1;
  }
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    const IrOp *ops = (const IrOp *)(void *)tk->ops->data;
    for (guint i = 0; i < tk->ops->len; i++) op_uses(&L, tk->wg, nops[tk->wg]++, &ops[i]);
  }
  g_autofree int *arrive = ir_remote_first_op(ir);
  for (guint t = 0; t < T; t++) {
    IrTensor *x = tensor(ir, (int)t);
    if (remote[t]) {
      int n = nops[L.wg[t]], a = MIN(MAX(arrive[t], 0), MAX(n - 1, 0));
      if (L.last[t] < 0) L.last[t] = MAX(n - 1, 0);
      if (L.first[t] < 0 || a < L.first[t]) L.first[t] = a;
    }
    x->part = -1, x->nparts = 0, x->part_off = 0;
    x->first_op = L.first[t];
    x->last_op = L.last[t];
    if (x->home != HOME_RF || x->first_op < 0) continue;
    Use u = {L.wg[t], x->first_op, (int)t, x->last_op, tensor_bytes(x), -1, 0, 0};
    g_array_append_val(uses, u);
  }
  return TRUE;
}

/* ------------------------------------------------------------ fitting */

/* Forget tensors that died before op `first`: they conflict with nothing
 * placed from now on (placement goes in first_op order). */
static void expire(Alloc *A, int first) {
  Busy *b = (Busy *)(void *)A->busy->data;
  guint n = 0;
  for (guint i = 0; i < A->busy->len; i++)
    if (b[i].last >= first) b[n++] = b[i];
  g_array_set_size(A->busy, n);
}

/* Index of the first busy interval that ends after `base`: intervals are
 * disjoint and sorted by lo, so also by hi. */
static guint first_after(const Alloc *A, guint i, int64_t base) {
  const Busy *b = (const Busy *)(const void *)A->busy->data;
  while (i < A->busy->len && b[i].hi <= base) i++;
  return i;
}

static int64_t align_up(int64_t x) { return (x + RF_ALIGN - 1) / RF_ALIGN * RF_ALIGN; }

/* First fit of `bytes` in partition p, whose intervals start at busy[i]:
 * the lowest aligned offset, or -1.  *gap gets the largest aligned free gap
 * seen (for the failure report). */
static int64_t fit_in(const Alloc *A, guint i, int p, int64_t bytes, int64_t *gap) {
  const Busy *b = (const Busy *)(const void *)A->busy->data;
  int64_t base = (int64_t)p * A->pb, end = base + A->pb, at = 0, found = -1;
  for (;; i++) {
    gboolean last = i >= A->busy->len || b[i].lo >= end;
    if (!last && b[i].hi <= base) continue;
    int64_t next = last ? A->pb : MAX(b[i].lo, base) - base;
    if (next > at) *gap = MAX(*gap, next - at);
    if (found < 0 && next - at >= bytes) found = at;
    if (last) return found;
    at = MAX(at, align_up(MIN(b[i].hi, end) - base));
  }
}

/* Is partition p, whose intervals start at busy[i], touched by no live
 * tensor? */
static gboolean part_free(const Alloc *A, guint i, int p) {
  const Busy *b = (const Busy *)(const void *)A->busy->data;
  int64_t base = (int64_t)p * A->pb, end = base + A->pb;
  for (; i < A->busy->len && b[i].lo < end; i++)
    if (b[i].hi > base) return FALSE;
  return TRUE;
}

/* The plan knob that shaped tensor t's task: where an allocation failure
 * points. */
static IrProv task_prov(const Alloc *A, int t) { return ir_task_at(A->ir, tensor(A->ir, t)->task)->prov; }

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* rf_grid.* shapes its tasks' tensors (grid.c: buffers, rows x cols
 * accumulators): a task made by it that does not fit says so, naming the
 * knobs to lower. */
static const char *shaped_by(const IrProv *pv) {
  return pv->knob && strstr(pv->knob, "rf_grid.") ? "; the task is an rf_grid.rows x rf_grid.cols grid: lower them (or k_chunk)" : "";
}

/* A tensor inside one partition: the lowest (partition, offset) that fits. */
static gboolean place_small(Alloc *A, Use *u, GError **err) {
  int64_t gap = 0;
  guint i = 0;
  for (int p = 0; p < A->vl; p++) {
    i = first_after(A, i, (int64_t)p * A->pb);
    int64_t off = fit_in(A, i, p, u->bytes, &gap);
    if (off < 0) continue;
    u->part = p;
    u->nparts = 1;
    u->part_off = (int)off;
    return TRUE;
  }
  IrProv pv = task_prov(A, u->t);
  ir_error(A->ir, err, pv,
              "rf_alloc: wg%d has no room for '%s' (%" G_GINT64_FORMAT
              " bytes, live at ops %d..%d): "
              "the largest free gap in a partition is %" G_GINT64_FORMAT " bytes%s",
              A->wg, tensor(A->ir, u->t)->name, u->bytes, u->first, u->last, gap, shaped_by(&pv));
  return FALSE;
}

/* A tensor of k whole partitions: the lowest run of k free partitions. */
static gboolean place_run(Alloc *A, Use *u, GError **err) {
  int k = (int)(u->bytes / A->pb), run = 0, best = 0, nfree = 0;
  if (k > A->vl) { /* never fits: say so, and name the knob of its task */
    const IrTensor *x = tensor(A->ir, u->t);
    const IrProv *pv = &ir_task_at(A->ir, x->task)->prov;
    ir_error(A->ir, err, *pv,
                "rf_alloc: wg%d: '%s' (%" G_GINT64_FORMAT " bytes = %d partitions) is larger than "
                "the whole RF (%d partitions)%s%s",
                A->wg, x->name, u->bytes, k, A->vl, pv->knob ? "; its task is shaped by " : "",
                pv->knob ? pv->knob : "");
    return FALSE;
  }
  guint i = 0;
  for (int p = 0; p < A->vl; p++) {
    i = first_after(A, i, (int64_t)p * A->pb);
    run = part_free(A, i, p) ? run + 1 : 0;
    nfree += run > 0;
    best = MAX(best, run);
    if (run == k) {
      u->part = p - k + 1;
      u->nparts = k;
      u->part_off = 0;
      return TRUE;
    }
  }
  IrProv tp = task_prov(A, u->t);
  ir_error(
      A->ir, err, tp,
      "rf_alloc: wg%d has no room for '%s' (%" G_GINT64_FORMAT " bytes = %d partitions, live at "
      "ops %d..%d): %d partition%s free, the largest free run is %d partition%s%s",
      A->wg, tensor(A->ir, u->t)->name, u->bytes, k, u->first, u->last, nfree, plural(nfree), best,
      plural(best), shaped_by(&tp));
  return FALSE;
}

/* Place a tensor and remember it as busy (in lo order). */
static gboolean place(Alloc *A, Use *u, GError **err) {
  expire(A, u->first);
  if (u->bytes > A->pb && u->bytes % A->pb != 0) {
    const IrTensor *x = tensor(A->ir, u->t);
    ir_error(A->ir, err, task_prov(A, u->t),
                "rf_alloc: wg%d: '%s' is %dx%d = %" G_GINT64_FORMAT " bytes: neither inside one "
                "partition (%d bytes) nor a whole number of partitions",
                A->wg, x->name, x->rows, x->cols, u->bytes, A->pb);
    return FALSE;
  }
  if (!(u->bytes <= A->pb ? place_small(A, u, err) : place_run(A, u, err))) return FALSE;
  int64_t lo = (int64_t)u->part * A->pb + u->part_off;
  Busy b = {u->t, u->last, lo, lo + u->bytes};
  guint at = A->busy->len;
  while (at > 0 && g_array_index(A->busy, Busy, at - 1).lo > lo) at--;
  g_array_insert_val(A->busy, at, b);
  return TRUE;
}

static int by_wg_first_op(const void *a, const void *b) {
  const Use *x = a, *y = b;
  if (x->wg != y->wg) return (x->wg > y->wg) - (x->wg < y->wg);
  if (x->first != y->first) return (x->first > y->first) - (x->first < y->first);
  return (x->t > y->t) - (x->t < y->t);
}

gboolean pass_rf_alloc(Ir *ir, GError **err) {
  int nwgs = sim_machine_wgs(&ir->hw);
  g_autofree int *nops = g_new0(int, nwgs);
  g_autoptr(GArray) uses = g_array_new(FALSE, FALSE, sizeof(Use));
  if (!live_ranges(ir, nops, uses, err)) return FALSE;
  qsort(uses->data, uses->len, sizeof(Use), by_wg_first_op);
  Alloc A = {ir, -1, sim_machine_part_bytes(&ir->hw), ir->hw.vl,
             g_array_new(FALSE, FALSE, sizeof(Busy))};
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < uses->len; i++) {
    Use *u = &g_array_index(uses, Use, i);
    if (u->wg != A.wg) { /* the next WG: an empty RF */
      A.wg = u->wg;
      g_array_set_size(A.busy, 0);
    }
    ok = place(&A, u, err);
  }
  g_array_free(A.busy, TRUE);
  /* the placements (up to a failure), written in tensor order: memory order */
  g_autofree int *at = g_new(int, ir->tensors->len + 1);
  for (guint t = 0; t < ir->tensors->len; t++) at[t] = -1;
  for (guint i = 0; i < uses->len; i++) at[g_array_index(uses, Use, i).t] = (int)i;
  for (guint t = 0; t < ir->tensors->len; t++) {
    const Use *u = at[t] < 0 ? NULL : &g_array_index(uses, Use, at[t]);
    if (!u || u->part < 0) continue;
    IrTensor *x = tensor(ir, (int)t);
    x->part = u->part;
    x->nparts = u->nparts;
    x->part_off = u->part_off;
  }
  return ok;
}
