/* p1_att_wo.c - P1 `attention.handoff: rf`: attention's output goes RF to
 * RF into wo's owners (lower.h, lw_p1_att_wo_rf).
 *
 * By default each attention task stores its o tiles (R x 32 of one head)
 * to HBM scratch (att, packed in 32 x 32 blocks) and wo's issuers LD.mc
 * them, chunk by chunk, into the A buffers of the owners of the chunk's K
 * shard: N x d x 4 bytes written and read again a layer (16,384 HBM lines
 * on P1's default shape, ~36 uJ), and a tile reaches wo only after its
 * store has completed and the issuer's load has too.  Here wo is a
 * resident stage whose A comes LW_P1_FROM_STAGE (p1_resident.c), as W2's
 * with `handoff: rf`: an attention task, once a tile's o is final,
 * lw_p1_resident_feed()s it: WAIT until the owners of head h's K shard
 * have started (the first round) or freed the buffer of chunk (tile,
 * head), `ST wgN.a<b>` into it on each of them, SIG it full.  One head of
 * one row tile is exactly one A chunk, so k_chunk.wo must be the head
 * width (32); wo has no issuers, so its owners' WGs are the only ones it
 * takes.
 *
 * Liveness: an attention task may wait, before putting a tile, for wo to
 * have consumed the tile before it of the same head, which needs the
 * chunks of every head of earlier tiles, put by other attention tasks.
 * Those must all be running: every attention task of the layer gets a WG
 * of its own (checked after placement; error at attention.handoff when the
 * tasks outnumber the WGs), and nothing it waits for is queued behind an
 * attention task, since wo's owners are on other WGs and started before. */
#include "lower.h"

typedef struct AttWo {
  Ir *ir;
  LwP1Res *wo;
  IrProv prov;
} AttWo;

static void deliver(void *ctx, int task, int tile, int col, IrView o) {
  AttWo *aw = ctx;
  lw_p1_resident_feed(aw->ir, aw->wo, task, tile, col, o, aw->prov);
}

/* Is every task from t0 on pinned to a WG of its own? */
static gboolean own_wgs(Ir *ir, guint t0, int *dup) {
  for (guint a = t0; a < ir->tasks->len; a++)
    for (guint b = t0; b < a; b++)
      if (ir_task_at(ir, (int)a)->pin == ir_task_at(ir, (int)b)->pin) {
        *dup = ir_task_at(ir, (int)a)->pin;
        return FALSE;
      }
  return TRUE;
}

gboolean lw_p1_att_wo_rf(Ir *ir, LwP1State *state, LwP1Attention *at, const LwP1Resident *wo,
                         void (*place)(void *ctx, guint t0), void *place_ctx, IrProv prov, GError **err) {
  if (!wo->multicast || wo->from != LW_P1_FROM_ISSUERS) {
    ir_error(ir, err, prov,
             "attention.handoff: rf puts attention's tiles into wo's owners' A buffers: it needs multicast.wo "
             "true and wo's chunks not merged by multicast.pass");
    return FALSE;
  }
  if (wo->wait_tiles.stage || at->publish_tiles) {
    ir_error(ir, err, wo->sync_prov,
             "tile_sync.wo: with attention.handoff: rf the attention tasks feed wo's owners themselves, "
             "tile by tile; drop tile_sync.wo");
    return FALSE;
  }
  int kc = MIN(wo->pj->k_chunk, wo->K / wo->shards);
  if (kc != WL_HEAD_DIM || at->R != wo->R) {
    ir_error(ir, err, ir_prov(ir, "k_chunk.wo"),
             "k_chunk.wo=%d: with attention.handoff: rf one head's tile is one wo A chunk, so k_chunk.wo "
             "must be the head width (%d)",
             wo->pj->k_chunk, WL_HEAD_DIM);
    return FALSE;
  }
  /* wo takes the tiles in the order the attention tasks finish them: all
   * at the end of their tasks, one round of first tiles, then of second
   * ones; in row order, every round would wait for the one before */
  g_autofree int *order = g_new(int, wo->tiles);
  lw_p1_attention_tile_order(at, order);
  LwP1Resident b = *wo;
  b.from = LW_P1_FROM_STAGE, b.tile_order = order;
  LwP1Res *r = lw_p1_resident_open(ir, state, &b, 0, err);
  if (!r) return FALSE;
  AttWo aw = {ir, r, prov};
  at->deliver = deliver, at->deliver_ctx = &aw;
  guint t0 = ir->tasks->len;
  gboolean ok = lw_p1_attention_stage(ir, at, err);
  at->deliver = NULL, at->deliver_ctx = NULL;
  if (ok) {
    place(place_ctx, t0);
    int dup = -1;
    if (!own_wgs(ir, t0, &dup)) {
      ir_error(ir, err, prov,
               "attention.handoff: rf needs a WG for each of the layer's %u attention tasks (they wait for "
               "each other's tiles through wo), but wg%d has two: raise attention.query_tiles or use more SMs",
               ir->tasks->len - t0, dup);
      ok = FALSE;
    }
  }
  if (ok) lw_p1_resident_build(r, state);
  lw_p1_resident_close(r, state);
  return ok;
}
