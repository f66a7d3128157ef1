/* project.c - a projection panel, for both problems (project.h):
 * acc (R x P) = A (R x K) . W[0..K, c0..c0+P), W streamed from HBM in chunks
 * of k_chunk rows through one RF buffer, A either resident in the RF or
 * streamed from HBM chunk by chunk beside W; then the bias. */
#include "project.h"

#include "builder.h"

void lw_project(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                int wstride, int c0, IrView acc, const LwProj *p) {
  int kc = MIN(p->k_chunk, K), P = acc.cols, R = acc.rows;
  int w = lw_rf_sub(ir, task, tag, "w", kc, P);
  int buf = a->sym ? lw_rf_sub(ir, task, tag, "a", R, kc) : -1; /* A's chunk buffer when streamed */
  for (int k0 = 0; k0 < K; k0 += kc) {
    int n = MIN(kc, K - k0);
    IrView av = a->sym ? ir_win(buf, 0, R, 0, n) : ir_win(a->rf.t, a->rf.r0, a->rf.rows, a->rf.c0 + k0, n);
    IrView wv = ir_win(w, 0, n, 0, P);
    if (a->sym) lw_load(ir, task, av, a->sym, a->row, a->col + k0, a->stride, a->prov);
    lw_load(ir, task, wv, wsym, k0, c0, wstride, p->kprov);
    IrOp *op = lw_op(ir, task, IR_MMA, acc, av, wv, p->kprov);
    if (k0 == 0) op->mods = IR_MOD_Z;
  }
}

void lw_add_bias(Ir *ir, int task, const char *tag, IrView acc, const char *bsym, int c0, IrProv prov) {
  int b = lw_rf_sub(ir, task, tag, "bias", 1, acc.cols);
  IrView bv = ir_all(ir, b);
  lw_load(ir, task, bv, bsym, 0, c0, acc.cols, prov);
  lw_op(ir, task, IR_VADD, acc, acc, bv, prov);
}

