/* fanout.h - P1's forwarding chains of W2's owners and their flow
 * control per hop (fanout.c). */
#ifndef TCC_LOWER_FANOUT_H
#define TCC_LOWER_FANOUT_H

#include "ir.h"

/* fanout.c (handoff_fanout): the forwarding chains of a resident stage's
 * n owners of one K shard whose A comes LW_P1_FROM_STAGE (wgs[i]: owner i's
 * WG): fanout (0 or more than n: n) chains of owners by SM; next[i] is the
 * owner i forwards to (-1: none), head[0 .. F-1] the chains' first owners.
 * Returns F. */
int lw_p1_fanout_chains(const Ir *ir, int fanout, const int *wgs, int n, int *next, int *head);
/* fanout.c (handoff_hop_flow): owner o's own free event of buffer b,
 * [o * nb + b], named lL_STAGE_kS_pP_freeB (o = S * np + P); g_free it. */
int *lw_p1_hop_flow_events(Ir *ir, int layer, const char *stage, int owners, int np, int nb);
/* Before a store of chunk c (buffer c % nb) into `owner`'s buffer: WAIT
 * until the owner has freed the buffer's c / nb earlier uses (none for the
 * first). */
void lw_p1_hop_flow_wait(Ir *ir, int task, const int *ofree, int owner, int nb, int c, IrProv prov);

#endif
