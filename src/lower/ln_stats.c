/* ln_stats.c - P1's LayerNorm statistics from the blocks the producers
 * finish (refinements.ln_stats: producer, with refinements.ln_fold; layernorm.h,
 * LwP1LnStatsOut and LwP1LnStatsMerge).
 *
 * With ln_fold alone the statistics tasks (ln_fold_centred.c,
 * lw_p1_ln_stats_rows) load whole rows of x (x1) from HBM to compute each
 * row's mean and rstd: N x d floats per LayerNorm, though the owners that
 * finished those rows (W2's of the layer before for x, Wo's for x1) held
 * them in RF a 32 x P block at a time.  Here each finishing owner, after it
 * stores its block (bias and residual added), reduces it to per-row partial
 * statistics, the block's row sums s_p and sums of squared deviations from
 * the block's row means, M2_p = sum (x - s_p / P)^2 (lw_p1_ln_stats_emit),
 * and stores them as one 2R x 1 tensor with stride 1 (2R contiguous floats,
 * 4 lines for R = 32) into a scratch region nothing else uses then (after
 * rstd in h / h2).  A statistics task loads its rows' 2 np partials
 * transposed, one LD of 2 np x rows (stride R: one line per partial for 16
 * rows), and merges them with Chan et al.'s pairwise formula, all at once
 * (lw_p1_ln_stats_merge):
 *
 *   mean = (sum_p s_p) / d,   M2 = sum_p M2_p + P sum_p (s_p / P - mean)^2
 *
 * then var = M2 / d and rstd as before (lw_ln_rstd_tail).  It is the
 * reference's two-pass statistics up to FP32 rounding: every term is
 * centred (a block's own mean, then the block means' deviations), none is
 * E[x^2] - mu^2.  Layer 0's x is x_in from the host: LN1 of layer 0 keeps
 * loading its rows.
 *
 * The statistics tasks wait as before (the producer's group, or with
 * tile_sync.qkv / .w1 its tile events): the finishing owners store the
 * partials before they signal either. */
#include "layernorm.h"

#include "builder.h"
#include "spacing.h"
#include "vecmath.h"

/* The finishing owner's temporary (rows x P: the block a few rows at a
 * time, LW_P1_STATS_ROWS, since the owners' RF is nearly full: W2's owners
 * on best.yaml have no 4 KiB gap left for a whole R x P block), its 2R x 1
 * [sums; M2s] (one tensor: contiguous in RF and in scratch, so one store
 * of one segment, 4 lines for R = 32; a column of a wider tensor would cost
 * a line request per row) and R x 1 means, made once per task. */
enum { LW_P1_STATS_ROWS = 16 };

static void emit_tensors(Ir *ir, int task, const char *tag, IrView acc, LwP1LnStatsOut *s) {
  if (s->task == task) return;
  s->task = task;
  s->dev = lw_rf_sub(ir, task, tag, "lnsdev", MIN(acc.rows, LW_P1_STATS_ROWS), acc.cols);
  s->sm = lw_rf_sub(ir, task, tag, "lnsm2", 2 * acc.rows, 1);
  s->mean = lw_rf_sub(ir, task, tag, "lnsmean", acc.rows, 1);
}

/* Block (tile t, panel p)'s R sums then its R M2s at scratch col + (t np +
 * p) 2R: row j = 2p + kind of a tile's partials at j R, so that a
 * statistics task loads its rows of all 2 np in one LD of stride R. */
static int part_col(int col, int t, int p, int np, int R) { return col + (t * np + p) * 2 * R; }

void lw_p1_ln_stats_emit(Ir *ir, int task, const char *tag, IrView acc, int tile, int c0, LwP1LnStatsOut *s) {
  int R = acc.rows, P = acc.cols, np = s->d / P, sub = MIN(R, LW_P1_STATS_ROWS);
  IrView none = ir_win(-1, 0, 0, 0, 0);
  emit_tensors(ir, task, tag, acc, s);
  IrView sum = ir_win(s->sm, 0, R, 0, 1), mean = ir_all(ir, s->mean);
  lw_op(ir, task, IR_VRSUM, sum, acc, none, s->prov);
  lw_opi(ir, task, IR_VMULI, mean, sum, 1.0f / (float)P, s->prov);
  for (int r = 0; r < R; r += sub) {
    int n = MIN(sub, R - r);
    IrView dev = ir_win(s->dev, 0, n, 0, P), a = ir_win(acc.t, acc.r0 + r, n, acc.c0, P);
    lw_op(ir, task, IR_VSUB, dev, a, ir_win(s->mean, r, n, 0, 1), s->prov);
    lw_op(ir, task, IR_VMUL, dev, dev, dev, s->prov);
    lw_op(ir, task, IR_VRSUM, ir_win(s->sm, R + r, n, 0, 1), dev, none, s->prov);
  }
  lw_store(ir, task, ir_all(ir, s->sm), "scratch", 0, part_col(s->col, tile, c0 / P, np, R), 1, s->prov);
}

/* dst (1 x C) = the sum of rows first, first + step, ... (n of them) of src, in order. */
static void rows_sum(Ir *ir, int task, IrView dst, int src, int first, int step, int n, int C, IrProv prov) {
  IrView r0 = ir_win(src, first, 1, 0, C);
  if (n == 1) {
    lw_opi(ir, task, IR_VCOPY, dst, r0, 0, prov);
    return;
  }
  lw_op(ir, task, IR_VADD, dst, r0, ir_win(src, first + step, 1, 0, C), prov);
  for (int k = 2; k < n; k++) lw_op(ir, task, IR_VADD, dst, dst, ir_win(src, first + k * step, 1, 0, C), prov);
}

void lw_p1_ln_stats_merge(Ir *ir, int task, const char *tag, const LwP1LnStatsMerge *m, IrProv prov) {
  int rows = m->rows, np = m->np, n = m->d / np, t = m->row0 / m->R, r0 = m->row0 % m->R;
  /* the rows' partials transposed: row 2p their sums from block p, row 2p + 1 their M2s */
  int parts = lw_rf_sub(ir, task, tag, "lnparts", 2 * np, rows);
  int dm = lw_rf_sub(ir, task, tag, "lndm", np, rows);
  IrView mean = ir_all(ir, lw_rf_sub(ir, task, tag, "mean", 1, rows));
  IrView var = ir_all(ir, lw_rf_sub(ir, task, tag, "rstd", 1, rows));
  IrView w = ir_all(ir, lw_rf_sub(ir, task, tag, "lnw", 1, rows));
  lw_load(ir, task, ir_all(ir, parts), "scratch", 0, part_col(m->src_col, t, 0, np, m->R) + r0, m->R, prov);
  rows_sum(ir, task, mean, parts, 0, 2, np, rows, prov);
  lw_opi(ir, task, IR_VMULI, mean, mean, 1.0f / (float)m->d, prov);
  for (int p = 0; p < np; p++) { /* (s_p / n - mean)^2 */
    IrView d = ir_win(dm, p, 1, 0, rows);
    lw_opi(ir, task, IR_VMULI, d, ir_win(parts, 2 * p, 1, 0, rows), 1.0f / (float)n, prov);
    lw_op(ir, task, IR_VSUB, d, d, mean, prov);
  }
  IrView dmv = ir_all(ir, dm);
  lw_op(ir, task, IR_VMUL, dmv, dmv, dmv, prov);
  rows_sum(ir, task, var, dm, 0, 1, np, rows, prov);
  lw_opi(ir, task, IR_VMULI, var, var, (float)n, prov);
  rows_sum(ir, task, w, parts, 1, 2, np, rows, prov);
  lw_op(ir, task, IR_VADD, var, var, w, prov);
  lw_ln_rstd_tail(ir, task, var, m->d, prov);
  lw_space(ir, task);
  lw_store(ir, task, var, "scratch", 0, m->dst_col + m->row0, rows, prov);
}

gboolean lw_p1_ln_stats_room(Ir *ir, const char *proj, const int *used, int n, int buf, GError **err) {
  char knob[32];
  g_snprintf(knob, sizeof knob, "k_split.%s", proj);
  for (int k = 0; k < n; k++)
    if (used[k] == buf) {
      ir_error(ir, err, ir_prov(ir, knob),
               "%s=%d: without multicast.%s its K shards' partial sums go through the scratch buffer where "
               "refinements.ln_stats: producer keeps the next LayerNorm's partial statistics: set "
               "multicast.%s or a smaller k_split.%s", knob, n + 1, proj, proj, proj);
      return FALSE;
    }
  return TRUE;
}

gboolean lw_p1_ln_stats_producer(const Schedule *pp, SchedProj next) {
  switch (pp->ln_stats) {
  case LN_STATS_PRODUCER: return next == PROJ_QKV || next == PROJ_W1;
  case LN_STATS_PRODUCER_LN1: return next == PROJ_QKV;
  case LN_STATS_PRODUCER_LN2: return next == PROJ_W1;
  default: return FALSE;
  }
}
