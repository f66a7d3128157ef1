/* pace.c - byte-bucket load pacing (plan knobs power.bucket_bytes,
 * power.event_interval, power.pacing_wg).  Each WG counts the HBM lines its
 * loads touch, in program order across its tasks, and cuts them into buckets
 * of `bucket_bytes`.
 *
 * - Self-paced (pacing_wg = -1): after a full bucket the WG waits
 *   event_interval cycles (WAITT) before its next load.
 * - Paced by a WG (the seeds' scheme): buckets are numbered machine-wide in
 *   program order; a WG WAITs for ev.bucket >= its bucket's number before the
 *   bucket's first load, and a pacer task alone on WG pacing_wg signals
 *   ev.bucket once every event_interval cycles.  The machine then streams at
 *   most one bucket per interval however many WGs are ready, which caps the
 *   busy HBM channels and so the hottest power window.  Bucket numbers only
 *   grow along program order and the pacer depends on nobody: no deadlock. */
#include <string.h>

#include "ir.h"

/* HBM lines (HBM_LINE bytes) touched by the memory side of an LD. */
static int64_t lines(const Ir *ir, const IrOp *op) {
  const IrTensor *t = ir_tensor(ir, op->mem.t);
  int64_t n = 0;
  for (int r = 0; r < op->mem.rows; r++) {
    uint64_t a = t->offset + 4ull * ((uint64_t)(op->mem.r0 + r) * (uint64_t)t->stride + (uint64_t)op->mem.c0);
    uint64_t e = a + 4ull * (uint64_t)op->mem.cols;
    n += (int64_t)((e + HBM_LINE - 1) / HBM_LINE - a / HBM_LINE); /* symbols are 4096-aligned */
  }
  return n;
}

/* Insert a WAITT before op `at` of `task`. */
static void insert_wait(Ir *ir, IrTask *task, guint at, int64_t cycles, IrProv prov) {
  IrOp w = {0};
  w.kind = IR_WAITT;
  w.d.t = w.a.t = w.b.t = w.c.t = w.mem.t = -1;
  w.event = -1;
  w.n = cycles;
  w.prov = prov;
  g_array_insert_val(task->ops, at, w);
  (void)ir;
}

/* The pacer task (made by the pacer pass, placed by place), alone on its WG:
 * releases bucket k (SIG ev.bucket) every `interval` cycles, and with a cap
 * only once bucket k - cap has finished. */
static void pacer(Ir *ir, int task, const Schedule *pp, int64_t buckets, IrProv prov) {
  int ev = ir_event(ir, "bucket"), took = ir_event(ir, "took");
  for (int64_t k = 1; k <= buckets; k++) {
    IrOp *op;
    if (pp->in_flight > 0 && k > pp->in_flight) {
      op = ir_emit(ir, task, IR_WAIT);
      op->event = took, op->n = k - pp->in_flight, op->prov = prov;
    }
    op = ir_emit(ir, task, IR_WAITT);
    op->n = pp->event_interval, op->prov = prov;
    op = ir_emit(ir, task, IR_SIG);
    op->event = ev, op->n = 1, op->prov = prov;
  }
}

static IrOp sync_op(IrOpKind kind, int ev, int64_t n, IrProv prov) {
  IrOp w;
  memset(&w, 0, sizeof w);
  w.kind = kind, w.d.t = w.a.t = w.b.t = w.c.t = w.mem.t = -1;
  w.event = ev, w.n = n, w.prov = prov;
  return w;
}

/* Paced by a WG: cut each task's loads into buckets numbered machine-wide
 * in program order; WAIT for the bucket's release before its first load and
 * SIG ev.took after its last load (before the next bucket's WAIT, or at the
 * task's end).  A bucket never spans tasks, so a bucket's completion depends
 * only on its own task and on tasks created before it. */
static gboolean paced(Ir *ir, const Schedule *pp, IrProv prov, GError **err) {
  int ev = ir_event(ir, "bucket"), took = ir_event(ir, "took"), pacer_task = -1;
  int64_t next = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *task = ir_task_at(ir, (int)k);
    if (task->role.kind == ROLE_PACER) {
      pacer_task = (int)k;
      continue;
    }
    int64_t fill = -1; /* -1: no open bucket in this task */
    for (guint i = 0; i < task->ops->len; i++) {
      IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      int64_t bytes = HBM_LINE * lines(ir, op);
      if (fill < 0 || fill + bytes > pp->bucket_bytes) {
        if (fill >= 0) {
          IrOp t = sync_op(IR_SIG, took, 1, prov);
          g_array_insert_val(task->ops, i++, t);
        }
        IrOp w = sync_op(IR_WAIT, ev, ++next, prov);
        g_array_insert_val(task->ops, i++, w);
        fill = 0;
      }
      fill += bytes;
    }
    if (fill >= 0) {
      IrOp t = sync_op(IR_SIG, took, 1, prov);
      g_array_append_val(task->ops, t);
    }
  }
  if (pacer_task < 0) {
    ir_error(ir, err, prov, "internal: power.pacing_wg is set but there is no pacer task");
    return FALSE;
  }
  pacer(ir, pacer_task, pp, next, prov);
  return TRUE;
}

gboolean pass_pace(Ir *ir, GError **err) {
  const Schedule *pp = &ir->sched;
  if (pp->bucket_bytes <= 0 || pp->event_interval <= 0) return TRUE;
  IrProv prov = ir_prov(ir, "power.bucket_bytes");
  if (pp->pacing_wg >= 0) return paced(ir, pp, prov, err);
  int64_t *fill = g_new0(int64_t, sim_machine_wgs(&ir->hw));
  gboolean *full = g_new0(gboolean, sim_machine_wgs(&ir->hw));
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *task = ir_task_at(ir, (int)k);
    for (guint i = 0; i < task->ops->len; i++) {
      IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      if (full[task->wg]) {
        insert_wait(ir, task, i++, pp->event_interval, prov);
        op = &g_array_index(task->ops, IrOp, i);
        full[task->wg] = FALSE;
        fill[task->wg] = 0;
      }
      fill[task->wg] += HBM_LINE * lines(ir, op);
      if (fill[task->wg] >= pp->bucket_bytes) full[task->wg] = TRUE;
    }
  }
  g_free(fill);
  g_free(full);
  return TRUE;
}
