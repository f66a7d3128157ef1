/* fanout.c - how W1's GELU blocks reach W2's owners along chains (fanout.h):
 * the chains (handoff_fanout, first part) and their flow control per hop
 * (handoff_hop_flow, second part).  P1 only: D1 has no owner stages.
 *
 * handoff_fanout: W1's GELU blocks forwarded along chains
 * of W2's owners (handoff: rf; ffn_rf.c, resident_owners.c).
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
 * This module decides the chains; resident_owners.c emits the stores. */
#include "fanout.h"

#include "shard_group.h"

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

/* ---- handoff_hop_flow: flow control per hop along
 * handoff_fanout's chains of W2 owners (fanout.c, resident_owners.c).
 *
 * With handoff_fanout alone, a W1 owner stores its block into buffer b of
 * its chains' heads only once every W2 owner of the shard has freed b (one
 * `free` event per buffer of the shard, counted np times a use): the
 * forwards then never find their target in use, but the whole chain is one
 * ring of 4 buffers.  The block must travel to the chain's last owner and
 * be multiplied there before the W1 owner of the block 4 later may store,
 * so W1's owners wait for W2's buffers, their h2 chunks wait for them, and
 * the FFN runs bound by that latency (tcc-sim --profile's waits:
 * ev.l0_w1_k0_full* and ev.l0_w2_kS_free*; docs/techniques.md).
 *
 * With handoff_hop_flow each W2 owner signals its own `free` event per
 * buffer (lS_w2_kK_pP_freeB) after its MMA, and every store into an owner's
 * buffer waits for that owner's event only: the W1 owner for its heads, a
 * forwarding owner for the next one of its chain (use u of buffer b waits
 * for u earlier frees).  Each hop then has its own 4 buffers, the chain is
 * a pipeline, and a late owner holds back only those before it.  The
 * owner's `SIG` after its MMA also follows its forward of the same buffer
 * (a SIG fires once every earlier instruction of its WG has completed), so
 * every write is ordered after the reads it replaces.  The events cost no
 * transfer; the W2 owners' stores wait a little more often.
 *
 * This module names the events and emits the waits; resident_owners.c calls it
 * where the stores and the `SIG free` are. */

int *lw_p1_hop_flow_events(Ir *ir, int layer, const char *stage, int owners, int np, int nb) {
  int *ev = g_new(int, (gsize)owners * nb);
  for (int o = 0; o < owners; o++)
    for (int b = 0; b < nb; b++) {
      g_autofree char *name = g_strdup_printf("l%d_%s_k%d_p%d_free%d", layer, stage, o / np, o % np, b);
      ev[o * nb + b] = ir_event(ir, name);
    }
  return ev;
}

void lw_p1_hop_flow_wait(Ir *ir, int task, const int *ofree, int owner, int nb, int c, IrProv prov) {
  if (c < nb) return; /* the first use of each buffer: the owner's `ready` */
  IrOp *op = ir_emit(ir, task, IR_WAIT);
  op->event = ofree[owner * nb + c % nb], op->n = c / nb, op->prov = prov;
}
