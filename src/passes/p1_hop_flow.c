/* p1_hop_flow.c - P1 handoff_hop_flow: flow control per hop along
 * handoff_fanout's chains of W2 owners (p1_fanout.c, p1_resident.c).
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
 * This module names the events and emits the waits; p1_resident.c calls it
 * where the stores and the `SIG free` are. */
#include "lower.h"

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
