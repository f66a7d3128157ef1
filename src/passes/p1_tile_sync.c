/* p1_tile_sync.c - P1 stages synchronised per row tile instead of per
 * stage (tile_sync.PROJ; lower.h, LwP1TileSync).
 *
 * By default a stage's tasks wait for the whole previous stage: its group,
 * whose event counts every task of the stage (lower_p1.c, depend).  With
 * tile_sync.PROJ the issuers of resident projection PROJ instead wait, before
 * the first A chunk of row tile t, for the previous stage's tile event
 * `lL_<stage>_t<t>`, which each of that stage's tasks that writes rows of
 * tile t signals once its store of them has completed (a SIG fires only
 * after every earlier instruction of its WG: docs/machine.md section 4).
 * The projection's row tile t then starts as soon as the rows it reads are
 * in scratch, while the previous stage works on later tiles: the two
 * overlap instead of meeting at a barrier.
 *
 * Who signals: a resident projection's finishing owners (K shard 0, one per
 * panel: lw_p1_resident's epilogue, after its `finish` stored the tile) and
 * a LayerNorm task after each tile's rows it stored; for tile_sync.wo each
 * attention task (query_tiles > 1: p1_attention.c) after its part (one
 * head) of each tile it stored, in its folded order, and for
 * attention.tile_sync qkv's owners (p1_att_sync.c).  `per_tile` is how many
 * signals complete a tile, so one WAIT per tile suffices: the events are
 * per tile, never cumulative across tiles, because tiles finish out of
 * order across tasks. */
#include "lower.h"

char *lw_p1_tile_event(int layer, const char *stage, int tile) {
  return g_strdup_printf("l%d_%s_t%d", layer, stage, tile);
}

void lw_p1_tile_signal(Ir *ir, int task, int layer, const char *stage, int tile, IrProv prov) {
  g_autofree char *ev = lw_p1_tile_event(layer, stage, tile);
  lw_sig(ir, task, ev, prov);
}

void lw_p1_tile_wait(Ir *ir, int task, const LwP1TileSync *ts, int tile, IrProv prov) {
  g_autofree char *ev = lw_p1_tile_event(ts->layer, ts->stage, tile);
  lw_wait(ir, task, ev, ts->per_tile, prov);
}
