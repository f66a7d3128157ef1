/* shard_group.c - P1: a resident stage's K shards placed by SM
 * (shard_group.PROJ; resident_owners.c).
 *
 * A resident stage's owners take the WGs of the placer's SM-interleaved
 * order one after another (resident_owners.c, make_owners), so consecutive
 * owners, the panels of one K shard, sit on different SMs and every SM holds
 * owners of several shards.  An issuer's LD.mc of a shard's A chunk crosses
 * the NoC in-link of every SM that holds an owner of the shard, once per SM
 * (docs/machine.md: LD.mc), so an SM's in-link carries the chunks of every
 * shard it holds.  On plans/best.yaml's P1, W2 (4 K shards of 8 owners)
 * has two owners per SM of two different shards: each in-link carries half
 * of g, 16,384 cycles a layer at 64 bytes a cycle, and the in-links are 95%
 * busy for W2's 19,500 cycles.
 *
 * With shard_group.PROJ the stage keeps the same set of WGs (nothing else
 * moves) but gives them out by SM: the WGs sorted by SM (stably, so by
 * order within an SM), shard 0's owners first.  A shard's owners then fill
 * whole SMs' worth of the stage's WGs before the next shard begins, and an
 * SM holds the owners of one shard where the stage's WGs per SM divide a
 * shard's owners (best.yaml's W2: 2 WGs per SM, 8 owners a shard: each
 * shard on 4 SMs).  The lowering asks where owner o goes; this module
 * decides. */
#include "shard_group.h"

void lw_order_by_sm(const Ir *ir, const int *wgs, int n, int *ord) {
  int W = ir->hw.wgs_per_sm;
  for (int i = 0; i < n; i++) ord[i] = i;
  for (int i = 1; i < n; i++) /* insertion sort: stable, n is at most 64 or so */
    for (int j = i; j > 0 && wgs[ord[j - 1]] / W > wgs[ord[j]] / W; j--) {
      int x = ord[j];
      ord[j] = ord[j - 1], ord[j - 1] = x;
    }
}

void lw_shard_group(const Ir *ir, SchedProj proj, int *wgs, int owners) {
  if (!ir->sched.shard_group[proj]) return;
  int *ord = g_new(int, owners), *was = g_memdup2(wgs, sizeof(int) * (gsize)owners);
  lw_order_by_sm(ir, was, owners, ord);
  for (int i = 0; i < owners; i++) wgs[i] = was[ord[i]];
  g_free(ord);
  g_free(was);
}
