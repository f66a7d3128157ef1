/* attention.c - the attention core shared by the D1 and P1 lowerings when a
 * head's keys do not fit the WG's RF at once: keys and values stream through
 * the RF in blocks, and an online softmax keeps a running row max m, row sum
 * z and output o (attention.h, lw_attention_blocked).  Per block j of b keys:
 *
 *   s   = (q . K_j^T) * scale  (+ the causal mask on a masked last block)
 *   mj  = rowmax(s)
 *   j=0: m = mj;  s = exp(s - m);  z = rowsum(s);  o = s . V_j
 *   j>0: mn = max(m, mj);  a = exp(m - mn);  m = mn;  s = exp(s - m);
 *        z = z*a + rowsum(s);  o = o*a + s . V_j
 *
 * and at the end o /= z.  The same result as the whole-row softmax up to
 * FP32 rounding (docs/workloads.md's tolerance).  Attention slices stop
 * before the division: each slice keeps (m, z, u) and lw_attention_merge
 * weights them by exp(m - max m).
 *
 * P1's query tile groups (attention_tiles.c) build on this core's
 * formulas but schedule differently (several tiles per task sharing K/V
 * blocks, software-pipelined chains, multicast K/V), so they are a module
 * of their own. */
#include "attention.h"

#include <math.h>

#include "builder.h"

/* Partitions that tensors of these shapes take when they are live at once:
 * the ones larger than a partition round up to whole partitions (as lw_rf
 * pads them), the small ones share partitions. */
static int parts_of(const Ir *ir, const int (*shape)[2], int n) {
  int64_t pb = sim_machine_part_bytes(&ir->hw), small = 0, parts = 0;
  for (int i = 0; i < n; i++) {
    int64_t bytes = 4 * (int64_t)shape[i][0] * shape[i][1];
    if (bytes <= pb)
      small += bytes;
    else
      parts += (bytes + pb - 1) / pb;
  }
  return (int)(parts + (small + pb - 1) / pb);
}

gboolean lw_attention_fits(const Ir *ir, const int (*shape)[2], int n, int parts) {
  return parts_of(ir, shape, n) <= parts;
}

int lw_attention_block(const Ir *ir, int rows, int keys, int max_block, int parts) {
  int b = MIN(max_block, (keys + LW_KEY_BLOCK - 1) / LW_KEY_BLOCK * LW_KEY_BLOCK);
  for (; b > LW_KEY_BLOCK; b /= 2) {
    /* q, kb, vb, s, o, m, z, mj, alpha */
    const int shape[][2] = {{rows, WL_HEAD_DIM}, {b, WL_HEAD_DIM}, {b, WL_HEAD_DIM}, {rows, b}, {rows, WL_HEAD_DIM},
                            {rows, 1},  {rows, 1}, {rows, 1}, {rows, 1}};
    if (lw_attention_fits(ir, shape, (int)G_N_ELEMENTS(shape), parts)) return b;
  }
  return LW_KEY_BLOCK;
}

/* kres.t >= 0: keys and values in the RF already (lw_attention_resident). */
static void attend(Ir *ir, int task, const char *tag, const LwAttention *at, IrView kres, IrView vres,
                   LwPartial *partial) {
  int R = at->q.rows, B = at->block;
  gboolean in_rf = kres.t >= 0;
  IrView none = ir_win(-1, 0, 0, 0, 0);
  int kb = -1, vb = -1;
  if (!in_rf) {
    kb = lw_rf_sub(ir, task, tag, "kb", B, WL_HEAD_DIM);
    vb = lw_rf_sub(ir, task, tag, "vb", B, WL_HEAD_DIM);
  }
  int s = lw_rf_sub(ir, task, tag, "s", R, B);
  IrView m = ir_all(ir, lw_rf_sub(ir, task, tag, "m", R, 1));
  IrView z = ir_all(ir, lw_rf_sub(ir, task, tag, "z", R, 1));
  IrView mj = ir_all(ir, lw_rf_sub(ir, task, tag, "mj", R, 1));
  IrView a = ir_all(ir, lw_rf_sub(ir, task, tag, "alpha", R, 1));
  IrProv pv = at->prov;
  for (int k0 = 0, j = 0; k0 < at->keys; k0 += B, j++) {
    int b = MIN(B, at->keys - k0);
    IrView kv = ir_win(kb, 0, b, 0, WL_HEAD_DIM), vv = ir_win(vb, 0, b, 0, WL_HEAD_DIM), sv = ir_win(s, 0, R, 0, b);
    if (in_rf) {
      kv = ir_win(kres.t, kres.r0 + at->row0 + k0, b, kres.c0, WL_HEAD_DIM);
      vv = ir_win(vres.t, vres.r0 + at->row0 + k0, b, vres.c0, WL_HEAD_DIM);
    } else {
      lw_load(ir, task, kv, at->ksym, at->row0 + k0, 0, WL_HEAD_DIM, pv);
    }
    IrOp *op = ir_emit(ir, task, IR_MMA);
    op->mods = IR_MOD_Z | IR_MOD_T, op->d = sv, op->a = at->q, op->b = kv, op->prov = pv;
    lw_opi(ir, task, IR_VMULI, sv, sv, at->scale, pv);
    if (at->mask.t >= 0 && k0 + b == at->keys) lw_op(ir, task, IR_VADD, sv, sv, at->mask, pv);
    if (j == 0) {
      lw_op(ir, task, IR_VRMAX, m, sv, none, pv);
    } else {
      lw_op(ir, task, IR_VRMAX, mj, sv, none, pv);
      lw_op(ir, task, IR_VMAX, mj, mj, m, pv); /* mj = the new max */
      lw_op(ir, task, IR_VSUB, a, m, mj, pv);
      lw_opi(ir, task, IR_SEXP, a, a, 0, pv);
      lw_opi(ir, task, IR_VCOPY, m, mj, 0, pv);
    }
    lw_op(ir, task, IR_VSUB, sv, sv, m, pv);
    lw_opi(ir, task, IR_SEXP, sv, sv, 0, pv);
    if (j == 0) {
      lw_op(ir, task, IR_VRSUM, z, sv, none, pv);
    } else {
      lw_op(ir, task, IR_VRSUM, mj, sv, none, pv);
      lw_op(ir, task, IR_VMUL, z, z, a, pv);
      lw_op(ir, task, IR_VADD, z, z, mj, pv);
      lw_op(ir, task, IR_VMUL, at->o, at->o, a, pv);
    }
    if (!in_rf) lw_load(ir, task, vv, at->vsym, at->row0 + k0, 0, WL_HEAD_DIM, pv);
    op = ir_emit(ir, task, IR_MMA);
    op->mods = j == 0 ? IR_MOD_Z : 0, op->d = at->o, op->a = sv, op->b = vv, op->prov = pv;
  }
  if (partial) {
    partial->m = m, partial->z = z;
    return;
  }
  lw_opi(ir, task, IR_SRECIP, z, z, 0, pv);
  lw_op(ir, task, IR_VMUL, at->o, at->o, z, pv);
}

void lw_attention_blocked(Ir *ir, int task, const char *tag, const LwAttention *at, LwPartial *partial) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  attend(ir, task, tag, at, none, none, partial);
}

void lw_attention_resident(Ir *ir, int task, const char *tag, const LwAttention *at, IrView kres,
                           IrView vres, LwPartial *partial) {
  attend(ir, task, tag, at, kres, vres, partial);
}

void lw_attention_merge(Ir *ir, int task, const char *tag, IrView m, IrView z, IrView u, IrView o,
                        IrProv prov) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  IrView M = ir_all(ir, lw_rf_sub(ir, task, tag, "mmax", 1, 1));
  IrView Z = ir_all(ir, lw_rf_sub(ir, task, tag, "zsum", 1, 1));
  lw_op(ir, task, IR_VRMAX, M, m, none, prov);
  lw_op(ir, task, IR_VSUB, m, m, M, prov);  /* m_k - M */
  lw_opi(ir, task, IR_SEXP, m, m, 0, prov); /* a_k = exp(m_k - M) */
  lw_op(ir, task, IR_VMUL, z, z, m, prov);  /* a_k z_k */
  lw_op(ir, task, IR_VRSUM, Z, z, none, prov);
  /* o = sum_k a_k u_k: an MMA costs a whole block (T_MMA_BLOCK cycles)
   * however few the slices; S vector FMAs of a row each are cheaper while
   * S * ceil(32 / vl) < T_MMA_BLOCK (4 slices: 8 cycles against 32) */
  int S = m.cols, per_row = (u.cols + ir->hw.vl - 1) / ir->hw.vl;
  if (S * per_row < T_MMA_BLOCK) {
    for (int k = 0; k < S; k++) {
      IrView uk = ir_win(u.t, u.r0 + k, 1, u.c0, u.cols), ak = ir_win(m.t, m.r0, 1, m.c0 + k, 1);
      IrOp *op = lw_op(ir, task, k ? IR_VFMA : IR_VMUL, o, uk, ak, prov);
      if (k) op->c = o;
    }
  } else {
    IrOp *op = ir_emit(ir, task, IR_MMA);
    op->mods = IR_MOD_Z, op->d = o, op->a = m, op->b = u, op->prov = prov;
  }
  lw_opi(ir, task, IR_SRECIP, Z, Z, 0, prov);
  lw_op(ir, task, IR_VMUL, o, o, Z, prov);
}

/* The softmax scale 1/sqrt(WL_HEAD_DIM), rounded to FP32 once. */
float lw_att_scale(void) { return (float)(1.0 / sqrt((double)WL_HEAD_DIM)); }
