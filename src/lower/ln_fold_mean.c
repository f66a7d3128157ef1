/* ln_fold_mean.c - LayerNorm folded into the projection that follows it (the
 * seeds' scheme three, "LN/projection reorder"; refinements.ln_fold; layernorm.h,
 * lw_ln_project_folded).  For a row x, LN gain g, bias b and a resident
 * panel W with bias c:
 *
 *   LN(x) W + c = [ (x*g) W - mu (gW) ] / sigma + (bW + c)
 *
 * with gW = g W and bW + c (1 x P each) computed once by the preload task
 * of the panel's WG.  Per step the task multiplies x*g by W at once: the
 * MMA no longer waits for the row's statistics, which the WG's vector unit
 * computes while the array works; three VEC ops after the MMA finish.  The
 * same value as normalising first, up to FP32 rounding (docs/workloads.md's
 * tolerance).
 *
 * With refinements.first_token (the seeds' "first decode step fused with
 * the constant projections"), the preload makes no MMA: the first step's
 * task multiplies the 3-row matrix [x*g; g; b] by the panel at once and
 * keeps rows 1 and 2 (+ c) as gW and bW + c for the later steps (tasks of
 * the same WG: the panel's tasks are pinned there), so no MMA of constants
 * delays the preload.
 *
 * P1 folds LayerNorm another way (ln_fold_centred.c): it centres the
 * weights once per layer, where D1 corrects by the mean after each step's
 * MMA.  The two are different factorisations with different ops and
 * rounding, so they stay two modules behind one header (layernorm.h). */
#include "layernorm.h"

#include "builder.h"
#include "resident.h"
#include "vecmath.h"

/* gW and bW + c of a panel (rows 0 and 1 of one 2 x P tensor: one MMA of
 * the 2 x K rows [g; b] by W), made by its WG's preload task of the layer
 * the first time (kept in LwResident's table of constants). */
static IrView folded(Ir *ir, LwResident *r, int l, SchedProj j, int p, const char *gsym,
                     const char *bsym, IrProv prov) {
  int wg = lw_resident_wg(r, l, j, p), pre = lw_resident_preload_task(ir, r, wg, l);
  g_autofree char *key = g_strdup_printf("fold/%d/%d/%d", l, (int)j, p);
  gpointer t;
  if (g_hash_table_lookup_extended(r->consts, key, NULL, &t)) return ir_all(ir, GPOINTER_TO_INT(t));
  int K = sched_proj_k(&ir->prob, j), P, ks;
  lw_unit_shape(ir, j, &P, &ks);
  g_autofree char *tag = g_strdup_printf("l%d.%s.p%d", l, sched_proj_name[j], p);
  int gb = lw_rf_sub(ir, pre, tag, "gb", 2, K), fw = lw_rf_sub(ir, pre, tag, "fold", 2, P);
  lw_load(ir, pre, ir_win(gb, 0, 1, 0, K), gsym, 0, 0, K, prov);
  lw_load(ir, pre, ir_win(gb, 1, 1, 0, K), bsym, 0, 0, K, prov);
  IrOp *op = lw_op(ir, pre, IR_MMA, ir_all(ir, fw), ir_all(ir, gb), lw_resident_weights(ir, r, l, j, p), prov);
  op->mods = IR_MOD_Z;
  IrView bw = ir_win(fw, 1, 1, 0, P);
  lw_op(ir, pre, IR_VADD, bw, bw, lw_resident_bias(ir, r, l, j, p), prov);
  g_hash_table_insert(r->consts, g_steal_pointer(&key), GINT_TO_POINTER(fw));
  return ir_all(ir, fw);
}

/* The first step's fused product (first_token): xg = [x*g; g; b] (3 x d)
 * times the panel into a 3 x P temp; rows 1 and 2 (+ c) kept in a 2 x P
 * tensor of this task as gW and bW + c; returns the view of row 0, x*g W. */
static IrView first_token(Ir *ir, int task, const char *tag, IrView x, LwResident *r, int l,
                          SchedProj j, int p, const char *gsym, const char *bsym, IrView *gw,
                          IrView *bw, IrProv prov) {
  int wg = lw_resident_wg(r, l, j, p), d = x.cols, P, ks;
  lw_unit_shape(ir, j, &P, &ks);
  int pb = sim_machine_part_bytes(&ir->hw);
  IrView g = lw_resident_const(ir, r, wg, l, gsym, d, prov), b = lw_resident_const(ir, r, wg, l, bsym, d, prov);
  int xgb = lw_rf_sub(ir, task, tag, "xgb", MAX(3, pb / (4 * d)), d);
  int prod = lw_rf_sub(ir, task, tag, "prod3", MAX(3, pb / (4 * P)), P);
  int f = lw_rf_sub(ir, task, tag, "fold", 2, P);
  lw_op(ir, task, IR_VMUL, ir_win(xgb, 0, 1, 0, d), x, g, prov);
  lw_opi(ir, task, IR_VCOPY, ir_win(xgb, 1, 1, 0, d), g, 0, prov);
  lw_opi(ir, task, IR_VCOPY, ir_win(xgb, 2, 1, 0, d), b, 0, prov);
  IrOp *op = lw_op(ir, task, IR_MMA, ir_win(prod, 0, 3, 0, P), ir_win(xgb, 0, 3, 0, d),
                 lw_resident_weights(ir, r, l, j, p), prov);
  op->mods = IR_MOD_Z;
  *gw = ir_win(f, 0, 1, 0, P);
  *bw = ir_win(f, 1, 1, 0, P);
  g_autofree char *key = g_strdup_printf("fold/%d/%d/%d", l, (int)j, p);
  g_hash_table_insert(r->consts, g_steal_pointer(&key), GINT_TO_POINTER(f));
  return ir_win(prod, 0, 1, 0, P);
}

/* refinements.split_stats (the seeds' "statistics split over 8 WGs"): the
 * producers of a row's np pieces of n = d / np columns each hand on their
 * piece's sum s_k and M2_k = sum (x - s_k / n)^2 (lw_row_stats); the
 * consumer merges them (Chan et al.'s pairwise update, all at once):
 *
 *   mean = (sum_k s_k) / d,   M2 = sum_k M2_k + n sum_k (s_k / n - mean)^2
 *
 * instead of reducing its whole row twice; var = M2 / d as before. */
void lw_row_stats(Ir *ir, int task, const char *tag, IrView v, IrView st, IrProv prov) {
  IrView none = ir_win(-1, 0, 0, 0, 0), s = ir_win(st.t, st.r0, 1, st.c0, 1), m2 = ir_win(st.t, st.r0 + 1, 1, st.c0, 1);
  IrView m = ir_all(ir, lw_rf_sub(ir, task, tag, "smean", 1, 1));
  IrView h = ir_all(ir, lw_rf_sub(ir, task, tag, "sdev", 1, v.cols));
  lw_op(ir, task, IR_VRSUM, s, v, none, prov);
  lw_opi(ir, task, IR_VMULI, m, s, 1.0f / (float)v.cols, prov);
  lw_op(ir, task, IR_VSUB, h, v, m, prov);
  lw_op(ir, task, IR_VMUL, h, h, h, prov);
  lw_op(ir, task, IR_VRSUM, m2, h, none, prov);
}

/* mean and M2 of a d-wide row from its pieces' statistics (2 x np). */
static void merge_stats(Ir *ir, int task, const char *tag, IrView st, int d, IrView mean, IrView m2,
                        IrProv prov) {
  int np = st.cols, n = d / np;
  IrView none = ir_win(-1, 0, 0, 0, 0), sums = ir_win(st.t, st.r0, 1, st.c0, np),
         m2s = ir_win(st.t, st.r0 + 1, 1, st.c0, np);
  IrView dm = ir_all(ir, lw_rf_sub(ir, task, tag, "dmean", 1, np));
  IrView w = ir_all(ir, lw_rf_sub(ir, task, tag, "m2w", 1, 1));
  lw_op(ir, task, IR_VRSUM, mean, sums, none, prov);
  lw_opi(ir, task, IR_VMULI, mean, mean, 1.0f / (float)d, prov);
  lw_opi(ir, task, IR_VMULI, dm, sums, 1.0f / (float)n, prov);
  lw_op(ir, task, IR_VSUB, dm, dm, mean, prov);
  lw_op(ir, task, IR_VMUL, dm, dm, dm, prov);
  lw_op(ir, task, IR_VRSUM, m2, dm, none, prov);
  lw_opi(ir, task, IR_VMULI, m2, m2, (float)n, prov);
  lw_op(ir, task, IR_VRSUM, w, m2s, none, prov);
  lw_op(ir, task, IR_VADD, m2, m2, w, prov);
}

void lw_ln_project_folded(Ir *ir, int task, const char *tag, IrView x, LwResident *r, int l,
                          SchedProj j, int p, const char *gsym, const char *bsym, IrView acc,
                          gboolean first, IrView stats, IrProv prov) {
  int wg = lw_resident_wg(r, l, j, p), d = x.cols, P = acc.cols;
  IrView g = lw_resident_const(ir, r, wg, l, gsym, d, prov);
  IrView gw, bw, prod = ir_win(-1, 0, 0, 0, 0);
  IrProv fp = first ? ir_prov(ir, "refinements.first_token") : prov; /* what first_token makes */
  if (first) {
    prod = first_token(ir, task, tag, x, r, l, j, p, gsym, bsym, &gw, &bw, fp);
  } else {
    IrView f = folded(ir, r, l, j, p, gsym, bsym, prov);
    gw = ir_win(f.t, 0, 1, 0, P), bw = ir_win(f.t, 1, 1, 0, P);
  }
  /* x*g fills a partition of its own: the MMA holds the read ports of the
   * partitions it reads while it runs (and the write ports of acc's, which
   * the caller gives a partition of its own too), and the statistics must
   * not wait for them (docs/machine.md §4) */
  int pb = sim_machine_part_bytes(&ir->hw), rows = MAX(1, pb / (4 * d));
  IrView xg = first ? x : ir_win(lw_rf_sub(ir, task, tag, "xg", rows, d), 0, 1, 0, d);
  IrView h = ir_all(ir, lw_rf_sub(ir, task, tag, "h", 1, d));
  IrView mean = ir_all(ir, lw_rf_sub(ir, task, tag, "mean", 1, 1));
  IrView var = ir_all(ir, lw_rf_sub(ir, task, tag, "var", 1, 1));
  IrView t = ir_all(ir, lw_rf_sub(ir, task, tag, "mugw", 1, P));
  if (!first) {
    lw_op(ir, task, IR_VMUL, xg, x, g, prov);
    IrOp *op = lw_op(ir, task, IR_MMA, acc, xg, lw_resident_weights(ir, r, l, j, p), prov);
    op->mods = IR_MOD_Z;
  }
  /* the statistics, while the array multiplies */
  if (stats.t >= 0) {
    merge_stats(ir, task, tag, stats, d, mean, var, prov);
    lw_ln_rstd_tail(ir, task, var, d, prov);
  } else {
    lw_ln_rstd(ir, task, x, h, h, mean, var, prov);
  }
  if (first) { /* the kept constants, from the product's rows 1 and 2 */
    lw_opi(ir, task, IR_VCOPY, gw, ir_win(prod.t, 1, 1, 0, P), 0, fp);
    lw_op(ir, task, IR_VADD, bw, ir_win(prod.t, 2, 1, 0, P), lw_resident_bias(ir, r, l, j, p), fp);
  }
  lw_op(ir, task, IR_VMUL, t, gw, mean, prov);
  /* acc = (acc - mu gW) / sigma + (bW + c) */
  lw_op(ir, task, IR_VSUB, acc, first ? prod : acc, t, prov);
  lw_op(ir, task, IR_VMUL, acc, acc, var, prov);
  lw_op(ir, task, IR_VADD, acc, acc, bw, prov);
}
