/* ln_fold_centred.c - P1's LayerNorms folded into the resident projections that
 * read them (refinements.ln_fold in the p1 section; layernorm.h, LwP1LnFold).
 *
 * Without it, LN1 and LN2 are stages of their own: they read x (x1), store
 * h = (x - mu) * rstd * g + b (h2) to scratch, and qkv (W1) waits for them
 * and reads h back.  With it, for a row x of K values, gain g and bias b,
 * and a panel W with bias c:
 *
 *   LN(x) W + c = (x - mu 1) diag(g) W * rstd + (b W + c)
 *               = (x W'') * rstd + (b W + c),  W'' = (I - 11^T / K) diag(g) W
 *
 * since every column of W'' sums to zero, x W'' = (x - mu 1) diag(g) W: the
 * mean needs no correction of its own.  Each owner folds its resident panel
 * once per layer, after its weights are in (lw_p1_ln_fold_piece: [b W; g W]
 * = [b; g] . W, one MMA; lw_p1_ln_fold_end: W'' = W * g (a column) - g W / K
 * (a row), one VEC.fma); its A chunks are the raw rows x that the stage
 * before stored (or x_in), and each finished tile takes one VEC.fma
 * instead of the bias add (lw_p1_ln_fold_finish).
 *
 * The per-row rstd comes from the statistics tasks that replace the
 * LayerNorm stage (p1.c): they read x as LayerNorm did but store only
 * rstd (R x 1 per tile, into the h / h2 scratch buffer, which nothing else
 * uses then) and signal each row tile's event lL_ln1_tT (ln2).  Nothing
 * waits for them as a stage: the projection's issuers start on x once x's
 * producer is done, and each owner waits for tile t's event only in tile
 * t's epilogue, just before it loads that tile's rstd.  h, h2, their stores
 * and loads, and the LayerNorm barriers are gone; the statistics run beside
 * the projection's MMAs.  With tile_sync.qkv / .w1 (p1.c) the issuers
 * and the statistics tasks wait per row tile for x's producer instead (the
 * previous layer's W2, Wo), whose finishing owners then signal their tiles.
 *
 * Precision: the statistics are the reference's two-pass ones (mean, then
 * the mean of squared deviations), not E[x^2] - mu^2.  x W'' sums
 * uncentred products whose total is centred: the rounding error grows with
 * |mu| / sigma of a row, small for the residual stream (measured: all four
 * seeds' max abs error, docs/techniques.md).
 *
 * Not D1's fold (ln_fold_mean.c): D1 multiplies x*g and subtracts mu gW
 * after the MMA, one row a step; here the weights are centred once per
 * layer, so a tile needs no mean at all and takes its rstd from the
 * statistics tasks.  Different ops, different rounding: two modules. */
#include "layernorm.h"

#include "builder.h"
#include "spacing.h"
#include "tile_sync.h"
#include "vecmath.h"

/* The folds' pacing (plan knobs, their defaults the constants measured on
 * best.yaml of the default machine).  A stage's owners get their last
 * weight piece within about 1,000 cycles of each other (paced by the end
 * of the stage before), so their folds (8 MMA blocks and 48 HBM lines
 * each) would all fall into one window: owner o starts its fold
 * (o mod ln_fold_slots.PROJ) x ln_fold_stagger.PROJ cycles late (4 x 100:
 * P1 on that best.yaml with ln_fold 20.33 W -> 19.79 W, +0.07% cycles; 150
 * cycles: slower, 125: 20.68 W elsewhere).  The first stage (layer 0's
 * qkv), which has no stage before to pace its weight pieces, spaces them
 * ln_fold_first_gap cycles apart (400: beside only the statistics tasks,
 * which store no h; without the fold resident_owners.c's 800).  The WAITTs cite
 * their knob. */
static int64_t fold_delay(const Ir *ir, const LwP1LnFold *f, int owner, IrProv *prov) {
  char path[40];
  g_snprintf(path, sizeof path, "ln_fold_stagger.%s", sched_proj_name[f->proj]);
  *prov = ir_prov(ir, path);
  int slots = ir->sched.ln_fold_slots[f->proj];
  return slots > 0 ? (int64_t)(owner % slots) * ir->sched.ln_fold_stagger[f->proj] : 0;
}

int64_t lw_p1_ln_fold_first_gap(const Ir *ir, IrProv *prov) {
  *prov = ir_prov(ir, "ln_fold_first_gap");
  return ir->sched.ln_fold_first_gap;
}

LwP1Folding lw_p1_ln_fold_start(Ir *ir, int task, const char *tag, IrView w, int owner, const LwP1LnFold *f) {
  int K = w.rows;
  IrProv dp;
  int64_t delay = fold_delay(ir, f, owner, &dp);
  if (delay > 0) lw_waitt(ir, task, delay, dp);
  LwP1Folding fd = {ir_all(ir, lw_rf_sub(ir, task, tag, "lng", K, 1)), ir_all(ir, lw_rf_sub(ir, task, tag, "lnbg", 2, K)),
                    ir_all(ir, lw_rf_sub(ir, task, tag, "lnbgw", 2, w.cols))};
  lw_load(ir, task, fd.gcol, f->gsym, 0, 0, 1, f->prov); /* g as a column: K rows of 1 */
  lw_load(ir, task, ir_win(fd.bg.t, 0, 1, 0, K), f->bsym, 0, 0, K, f->prov);
  lw_load(ir, task, ir_win(fd.bg.t, 1, 1, 0, K), f->gsym, 0, 0, K, f->prov);
  return fd;
}

void lw_p1_ln_fold_piece(Ir *ir, int task, const LwP1Folding *fd, IrView w, int k0, int rows, const LwP1LnFold *f) {
  /* [b W; g W] += [b; g] (its columns k0..) . W (its rows k0..); g W =
   * 1^T diag(g) W, the column sums of W' = diag(g) W */
  IrOp *op = lw_op(ir, task, IR_MMA, fd->bgw, ir_win(fd->bg.t, 0, 2, k0, rows), ir_win(w.t, w.r0 + k0, rows, w.c0, w.cols),
                   f->prov);
  op->mods = k0 == 0 ? IR_MOD_Z : 0;
}

void lw_p1_ln_fold_end(Ir *ir, int task, const LwP1Folding *fd, IrView w, IrView bias, const LwP1LnFold *f) {
  int K = w.rows, P = w.cols;
  IrView bw = ir_win(fd->bgw.t, 0, 1, 0, P), gw = ir_win(fd->bgw.t, 1, 1, 0, P);
  lw_op(ir, task, IR_VADD, bias, bias, bw, f->prov);
  /* W'' = diag(g) W - (1/K) 1 (g W): row k times g_k, every column's mean out */
  lw_opi(ir, task, IR_VMULI, gw, gw, -1.0f / (float)K, f->prov);
  IrOp *op = ir_emit(ir, task, IR_VFMA);
  op->d = w, op->a = w, op->b = fd->gcol, op->c = gw, op->prov = f->prov;
}

void lw_p1_ln_fold_finish(Ir *ir, int task, IrView acc, IrView rstd, IrView bias, int t, const LwP1LnFold *f) {
  lw_p1_tile_wait(ir, task, &f->stats, t, f->prov);
  lw_load(ir, task, rstd, f->rstd_sym, 0, f->rstd_col + t * acc.rows, 1, f->prov);
  IrOp *op = ir_emit(ir, task, IR_VFMA);
  op->d = acc, op->a = acc, op->b = rstd, op->c = bias, op->prov = f->prov;
}

void lw_p1_ln_stats_rows(Ir *ir, int task, const char *tag, const LwP1LnStatsRows *r, IrProv prov) {
  int d = r->d, sub = r->sub;
  int x = lw_rf_sub(ir, task, tag, "x", sub, d), tmp = lw_rf_sub(ir, task, tag, "tmp", sub, d);
  int mean = lw_rf_sub(ir, task, tag, "mean", sub, 1), rstd = lw_rf_sub(ir, task, tag, "rstd", sub, 1);
  IrView xv = ir_win(x, 0, sub, 0, d), t = ir_win(tmp, 0, sub, 0, d);
  for (int k = 0; k < r->rows; k += sub) {
    int row = r->row0 + k;
    LwMat m = {r->src_col, d, r->packed};
    lw_load_mat(ir, task, xv, r->src, &m, row, 0, r->base);
    lw_ln_rstd(ir, task, xv, t, t, ir_all(ir, mean), ir_all(ir, rstd), prov);
    lw_space(ir, task);
    lw_store(ir, task, ir_all(ir, rstd), "scratch", 0, r->dst_col + row, 1, prov);
  }
}
