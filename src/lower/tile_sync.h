/* tile_sync.h - P1 stages synchronised per row tile (tile_sync.c): the
 * tile events, and the attention tasks' wait per q|k|v row tile. */
#ifndef TCC_LOWER_TILE_SYNC_H
#define TCC_LOWER_TILE_SYNC_H

#include "ir.h"

typedef struct LwP1State LwP1State; /* resident_owners.h */

/* P1 stages synchronised per row tile (tile_sync.c, tile_sync.PROJ):
 * the tile events of a stage, `lL_<stage>_t<t>`, each complete after
 * per_tile signals (stage NULL: none, wait for the stage's group). */
typedef struct LwP1TileSync {
  const char *stage;
  int layer, per_tile;
} LwP1TileSync;
char *lw_p1_tile_event(int layer, const char *stage, int tile);
void lw_p1_tile_signal(Ir *ir, int task, int layer, const char *stage, int tile, IrProv prov);
void lw_p1_tile_wait(Ir *ir, int task, const LwP1TileSync *ts, int tile, IrProv prov);

/* attention.tile_sync (tile_sync.c): an attention task waits per q|k|v
 * row tile (the qkv owners' tile events, per_tile signals each: one per
 * qkv panel) instead of for the qkv stage.  lw_p1_att_sync_wait: in task,
 * before its first load of row last_row (0-based in the sequence) of
 * sequence seq: wait for that row's tile unless *waited (the last tile
 * waited for, -1 at first) is already as far.  lw_p1_att_place: pin the
 * tasks made since t0: those of sequence last_seq to the WGs of lowering
 * stage qkv_stage, the others to WGs with no task of it, not among the next
 * stage's `taken` owners' WGs; FALSE (no pins) when either set is empty. */
typedef struct LwP1AttSync {
  gboolean on;
  int layer, rows, R, per_tile;
  IrProv prov;             /* "attention.tile_sync"                        */
} LwP1AttSync;
void lw_p1_att_sync_wait(Ir *ir, const LwP1AttSync *as, int task, int seq, int last_row, int *waited);
gboolean lw_p1_att_place(Ir *ir, const LwP1State *res, guint t0, int qkv_stage, int taken, int last_seq);

#endif
