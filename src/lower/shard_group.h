/* shard_group.h - a P1 resident stage's owners ordered by SM
 * (shard_group.c). */
#ifndef TCC_LOWER_SHARD_GROUP_H
#define TCC_LOWER_SHARD_GROUP_H

#include "ir.h"

/* shard_group.c: ord[0 .. n-1] = 0 .. n-1 sorted stably by the SM of
 * wgs[i] (n at most a machine's WGs): the order of owners by SM that
 * shard_group.PROJ and handoff_fanout's chains (fanout.c) both use. */
void lw_order_by_sm(const Ir *ir, const int *wgs, int n, int *ord);
/* shard_group.c: with shard_group.PROJ, give a resident stage's owners
 * (o = shard * panels + panel) the WGs `wgs` sorted by SM, so that a K
 * shard's owners share SMs; nothing otherwise. */
void lw_shard_group(const Ir *ir, SchedProj proj, int *wgs, int owners);

#endif
