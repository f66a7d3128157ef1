/* handoff.c - how a stage passes a matrix (a row, a panel of it, the
 * slices' partial results) to the next stage's tasks (lower.h, LwHand):
 *
 * - handoff: hbm (the baseline): every producer stores its part to the
 *   matrix's home in HBM scratch as it is made; every consumer loads the
 *   window it needs.  A hand-off costs the store's HBM latency (the
 *   producer's SIG waits for it) and the load's.
 * - handoff: rf: the producer keeps its part in its RF; when a consumer asks
 *   for a window, the producer of every part that meets it gets an
 *   `ST wgN.x` of the overlap straight into the consumer's RF tensor,
 *   appended to its ops (so before the SIG that the sync pass puts at its
 *   end: the consumer, which waits for the producer's group, finds the data
 *   there).  No HBM: NoC latency only, or none on the same SM.
 *
 * In the rf mode the consumer's tensor is written by another WG: rf_alloc
 * keeps it live from the first op the producer's dependencies do not order
 * before the write (ir_order.c). */
#include "lower.h"

typedef struct Piece {
  int task;
  IrView v;
  int r0, c0; /* where v lies in the matrix */
} Piece;

void lw_hand_init(LwHand *h, gboolean rf, const char *sym, int row, int col, int stride, IrProv prov) {
  *h = (LwHand){.rf = rf, .sym = sym, .row = row, .col = col, .stride = stride, .prov = prov};
  if (rf) h->pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
}

void lw_hand_clear(LwHand *h) {
  if (h->pieces) g_array_free(h->pieces, TRUE);
  h->pieces = NULL;
}

void lw_hand_put(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0) {
  if (!h->rf) {
    lw_store(ir, task, v, h->sym, h->row, h->col + r0 * h->stride + c0, h->stride ? h->stride : v.cols,
             h->prov);
    return;
  }
  Piece p = {task, v, r0, c0};
  g_array_append_val(h->pieces, p);
}

void lw_hand_get(Ir *ir, LwHand *h, int task, IrView dst, int r0, int c0) {
  if (!h->rf) {
    lw_load(ir, task, dst, h->sym, h->row, h->col + r0 * h->stride + c0,
            h->stride ? h->stride : dst.cols, h->prov);
    return;
  }
  for (guint i = 0; i < h->pieces->len; i++) {
    const Piece *p = &g_array_index(h->pieces, Piece, i);
    int rlo = MAX(r0, p->r0), rhi = MIN(r0 + dst.rows, p->r0 + p->v.rows);
    int clo = MAX(c0, p->c0), chi = MIN(c0 + dst.cols, p->c0 + p->v.cols);
    if (rlo >= rhi || clo >= chi) continue;
    IrOp *op = ir_emit(ir, p->task, IR_ST);
    op->a = ir_win(p->v.t, p->v.r0 + rlo - p->r0, rhi - rlo, p->v.c0 + clo - p->c0, chi - clo);
    op->mem = ir_win(dst.t, dst.r0 + rlo - r0, rhi - rlo, dst.c0 + clo - c0, chi - clo);
    op->prov = h->prov;
  }
}
