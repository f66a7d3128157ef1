/* rf_alloc.c - RF partition allocation (docs/machine.md §2, the partition
 * rule).  Runs after placement: every task has a WG.
 *
 * Per WG, the ops of its tasks are numbered 0..n-1 in task order (the order
 * the backend emits them).  An RF tensor's live range is [first use, last
 * use] in that numbering; a tensor that another WG writes (an ST wgN.x or an
 * LD.mc target) is live from op 0, because those writes are ordered by
 * events, not by this WG's program, and may arrive at any time.  Tensors
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
 */
#include <string.h>

#include "ir.h"

enum { RF_ALLOC_ERROR = 1, RF_ALIGN = 64 };

/* A placed tensor occupying bytes [lo, hi) of its WG's RF until op `last`. */
typedef struct Busy {
  int t;
  int last;
  int64_t lo, hi;
} Busy;

typedef struct Alloc {
  Ir *ir;
  int wg;
  int pb, vl;   /* partition bytes, partitions                        */
  GArray *busy; /* Busy: tensors placed so far that may still be live */
} Alloc;

static int64_t tensor_bytes(const IrTensor *x) { return 4 * (int64_t)x->rows * x->cols; }

/* ------------------------------------------------------- live ranges */

/* A use of tensor t by the op numbered idx of WG wg; `write` marks a
 * destination (another WG's write makes t live from op 0). */
static void use(Ir *ir, int wg, int idx, int t, gboolean write, gboolean *remote) {
  IrTensor *x = ir_tensor(ir, t);
  if (x->home != HOME_RF) return;
  if (ir_task_at(ir, x->task)->wg != wg) {
    remote[t] |= write;
    return;
  }
  if (x->first_op < 0 || idx < x->first_op) x->first_op = idx;
  if (idx > x->last_op) x->last_op = idx;
}

/* The RF tensors an op touches: d/a/b/c, ST's remote destination, LD.mc's
 * targets (its d is one of them). */
static void op_uses(Ir *ir, int wg, int idx, const IrOp *op, gboolean *remote) {
  const IrView *v[] = {&op->d, &op->a, &op->b, &op->c};
  for (int j = 0; j < 4; j++)
    if (v[j]->t >= 0 && !(j == 0 && (op->mods & IR_MOD_MC)))
      use(ir, wg, idx, v[j]->t, FALSE, remote);
  if (op->kind == IR_ST && op->mem.t >= 0) use(ir, wg, idx, op->mem.t, TRUE, remote);
  for (int j = 0; j < op->ntargets; j++) use(ir, wg, idx, op->targets[j], TRUE, remote);
}

/* Set first_op/last_op of every RF tensor (and reset its placement); nops
 * gets the op count of each WG.  FALSE when a task is not placed. */
static gboolean live_ranges(Ir *ir, int *nops, GError **err) {
  int nwgs = sim_machine_wgs(&ir->hw);
  g_autofree gboolean *remote = g_new0(gboolean, ir->tensors->len + 1);
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    x->part = -1;
    x->nparts = 0;
    x->part_off = 0;
    x->first_op = x->last_op = -1;
  }
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    if (tk->wg < 0 || tk->wg >= nwgs) {
      g_set_error(err, IR_ERROR, RF_ALLOC_ERROR, "rf_alloc: task '%s' is not placed (wg %d)",
                  tk->name, tk->wg);
      return FALSE;
    }
    for (guint i = 0; i < tk->ops->len; i++)
      op_uses(ir, tk->wg, nops[tk->wg]++, &g_array_index(tk->ops, IrOp, i), remote);
  }
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    if (!remote[t]) continue;
    int n = nops[ir_task_at(ir, x->task)->wg];
    if (x->last_op < 0) x->last_op = MAX(n - 1, 0);
    x->first_op = 0;
  }
  return TRUE;
}

/* ------------------------------------------------------------ fitting */

static int cmp_busy_lo(const void *a, const void *b) {
  const Busy *x = a, *y = b;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Forget tensors that died before op `first`: they conflict with nothing
 * placed from now on (placement goes in first_op order). */
static void expire(Alloc *A, int first) {
  for (guint i = 0; i < A->busy->len;)
    if (g_array_index(A->busy, Busy, i).last < first)
      g_array_remove_index(A->busy, i);
    else
      i++;
}

/* The busy byte intervals inside partition p, local offsets, sorted. */
static GArray *busy_in(const Alloc *A, int p) {
  GArray *iv = g_array_new(FALSE, FALSE, sizeof(Busy));
  int64_t base = (int64_t)p * A->pb, end = base + A->pb;
  for (guint i = 0; i < A->busy->len; i++) {
    Busy b = g_array_index(A->busy, Busy, i);
    if (b.hi <= base || b.lo >= end) continue;
    b.lo = MAX(b.lo, base) - base;
    b.hi = MIN(b.hi, end) - base;
    g_array_append_val(iv, b);
  }
  g_array_sort(iv, cmp_busy_lo);
  return iv;
}

static int64_t align_up(int64_t x) { return (x + RF_ALIGN - 1) / RF_ALIGN * RF_ALIGN; }

/* First fit of `bytes` in partition p: the lowest aligned offset, or -1.
 * *gap gets the largest aligned free gap seen (for the failure report). */
static int64_t fit_in(const Alloc *A, int p, int64_t bytes, int64_t *gap) {
  g_autoptr(GArray) iv = busy_in(A, p);
  int64_t at = 0, found = -1;
  for (guint i = 0; i <= iv->len; i++) {
    int64_t next = i < iv->len ? g_array_index(iv, Busy, i).lo : A->pb;
    if (next > at) *gap = MAX(*gap, next - at);
    if (found < 0 && next - at >= bytes) found = at;
    if (i < iv->len) at = MAX(at, align_up(g_array_index(iv, Busy, i).hi));
  }
  return found;
}

/* Is partition p touched by no live tensor? */
static gboolean part_free(const Alloc *A, int p) {
  int64_t base = (int64_t)p * A->pb;
  for (guint i = 0; i < A->busy->len; i++) {
    const Busy *b = &g_array_index(A->busy, Busy, i);
    if (b->lo < base + A->pb && b->hi > base) return FALSE;
  }
  return TRUE;
}

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* A tensor inside one partition: the lowest (partition, offset) that fits. */
static gboolean place_small(Alloc *A, int t, GError **err) {
  IrTensor *x = ir_tensor(A->ir, t);
  int64_t bytes = tensor_bytes(x), gap = 0;
  for (int p = 0; p < A->vl; p++) {
    int64_t off = fit_in(A, p, bytes, &gap);
    if (off < 0) continue;
    x->part = p;
    x->nparts = 1;
    x->part_off = (int)off;
    return TRUE;
  }
  g_set_error(err, IR_ERROR, RF_ALLOC_ERROR,
              "rf_alloc: wg%d has no room for '%s' (%" G_GINT64_FORMAT
              " bytes, live at ops %d..%d): "
              "the largest free gap in a partition is %" G_GINT64_FORMAT " bytes",
              A->wg, x->name, bytes, x->first_op, x->last_op, gap);
  return FALSE;
}

/* A tensor of k whole partitions: the lowest run of k free partitions. */
static gboolean place_run(Alloc *A, int t, GError **err) {
  IrTensor *x = ir_tensor(A->ir, t);
  int64_t bytes = tensor_bytes(x);
  int k = (int)(bytes / A->pb), run = 0, best = 0, nfree = 0;
  for (int p = 0; p < A->vl; p++) {
    run = part_free(A, p) ? run + 1 : 0;
    nfree += run > 0;
    best = MAX(best, run);
    if (run == k) {
      x->part = p - k + 1;
      x->nparts = k;
      x->part_off = 0;
      return TRUE;
    }
  }
  g_set_error(
      err, IR_ERROR, RF_ALLOC_ERROR,
      "rf_alloc: wg%d has no room for '%s' (%" G_GINT64_FORMAT " bytes = %d partitions, live at "
      "ops %d..%d): %d partition%s free, the largest free run is %d partition%s",
      A->wg, x->name, bytes, k, x->first_op, x->last_op, nfree, plural(nfree), best, plural(best));
  return FALSE;
}

/* Place tensor t and remember it as busy. */
static gboolean place(Alloc *A, int t, GError **err) {
  IrTensor *x = ir_tensor(A->ir, t);
  int64_t bytes = tensor_bytes(x);
  expire(A, x->first_op);
  if (bytes > A->pb && bytes % A->pb != 0) {
    g_set_error(err, IR_ERROR, RF_ALLOC_ERROR,
                "rf_alloc: wg%d: '%s' is %dx%d = %" G_GINT64_FORMAT " bytes: neither inside one "
                "partition (%d bytes) nor a whole number of partitions",
                A->wg, x->name, x->rows, x->cols, bytes, A->pb);
    return FALSE;
  }
  if (!(bytes <= A->pb ? place_small(A, t, err) : place_run(A, t, err))) return FALSE;
  int64_t lo = (int64_t)x->part * A->pb + x->part_off;
  Busy b = {t, x->last_op, lo, lo + bytes};
  g_array_append_val(A->busy, b);
  return TRUE;
}

static int by_first_op(gconstpointer a, gconstpointer b, gpointer ir) {
  int x = *(const int *)a, y = *(const int *)b;
  int fx = ir_tensor(ir, x)->first_op, fy = ir_tensor(ir, y)->first_op;
  return fx != fy ? (fx > fy) - (fx < fy) : (x > y) - (x < y);
}

/* Allocate the used RF tensors of WG wg, listed in `ts`. */
static gboolean alloc_wg(Ir *ir, int wg, GArray *ts, GError **err) {
  Alloc A = {ir, wg, sim_machine_part_bytes(&ir->hw), ir->hw.vl,
             g_array_new(FALSE, FALSE, sizeof(Busy))};
  g_array_sort_with_data(ts, by_first_op, ir);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < ts->len; i++) ok = place(&A, g_array_index(ts, int, i), err);
  g_array_free(A.busy, TRUE);
  return ok;
}

gboolean pass_rf_alloc(Ir *ir, GError **err) {
  int nwgs = sim_machine_wgs(&ir->hw);
  g_autofree int *nops = g_new0(int, nwgs);
  if (!live_ranges(ir, nops, err)) return FALSE;
  GArray **per = g_new0(GArray *, nwgs);
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF || x->first_op < 0) continue;
    int wg = ir_task_at(ir, x->task)->wg, ti = (int)t;
    if (!per[wg]) per[wg] = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_val(per[wg], ti);
  }
  gboolean ok = TRUE;
  for (int w = 0; w < nwgs; w++) {
    if (ok && per[w]) ok = alloc_wg(ir, w, per[w], err);
    if (per[w]) g_array_free(per[w], TRUE);
  }
  g_free(per);
  return ok;
}
