/* kv_writeback.c - where a q|k|v projection's output goes, for both
 * problems (lower.h, lw_store_qkv): columns [0, d) are q and go to scratch;
 * columns [d, 2d) and [2d, 3d) are K and V and go to the ABI's cache or
 * output rows of their head, one ST per head piece.  With `kv_writeback:
 * direct` each piece is stored once; with `temp` it takes the seeds' round
 * trip: stored to a scratch temp, fenced (memory is not hazard-tracked: the
 * task's own SIG fires when the store has completed), read back, stored to
 * its final place.  Every piece is preceded by the stage's store spacing
 * (spacing.c). */
#include "lower.h"

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
    if (s->mode == KV_TEMP) {
      int tmp = s->temp_col + (part - 1) * d + col;
      lw_store(ir, task, piece, "scratch", s->temp_row, tmp, s->temp_stride, s->kv_prov);
      lw_fence(ir, task, ++*s->fences, s->kv_prov);
      g_autofree char *bn = g_strdup_printf("%s.kvback%d", s->back_tag ? s->back_tag : ir_task_at(ir, task)->name, x);
      int back = lw_rf(ir, task, bn, R, hn);
      lw_load(ir, task, ir_all(ir, back), "scratch", s->temp_row, tmp, s->temp_stride, s->kv_prov);
      piece = ir_all(ir, back);
    }
    lw_store(ir, task, piece, s->kv_sym[part - 1], s->kv_row + h * s->head_rows, col % WL_HEAD_DIM,
             WL_HEAD_DIM, s->kv_prov);
    x += hn;
  }
}
