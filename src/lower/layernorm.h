/* layernorm.h - LayerNorm folded into the projection that follows it, and
 * its statistics: D1's fold with a mean correction (ln_fold_mean.c), P1's
 * fold by centred weights (ln_fold_centred.c), P1's statistics from the
 * producers' blocks (ln_stats.c). */
#ifndef TCC_LOWER_LAYERNORM_H
#define TCC_LOWER_LAYERNORM_H

#include "resident.h"
#include "tile_sync.h"

/* acc (1 x P) = LN(x) . W + c for a resident panel (unsplit) with the
 * LayerNorm folded into the projection (ln_fold_mean.c, refinements.ln_fold):
 * the task must be pinned to the panel's WG. */
/* `first` (refinements.first_token, the first step): the task makes gW and
 * bW + c itself, in one MMA with x*g, and keeps them for the later steps. */
void lw_ln_project_folded(Ir *ir, int task, const char *tag, IrView x, LwResident *r, int l,
                          SchedProj j, int p, const char *gsym, const char *bsym, IrView acc,
                          gboolean first, IrView stats, IrProv prov);
/* refinements.split_stats: st (2 x 1) = the sum and M2 (sum of squared
 * deviations from its own mean) of the row piece v (1 x n), for the
 * consumers to merge (lw_ln_project_folded's `stats`). */
void lw_row_stats(Ir *ir, int task, const char *tag, IrView v, IrView st, IrProv prov);

/* P1 refinements.ln_fold (ln_fold_centred.c): LayerNorm folded into the
 * resident projection that follows it (qkv, w1).  The owners multiply the
 * raw rows x by W'' = (I - 11^T/K) diag(g) W, folded once per layer from
 * the LN gain g (gsym) and bias b (bsym), and finish a tile with
 * acc * rstd + (bW + c), rstd (R x 1) loaded from rstd_sym at rstd_col +
 * row (stride 1) once the statistics tasks have signalled the tile
 * (stats: their tile events). */
typedef struct LwP1LnFold {
  const char *gsym, *bsym, *rstd_sym;
  int rstd_col;
  LwP1TileSync stats;
  IrProv prov;            /* "refinements.ln_fold"                          */
  SchedProj proj;         /* the projection folded into (qkv, w1): its
                           * ln_fold_stagger / ln_fold_slots pace the folds */
} LwP1LnFold;
/* A statistics task's rows (the LayerNorm stage with ln_fold): rows
 * row0 .. row0 + rows of src (width d, from column src_col; base cites the
 * load), sub at a time: each sub-tile's rstd (1 float a row) stored at
 * scratch column dst_col + row. */
typedef struct LwP1LnStatsRows {
  const char *src;
  int src_col, row0, rows, sub, d, dst_col;
  IrProv base;
  gboolean packed; /* src in 32 x 32 blocks (LwMat: src_col, d) */
} LwP1LnStatsRows;
void lw_p1_ln_stats_rows(Ir *ir, int task, const char *tag, const LwP1LnStatsRows *r, IrProv prov);
/* Owner `task`'s panel w (K x P, unsplit) and bias (1 x P) folded in place
 * (bias += b.W, w = centred diag(g) W): start (owner: its index in the
 * stage, which staggers the folds; loads g and b), then piece (the MMA of
 * [b; g] by rows k0.. of w), then end. */
typedef struct LwP1Folding {
  IrView gcol, bg, bgw;   /* g as a column (K x 1), [b; g], [b W; g W]       */
} LwP1Folding;
LwP1Folding lw_p1_ln_fold_start(Ir *ir, int task, const char *tag, IrView w, int owner, const LwP1LnFold *f);
void lw_p1_ln_fold_piece(Ir *ir, int task, const LwP1Folding *fd, IrView w, int k0, int rows, const LwP1LnFold *f);
void lw_p1_ln_fold_end(Ir *ir, int task, const LwP1Folding *fd, IrView w, IrView bias, const LwP1LnFold *f);
/* acc = acc * rstd + bias for row tile t of R rows (rstd: an R x 1 tensor
 * of the task), after the statistics of the tile. */
/* ln_fold_first_gap: cycles between the first resident stage's weight
 * pieces when it folds (resident_owners.c's owners, which have no stage before
 * to pace them); *prov cites the knob. */
int64_t lw_p1_ln_fold_first_gap(const Ir *ir, IrProv *prov);
void lw_p1_ln_fold_finish(Ir *ir, int task, IrView acc, IrView rstd, IrView bias, int t, const LwP1LnFold *f);

/* P1 refinements.ln_stats: producer (ln_stats.c): the LayerNorm
 * statistics from the producers' finished blocks.  Out: what a finishing
 * owner (wo, w2) stores per R x P block: its rows' sums and M2s, R floats
 * each, from scratch column col (task and the tensors: made once per owner
 * task; start task at -1). */
typedef struct LwP1LnStatsOut {
  int col, d;
  IrProv prov;            /* "refinements.ln_stats"                         */
  int task, dev, sm, mean;
} LwP1LnStatsOut;
void lw_p1_ln_stats_emit(Ir *ir, int task, const char *tag, IrView acc, int tile, int c0, LwP1LnStatsOut *s);
/* A statistics task's rows row0 .. row0 + rows (inside one row tile of R
 * rows): its np blocks' partials from src_col (as Out stored them), merged
 * into rstd, stored at scratch column dst_col + row0 (1 float a row). */
typedef struct LwP1LnStatsMerge {
  int src_col, row0, rows, R, np, d, dst_col;
} LwP1LnStatsMerge;
void lw_p1_ln_stats_merge(Ir *ir, int task, const char *tag, const LwP1LnStatsMerge *m, IrProv prov);
/* FALSE (an error at k_split.PROJ) when one of the n scratch buffers
 * `used` (projection proj's n + 1 K shards' partial sums) is buf, the
 * buffer the statistics go to. */
gboolean lw_p1_ln_stats_room(Ir *ir, const char *proj, const int *used, int n, int buf, GError **err);
/* Does the LayerNorm before `next` (qkv: LN1, w1: LN2) take its statistics
 * from the producers (refinements.ln_stats)? */
gboolean lw_p1_ln_stats_producer(const Schedule *pp, SchedProj next);

#endif
