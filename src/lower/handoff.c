/* handoff.c - how a stage passes a matrix (a row, a panel of it, the
 * slices' partial results) to the next stage's tasks (handoff.h, LwHand):
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
 * - relays (lw_hand_relay, handoff_relays): a wide rf hand-off goes
 *   through a few relay tasks, each handing a copy (a replica) on.
 *
 * In the rf mode the consumer's tensor is written by another WG: rf_alloc
 * keeps it live from the first op the producer's dependencies do not order
 * before the write (ir_order.c).
 *
 * P1's FFN hand-off RF to RF (ffn_rf.c) is not an LwHand: it feeds the A
 * buffers of W2's resident owners chunk by chunk with full/free events
 * (resident_owners.c, lw_p1_resident_feed), where an LwHand appends a
 * store to a producer for each window a consumer asks for. */
#include "handoff.h"

#include "builder.h"

typedef struct Piece {
  int task;
  IrView v;
  int r0, c0; /* where v lies in the matrix */
  int rep;    /* its replica (replicated hand-offs), else -1 */
} Piece;

void lw_hand_init(LwHand *h, gboolean rf, const char *sym, int row, int col, int stride, IrProv prov) {
  *h = (LwHand){.rf = rf, .sym = sym, .row = row, .col = col, .stride = stride, .prov = prov};
  if (rf) h->pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
}

void lw_hand_clear(LwHand *h) {
  if (h->pieces) g_array_free(h->pieces, TRUE);
  h->pieces = NULL;
  g_free(h->rep_of);
  h->rep_of = NULL;
  h->nrep = 0;
  if (h->stats) {
    lw_hand_clear(h->stats);
    g_free(h->stats);
    h->stats = NULL;
  }
}

void lw_hand_add_stats(LwHand *h, int np, IrProv prov) {
  h->stats = g_new0(LwHand, 1);
  lw_hand_init(h->stats, TRUE, NULL, 0, 0, 0, prov);
  h->stats_np = np;
}

void lw_hand_replicate(Ir *ir, LwHand *h, int nrep, const int *host) {
  int W = ir->hw.sms * ir->hw.wgs_per_sm;
  h->nrep = nrep, h->cursor = 0;
  h->rep_of = g_new(int, W);
  for (int w = 0; w < W; w++) h->rep_of[w] = -1;
  for (int r = 0; r < nrep; r++)
    if (host[r] >= 0 && host[r] < W && h->rep_of[host[r]] < 0) h->rep_of[host[r]] = r;
}

void lw_hand_put_rep(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0, int rep) {
  (void)ir;
  Piece p = {task, v, r0, c0, rep};
  g_array_append_val(h->pieces, p);
}

/* The replica a consumer task takes: its WG's, or the next in turn. */
static int replica(Ir *ir, LwHand *h, int task) {
  if (h->nrep <= 0) return -1;
  int w = ir_task_at(ir, task)->pin, W = ir->hw.sms * ir->hw.wgs_per_sm;
  if (w < 0 || w >= W) return h->cursor++ % h->nrep;
  if (h->rep_of[w] < 0) h->rep_of[w] = h->cursor++ % h->nrep;
  return h->rep_of[w];
}

void lw_hand_put(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0) {
  if (!h->rf) {
    lw_store(ir, task, v, h->sym, h->row, h->col + r0 * h->stride + c0, h->stride ? h->stride : v.cols,
             h->prov);
    return;
  }
  Piece p = {task, v, r0, c0, -1};
  g_array_append_val(h->pieces, p);
}

void lw_hand_get(Ir *ir, LwHand *h, int task, IrView dst, int r0, int c0) {
  if (!h->rf) {
    lw_load(ir, task, dst, h->sym, h->row, h->col + r0 * h->stride + c0,
            h->stride ? h->stride : dst.cols, h->prov);
    return;
  }
  int rep = replica(ir, h, task);
  for (guint i = 0; i < h->pieces->len; i++) {
    const Piece *p = &g_array_index(h->pieces, Piece, i);
    if (p->rep != rep) continue;
    int rlo = MAX(r0, p->r0), rhi = MIN(r0 + dst.rows, p->r0 + p->v.rows);
    int clo = MAX(c0, p->c0), chi = MIN(c0 + dst.cols, p->c0 + p->v.cols);
    if (rlo >= rhi || clo >= chi) continue;
    IrOp *op = ir_emit(ir, p->task, IR_ST);
    op->a = ir_win(p->v.t, p->v.r0 + rlo - p->r0, rhi - rlo, p->v.c0 + clo - p->c0, chi - clo);
    op->mem = ir_win(dst.t, dst.r0 + rlo - r0, rhi - rlo, dst.c0 + clo - c0, chi - clo);
    op->prov = h->prov;
  }
}

/* Relays (plan knob handoff_relays): a producer holds one of its SM's DMA
 * slots for ~30 cycles per ST wgN.x whatever its size, so a row with 17
 * consumers queues ~255 cycles on 2 slots.  Through R relays each producer
 * stores its part R times, and each relay hands the whole row to its share
 * of the consumers (those on its WG, then the others in turn). */
int lw_hand_relay(Ir *ir, LwHand *h, int cols, int after, const int *host, int R, const char *tag,
                  const char *event, int stage, IrRole role, IrProv prov) {
  int grp = ir_group(ir, event);
  LwHand nh;
  lw_hand_init(&nh, TRUE, NULL, 0, 0, 0, prov);
  lw_hand_replicate(ir, &nh, R, host);
  if (h->stats) { /* the statistics go through the same relays */
    lw_hand_add_stats(&nh, h->stats_np, h->stats->prov);
    lw_hand_replicate(ir, nh.stats, R, host);
  }
  for (int r = 0; r < R; r++) {
    g_autofree char *name = g_strdup_printf("%s%d", tag, r);
    int task = lw_task(ir, name, stage, prov, role);
    ir_task_at(ir, task)->pin = host[r];
    ir_task_waits(ir, task, after);
    IrView x = ir_all(ir, lw_rf_sub(ir, task, name, "x", 1, cols));
    lw_hand_get(ir, h, task, x, 0, 0);
    lw_hand_put_rep(ir, &nh, task, x, 0, 0, r);
    if (h->stats) {
      IrView st = ir_all(ir, lw_rf_sub(ir, task, name, "stats", 2, h->stats_np));
      lw_hand_get(ir, h->stats, task, st, 0, 0);
      lw_hand_put_rep(ir, nh.stats, task, st, 0, 0, r);
    }
    ir_task_signals(ir, task, grp);
  }
  lw_hand_clear(h);
  *h = nh;
  return grp;
}
