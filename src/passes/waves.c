/* waves.c - preload waves (power.preload_waves, power.wave_order): the
 * preload tasks (role preload: what a resident strategy loads once before
 * the steps) are split into `preload_waves` waves; every task of a wave
 * waits for the group of the previous non-empty wave, so fewer WGs stream
 * from HBM at once (the hottest window; seeds' technique 13).  A waiting
 * WG issues nothing else meanwhile (WGs issue in order).
 *
 * - wave_order: sm — by SM number: wave = sm * waves / sms_used.
 * - wave_order: need — by the first stage that uses what a task loads: its
 *   rank is the lowest, over the tasks that read its tensors, of their role
 *   (qkv 0, attention 1, wo 2, w1 3, w2 4), and wave = rank * waves / 5, so
 *   the first stages' data arrives first and a WG waits only while its own
 *   stage could not run anyway.
 *
 * Preload tasks of different layers (power.deferred_loads: role.layer set)
 * form separate sets, each waved on its own; a set's waves are the family
 * "preload_lL_K" (one set: "preloadK").  Runs after lower, before sync; a
 * no-op with preload_waves <= 1. */
#include "ir.h"

/* The rank of a reader by its role: the order of D1's stages (ir.h). */
int ir_stage_rank(IrRoleKind k) {
  switch (k) {
  case ROLE_LN1:
  case ROLE_QKV: return 0;
  case ROLE_ATT: return 1;
  case ROLE_WO: return 2;
  case ROLE_LN2:
  case ROLE_W1: return 3;
  case ROLE_W2: return 4;
  default: return 5;
  }
}

/* Per RF tensor, the lowest rank of a task (not a preload) that reads it. */
static int *reader_rank(const Ir *ir) {
  guint T = ir->tensors->len;
  int *rank = g_new(int, T + 1);
  for (guint t = 0; t < T; t++) rank[t] = 5;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *task = ir_task_at(ir, (int)k);
    if (task->role.kind == ROLE_PRELOAD) continue;
    int r = ir_stage_rank(task->role.kind);
    for (guint i = 0; i < task->ops->len; i++) {
      const IrOp *op = &g_array_index(task->ops, IrOp, i);
      IrView c = ir_op_c(op);
      const IrView *src[] = {&op->a, &op->b, &c};
      for (int q = 0; q < 3; q++)
        if (src[q]->t >= 0 && (guint)src[q]->t < T && r < rank[src[q]->t]) rank[src[q]->t] = r;
    }
  }
  return rank;
}

/* Per task, the lowest rank of what it keeps (5: none, or not a resident
 * tensor); preload_window.c orders the preload tasks by it too. */
int *ir_preload_rank(const Ir *ir) {
  g_autofree int *tensor_rank = reader_rank(ir);
  int *task_rank = g_new(int, ir->tasks->len + 1);
  for (guint k = 0; k < ir->tasks->len; k++) task_rank[k] = 5;
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home == HOME_RF && x->task >= 0 && (guint)x->task < ir->tasks->len)
      task_rank[x->task] = MIN(task_rank[x->task], tensor_rank[t]);
  }
  return task_rank;
}

gboolean pass_waves(Ir *ir, GError **err) {
  (void)err;
  const Schedule *s = &ir->sched;
  int waves = s->preload_waves;
  if (waves <= 1) return TRUE;
  int W = ir->hw.wgs_per_sm, S = s->sms_used > 0 ? s->sms_used : ir->hw.sms;
  gboolean by_need = s->wave_order == WAVES_BY_NEED;
  IrProv prov = ir_prov(ir, "power.preload_waves"); /* the waits and signals it adds */
  g_autofree int *tensor_rank = by_need ? reader_rank(ir) : NULL;
  /* each task's rank: the lowest of its tensors' (one pass over them) */
  g_autofree int *task_rank = g_new(int, ir->tasks->len + 1);
  for (guint k = 0; k < ir->tasks->len; k++) task_rank[k] = 5;
  for (guint t = 0; by_need && t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home == HOME_RF && x->task >= 0 && (guint)x->task < ir->tasks->len)
      task_rank[x->task] = MIN(task_rank[x->task], tensor_rank[t]);
  }
  /* each preload task's wave */
  g_autofree int *wave = g_new(int, ir->tasks->len + 1);
  int max_layer = -1;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *task = ir_task_at(ir, (int)k);
    wave[k] = -1;
    if (task->role.kind != ROLE_PRELOAD) continue;
    max_layer = MAX(max_layer, task->role.layer);
    if (!by_need) {
      int wg = task->pin >= 0 ? task->pin : task->wg;
      wave[k] = MIN(waves - 1, MAX(0, (wg / W) * waves / S));
      continue;
    }
    wave[k] = MIN(waves - 1, task_rank[k] * waves / 5);
  }
  /* A wave's tasks must come before the next wave's in program order (a
   * group's members before its waiters): stably reorder each run of
   * consecutive preload tasks of one set by wave, and renumber the tasks
   * their tensors belong to. */
  guint K = ir->tasks->len;
  g_autofree int *to = g_new(int, K + 1);
  for (guint k = 0; k < K; k++) to[k] = (int)k;
  for (guint a = 0; a < K;) {
    const IrTask *ta = ir_task_at(ir, (int)a);
    guint b = a + 1;
    if (ta->role.kind == ROLE_PRELOAD)
      while (b < K && ir_task_at(ir, (int)b)->role.kind == ROLE_PRELOAD &&
             ir_task_at(ir, (int)b)->role.layer == ta->role.layer)
        b++;
    if (b - a > 1 && ta->role.kind == ROLE_PRELOAD) {
      g_autofree gpointer *run = g_new(gpointer, b - a);
      g_autofree int *runwave = g_new(int, b - a);
      guint n = 0;
      for (int w = 0; w < waves; w++) /* stable: by wave, then program order */
        for (guint k = a; k < b; k++)
          if (wave[k] == w) {
            run[n] = g_ptr_array_index(ir->tasks, k);
            runwave[n] = w;
            to[k] = (int)(a + n++);
          }
      for (guint i = 0; i < n; i++) {
        ir->tasks->pdata[a + i] = run[i];
        wave[a + i] = runwave[i];
      }
    }
    a = b;
  }
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home == HOME_RF && x->task >= 0 && (guint)x->task < K) x->task = to[x->task];
  }
  /* per set of layers (-1: one set), wave by wave */
  for (int l = -1; l <= max_layer; l++) {
    int prev = -1;
    for (int w = 0; w < waves; w++) {
      int grp = -1;
      for (guint k = 0; k < ir->tasks->len; k++) {
        IrTask *task = ir_task_at(ir, (int)k);
        if (wave[k] != w || task->role.layer != l) continue;
        if (grp < 0) {
          g_autofree char *ev = l >= 0 ? g_strdup_printf("preload_l%d_%d", l, w) : g_strdup_printf("preload%d", w);
          grp = ir_group_for(ir, ev, prov);
        }
        if (prev >= 0) ir_task_waits(ir, (int)k, prev);
        ir_task_signals(ir, (int)k, grp);
      }
      if (grp >= 0) prev = grp;
    }
  }
  return TRUE;
}
