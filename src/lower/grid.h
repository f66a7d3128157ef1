/* grid.h - P1 projections with streamed weights as grids of
 * accumulators (grid.c). */
#ifndef TCC_LOWER_GRID_H
#define TCC_LOWER_GRID_H

#include "project.h"
#include "resident_owners.h"

/* P1 rf_grid.* with streamed weights (grid.c): each task computes a
 * rows x cols grid of (row tile x panel) accumulators, per K round loading
 * rows A chunks and cols W chunks for rows x cols MMAs (double-buffered when
 * two sets fit the RF), K split over k_split tasks whose partial sums go
 * through scratch (part_col, part_room floats dead in the stage) to shard
 * 0, which adds the bias and calls `finish` per accumulator. */
typedef struct LwP1Grid {
  const char *name;       /* the projection: "qkv", "wo", "w1", "w2"        */
  int layer, stage;
  IrRole role;            /* kind, layer and proj (tile, panel set per task) */
  const LwProj *pj;       /* panel width P, k_chunk                         */
  int K, N, tiles, R;     /* reduction, output columns, row tiles of R rows */
  int rows, cols, shards; /* rf_grid.rows, rf_grid.cols, rf_grid.k_split   */
  LwSource a;             /* A: sym, col, stride (packed: LwMat)            */
  const char *wsym, *bsym;
  int part_col;           /* scratch float offset of the partial sums       */
  int64_t part_room;      /* floats of scratch free from part_col on        */
  int extra;              /* R x P tensors `finish` keeps (GELU, residual)  */
  int after, grp;         /* the group waited for (-1: none) and completed  */
  LwTileFinish finish;
  void *ctx;
  IrProv prov, kprov;     /* the tasks' knob (rf_grid.rows), k_chunk's      */
  int mc_set;             /* rf_grid.multicast: the WGs placement deals the */
                          /* tasks to, a round of them (0: plain loads)     */
  int mc_wave;            /* the most tasks a wave takes: the SMs used x    */
                          /* rf_grid.wave_wgs (at most an SM's WGs)         */
  int finish_transfers;   /* HBM transfers per accumulator's finish         */
  IrProv mc_prov;
  IrProv wave_prov;       /* rf_grid.wave_wgs: a task's turn in its wave    */
} LwP1Grid;
/* FALSE with an error at the rf_grid knob the stage cannot satisfy. */
gboolean lw_p1_grid_check(Ir *ir, const LwP1Grid *g, GError **err);
/* The buffer sets a task gets: 2 when they fit the RF, else 1. */
int lw_p1_grid_buffers(const Ir *ir, const LwP1Grid *g);
gboolean lw_p1_grid_stage(Ir *ir, const LwP1Grid *g, GError **err);

#endif
