/* p1_fanout.c - P1 handoff_fanout: W1's GELU blocks forwarded along chains
 * of W2's owners (handoff: rf; p1_handoff.c, p1_resident.c).
 *
 * With `handoff: rf` each W1 owner's 32 x 32 block of a row tile goes to
 * the 8 W2 owners of the K shard that multiplies it: 8 `ST wgN` of 4 KiB,
 * one after another on the W1 owner's SM's DMA slots and out-link.  The W1
 * owner's next `SIG free` (its h2 chunk ring) fires only once those stores
 * have completed, so at most chunks the ring stops for about 550 cycles and
 * W1 + W2 run bound by latency at about 10 W (docs/techniques.md, "W1 and
 * W2: what bounds them").
 *
 * With handoff_fanout F (1 .. W2's panels) the W1 owner stores its block
 * into F W2 owners only, each the head of a chain: a W2 owner that has the
 * block (its WAIT for its own `full` event passes) stores it into the next
 * owner of its chain and SIGs that owner's `full`, before it multiplies.
 * Each W2 owner of a shard has its own `full` events (one per A buffer).
 * The W1 owner waits, as before, until every owner of the shard has freed
 * the buffer, so a forward never finds its target buffer in use; the chain
 * of events (free -> W1's WAIT -> SIG -> WAIT -> ST) orders every write
 * after the read it replaces.  The stores spread over the SMs of the
 * chain, and a hop between two owners on one SM crosses no NoC link
 * (docs/machine.md), so the chains follow the owners' SMs: a shard's owners
 * sorted by SM (stably), cut into F runs of consecutive owners (the first
 * W2 mod F runs one longer).
 *
 * This module decides the chains; p1_resident.c emits the stores. */
#include "lower.h"

int lw_p1_fanout_chains(const Ir *ir, int fanout, const int *wgs, int n, int *next, int *head) {
  int F = fanout <= 0 || fanout > n ? n : fanout;
  int *ord = g_new(int, n);
  lw_order_by_sm(ir, wgs, n, ord); /* shard_group.c */
  for (int c = 0, i = 0; c < F; c++) {
    int len = n / F + (c < n % F);
    head[c] = ord[i];
    for (int k = 0; k < len; k++, i++) next[ord[i]] = k + 1 < len ? ord[i + 1] : -1;
  }
  g_free(ord);
  return F;
}
