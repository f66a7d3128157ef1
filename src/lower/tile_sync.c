/* tile_sync.c - P1 tile events (tile_sync.h): a stage's consumers wait per
 * row tile instead of for the whole stage: the projections' issuers
 * (tile_sync.PROJ, first part) and the attention tasks (attention.tile_sync,
 * second part) wait for the same tile events.  P1 only: a D1 step is one
 * row.
 *
 * P1 stages synchronised per row tile instead of per
 * stage (tile_sync.PROJ; tile_sync.h, LwP1TileSync).
 *
 * By default a stage's tasks wait for the whole previous stage: its group,
 * whose event counts every task of the stage (p1.c, depend).  With
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
 * attention task (query_tiles > 1: attention_tiles.c) after its part (one
 * head) of each tile it stored, in its folded order, and for
 * attention.tile_sync qkv's owners (tile_sync.c).  `per_tile` is how many
 * signals complete a tile, so one WAIT per tile suffices: the events are
 * per tile, never cumulative across tiles, because tiles finish out of
 * order across tasks. */
#include "tile_sync.h"

#include "builder.h"
#include "resident_owners.h"

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

/* ---- P1 attention synchronised per q|k|v row tile instead of
 * per qkv stage (attention.tile_sync; tile_sync.h, LwP1AttSync).
 *
 * By default an attention task waits for the whole qkv stage (its group),
 * although a (sequence, head) reads only its sequence's rows of q, k and v,
 * and the qkv owners finish the row tiles in order, one every ~1,000
 * cycles: in plans/best.yaml the attention of sequence 0 could start when
 * qkv is half done.  With attention.tile_sync the qkv stage's owners
 * publish their tile events (`lL_qkv_t<t>`, tile_sync.c: each owner
 * signals tile t once its stores of it have completed) and an attention
 * task waits, before its first load of rows of tile t (a q tile, a K/V
 * block), for that tile's event: lw_p1_att_sync_wait.  Since every owner
 * signals its tiles in order, a complete tile t means that every tile
 * before it is complete too, so a task waits only for tiles beyond the
 * last one it waited for.
 *
 * Placement (lw_p1_att_place): a task waiting per tile gains nothing on a
 * WG whose queue holds a qkv owner or issuer of its layer (it starts when
 * that task ends, with the stage), and it delays the next stage (wo) on a
 * WG of wo's owners (they start, and load their weights, after it).  The
 * tasks of every sequence but the last go round robin to the WGs with no
 * task of the layer's qkv stage that wo's owners do not take (as
 * keep_clear in p1.c); the last sequence's, whose first key block
 * pass needs the sequence's last q tile, the stage's last, go to the qkv
 * stage's WGs, where they start as its tasks end.  Consecutive tasks (a
 * sequence's heads) land on different SMs through the placer's
 * SM-interleaved order.  Without such WGs the tasks are placed as without
 * the knob. */

void lw_p1_att_sync_wait(Ir *ir, const LwP1AttSync *as, int task, int seq, int last_row, int *waited) {
  if (!as || !as->on) return;
  int tile = (seq * as->rows + last_row) / as->R;
  if (tile <= *waited) return;
  *waited = tile;
  LwP1TileSync ts = {"qkv", as->layer, as->per_tile};
  lw_p1_tile_wait(ir, task, &ts, tile, as->prov);
}

/* Is any task of lowering stage `stage` pinned to WG wg? */
static gboolean wg_has_stage(const Ir *ir, int wg, int stage, guint t_end) {
  for (guint k = 0; k < t_end; k++) {
    const IrTask *t = ir_task_at((Ir *)ir, (int)k);
    if (t->pin == wg && t->stage == stage) return TRUE;
  }
  return FALSE;
}

static void add_wg(GArray *wgs, int wg) {
  for (guint x = 0; x < wgs->len; x++)
    if (g_array_index(wgs, int, x) == wg) return;
  g_array_append_val(wgs, wg);
}

gboolean lw_p1_att_place(Ir *ir, const LwP1State *res, guint t0, int qkv_stage, int taken, int last_seq) {
  int n = 0; /* the placer's WGs: lw_p1_free_wg(.., 0, k) cycles through them */
  while (n == 0 || (n < 4096 && lw_p1_free_wg(ir, res, 0, n) != lw_p1_free_wg(ir, res, 0, 0))) n++;
  g_autoptr(GArray) early = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) late = g_array_new(FALSE, FALSE, sizeof(int));
  for (int k = 0; k < n - taken; k++) { /* the WGs the next stage's owners leave free */
    int wg = lw_p1_free_wg(ir, res, taken, k);
    if (!wg_has_stage(ir, wg, qkv_stage, t0)) add_wg(early, wg);
  }
  for (int k = 0; k < n; k++) {
    int wg = lw_p1_free_wg(ir, res, 0, k);
    if (wg_has_stage(ir, wg, qkv_stage, t0)) add_wg(late, wg);
  }
  if (early->len == 0 || late->len == 0) return FALSE;
  int ne = 0, nl = 0;
  for (guint k = t0; k < ir->tasks->len; k++) {
    IrTask *t = ir_task_at(ir, (int)k);
    t->pin = t->role.seq == last_seq ? g_array_index(late, int, nl++ % late->len)
                                     : g_array_index(early, int, ne++ % early->len);
  }
  return TRUE;
}
