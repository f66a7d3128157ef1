/* handoff.h - a matrix handed from one stage's tasks to the next's
 * (handoff.c): through HBM scratch or RF to RF, replicated, relayed. */
#ifndef TCC_LOWER_HANDOFF_H
#define TCC_LOWER_HANDOFF_H

#include "ir.h"

/* A matrix handed from one stage's tasks to the next's (handoff.c): through
 * HBM (rf FALSE: the producer stores each part as it is put, the consumer
 * loads what it gets) or from RF to RF (rf TRUE: when a consumer gets a
 * window, every producer part that meets it gets an `ST wgN.x` of the
 * overlap into the consumer's tensor).  Element (r, c) of the matrix lives
 * in HBM at float (row, col + r * stride + c) of `sym`, moved with row
 * stride `stride` (0: a one-row matrix, moved with the transfer's width). */
typedef struct LwHand {
  gboolean rf;
  const char *sym;
  int row, col, stride;
  IrProv prov;
  GArray *pieces;   /* rf: the parts put so far */
  /* replicated (lw_hand_replicate): nrep copies of the matrix, each put with
   * its replica number; a consumer gets from one, by its WG (rep_of) */
  int nrep, cursor;
  int *rep_of;      /* per WG: its replica, -1 until its first get          */
  /* refinements.split_stats: the companion hand-off of the row's partial
   * LayerNorm statistics, a 2 x np matrix (sums; M2s) whose column k comes
   * from the producer of columns [k d/np, (k+1) d/np); owned (lw_hand_clear) */
  struct LwHand *stats;
  int stats_np;
} LwHand;
void lw_hand_init(LwHand *h, gboolean rf, const char *sym, int row, int col, int stride, IrProv prov);
/* The producer `task` made v, elements (r0.., c0..) of the matrix. */
void lw_hand_put(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0);
/* The consumer `task` needs elements (r0.., c0..) in dst (rf: every part
 * must have been put before). */
void lw_hand_get(Ir *ir, LwHand *h, int task, IrView dst, int r0, int c0);
void lw_hand_clear(LwHand *h);
/* Give rf hand-off h (a 1 x d row) a companion hand-off of the partial
 * statistics of its np equal pieces (refinements.split_stats). */
void lw_hand_add_stats(LwHand *h, int np, IrProv prov);
/* Make h a replicated hand-off of nrep copies; host[r] is the WG holding
 * replica r (a consumer on that WG takes it; the others take turns). */
void lw_hand_replicate(Ir *ir, LwHand *h, int nrep, const int *host);
/* lw_hand_put of replica rep of a replicated hand-off. */
void lw_hand_put_rep(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0, int rep);
/* Relay the 1 x cols row of rf hand-off h (every part put) through R tasks
 * "<tag>0".."<tag>R-1" pinned to host[0..R-1], which wait for group
 * `after`: each takes the whole row and hands on a copy; h becomes the
 * replicated hand-off of the copies.  Returns the relays' group (event
 * `event`), for the consumers to wait for. */
int lw_hand_relay(Ir *ir, LwHand *h, int cols, int after, const int *host, int R, const char *tag,
                  const char *event, int stage, IrRole role, IrProv prov);

#endif
