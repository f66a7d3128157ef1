/* p1_attention.c - P1 causal attention with K/V blocks shared by several
 * query tiles (attention.query_tiles > 1; lower.h, lw_p1_attention_stage).
 * One task per (sequence, head, group of g query tiles): the group's tiles
 * are folded so that every group has about the same causal work (g = 2:
 * tiles i and T-1-i), and the task streams the K and V rows its longest tile
 * needs once, in blocks of B keys (double-buffered: block j+1 loads while
 * block j is used by the group's tiles after the first), each block serving every tile of the group that attends
 * to it; blocks above a tile's diagonal are skipped.  Per (tile, block), an
 * online softmax as in attention.c:
 *
 *   s   = (q . K_j^T) * scale  (+ the causal mask on the tile's last R keys)
 *   j=0: m = rowmax(s);  s = exp(s - m);  z = rowsum(s);  o = s . V_j
 *   j>0: mn = max(m, rowmax(s));  a = exp(m - mn);  m = mn;  s = exp(s - m);
 *        z = z*a + rowsum(s);  o = o*a + s . V_j
 *
 * then o /= z and o is stored.  K/V bytes read per (sequence, head) fall
 * from T(T+1)/2 tile blocks to about that over g, and 64 tasks of equal work
 * instead of 128 of unequal work fill the machine. */
#include "lower.h"

/* The group of tile t among T tiles in groups of g: snake order, so group k
 * takes tiles k and 2G-1-k of every 2G (G = T/g groups). */
static int group_of(int t, int T, int g) {
  int G = T / g, m = t % (2 * G);
  return m < G ? m : 2 * G - 1 - m;
}

/* The key block: the largest multiple of R, up to the sequence, whose two
 * K and two V buffers fit the RF beside the group's q, o, scores, mask and
 * softmax state. */
static int key_block(const Ir *ir, int R, int rows, int g) {
  for (int B = rows; B > R; B -= R) {
    int shape[4 + 6 * 8][2], n = 0;
    for (int k = 0; k < 2; k++) {
      shape[n][0] = B, shape[n++][1] = WL_HEAD_DIM; /* kb */
      shape[n][0] = B, shape[n++][1] = WL_HEAD_DIM; /* vb */
    }
    shape[n][0] = R, shape[n++][1] = B; /* s */
    shape[n][0] = R, shape[n++][1] = R; /* mask */
    for (int q = 0; q < g && q < 8; q++) {
      shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM; /* q */
      shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM; /* o */
      for (int k = 0; k < 4; k++) shape[n][0] = R, shape[n++][1] = 1; /* m z mj alpha */
    }
    if (lw_attention_fits(ir, (const int(*)[2])shape, n, ir->hw.vl)) return B;
  }
  return R;
}

/* One tile's state in a task. */
typedef struct Tile {
  int i, n;          /* tile index in its sequence, keys it attends to */
  IrView q, o, m, z, mj, a;
} Tile;

/* Tile x block: scores, online softmax, o. */
static void tile_block(Ir *ir, int task, Tile *t, IrView kv, IrView vv, IrView s, IrView mask, int k0,
                       IrProv pv) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  int b = MIN(kv.rows, t->n - k0), R = t->q.rows;
  IrView kb = ir_win(kv.t, kv.r0, b, 0, WL_HEAD_DIM), vb = ir_win(vv.t, vv.r0, b, 0, WL_HEAD_DIM);
  IrView sv = ir_win(s.t, 0, R, 0, b);
  IrOp *op = ir_emit(ir, task, IR_MMA);
  op->mods = IR_MOD_Z | IR_MOD_T, op->d = sv, op->a = t->q, op->b = kb, op->prov = pv;
  lw_opi(ir, task, IR_VMULI, sv, sv, lw_att_scale(), pv);
  if (k0 + b == t->n) lw_op(ir, task, IR_VADD, ir_win(s.t, 0, R, b - R, R), ir_win(s.t, 0, R, b - R, R), mask, pv);
  if (k0 == 0) {
    lw_op(ir, task, IR_VRMAX, t->m, sv, none, pv);
  } else {
    lw_op(ir, task, IR_VRMAX, t->mj, sv, none, pv);
    lw_op(ir, task, IR_VMAX, t->mj, t->mj, t->m, pv);
    lw_op(ir, task, IR_VSUB, t->a, t->m, t->mj, pv);
    lw_opi(ir, task, IR_SEXP, t->a, t->a, 0, pv);
    lw_opi(ir, task, IR_VCOPY, t->m, t->mj, 0, pv);
  }
  lw_op(ir, task, IR_VSUB, sv, sv, t->m, pv);
  lw_opi(ir, task, IR_SEXP, sv, sv, 0, pv);
  if (k0 == 0) {
    lw_op(ir, task, IR_VRSUM, t->z, sv, none, pv);
  } else {
    lw_op(ir, task, IR_VRSUM, t->mj, sv, none, pv);
    lw_op(ir, task, IR_VMUL, t->z, t->z, t->a, pv);
    lw_op(ir, task, IR_VADD, t->z, t->z, t->mj, pv);
    lw_op(ir, task, IR_VMUL, t->o, t->o, t->a, pv);
  }
  op = ir_emit(ir, task, IR_MMA);
  op->mods = k0 == 0 ? IR_MOD_Z : 0, op->d = t->o, op->a = sv, op->b = vb, op->prov = pv;
}

/* mask (R x R) = 0 on and below the diagonal, LW_MASKED above. */
static void causal_mask(Ir *ir, int task, IrView mask, IrProv pv) {
  IrOp *op = ir_emit(ir, task, IR_VFILL);
  op->d = mask, op->imm = LW_MASKED, op->prov = pv;
  for (int r = 0; r < mask.rows; r++) {
    op = ir_emit(ir, task, IR_VFILL);
    op->d = ir_win(mask.t, r, 1, 0, r + 1), op->imm = 0.0f, op->prov = pv;
  }
}

void lw_p1_attention_stage(Ir *ir, const LwP1Attention *at) {
  int R = at->R, T = at->rows / R, g = at->group, G = T / g, B = key_block(ir, R, at->rows, g);
  IrProv pv = at->prov;
  LwMat qm = {at->q_col, at->stride, at->packed}, om = {at->o_col, at->stride, at->packed};
  g_autofree char *go = g_strdup_printf("l%d_att_go", at->layer);
  for (int seq = 0; seq < at->seqs; seq++)
    for (int h = 0; h < at->heads; h++)
      for (int k = 0; k < G; k++) {
        g_autofree char *tag = g_strdup_printf("l%d.att.s%d.h%d.g%d", at->layer, seq, h, k);
        IrRole role = ir_role(ROLE_ATT);
        role.layer = at->layer, role.seq = seq, role.head = h;
        int task = lw_task(ir, tag, at->stage, at->group_prov, role);
        if (at->after >= 0) ir_task_waits(ir, task, at->after);
        ir_task_signals(ir, task, at->grp);
        /* attention.waves: task n of the stage is in wave n * waves / tasks
         * and starts once every task of the earlier waves is through its
         * first key block, which loads every q (consecutive tasks go to
         * different SMs, so each wave spreads over the machine) */
        int n = (seq * at->heads + h) * G + k, ntasks = at->seqs * at->heads * G;
        int wave = n * at->waves / ntasks, before = 0;
        for (int x = 0; x < ntasks; x++) before += x * at->waves / ntasks < wave;
        if (before > 0) lw_wait(ir, task, go, before, at->waves_prov);
        /* attention.stagger: the tasks of a wave start `stagger` cycles
         * apart, before their first load (their first key blocks and q
         * tiles, all at once, make the stage's start its hottest window) */
        if (at->stagger > 0 && n > before) lw_waitt(ir, task, (int64_t)(n - before) * at->stagger, at->stagger_prov);
        Tile tl[8];
        int nt = 0, keys = 0, kv_row = (seq * at->heads + h) * at->rows;
        for (int i = 0; i < T; i++) {
          if (group_of(i, T, g) != k) continue;
          char what[16];
          Tile *t = &tl[nt];
          t->i = i, t->n = (i + 1) * R;
          keys = MAX(keys, t->n);
          g_snprintf(what, sizeof what, "q%d", nt);
          t->q = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
          g_snprintf(what, sizeof what, "o%d", nt);
          t->o = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
          IrView *st[4] = {&t->m, &t->z, &t->mj, &t->a};
          const char *nm[4] = {"m", "z", "mj", "alpha"};
          for (int x = 0; x < 4; x++) {
            g_snprintf(what, sizeof what, "%s%d", nm[x], nt);
            *st[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, 1));
          }
          nt++;
        }
        IrView kb[2], vb[2];
        for (int x = 0; x < 2; x++) {
          char what[8];
          g_snprintf(what, sizeof what, "kb%d", x);
          kb[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, B, WL_HEAD_DIM));
          g_snprintf(what, sizeof what, "vb%d", x);
          vb[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, B, WL_HEAD_DIM));
        }
        IrView s = ir_all(ir, lw_rf_sub(ir, task, tag, "s", R, B));
        IrView mask = ir_all(ir, lw_rf_sub(ir, task, tag, "mask", R, R));
        causal_mask(ir, task, mask, pv);
        /* blocks of B keys, each loaded once (the next one before this one
         * is used) for every tile of the group that attends to it */
        /* the loads spread over the first block: each tile's q just before
         * the tile before it is computed (a task's loads all at its start
         * make the stage's first microseconds the hottest of P1) */
        for (int k0 = 0, j = 0; k0 < keys; k0 += B, j++) {
          int b = MIN(B, keys - k0);
          IrView kv = ir_win(kb[j % 2].t, 0, b, 0, WL_HEAD_DIM), vv = ir_win(vb[j % 2].t, 0, b, 0, WL_HEAD_DIM);
          if (j == 0) {
            lw_load_mat(ir, task, tl[0].q, at->qsym, &qm, seq * at->rows + tl[0].i * R, h * WL_HEAD_DIM, pv);
            lw_load(ir, task, kv, at->ksym, kv_row, 0, WL_HEAD_DIM, pv);
            lw_load(ir, task, vv, at->vsym, kv_row, 0, WL_HEAD_DIM, pv);
          }
          for (int q = 0; q < nt; q++) {
            if (j == 0 && q + 1 < nt)
              lw_load_mat(ir, task, tl[q + 1].q, at->qsym, &qm, seq * at->rows + tl[q + 1].i * R,
                          h * WL_HEAD_DIM, pv);
            if (tl[q].n > k0) tile_block(ir, task, &tl[q], kv, vv, s, mask, k0, pv);
            if (q == 0 && k0 + B < keys) { /* the next block, once this one is in use */
              int nb = MIN(B, keys - k0 - B);
              lw_load(ir, task, ir_win(kb[(j + 1) % 2].t, 0, nb, 0, WL_HEAD_DIM), at->ksym, kv_row + k0 + B,
                      0, WL_HEAD_DIM, pv);
              lw_load(ir, task, ir_win(vb[(j + 1) % 2].t, 0, nb, 0, WL_HEAD_DIM), at->vsym, kv_row + k0 + B,
                      0, WL_HEAD_DIM, pv);
            }
          }
          if (j == 0 && at->waves > 1) lw_sig(ir, task, go, at->waves_prov); /* its first block done */
        }
        for (int q = 0; q < nt; q++) {
          Tile *t = &tl[q];
          lw_opi(ir, task, IR_SRECIP, t->z, t->z, 0, pv);
          lw_op(ir, task, IR_VMUL, t->o, t->o, t->z, pv);
          lw_space(ir, task);
          lw_store_mat(ir, task, t->o, at->osym, &om, seq * at->rows + t->i * R, h * WL_HEAD_DIM, pv);
        }
      }
}
