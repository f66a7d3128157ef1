/* d1.c - the baseline strategy for D1 (decode): every step and layer is
 * five stages of tasks; each task computes one panel of a projection (or one
 * attention head) for the step's row, streaming its weights from HBM, and
 * hands its results to the next stage through HBM scratch and an event
 * counter per (stage, layer).  Stage order (per step t, layer l):
 *
 *   qkv  LN1(x) . Wqkv panel + b -> q (scratch), k/v (the ABI cache rows)
 *   att  one task per head: softmax(q K^T / sqrt(32)) V over positions
 *        0..history+t -> attention row (scratch)
 *   wo   attention row . Wo panel + bo + x -> x1 (scratch)
 *   w1   GELU(LN2(x1) . W1 panel + b1) -> g (scratch)
 *   w2   g . W2 panel + b2 + x1 -> next layer's x (scratch) or out[t]
 *
 * Counters are cumulative: the k-th use of a stage waits for k * tasks.
 *
 * Every row a stage hands to the next (x, q, the slices' partials, the
 * attention row, x1, g) is an LwHand (handoff.c): through HBM scratch as
 * above, or, with `handoff: rf`, stored by the producer straight into its
 * consumers' RF.  The input row x_in and the output row out stay in HBM
 * (the host's ABI). */
#include <string.h>

#include "lower.h"

#include "attention.h"
#include "builder.h"
#include "handoff.h"
#include "layernorm.h"
#include "project.h"
#include "qkv_store.h"
#include "resident.h"
#include "spacing.h"
#include "vecmath.h"

/* Scratch layout: per layer, five rows (x, q, att, x1: d floats each; g: f
 * floats) and a temp K/V row pair; all offsets in floats from `scratch`. */
typedef struct D1Scratch {
  int x, q, att, x1, g, kv;
} D1Scratch;

typedef struct D1 {
  Ir *ir;
  const Schedule *pp;     /* the decisions: ir->sched */
  const Problem *pb;
  int d, f, heads, pos;   /* pos = history + steps: cache rows per head */
  LwProj qkv, wo, w1, w2;
  IrProv kv_prov, base, att_prov;
  D1Scratch *scr;         /* per layer */
  int *part;              /* per layer, with attention slices: where the     */
                          /* slices' (m, z, u) go (floats from scratch)     */
  int nslices;            /* slice tasks per head: attention.slices, and    */
                          /* attention.new_slice's own slice                */
  IrProv new_prov;        /* "attention.new_slice"                          */
  int att_block;          /* keys per block of the streamed attention; 0:   */
                          /* all of a head's keys and values at once        */
  int fences;             /* uses of the current task's fence event */
  gboolean resident;      /* weights: resident: panels kept in RF (res)     */
  IrProv res_prov;        /* "weights"                                      */
  IrProv fold_prov;       /* "refinements.ln_fold"                          */
  int task_parts;         /* partitions a task may fill (the temp space     */
                          /* when resident weights keep the rest)           */
  LwResident res;
  /* the group of tasks of each stage of the current step and layer (and
   * w2's of the previous layer, which the next qkv waits for): what the
   * stages after them wait for (the sync pass makes the events) */
  int g_qkv, g_att, g_wo, g_w1, g_w2;
  int g_kv;               /* refinements.q_first: the qkv tasks with no q   */
                          /* column (-1: all in g_qkv)                      */
  /* the rows handed between the stages of the current step and layer: x
   * (the layer's input), q, the attention row, x1, g */
  gboolean rf_hand;
  IrProv hand_prov, relay_prov, stats_prov;
  gboolean split_stats;     /* refinements.split_stats                        */
  LwStream pre;             /* stream_prefetch: the chunks task pre_task     */
  int pre_task;             /* loaded first (-1: none)                       */
  int relays;               /* handoff_relays (0: producers store to each consumer) */
  LwHand x, q, att, x1, g;
} D1;

static int ntasks(int n, int panel) { return n / panel; }

/* Does layer l keep its weights in the RF?  With resident_layers the first
 * layers do and the others stream theirs, with the streamed lowering
 * (tasks not pinned, no fold, no K shards, relays or fused FFN). */
static gboolean res_at(const D1 *c, int l) { return c->resident && lw_resident_has(&c->res, l); }

/* A row handed through scratch columns col.. (or RF to RF). */
static void hand(D1 *c, LwHand *h, int col, int stride) {
  lw_hand_init(h, c->rf_hand, "scratch", 0, col, stride, c->rf_hand ? c->hand_prov : c->base);
}

/* The event of stage `ev` of layer l: "qkv_l0".  Made once per stage, not
 * per task. */
static char *stage_event(const char *ev, int l) { return g_strdup_printf("%s_l%d", ev, l); }


static void spacing(D1 *c, int task) { lw_space(c->ir, task); }

/* What a task makes after its prefetched chunks, so that they leave room
 * for it: `rows` rows of `len` floats and `small` rows of a panel or less,
 * each in partitions of its own (a bound: rf_alloc packs small ones), and
 * one partition to spare. */
static int parts_for(const D1 *c, int rows, int len, int small) {
  int pb = sim_machine_part_bytes(&c->ir->hw);
  return rows * (int)((4 * (int64_t)len + pb - 1) / pb) + small + 1;
}

/* stream_prefetch, in a layer that streams its weights: the task's first
 * chunks of W rows wrow0..wrow0+K of panel p (one per stream_depth buffer)
 * are its first ops, its prelude, which the sync pass puts before its WAITs:
 * they load while the stages before it run, and project() multiplies them.
 * `reserve`: the partitions the task makes after them. */
static void prefetch(D1 *c, int task, const char *tag, const LwProj *pj, int l, int p, int K, int wrow0,
                     int reserve) {
  Ir *ir = c->ir;
  if (!c->pp->stream_prefetch || res_at(c, l)) return;
  g_autofree char *wsym = lw_weight_sym(pj->proj, l);
  LwProj q = *pj;
  if (c->resident) q.kprov = ir_prov(ir, "resident_layers");
  IrTask *tk = ir_task_at(ir, task);
  lw_stream_begin(ir, task, tag, NULL, K, wsym, wrow0, sched_proj_n(c->pb, pj->proj), p * pj->panel, 1, pj->panel,
                  &q, reserve, &c->pre);
  tk->prelude = (int)tk->ops->len;
  IrProv pf = ir_prov(ir, "stream_prefetch");
  for (guint i = 0; i < tk->ops->len; i++) g_array_index(tk->ops, IrOp, i).prov = pf;
  c->pre_task = task;
}

/* LN of one row into h (1 x d); g and b loaded by the task, or kept by
 * its WG with resident weights (the task is pinned there). */
static void row_ln(D1 *c, int task, const char *tag, IrView x, IrView h, const char *gsym,
                   const char *bsym) {
  Ir *ir = c->ir;
  IrView g, b;
  int wg = ir_task_at(ir, task)->pin;
  if (res_at(c, ir_task_at(ir, task)->role.layer) && wg >= 0) {
    g = lw_resident_const(ir, &c->res, wg, ir_task_at(ir, task)->role.layer, gsym, c->d, c->res_prov);
    b = lw_resident_const(ir, &c->res, wg, ir_task_at(ir, task)->role.layer, bsym, c->d, c->res_prov);
  } else {
    g = ir_all(ir, lw_rf_sub(ir, task, tag, "lng", 1, c->d));
    b = ir_all(ir, lw_rf_sub(ir, task, tag, "lnb", 1, c->d));
    lw_load(ir, task, g, gsym, 0, 0, c->d, c->base);
    lw_load(ir, task, b, bsym, 0, 0, c->d, c->base);
  }
  IrView tmp = ir_all(ir, lw_rf_sub(ir, task, tag, "lntmp", 1, c->d));
  IrView mean = ir_all(ir, lw_rf_sub(ir, task, tag, "mean", 1, 1));
  IrView var = ir_all(ir, lw_rf_sub(ir, task, tag, "var", 1, 1));
  lw_layernorm(ir, task, x, h, g, b, tmp, mean, var, c->base);
}

/* Store a q|k|v panel's columns [c0, c0+P) of step t's row: q to scratch,
 * k and v into the ABI cache at position history+t (qkv_store.c). */
static void store_qkv(D1 *c, int task, IrView acc, int c0, int t, int l,
                      const char *const kv_sym[2]) {
  /* resident K/V: the new rows also go to the last slice of their head
   * (after its history block, or alone: attention.new_slice), and a task of
   * their own stores them to HBM */
  int H = c->heads, S = c->nslices, kv_task = -1;
  g_autofree IrView *rows = g_new(IrView, 2 * H + 1);
  if (c->resident && lw_resident_kv_has(&c->res, l) && c->pp->kv_writeback == KV_DIRECT) {
    int r = lw_resident_new_row(&c->res, t);
    for (int h = 0; h < H; h++) {
      rows[h] = ir_win(lw_resident_k(&c->res, l, h, S - 1), r, 1, 0, WL_HEAD_DIM);
      rows[H + h] = ir_win(lw_resident_v(&c->res, l, h, S - 1), r, 1, 0, WL_HEAD_DIM);
    }
    if (c0 + acc.cols > c->d) { /* the panel has K or V columns */
      const IrTask *tk = ir_task_at(c->ir, task);
      g_autofree char *tag = g_strdup_printf("%s.kv", tk->name);
      kv_task = lw_task(c->ir, tag, tk->stage, c->kv_prov, tk->role);
      ir_task_at(c->ir, kv_task)->pin = tk->pin;
    }
  }
  LwQkvStore s = {.kv_rf = {kv_task >= 0 ? rows : NULL, kv_task >= 0 ? rows + H : NULL},
                  .kv_task = kv_task,.d_model = c->d, .q_row = 0, .q_col = c->scr[l].q, .q = &c->q, .kv_sym = {kv_sym[0], kv_sym[1]},
                  .kv_row = c->pb->history + t, .head_rows = c->pos,
                  .temp_row = 0, .temp_col = c->scr[l].kv, .temp_stride = c->d, .fences = &c->fences,
                  .prov = c->base, .kv_prov = c->kv_prov};
  lw_store_qkv(c->ir, task, acc, c0, &s);
}

/* A projection task's panel: acc = a . W[:, p*P..] + b, streamed from HBM,
 * or from the RF of the WG that keeps it (the task is pinned there). */
static void project(D1 *c, int task, const char *tag, IrView a, const char *wsym, const char *bsym,
                    int l, const LwProj *pj, int p, IrView acc) {
  if (res_at(c, l)) {
    lw_resident_project(c->ir, task, a, &c->res, l, pj->proj, p, acc, pj->kprov);
    return;
  }
  LwSource src = {.rf = a};
  LwProj q = *pj; /* a layer that streams beside resident ones: its weight loads are resident_layers' */
  if (c->resident) q.kprov = ir_prov(c->ir, "resident_layers");
  if (c->pre_task == task) { /* its first chunks are loaded: stream_prefetch */
    lw_stream_finish(c->ir, &c->pre, &src, acc);
    c->pre_task = -1;
  } else {
    lw_project(c->ir, task, tag, &src, a.cols, wsym, sched_proj_n(c->pb, pj->proj), p * pj->panel, acc, &q);
  }
  lw_add_bias(c->ir, task, tag, acc, bsym, p * pj->panel, pj->prov);
}

/* LN(x) . W panel + b (qkv, w1) for the row x handed by `in`: normalised
 * first, or, with refinements.ln_fold, the LayerNorm folded into the
 * projection (ln_fold_mean.c). */
static IrView ln_project(D1 *c, int task, const char *tag, LwHand *in, const char *gsym,
                         const char *lbsym, const char *wsym, const char *bsym, int l,
                         const LwProj *pj, int p) {
  Ir *ir = c->ir;
  IrView x = ir_all(ir, lw_rf_sub(ir, task, tag, "x", 1, c->d));
  if (c->pp->ln_fold && res_at(c, l)) {
    lw_hand_get(ir, in, task, x, 0, 0);
    /* the MMA holds the write port of acc's partitions while it runs: a
     * partition of its own, so that the statistics' results do not wait */
    int pb = sim_machine_part_bytes(&ir->hw), rows = MAX(1, pb / (4 * pj->panel));
    IrView acc = ir_win(lw_rf_sub(ir, task, tag, "acc", rows, pj->panel), 0, 1, 0, pj->panel);
    gboolean first = c->pp->first_token && ir_task_at(ir, task)->role.step == 0;
    IrView st = ir_win(-1, 0, 0, 0, 0); /* split_stats: the pieces' statistics */
    if (in->stats) {
      st = ir_all(ir, lw_rf_sub(ir, task, tag, "stats", 2, in->stats_np));
      lw_hand_get(ir, in->stats, task, st, 0, 0);
    }
    lw_ln_project_folded(ir, task, tag, x, &c->res, l, pj->proj, p, gsym, lbsym, acc, first, st,
                         c->fold_prov);
    return acc;
  }
  IrView h = ir_all(ir, lw_rf_sub(ir, task, tag, "h", 1, c->d));
  lw_hand_get(ir, in, task, x, 0, 0);
  row_ln(c, task, tag, x, h, gsym, lbsym);
  IrView acc = ir_all(ir, lw_rf_sub(ir, task, tag, "acc", 1, pj->panel));
  project(c, task, tag, h, wsym, bsym, l, pj, p, acc);
  return acc;
}

/* A new task for panel p of projection pj, pinned to the WG that keeps the
 * panel when weights are resident. */
static int panel_task(D1 *c, const char *tag, int stage, int t, int l, IrRoleKind kind,
                      const LwProj *pj, int p) {
  IrRole role = ir_role(kind);
  role.step = t, role.layer = l, role.proj = pj->proj, role.panel = p;
  int task = lw_task(c->ir, tag, stage, pj->prov, role);
  if (res_at(c, l)) ir_task_at(c->ir, task)->pin = lw_resident_wg(&c->res, l, pj->proj, p);
  return task;
}

static void stage_qkv(D1 *c, int t, int l, int stage) {
  Ir *ir = c->ir;
  int n = ntasks(3 * c->d, c->qkv.panel);
  g_autofree char *wsym = lw_weight_sym(PROJ_QKV, l), *bsym = lw_bias_sym(PROJ_QKV, l);
  g_autofree char *gsym = g_strdup_printf("ln1_g.l%d", l), *lbsym = g_strdup_printf("ln1_b.l%d", l);
  g_autofree char *ksym = g_strdup_printf("k_cache.l%d", l), *vsym = g_strdup_printf("v_cache.l%d", l);
  g_autofree char *done = stage_event("qkv", l);
  int after = c->g_w2, grp = c->g_qkv = ir_group(ir, done);
  /* q_first: the panels with no q column complete a group of their own,
   * which only the last attention slices (the new positions) wait for */
  g_autofree char *kvdone = stage_event("kv", l);
  c->g_kv = c->pp->q_first ? ir_group_for(ir, kvdone, ir_prov(ir, "refinements.q_first")) : -1;
  const char *const kv_sym[2] = {ksym, vsym};
  hand(c, &c->q, c->scr[l].q, c->d);
  for (int p = 0; p < n; p++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.qkv.p%d", t, l, p);
    int task = panel_task(c, tag, stage, t, l, ROLE_QKV, &c->qkv, p);
    c->fences = 0;
    /* x, h, the gain, the bias, the temporary; acc, bias, mean, variance */
    prefetch(c, task, tag, &c->qkv, l, p, c->d, 0, parts_for(c, 5, c->d, 4));
    if (l == 0)
      lw_wait(ir, task, "in", t + 1, c->base); /* the host releases step t's row */
    else
      ir_task_waits(ir, task, after);
    IrView acc = ln_project(c, task, tag, &c->x, gsym, lbsym, wsym, bsym, l, &c->qkv, p);
    store_qkv(c, task, acc, p * c->qkv.panel, t, l, kv_sym);
    ir_task_signals(ir, task, c->g_kv >= 0 && p * c->qkv.panel >= c->d ? c->g_kv : grp);
  }
}

/* One head over positions 0..history+t of its cache rows. */
/* Attention slices (attention.slices = S > 1): slice k of head h attends to
 * history positions [k*hs, (k+1)*hs) (hs = history / S), the last slice also
 * to the new positions history..history+t, or with attention.new_slice a
 * slice S of their own (S' = S + 1 slices); each stores its row max m, row
 * sum z and unnormalised output u to scratch (layer l's area: m of head h
 * slice k at part + h*S' + k, z at part + H*S' + h*S' + k, u at part +
 * 2*H*S' + (h*S' + k)*32).  Then one task per head merges its S slices
 * (lw_attention_merge).  The slices form one group, the merges the stage's:
 * what the wo stage waits for is unchanged. */
static void stage_att_sliced(D1 *c, int t, int l, int stage) {
  Ir *ir = c->ir;
  int S = c->nslices, H = c->heads, hs = c->pb->history / c->pp->attn_slices;
  int n = c->pb->history + t + 1;
  int pm = c->part[l], pz = pm + H * S, pu = pz + H * S;
  g_autofree char *ksym = g_strdup_printf("k_cache.l%d", l), *vsym = g_strdup_printf("v_cache.l%d", l);
  g_autofree char *pev = stage_event("attp", l), *done = stage_event("att", l);
  int after = c->g_qkv, pgrp = ir_group(ir, pev), grp = c->g_att = ir_group(ir, done);
  LwHand M, Z, U; /* the slices' row max, row sum and output: H*S of each */
  lw_hand_init(&M, c->rf_hand, "scratch", 0, pm, 0, c->rf_hand ? c->hand_prov : c->att_prov);
  lw_hand_init(&Z, c->rf_hand, "scratch", 0, pz, 0, c->rf_hand ? c->hand_prov : c->att_prov);
  lw_hand_init(&U, c->rf_hand, "scratch", 0, pu, WL_HEAD_DIM, c->rf_hand ? c->hand_prov : c->att_prov);
  hand(c, &c->att, c->scr[l].att, c->d);
  for (int h = 0; h < H; h++)
    for (int k = 0; k < S; k++) {
      g_autofree char *tag = g_strdup_printf("t%d.l%d.att.h%d.s%d", t, l, h, k);
      IrRole role = ir_role(ROLE_ATT);
      role.step = t, role.layer = l, role.head = h, role.slice = k;
      gboolean own = c->pp->attn_new_slice && k == S - 1; /* the new positions alone */
      int task = lw_task(ir, tag, stage, own ? c->new_prov : c->att_prov, role);
      ir_task_waits(ir, task, after);
      if (c->g_kv >= 0 && k == S - 1) ir_task_waits(ir, task, c->g_kv);
      int k0 = own ? c->pb->history : k * hs, keys = k == S - 1 ? n - k0 : hs;
      gboolean kv_rf = c->resident && lw_resident_kv_has(&c->res, l);
      if (kv_rf) ir_task_at(ir, task)->pin = lw_resident_kv_wg(&c->res, l, h, k);
      IrView q = ir_all(ir, lw_rf_sub(ir, task, tag, "q", 1, WL_HEAD_DIM));
      IrView u = ir_all(ir, lw_rf_sub(ir, task, tag, "u", 1, WL_HEAD_DIM));
      lw_hand_get(ir, &c->q, task, q, 0, h * WL_HEAD_DIM);
      LwAttention at = {q, u, ir_win(-1, 0, 0, 0, 0), ksym, vsym, h * c->pos + k0, keys,
                        lw_attention_block(ir, 1, keys, 256, c->task_parts), lw_att_scale(), c->att_prov};
      LwPartial part;
      if (kv_rf) { /* the block and the new rows, kept by the slice's WG */
        at.row0 = 0, at.block = keys;
        lw_attention_resident(ir, task, tag, &at, ir_all(ir, lw_resident_k(&c->res, l, h, k)),
                              ir_all(ir, lw_resident_v(&c->res, l, h, k)), &part);
      } else {
        lw_attention_blocked(ir, task, tag, &at, &part);
      }
      spacing(c, task);
      lw_hand_put(ir, &M, task, part.m, 0, h * S + k);
      lw_hand_put(ir, &Z, task, part.z, 0, h * S + k);
      lw_hand_put(ir, &U, task, u, h * S + k, 0);
      ir_task_signals(ir, task, pgrp);
    }
  for (int h = 0; h < H; h++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.att.h%d.merge", t, l, h);
    IrRole role = ir_role(ROLE_ATT);
    role.step = t, role.layer = l, role.head = h;
    int task = lw_task(ir, tag, stage, c->att_prov, role);
    ir_task_waits(ir, task, pgrp);
    IrView m = ir_all(ir, lw_rf_sub(ir, task, tag, "m", 1, S));
    IrView z = ir_all(ir, lw_rf_sub(ir, task, tag, "z", 1, S));
    IrView u = ir_all(ir, lw_rf_sub(ir, task, tag, "u", S, WL_HEAD_DIM));
    IrView o = ir_all(ir, lw_rf_sub(ir, task, tag, "o", 1, WL_HEAD_DIM));
    lw_hand_get(ir, &M, task, m, 0, h * S);
    lw_hand_get(ir, &Z, task, z, 0, h * S);
    lw_hand_get(ir, &U, task, u, h * S, 0);
    lw_attention_merge(ir, task, tag, m, z, u, o, c->att_prov);
    spacing(c, task);
    lw_hand_put(ir, &c->att, task, o, 0, h * WL_HEAD_DIM);
    ir_task_signals(ir, task, grp);
  }
  lw_hand_clear(&M);
  lw_hand_clear(&Z);
  lw_hand_clear(&U);
}

static void stage_att(D1 *c, int t, int l, int stage) {
  Ir *ir = c->ir;
  if (c->pp->attn_slices > 1) {
    stage_att_sliced(c, t, l, stage);
    return;
  }
  int n = c->pb->history + t + 1;
  g_autofree char *ksym = g_strdup_printf("k_cache.l%d", l), *vsym = g_strdup_printf("v_cache.l%d", l);
  g_autofree char *done = stage_event("att", l);
  int after = c->g_qkv, grp = c->g_att = ir_group(ir, done);
  hand(c, &c->att, c->scr[l].att, c->d);
  for (int h = 0; h < c->heads; h++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.att.h%d", t, l, h);
    IrRole role = ir_role(ROLE_ATT);
    role.step = t, role.layer = l, role.head = h;
    int task = lw_task(ir, tag, stage, c->att_prov, role);
    ir_task_waits(ir, task, after);
    IrView q = ir_all(ir, lw_rf_sub(ir, task, tag, "q", 1, WL_HEAD_DIM));
    if (c->att_block > 0) { /* the keys do not fit at once: stream them */
      IrView o = ir_all(ir, lw_rf_sub(ir, task, tag, "o", 1, WL_HEAD_DIM));
      lw_hand_get(ir, &c->q, task, q, 0, h * WL_HEAD_DIM);
      LwAttention at = {q, o, ir_win(-1, 0, 0, 0, 0), ksym, vsym, h * c->pos, n, c->att_block,
                        lw_att_scale(), c->base};
      lw_attention_blocked(ir, task, tag, &at, NULL);
      spacing(c, task);
      lw_hand_put(ir, &c->att, task, o, 0, h * WL_HEAD_DIM);
      ir_task_signals(ir, task, grp);
      continue;
    }
    IrView k = lw_view(ir, lw_rf_sub(ir, task, tag, "k", n, WL_HEAD_DIM), n, WL_HEAD_DIM);
    IrView v = lw_view(ir, lw_rf_sub(ir, task, tag, "v", n, WL_HEAD_DIM), n, WL_HEAD_DIM);
    IrView s = ir_all(ir, lw_rf_sub(ir, task, tag, "s", 1, n));
    IrView m = ir_all(ir, lw_rf_sub(ir, task, tag, "m", 1, 1)), z = ir_all(ir, lw_rf_sub(ir, task, tag, "z", 1, 1));
    IrView o = ir_all(ir, lw_rf_sub(ir, task, tag, "o", 1, WL_HEAD_DIM));
    lw_hand_get(ir, &c->q, task, q, 0, h * WL_HEAD_DIM);
    lw_load(ir, task, k, ksym, h * c->pos, 0, WL_HEAD_DIM, c->base);
    lw_load(ir, task, v, vsym, h * c->pos, 0, WL_HEAD_DIM, c->base);
    IrOp *op = ir_emit(ir, task, IR_MMA);
    op->mods = IR_MOD_Z | IR_MOD_T, op->d = s, op->a = q, op->b = k, op->prov = c->base;
    op = ir_emit(ir, task, IR_VMULI);
    op->d = s, op->a = s, op->imm = lw_att_scale(), op->prov = c->base;
    lw_softmax(ir, task, s, m, z, c->base);
    op = ir_emit(ir, task, IR_MMA);
    op->mods = IR_MOD_Z, op->d = o, op->a = s, op->b = v, op->prov = c->base;
    spacing(c, task);
    lw_hand_put(ir, &c->att, task, o, 0, h * WL_HEAD_DIM);
    ir_task_signals(ir, task, grp);
  }
}

/* acc = a . W panel + bias + residual panel; stored to `dsym` row/col,
 * after the tasks of group `after`.  Returns the stage's group. */
typedef struct D1Proj {
  const char *name;           /* "wo" or "w2"                              */
  const LwProj *pj;
  int after;                  /* the group its tasks wait for              */
  LwHand *a;                  /* the input row (a_cols wide)               */
  int a_cols;
  LwHand *res;                /* the residual row                          */
  LwHand *out;                /* the output row                            */
} D1Proj;

/* A 1 x cols row alone in its RF partition(s): an MMA holds the write port
 * of its destination's partitions while it runs (docs/machine.md §4), so a
 * load landing beside its accumulator (the residual row's) would hold the
 * MMA back until it has landed. */
static IrView own_partition(Ir *ir, int task, const char *tag, const char *what, int cols) {
  int pb = sim_machine_part_bytes(&ir->hw), rows = MAX(1, pb / (4 * cols));
  return ir_win(lw_rf_sub(ir, task, tag, what, rows, cols), 0, 1, 0, cols);
}

/* acc (1 x cols) = the sum of the n rows of ps, in row order (VEC adds). */
static void sum_rows(Ir *ir, int task, IrView acc, IrView ps, int n, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_VADD);
  op->d = acc, op->a = ir_win(ps.t, ps.r0, 1, ps.c0, acc.cols), op->b = ir_win(ps.t, ps.r0 + 1, 1, ps.c0, acc.cols);
  op->prov = prov;
  for (int k = 2; k < n; k++) {
    op = ir_emit(ir, task, IR_VADD);
    op->d = acc, op->a = acc, op->b = ir_win(ps.t, ps.r0 + k, 1, ps.c0, acc.cols), op->prov = prov;
  }
}

/* Hand acc (1 x P) on as columns c0.. of `out`, with its statistics when
 * the consumers merge them (refinements.split_stats). */
static void put_row(D1 *c, int task, LwHand *out, IrView acc, int c0) {
  Ir *ir = c->ir;
  if (out->stats) {
    const char *tag = ir_task_at(ir, task)->name;
    IrView st = ir_all(ir, lw_rf_sub(ir, task, tag, "stats", 2, 1));
    lw_row_stats(ir, task, tag, acc, st, c->stats_prov);
    lw_hand_put(ir, out->stats, task, st, 0, c0 / acc.cols);
  }
  lw_hand_put(ir, out, task, acc, 0, c0);
}

/* The end of a task that completes a row's columns c0..: acc += bias +
 * residual r, store spacing, hand acc on as columns c0.. of `out`, and
 * complete group grp. */
static void finish_row(D1 *c, int task, IrView acc, IrView bias, IrView r, IrProv prov, LwHand *out,
                       int c0, int grp) {
  Ir *ir = c->ir;
  IrOp *op = ir_emit(ir, task, IR_VADD);
  op->d = acc, op->a = acc, op->b = bias, op->prov = prov;
  op = ir_emit(ir, task, IR_VADD);
  op->d = acc, op->a = acc, op->b = r, op->prov = c->base;
  spacing(c, task);
  put_row(c, task, out, acc, c0);
  ir_task_signals(ir, task, grp);
}

/* k_split.wo / k_split.w2 = ks > 1 (RF hand-offs): each panel's K rows are
 * split over ks shards.  With resident weights each shard is on the WG
 * keeping its rows of the panel; in a streamed layer (weights: streamed, or
 * a layer after resident_layers) each shard is a task of its own that
 * streams its K/ks rows of the panel (lw_project_rows), so that a panel's
 * loads run on ks WGs at once instead of one.  Shard k multiplies its K/ks
 * columns of the input row (all it is handed) and hands its partial sum to
 * the panel's combiner task (resident: on shard 0's WG, after it), which
 * adds the ks partials (VEC adds, in shard order), the bias and the
 * residual.  The shards form one group, the combiners the stage's.  On a
 * machine with REDUCE units the resident shards instead all-reduce their
 * partials with RED (one event per layer and panel, a round per step) and
 * shard 0 adds the bias and the residual: no combiner task, no hop. */
static int stage_proj_split(D1 *c, int t, int l, int stage, const D1Proj *s) {
  Ir *ir = c->ir;
  const LwProj *pj = s->pj;
  int n = ntasks(c->d, pj->panel), P = pj->panel, ks = c->pp->k_split[pj->proj], Ks = s->a_cols / ks;
  IrRoleKind kind = pj->proj == PROJ_WO ? ROLE_WO : ROLE_W2;
  g_autofree char *pev = stage_event(pj->proj == PROJ_WO ? "wok" : "w2k", l), *done = stage_event(s->name, l);
  gboolean red = lw_red_split(ir, pj->proj) && res_at(c, l), res = res_at(c, l);
  int pgrp = red ? -1 : ir_group(ir, pev), grp = ir_group(ir, done);
  g_autofree char *wsym = lw_weight_sym(pj->proj, l), *bsym = lw_bias_sym(pj->proj, l);
  IrProv kp = ir_prov(ir, pj->proj == PROJ_WO ? "k_split.wo" : "k_split.w2");
  LwHand part; /* the partial sums: row k of panel p's at (p*ks + k, 0) */
  lw_hand_init(&part, TRUE, NULL, 0, 0, 0, kp);
  for (int p = 0; p < n; p++)
    for (int k = 0; k < ks; k++) {
      g_autofree char *tag = g_strdup_printf("t%d.l%d.%s.p%d.k%d", t, l, s->name, p, k);
      int task = panel_task(c, tag, stage, t, l, kind, pj, p);
      IrTask *tk = ir_task_at(ir, task);
      tk->role.kshard = k;
      if (res) tk->pin = lw_resident_shard_wg(&c->res, l, pj->proj, p, k);
      prefetch(c, task, tag, pj, l, p, Ks, k * Ks, parts_for(c, 1, Ks, 1)); /* a; acc */
      ir_task_waits(ir, task, s->after);
      IrView a = ir_all(ir, lw_rf_sub(ir, task, tag, "a", 1, Ks));
      lw_hand_get(ir, s->a, task, a, 0, k * Ks);
      IrView acc = ir_all(ir, lw_rf_sub(ir, task, tag, "acc", 1, P));
      if (res) {
        lw_resident_project_shard(ir, task, a, &c->res, l, pj->proj, p, k, acc, kp);
      } else { /* a layer that streams: its weight loads are resident_layers' beside resident ones */
        LwSource src = {.rf = a};
        LwProj q = *pj;
        q.kprov = c->resident ? ir_prov(ir, "resident_layers") : kp;
        if (c->pre_task == task) { /* stream_prefetch */
          lw_stream_finish(ir, &c->pre, &src, acc);
          c->pre_task = -1;
        } else {
          lw_project_rows(ir, task, tag, &src, Ks, wsym, k * Ks, sched_proj_n(c->pb, pj->proj), p * P, acc, &q);
        }
      }
      if (red) {
        IrView sum = ir_all(ir, lw_rf_sub(ir, task, tag, "sum", 1, P));
        g_autofree char *ev = g_strdup_printf("red_%s_l%d_p%d", s->name, l, p);
        IrOp *op = ir_emit(ir, task, IR_RED);
        op->d = sum, op->a = acc, op->event = ir_event(ir, ev), op->n = ks, op->prov = kp;
        if (k > 0) continue; /* its WG stalls at its next SIG/END until the sum is there */
        IrView r = ir_all(ir, lw_rf_sub(ir, task, tag, "res", 1, P));
        lw_hand_get(ir, s->res, task, r, 0, p * P);
        finish_row(c, task, sum, lw_resident_bias(ir, &c->res, l, pj->proj, p), r, kp, s->out, p * P, grp);
        continue;
      }
      lw_hand_put(ir, &part, task, acc, p * ks + k, 0);
      ir_task_signals(ir, task, pgrp);
    }
  for (int p = 0; !red && p < n; p++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.%s.p%d", t, l, s->name, p);
    int task = panel_task(c, tag, stage, t, l, kind, pj, p);
    ir_task_waits(ir, task, pgrp);
    IrView r = ir_all(ir, lw_rf_sub(ir, task, tag, "res", 1, P));
    lw_hand_get(ir, s->res, task, r, 0, p * P);
    IrView ps = lw_view(ir, lw_rf_sub(ir, task, tag, "part", ks, P), ks, P);
    lw_hand_get(ir, &part, task, ps, p * ks, 0);
    IrView acc = ir_all(ir, lw_rf_sub(ir, task, tag, "acc", 1, P));
    sum_rows(ir, task, acc, ps, ks, kp);
    IrView bias;
    if (res) {
      bias = lw_resident_bias(ir, &c->res, l, pj->proj, p);
    } else {
      bias = ir_all(ir, lw_rf_sub(ir, task, tag, "bias", 1, P));
      lw_load(ir, task, bias, bsym, 0, p * P, P, pj->prov);
    }
    finish_row(c, task, acc, bias, r, kp, s->out, p * P, grp);
  }
  lw_hand_clear(&part);
  return grp;
}

static int stage_proj(D1 *c, int t, int l, int stage, const D1Proj *s) {
  Ir *ir = c->ir;
  if (c->pp->k_split[s->pj->proj] > 1) return stage_proj_split(c, t, l, stage, s);
  const char *name = s->name;
  const LwProj *pj = s->pj;
  int after = s->after, a_cols = s->a_cols;
  int n = ntasks(c->d, pj->panel);
  g_autofree char *wsym = lw_weight_sym(pj->proj, l), *bsym = lw_bias_sym(pj->proj, l);
  g_autofree char *done = stage_event(name, l);
  int grp = ir_group(ir, done);
  for (int p = 0; p < n; p++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.%s.p%d", t, l, name, p);
    int task = panel_task(c, tag, stage, t, l, pj->proj == PROJ_WO ? ROLE_WO : ROLE_W2, pj, p);
    prefetch(c, task, tag, pj, l, p, a_cols, 0, parts_for(c, 1, a_cols, 3)); /* a; acc, residual, bias */
    ir_task_waits(ir, task, after);
    IrView a = ir_all(ir, lw_rf_sub(ir, task, tag, "a", 1, a_cols));
    lw_hand_get(ir, s->a, task, a, 0, 0);
    /* with RF hand-offs the residual row's load overlaps the MMA: acc in
     * a partition of its own; the baseline keeps its packing */
    IrView acc = c->rf_hand ? own_partition(ir, task, tag, "acc", pj->panel)
                            : ir_all(ir, lw_rf_sub(ir, task, tag, "acc", 1, pj->panel));
    /* with RF hand-offs the residual row's load (x_in's, from HBM) goes
     * first, to overlap the MMA; the baseline's order is kept otherwise */
    IrView r = ir_win(-1, 0, 0, 0, 0);
    if (c->rf_hand) {
      r = ir_all(ir, lw_rf_sub(ir, task, tag, "res", 1, pj->panel));
      lw_hand_get(ir, s->res, task, r, 0, p * pj->panel);
    }
    project(c, task, tag, a, wsym, bsym, l, pj, p, acc);
    if (!c->rf_hand) {
      r = ir_all(ir, lw_rf_sub(ir, task, tag, "res", 1, pj->panel));
      lw_hand_get(ir, s->res, task, r, 0, p * pj->panel);
    }
    IrOp *op = ir_emit(ir, task, IR_VADD);
    op->d = acc, op->a = acc, op->b = r, op->prov = c->base;
    spacing(c, task);
    put_row(c, task, s->out, acc, p * pj->panel);
    ir_task_signals(ir, task, grp);
  }
  return grp;
}

/* The relays of row h after the tasks of group `after` (lw_hand_relay):
 * "t0.l1.wo.relay2", group wo_relay_l1. */
static int relay_row(D1 *c, int t, int l, int stage, const char *name, LwHand *h, int after,
                     const int *host, int R) {
  g_autofree char *tag = g_strdup_printf("t%d.l%d.%s.relay", t, l, name);
  g_autofree char *done = g_strdup_printf("%s_relay_l%d", name, l);
  IrRole role = ir_role(ROLE_RELAY);
  role.step = t, role.layer = l;
  return lw_hand_relay(c->ir, h, c->d, after, host, R, tag, done, stage, role, c->relay_prov);
}

/* The WGs of R relays among the n panels of projection j of layer l: one
 * panel in n / R. */
static void relay_hosts(D1 *c, int l, SchedProj j, int n, int R, int *host) {
  for (int r = 0; r < R; r++) host[r] = lw_resident_wg(&c->res, l, j, r * n / R);
}

static void stage_w1(D1 *c, int t, int l, int stage) {
  Ir *ir = c->ir;
  int n = ntasks(c->f, c->w1.panel);
  g_autofree char *wsym = lw_weight_sym(PROJ_W1, l), *bsym = lw_bias_sym(PROJ_W1, l);
  g_autofree char *gsym = g_strdup_printf("ln2_g.l%d", l), *lbsym = g_strdup_printf("ln2_b.l%d", l);
  g_autofree char *done = stage_event("w1", l);
  int after = c->g_wo, grp = c->g_w1 = ir_group(ir, done);
  hand(c, &c->g, c->scr[l].g, c->f);
  for (int p = 0; p < n; p++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.w1.p%d", t, l, p);
    int task = panel_task(c, tag, stage, t, l, ROLE_W1, &c->w1, p);
    prefetch(c, task, tag, &c->w1, l, p, c->d, 0, parts_for(c, 5, c->d, 5)); /* and GELU's */
    ir_task_waits(ir, task, after);
    IrView acc = ln_project(c, task, tag, &c->x1, gsym, lbsym, wsym, bsym, l, &c->w1, p);
    IrView g = ir_all(ir, lw_rf_sub(ir, task, tag, "gelu", 1, c->w1.panel));
    lw_gelu(ir, task, acc, g, c->base); /* refinements.gelu_factor: vecmath.c */
    spacing(c, task);
    lw_hand_put(ir, &c->g, task, g, 0, p * c->w1.panel);
    ir_task_signals(ir, task, grp);
  }
}

/* ffn.fused (resident weights, RF hand-offs): the FFN as one stage of
 * `producers` tasks and one of `consumers`.  Producer p (on the WG keeping
 * W1's columns [pC, (p+1)C) and W2's rows [pC, (p+1)C), C = channels)
 * normalises x1, multiplies by its W1 columns, adds their bias, applies GELU
 * and multiplies the result by its W2 rows: a partial sum of the whole
 * output row, handed to the consumers (row p of a producers x d matrix).
 * Consumer q (on producer q's WG) adds the producers' partials of its d /
 * consumers columns in producer order (VEC adds), W2's bias and the
 * residual, and hands the row on: the seeds' technique 6 (their consumers
 * reduced with an MMA). */
static int stage_ffn_fused(D1 *c, int t, int l, int stage, LwHand *out) {
  Ir *ir = c->ir;
  const Schedule *s = c->pp;
  int NP = s->ffn_producers, C = s->ffn_channels, NC = s->ffn_consumers, d = c->d, dc = d / NC;
  IrProv fp = ir_prov(ir, "ffn.fused");
  g_autofree char *gsym = g_strdup_printf("ln2_g.l%d", l), *lbsym = g_strdup_printf("ln2_b.l%d", l);
  g_autofree char *w1 = lw_weight_sym(PROJ_W1, l), *b1 = lw_bias_sym(PROJ_W1, l), *b2 = lw_bias_sym(PROJ_W2, l);
  g_autofree char *pev = stage_event("ffnp", l), *done = stage_event("w2", l);
  int pgrp = ir_group(ir, pev), grp = ir_group(ir, done);
  c->g_w1 = pgrp;
  LwHand part;
  lw_hand_init(&part, TRUE, NULL, 0, 0, 0, fp);
  for (int p = 0; p < NP; p++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.ffn.p%d", t, l, p);
    int task = panel_task(c, tag, stage, t, l, ROLE_W1, &c->w1, p);
    ir_task_waits(ir, task, c->g_wo);
    IrView acc = ln_project(c, task, tag, &c->x1, gsym, lbsym, w1, b1, l, &c->w1, p);
    IrView g = ir_all(ir, lw_rf_sub(ir, task, tag, "gelu", 1, C));
    lw_gelu(ir, task, acc, g, fp);
    IrView y = ir_all(ir, lw_rf_sub(ir, task, tag, "partial", 1, d));
    lw_resident_project_shard(ir, task, g, &c->res, l, PROJ_W2, 0, p, y, fp);
    lw_hand_put(ir, &part, task, y, p, 0);
    ir_task_signals(ir, task, pgrp);
  }
  for (int q = 0; q < NC; q++) {
    g_autofree char *tag = g_strdup_printf("t%d.l%d.ffn.c%d", t, l, q);
    IrRole role = ir_role(ROLE_W2);
    role.step = t, role.layer = l, role.proj = PROJ_W2, role.panel = q;
    int task = lw_task(ir, tag, stage + 1, fp, role), wg = lw_resident_wg(&c->res, l, PROJ_W1, q % NP);
    ir_task_at(ir, task)->pin = wg;
    ir_task_waits(ir, task, pgrp);
    IrView ps = lw_view(ir, lw_rf_sub(ir, task, tag, "parts", NP, dc), NP, dc);
    lw_hand_get(ir, &part, task, ps, 0, q * dc);
    IrView r = ir_all(ir, lw_rf_sub(ir, task, tag, "res", 1, dc));
    lw_hand_get(ir, &c->x1, task, r, 0, q * dc);
    IrView acc = ir_all(ir, lw_rf_sub(ir, task, tag, "acc", 1, dc));
    sum_rows(ir, task, acc, ps, NP, fp);
    IrView bias = lw_resident_const(ir, &c->res, wg, l, b2, d, fp);
    finish_row(c, task, acc, ir_win(bias.t, 0, 1, q * dc, dc), r, fp, out, q * dc, grp);
  }
  lw_hand_clear(&part);
  return grp;
}

gboolean pass_lower_d1(Ir *ir, GError **err) {
  const Schedule *pp = &ir->sched;
  if (!pp->present || ir->prob.kind != PROB_D1) {
    ir_error(ir, err, ir->section, "the plan has no d1 section");
    return FALSE;
  }
  D1 c = {.ir = ir, .pp = pp, .pb = &ir->prob, .d = ir->prob.d_model, .f = ir->prob.d_ff,
          .heads = ir->prob.heads, .pos = ir->prob.history + ir->prob.steps,
          .qkv = lw_proj(ir, PROJ_QKV), .wo = lw_proj(ir, PROJ_WO), .w1 = lw_proj(ir, PROJ_W1),
          .w2 = lw_proj(ir, PROJ_W2), .kv_prov = ir_prov(ir, "kv_writeback"),
          .att_prov = ir_prov(ir, "attention.slices"), .new_prov = ir_prov(ir, "attention.new_slice"),
          .nslices = pp->attn_slices + (pp->attn_slices > 1 && pp->attn_new_slice),
          .g_qkv = -1, .g_att = -1, .g_wo = -1, .g_w1 = -1, .g_w2 = -1, .g_kv = -1,
          .rf_hand = pp->handoff == HANDOFF_RF, .hand_prov = ir_prov(ir, "handoff"),
          .res_prov = ir_prov(ir, "weights"), .fold_prov = ir_prov(ir, "refinements.ln_fold"),
          .relay_prov = ir_prov(ir, "handoff_relays"), .relays = pp->handoff_relays,
          .stats_prov = ir_prov(ir, "refinements.split_stats"), .split_stats = pp->split_stats,
          .pre_task = -1};
  int L = ir->prob.layers, off = 0;
  if (pp->ffn_fused) { /* the producers' W1 panels: ffn.channels columns */
    const Problem *d = &ir->prob;
    if (pp->ffn_producers * pp->ffn_channels != d->d_ff || d->d_model % pp->ffn_consumers != 0 ||
        pp->ffn_consumers > pp->ffn_producers) {
      ir_error(ir, err, ir_prov(ir, "ffn.producers"),
               "ffn.fused: producers (%d) x channels (%d) must be d_ff (%d), and consumers (%d) "
               "must divide d_model (%d) and be at most producers",
               pp->ffn_producers, pp->ffn_channels, d->d_ff, pp->ffn_consumers, d->d_model);
      return FALSE;
    }
    if (pp->solver == SOLVER_ILP) {
      ir_error(ir, err, ir_prov(ir, "ffn.fused"), "ffn.fused: the ILP placement does not model the fused units yet: use placement.solver: constructive");
      return FALSE;
    }
    c.w1.panel = pp->ffn_channels;
  }
  c.scr = g_new(D1Scratch, L);
  /* a head's whole K and V (history + steps rows) at once when they fit
   * the task's partitions, else streamed in blocks (attention.c) */
  const int whole[][2] = {{1, WL_HEAD_DIM}, {c.pos, WL_HEAD_DIM}, {c.pos, WL_HEAD_DIM}, {1, c.pos}, {1, 1}, {1, 1}, {1, WL_HEAD_DIM}};
  c.resident = pp->weights == WEIGHTS_RESIDENT;
  c.task_parts = c.resident ? lw_resident_task_parts(ir) : ir->hw.vl;
  c.att_block = lw_attention_fits(ir, whole, (int)G_N_ELEMENTS(whole), c.task_parts)
                    ? 0
                    : lw_attention_block(ir, 1, c.pos, 256, c.task_parts);
  for (int l = 0; l < L; l++) {
    D1Scratch s = {off, off + c.d, off + 2 * c.d, off + 3 * c.d, off + 4 * c.d, off + 4 * c.d + c.f};
    c.scr[l] = s;
    off += 6 * c.d + c.f;
  }
  /* the slices' partial results, after every layer's rows (none without
   * slices: the baseline's scratch layout is unchanged) */
  /* weights: resident: every panel gets a WG, whose preload task (made
   * before any step, so first on its WG) loads it once */
  if (c.resident) {
    if (!lw_resident_place(ir, &c.res, err)) {
      g_free(c.scr);
      lw_resident_free(&c.res);
      return FALSE;
    }
    lw_resident_preload(ir, &c.res, c.res_prov);
  }
  c.part = g_new(int, L);
  for (int l = 0; l < L; l++) c.part[l] = off + l * c.heads * c.nslices * (2 + WL_HEAD_DIM);
  /* the program size limit: step 0 is checked stage by stage (a step grows
   * with layers), then step by step (the attention grows with t: the last
   * check, on the whole program, is exact) */
  IrProv layers = ir_prov(ir, "problem.layers"), steps = ir_prov(ir, "problem.steps");
  gboolean ok = TRUE;
  for (int t = 0; ok && t < ir->prob.steps; t++) {
    for (int l = 0; ok && l < L; l++) {
      int s0 = 5 * (t * L + l);
      if (l == 0) { /* the host's row x_in[t], in HBM */
        lw_hand_clear(&c.x);
        lw_hand_init(&c.x, FALSE, "x_in", t, 0, c.d, c.base);
      }
      stage_qkv(&c, t, l, s0);
      stage_att(&c, t, l, s0 + 1);
      lw_hand_clear(&c.q);
      hand(&c, &c.x1, c.scr[l].x1, c.d);
      /* the statistics for a folded LayerNorm: only a resident layer folds */
      gboolean fused = pp->ffn_fused && res_at(&c, l);
      if (c.split_stats && pp->ln_fold && res_at(&c, l)) lw_hand_add_stats(&c.x1, c.d / c.wo.panel, c.stats_prov);
      D1Proj wo = {.name = "wo", .pj = &c.wo, .after = c.g_att, .a = &c.att, .a_cols = c.d,
                   .res = &c.x, .out = &c.x1};
      c.g_wo = stage_proj(&c, t, l, s0 + 2, &wo);
      if (c.relays > 0 && res_at(&c, l)) {
        int host[8];
        relay_hosts(&c, l, PROJ_W1, ntasks(c.f, c.w1.panel), c.relays, host);
        c.g_wo = relay_row(&c, t, l, s0 + 3, "wo", &c.x1, c.g_wo, host, c.relays);
      }
      lw_hand_clear(&c.att);
      gboolean last = l == L - 1;
      LwHand next; /* the next layer's input, or the step's output row */
      if (last)
        lw_hand_init(&next, FALSE, "out", t, 0, c.d, c.base);
      else
        hand(&c, &next, c.scr[l + 1].x, c.d);
      if (c.split_stats && !last && pp->ln_fold && res_at(&c, l + 1)) /* W2's panels, or the fused FFN's consumers */
        lw_hand_add_stats(&next, fused ? pp->ffn_consumers : c.d / c.w2.panel, c.stats_prov);
      if (fused) {
        c.g_w2 = stage_ffn_fused(&c, t, l, s0 + 3, &next);
      } else {
        stage_w1(&c, t, l, s0 + 3);
        D1Proj w2 = {.name = "w2", .pj = &c.w2, .after = c.g_w1, .a = &c.g, .a_cols = c.f,
                     .res = &c.x1, .out = &next};
        c.g_w2 = stage_proj(&c, t, l, s0 + 4, &w2);
      }
      if (c.relays > 0 && !last && res_at(&c, l + 1)) {
        int host[8];
        relay_hosts(&c, l + 1, PROJ_QKV, ntasks(3 * c.d, c.qkv.panel), c.relays, host);
        c.g_w2 = relay_row(&c, t, l, s0 + 5, "w2", &next, c.g_w2, host, c.relays);
      }
      /* power.deferred_loads: the next layer's preload after this layer's
       * first-step tasks, in each WG's program */
      if (t == 0 && c.resident && c.res.deferred && res_at(&c, l + 1)) lw_resident_preload_layer(ir, &c.res, l + 1);
      lw_hand_clear(&c.g);
      lw_hand_clear(&c.x1);
      lw_hand_clear(&c.x);
      c.x = next;
      ok = t > 0 || lw_budget_stage(ir, err, 5 * (l + 1), 5 * L, "step", layers, "layers", L);
    }
    ok = ok && lw_budget_units(ir, err, t + 1, ir->prob.steps, "step", steps, "steps");
  }
  lw_hand_clear(&c.x);
  lw_hand_clear(&c.q);
  lw_hand_clear(&c.att);
  lw_hand_clear(&c.x1);
  lw_hand_clear(&c.g);
  g_free(c.scr);
  g_free(c.part);
  lw_resident_free(&c.res);
  return ok;
}
