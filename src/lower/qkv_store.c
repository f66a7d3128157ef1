/* qkv_store.c - where a q|k|v projection's output goes, for both
 * problems (qkv_store.h, lw_store_qkv): columns [0, d) are q and go to
 * scratch (or into the q hand-off); columns [d, 2d) and [2d, 3d) are K and
 * V and go to the ABI's cache or output rows of their head, one piece per
 * head.  Each piece is emitted in the plain form, the seeds' round trip:
 * stored to the temp area of scratch, fenced (memory is not hazard-tracked:
 * the task's own SIG fires when the store has completed), read back,
 * stored to its final place.  With `kv_writeback: direct` the pass
 * kv_writeback (src/passes/kv_writeback.c) forwards each piece to its final
 * store and removes the round trip; with `temp` it stays.  With resident
 * history K/V (D1, resident.c) a piece goes RF to RF into the slice's
 * tensor instead, and a task of its own stores it to HBM.  Every store is
 * preceded by the stage's store spacing (spacing.c). */
#include "qkv_store.h"

#include <string.h>

#include "builder.h"
#include "handoff.h"
#include "spacing.h"

void lw_store_qkv(Ir *ir, int task, IrView acc, int c0, const LwQkvStore *s) {
  int d = s->d_model, R = acc.rows;
  for (int x = c0; x < c0 + acc.cols;) {
    int part = x / d, col = x % d, n = MIN(acc.cols - (x - c0), d - col);
    lw_space(ir, task);
    if (part == 0) {
      IrView q = ir_win(acc.t, acc.r0, R, acc.c0 + x - c0, n);
      if (s->q)
        lw_hand_put(ir, s->q, task, q, 0, col);
      else {
        LwMat m = {s->q_col, d, s->q_packed};
        lw_store_mat(ir, task, q, "scratch", &m, s->q_row, col, s->prov);
      }
      x += n;
      continue;
    }
    int h = col / WL_HEAD_DIM, hn = MIN(n, WL_HEAD_DIM - col % WL_HEAD_DIM);
    IrView piece = ir_win(acc.t, acc.r0, R, acc.c0 + x - c0, hn);
    if (s->kv_rf[part - 1]) { /* resident K/V: to the slice's RF now, */
      IrView to = s->kv_rf[part - 1][h];          /* to HBM by kv_task  */
      IrOp *op = ir_emit(ir, task, IR_ST);
      op->a = piece;
      op->mem = ir_win(to.t, to.r0, R, to.c0 + col % WL_HEAD_DIM, hn);
      op->prov = s->kv_prov;
      lw_space(ir, s->kv_task);
      lw_store(ir, s->kv_task, piece, s->kv_sym[part - 1], s->kv_row + h * s->head_rows,
               col % WL_HEAD_DIM, WL_HEAD_DIM, s->kv_prov);
      x += hn;
      continue;
    }
    /* the plain form: through the temp area and back (src/passes/kv_writeback.c) */
    int tmp = s->temp_col + (part - 1) * d + col;
    lw_store(ir, task, piece, "scratch", s->temp_row, tmp, s->temp_stride, s->kv_prov);
    lw_fence(ir, task, ++*s->fences, s->kv_prov);
    g_autofree char *bn = g_strdup_printf("%s.kvback%d", s->back_tag ? s->back_tag : ir_task_at(ir, task)->name, x);
    int back = lw_rf(ir, task, bn, R, hn);
    lw_load(ir, task, ir_all(ir, back), "scratch", s->temp_row, tmp, s->temp_stride, s->kv_prov);
    lw_store(ir, task, ir_all(ir, back), s->kv_sym[part - 1], s->kv_row + h * s->head_rows,
             col % WL_HEAD_DIM, WL_HEAD_DIM, s->kv_prov);
    /* the size budget (builder.c) counts the program the passes leave */
    if (ir->sched.kv_writeback == KV_DIRECT) ir->nops -= 4;
    x += hn;
  }
}

gboolean lw_qkv_transient(const Ir *ir, const IrOp *op) {
  if (ir->sched.kv_writeback != KV_DIRECT || !op->prov.knob || !g_str_has_suffix(op->prov.knob, "kv_writeback"))
    return FALSE;
  if (op->kind == IR_SIG || op->kind == IR_WAIT || op->kind == IR_LD) return TRUE;
  return op->kind == IR_ST && op->mem.t >= 0 && ir_tensor(ir, op->mem.t)->home == HOME_HBM &&
         strcmp(ir_tensor(ir, op->mem.t)->sym, "scratch") == 0;
}
