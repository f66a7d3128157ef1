/* p1.c - the baseline strategy for P1 (prefill): rows are cut into
 * tiles of `row_tile` rows; every layer is seven stages of tasks, each task
 * one row tile (x one output panel, or x one head), streaming activations and
 * weights from HBM chunk by chunk and writing its result back to HBM scratch;
 * each stage's tasks wait for the whole previous stage (a group: the sync
 * pass makes one event counter per stage and layer).  Stages of layer l:
 *
 *   ln1   LN1(x) -> h                       per row tile
 *   qkv   h . Wqkv panel + b -> q (scratch), K/V (k_out/v_out, the ABI)
 *   att   causal softmax(q K^T / sqrt(32)) V -> att    per (seq, head, tile)
 *   wo    att . Wo panel + bo + x -> x1
 *   ln2   LN2(x1) -> h2
 *   w1    GELU(h2 . W1 panel + b1) -> g
 *   w2    g . W2 panel + b2 + x1 -> next layer's x, or out */
#include <string.h>

#include "lower.h"

#include "attention.h"
#include "attention_tiles.h"
#include "attention_wo.h"
#include "builder.h"
#include "ffn_rf.h"
#include "grid.h"
#include "layernorm.h"
#include "project.h"
#include "qkv_store.h"
#include "resident_owners.h"
#include "spacing.h"
#include "tile_sync.h"
#include "vecmath.h"

/* Scratch buffers (float offsets in `scratch`), one set for all layers: a
 * layer's stages all finish before the next layer's begin.  Each buffer is
 * an N x width matrix: x, h, q, att, x1, h2 are N x d, g is N x f, kv (the
 * temp of kv_writeback: temp) N x 2d. */
typedef struct P1Scratch {
  int x, h, q, att, x1, h2, g, kv;
} P1Scratch;

typedef struct P1 {
  Ir *ir;
  const Schedule *pp;       /* the decisions: ir->sched */
  int d, f, H, N, R, rows;  /* N = all rows, R = tile rows, rows per sequence */
  LwProj qkv, wo, w1, w2;
  IrProv base, tile_prov, kv_prov;
  P1Scratch scr;
  int fences;
  int prev;                 /* the group of the last stage made (-1: none) */
  LwP1State res;            /* weights: resident: carried from stage to stage */
  int ln_rows;              /* rows per LayerNorm task */
  int ln_sub;               /* rows it loads, normalises and stores at a time (0: as many as fit) */
  gboolean packed;          /* layout: packed: q, att and g in 32 x 32 blocks (mat(), LwMat) */
  gboolean packed_x;        /* layout: packed_x: x1 and x (in scratch) too */
  IrProv sync_prov[PROJ__COUNT]; /* tile_sync.PROJ (tile_sync.c) */
  /* refinements.ln_fold (ln_fold_centred.c): the LayerNorm stage is statistics
   * only; fold[next] tells the next projection's owners where its rstd is,
   * fold_after: the group before the statistics, which its issuers wait for */
  LwP1LnFold fold[PROJ__COUNT];
  char fold_sym[PROJ__COUNT][2][32]; /* their gsym and bsym */
  int fold_after;
  /* refinements.ln_stats: producer (ln_stats.c): the partial statistics
   * W2 stores for the next layer's LN1 (0, after rstd in h) and Wo for LN2
   * (1, in h2) */
  LwP1LnStatsOut stats_out[2];
} P1;

/* Matrix `base` (a P1Scratch offset) of `width` columns in HBM symbol
 * `sym`: packed when the layout is and its producer writes it in 32 x 32
 * blocks: q (qkv's panels), att (attention's head tiles), g (W1's panels),
 * and with packed_x x1 (Wo's panels) and x (W2's): their A chunks (W1's,
 * the next layer's qkv) and residual blocks (W2's, the next Wo's) are then
 * one segment each, and the LayerNorm statistics that read whole rows of
 * them read a row's blocks one segment each.  The partial sums and
 * LayerNorm's h and h2 stay row-major: LayerNorm stores a few rows at a
 * time, which packed would cut into 8 stores each (measured: P1 +8,053
 * cycles, docs/techniques.md).  The ABI's symbols (x_in, out) are
 * row-major. */
static LwMat mat(const P1 *c, const char *sym, int base, int width) {
  gboolean p = c->packed && strcmp(sym, "scratch") == 0 &&
               (base == c->scr.q || base == c->scr.att || base == c->scr.g ||
                (c->packed_x && (base == c->scr.x || base == c->scr.x1)));
  return (LwMat){base, width, p};
}

/* The event of stage `ev` of layer l: "qkv_l0".  Made once per stage, not
 * per task. */
static char *stage_event(const char *ev, int l) { return g_strdup_printf("%s_l%d", ev, l); }

/* A stage's group of tasks, after the previous stage's: returns the new
 * group; *after gets the one its tasks wait for (-1: none). */
static int next_group(P1 *c, const char *event, int *after) {
  *after = c->prev;
  return c->prev = ir_group(c->ir, event);
}

/* Task `task` belongs to the stage's group and starts after group `after`. */
static void depend(P1 *c, int task, int grp, int after) {
  if (after >= 0) ir_task_waits(c->ir, task, after);
  ir_task_signals(c->ir, task, grp);
}

static void spacing(P1 *c, int task) { lw_space(c->ir, task); }

/* The layer input: x_in for layer 0, else scratch. */
static const char *in_sym(int l) { return l == 0 ? "x_in" : "scratch"; }
static int in_col(P1 *c, int l) { return l == 0 ? 0 : c->scr.x; }

/* refinements.ln_fold with tile_sync.PROJ (qkv, w1): the tile events of the
 * stage that stores the rows PROJ reads (x of layer l: w2 of layer l - 1,
 * none for layer 0's x_in; x1: wo of layer l), whose finishing owners (one
 * per panel) publish them; stage NULL: nothing to wait for. */
static LwP1TileSync fold_sync(const P1 *c, SchedProj k, int l) {
  if (k == PROJ_QKV)
    return l == 0 ? (LwP1TileSync){NULL, 0, 0} : (LwP1TileSync){"w2", l - 1, c->d / c->w2.panel};
  return (LwP1TileSync){"wo", l, c->d / c->wo.panel};
}

/* LayerNorm `name` (ln1, ln2) of layer l: the task of row tile `tile`
 * (its tag in *tag), started after the stage's `after` unless `sync` says
 * otherwise; layer 0's LN1 tasks staggered by ln_first_stagger, the
 * others' by ln_stagger (spacing.c). */
static int ln_task(P1 *c, int l, int stage, const char *name, int tile, SchedProj next, int grp, int after,
                   const LwP1TileSync *sync, char **tag) {
  Ir *ir = c->ir;
  *tag = g_strdup_printf("l%d.%s.r%d", l, name, tile);
  IrRole role = ir_role(strcmp(name, "ln1") == 0 ? ROLE_LN1 : ROLE_LN2);
  role.layer = l, role.tile = tile;
  int task = lw_task(ir, *tag, stage, c->tile_prov, role);
  if (sync && sync->stage) { /* tile_sync.NEXT: only the rows' own tile of the producer */
    ir_task_signals(ir, task, grp);
    lw_p1_tile_wait(ir, task, sync, tile * c->ln_rows / c->R, c->sync_prov[next]);
  } else {
    depend(c, task, grp, after);
  }
  lw_ln_stagger(ir, task, tile, l == 0 && next == PROJ_QKV);
  return task;
}

/* refinements.ln_fold (ln_fold_centred.c): each LayerNorm task computes its
 * rows' rstd (sub rows at a time), stores it (1 float a row) at dst_col +
 * row of scratch and signals its row tile; `next`'s owners read it there.
 * Its stage's group is waited for by nobody: the projection's issuers wait
 * for `after` (c->fold_after), its owners for each tile's event. */
static void stage_ln_stats(P1 *c, int l, int stage, const char *name, const char *src, int src_col, int dst_col,
                           SchedProj next, int grp, int after, int sub) {
  Ir *ir = c->ir;
  IrProv fp = ir_prov(ir, "refinements.ln_fold");
  LwP1TileSync sync = {NULL, 0, 0};
  if (c->pp->tile_sync[next]) sync = fold_sync(c, next, l);
  /* refinements.ln_stats: producer: x of layer l > 0 (W2's) and x1 (Wo's) */
  const LwP1LnStatsOut *merged = NULL;
  if (lw_p1_ln_stats_producer(c->pp, next) && (next == PROJ_W1 || l > 0)) merged = &c->stats_out[next == PROJ_W1];
  for (int tile = 0; tile < c->N / c->ln_rows; tile++) {
    g_autofree char *tag = NULL;
    int task = ln_task(c, l, stage, name, tile, next, grp, after, &sync, &tag);
    if (merged) { /* ln_stats.c: the producers' partials, not the rows */
      LwP1LnStatsMerge m = {merged->col, tile * c->ln_rows, c->ln_rows, c->R, c->d / (next == PROJ_QKV ? c->w2.panel : c->wo.panel),
                            c->d, dst_col};
      lw_p1_ln_stats_merge(ir, task, tag, &m, merged->prov);
    } else {
      LwP1LnStatsRows rows = {src, src_col, tile * c->ln_rows, c->ln_rows, sub, c->d, dst_col, c->base,
                              mat(c, src, src_col, c->d).packed};
      lw_p1_ln_stats_rows(ir, task, tag, &rows, fp);
    }
    lw_p1_tile_signal(ir, task, l, name, tile * c->ln_rows / c->R, fp);
  }
  g_snprintf(c->fold_sym[next][0], sizeof c->fold_sym[next][0], "%s_g.l%d", name, l);
  g_snprintf(c->fold_sym[next][1], sizeof c->fold_sym[next][1], "%s_b.l%d", name, l);
  c->fold[next] = (LwP1LnFold){.gsym = c->fold_sym[next][0], .bsym = c->fold_sym[next][1], .rstd_sym = "scratch",
                    .rstd_col = dst_col, .stats = {name, l, c->R / c->ln_rows}, .prov = fp, .proj = next};
  c->fold_after = after;
}

/* LayerNorm of every tile of c->ln_rows rows, a sub-tile of rows at a time
 * (x and its square must fit the RF together). */
static void stage_ln(P1 *c, int l, int stage, const char *name, const char *src, int src_col,
                     int dst_col, SchedProj next) {
  Ir *ir = c->ir;
  /* x and tmp (sub x d floats each) take at most half the WG's RF; the other
   * half is left to g, b, mean, var and the tensors of the WG's other tasks */
  int sub = c->ln_sub > 0 ? c->ln_sub : c->ln_rows, rf = c->ir->hw.rf_kib * 1024;
  while (sub > 1 && 2 * sub * c->d * 4 > rf / 2) sub /= 2;
  g_autofree char *gsym = g_strdup_printf("%s_g.l%d", name, l), *bsym = g_strdup_printf("%s_b.l%d", name, l);
  g_autofree char *done = stage_event(name, l);
  int after, grp = next_group(c, done, &after);
  if (c->pp->ln_fold) { /* ln_fold_centred.c: the statistics only, for `next`'s owners */
    stage_ln_stats(c, l, stage, name, src, src_col, dst_col, next, grp, after, sub);
    return;
  }
  for (int tile = 0; tile < c->N / c->ln_rows; tile++) {
    g_autofree char *tag = NULL;
    int task = ln_task(c, l, stage, name, tile, next, grp, after, NULL, &tag);
    IrView g = ir_all(ir, lw_rf_sub(ir, task, tag, "g", 1, c->d));
    IrView b = ir_all(ir, lw_rf_sub(ir, task, tag, "b", 1, c->d));
    lw_load(ir, task, g, gsym, 0, 0, c->d, c->base);
    lw_load(ir, task, b, bsym, 0, 0, c->d, c->base);
    int x = lw_rf_sub(ir, task, tag, "x", sub, c->d), tmp = lw_rf_sub(ir, task, tag, "tmp", sub, c->d);
    int mean = lw_rf_sub(ir, task, tag, "mean", sub, 1), var = lw_rf_sub(ir, task, tag, "var", sub, 1);
    for (int r = 0; r < c->ln_rows; r += sub) {
      int row = tile * c->ln_rows + r;
      IrView xv = ir_win(x, 0, sub, 0, c->d);
      LwMat xm = mat(c, src, src_col, c->d);
      lw_load_mat(ir, task, xv, src, &xm, row, 0, c->base);
      lw_layernorm(ir, task, xv, xv, g, b, ir_win(tmp, 0, sub, 0, c->d), ir_all(ir, mean),
                   ir_all(ir, var), c->base);
      spacing(c, task);
      LwMat m = mat(c, "scratch", dst_col, c->d);
      lw_store_mat(ir, task, xv, "scratch", &m, row, 0, c->base);
    }
    /* tile_sync of the next stage: its row tile, once these rows are stored */
    if (c->pp->tile_sync[next])
      lw_p1_tile_signal(ir, task, l, name, tile * c->ln_rows / c->R, c->sync_prov[next]);
  }
}

/* Store a q|k|v panel (R x P at columns c0.. of the 3d-wide row) of row tile
 * `tile`: q to scratch, K/V to k_out/v_out ([seq][head][row][32]) (qkv_store.c). */
static void store_qkv(P1 *c, int task, IrView acc, int c0, int tile, const char *const kv_sym[2], gboolean blocks) {
  int row = tile * c->R, seq = row / c->rows, i = row % c->rows;
  /* a task storing several blocks (resident owners, rf_grid) names each
   * block's read-back tensors apart */
  g_autofree char *back = blocks ? g_strdup_printf("%s.t%dc%d", ir_task_at(c->ir, task)->name, tile, c0) : NULL;
  LwQkvStore s = {.d_model = c->d, .q_row = row, .q_col = c->scr.q, .q_packed = mat(c, "scratch", c->scr.q, c->d).packed, .kv_sym = {kv_sym[0], kv_sym[1]},
                  .kv_row = seq * c->H * c->rows + i, .head_rows = c->rows,
                  .temp_row = row, .temp_col = c->scr.kv, .temp_stride = 2 * c->d, .back_tag = back, .fences = &c->fences,
                  .prov = c->base, .kv_prov = c->kv_prov};
  lw_store_qkv(c->ir, task, acc, c0, &s);
}

/* mask (R x R) = 0 on and below the diagonal, LW_MASKED above: added to the
 * scores of a tile against its own keys. */
static void causal_mask(P1 *c, int task, IrView mask) {
  IrOp *op = ir_emit(c->ir, task, IR_VFILL);
  op->d = mask, op->imm = LW_MASKED, op->prov = c->base;
  for (int r = 0; r < mask.rows; r++) {
    op = ir_emit(c->ir, task, IR_VFILL);
    op->d = ir_win(mask.t, r, 1, 0, r + 1), op->imm = 0.0f, op->prov = c->base;
  }
}

/* stage_att: a row tile's scores against all keys of its sequence (rows)
 * at once when they fit the RF, else key tile by key tile with an online
 * softmax (blocked). */
static gboolean att_blocked(const Ir *ir, int R, int rows) {
  const int whole[][2] = {{R, WL_HEAD_DIM}, {R, rows}, {R, WL_HEAD_DIM}, {R, WL_HEAD_DIM}, {R, R}, {R, WL_HEAD_DIM}, {R, 1}, {R, 1}};
  return !lw_attention_fits(ir, whole, (int)G_N_ELEMENTS(whole), ir->hw.vl);
}

/* Causal attention of one (sequence, head, row tile): scores against the
 * key blocks 0..i (the diagonal block masked), softmax, then . V. */
static gboolean stage_att(P1 *c, int l, int stage, GError **err) {
  (void)err;
  Ir *ir = c->ir;
  int R = c->R, tiles = c->rows / R;
  gboolean blocked = att_blocked(ir, R, c->rows);
  g_autofree char *ksym = g_strdup_printf("k_out.l%d", l), *vsym = g_strdup_printf("v_out.l%d", l);
  g_autofree char *done = stage_event("att", l);
  int after, grp = next_group(c, done, &after);
  for (int seq = 0; seq < c->N / c->rows; seq++)
    for (int h = 0; h < c->H; h++)
      for (int i = 0; i < tiles; i++) {
        g_autofree char *tag = g_strdup_printf("l%d.att.s%d.h%d.r%d", l, seq, h, i);
        IrRole role = ir_role(ROLE_ATT);
        role.layer = l, role.seq = seq, role.head = h, role.tile = seq * tiles + i;
        int task = lw_task(ir, tag, stage, c->tile_prov, role);
        depend(c, task, grp, after);
        int n = (i + 1) * R, kv_row = (seq * c->H + h) * c->rows, row = seq * c->rows + i * R;
        IrView q = ir_all(ir, lw_rf_sub(ir, task, tag, "q", R, WL_HEAD_DIM));
        LwMat qm = mat(c, "scratch", c->scr.q, c->d), om = mat(c, "scratch", c->scr.att, c->d);
        if (blocked) {
          IrView mask = ir_all(ir, lw_rf_sub(ir, task, tag, "mask", R, R));
          IrView o = ir_all(ir, lw_rf_sub(ir, task, tag, "o", R, WL_HEAD_DIM));
          lw_load_mat(ir, task, q, "scratch", &qm, row, h * WL_HEAD_DIM, c->base);
          causal_mask(c, task, mask);
          LwAttention at = {q, o, mask, ksym, vsym, kv_row, n, R, lw_att_scale(), c->base};
          lw_attention_blocked(ir, task, tag, &at, NULL);
          spacing(c, task);
          lw_store_mat(ir, task, o, "scratch", &om, row, h * WL_HEAD_DIM, c->base);
                    continue;
        }
        IrView s = lw_view(ir, lw_rf_sub(ir, task, tag, "s", R, n), R, n);
        int kb = lw_rf_sub(ir, task, tag, "kb", R, WL_HEAD_DIM), vb = lw_rf_sub(ir, task, tag, "vb", R, WL_HEAD_DIM);
        IrView mask = ir_all(ir, lw_rf_sub(ir, task, tag, "mask", R, R));
        IrView o = ir_all(ir, lw_rf_sub(ir, task, tag, "o", R, WL_HEAD_DIM));
        IrView m = ir_all(ir, lw_rf_sub(ir, task, tag, "m", R, 1)), z = ir_all(ir, lw_rf_sub(ir, task, tag, "z", R, 1));
        lw_load_mat(ir, task, q, "scratch", &qm, row, h * WL_HEAD_DIM, c->base);
        for (int j = 0; j <= i; j++) {
          lw_load(ir, task, ir_all(ir, kb), ksym, kv_row + j * R, 0, WL_HEAD_DIM, c->base);
          IrOp *op = ir_emit(ir, task, IR_MMA);
          op->mods = IR_MOD_Z | IR_MOD_T, op->d = ir_win(s.t, 0, R, j * R, R), op->a = q;
          op->b = ir_all(ir, kb), op->prov = c->base;
        }
        causal_mask(c, task, mask);
        IrOp *op;
        IrView diag = ir_win(s.t, 0, R, i * R, R);
        op = ir_emit(ir, task, IR_VMULI);
        op->d = s, op->a = s, op->imm = lw_att_scale(), op->prov = c->base;
        op = ir_emit(ir, task, IR_VADD);
        op->d = diag, op->a = diag, op->b = mask, op->prov = c->base;
        lw_softmax(ir, task, s, m, z, c->base);
        for (int j = 0; j <= i; j++) {
          lw_load(ir, task, ir_all(ir, vb), vsym, kv_row + j * R, 0, WL_HEAD_DIM, c->base);
          op = ir_emit(ir, task, IR_MMA);
          op->mods = j == 0 ? IR_MOD_Z : 0, op->d = o, op->a = ir_win(s.t, 0, R, j * R, R);
          op->b = ir_all(ir, vb), op->prov = c->base;
        }
        spacing(c, task);
        lw_store_mat(ir, task, o, "scratch", &om, row, h * WL_HEAD_DIM, c->base);
              }
  return TRUE;
}

typedef struct ProjStage ProjStage;
static gboolean att_wo_rf(P1 *c, int l, int stage, LwP1Attention *at, const ProjStage *wo, GError **err);

/* attention.query_tiles > 1 (attention_tiles.c): one task per (sequence,
 * head, group of row tiles) loads each K/V block once for the group.
 * wo_rf: attention.handoff: rf, wo (stage + 1) built with it (attention_wo.c). */
static gboolean stage_att_with(P1 *c, int l, int stage, const ProjStage *wo_rf, GError **err) {
  Ir *ir = c->ir;
  int g = c->pp->attn_query_tiles, T = c->rows / c->R;
  if (T % g != 0) {
    ir_error(ir, err, ir_prov(ir, "attention.query_tiles"),
             "attention.query_tiles=%d does not divide the %d row tiles of a sequence (rows=%d / "
             "row_tile=%d)",
             g, T, c->rows, c->R);
    return FALSE;
  }
  g_autofree char *ksym = g_strdup_printf("k_out.l%d", l), *vsym = g_strdup_printf("v_out.l%d", l);
  g_autofree char *done = stage_event("att", l);
  int after, grp = next_group(c, done, &after);
  LwP1Attention at = {.layer = l, .stage = stage, .seqs = c->N / c->rows, .heads = c->H, .rows = c->rows,
                      .R = c->R, .group = g, .waves = c->pp->attn_waves, .qsym = "scratch", .osym = "scratch", .ksym = ksym,
                      .vsym = vsym, .q_col = c->scr.q, .o_col = c->scr.att, .stride = c->d,
                      .packed = c->packed, .after = after,
                      .grp = grp, .prov = c->base, .group_prov = ir_prov(ir, "attention.query_tiles"),
                      .waves_prov = ir_prov(ir, "attention.waves"), .stagger = c->pp->attn_stagger,
                      .stagger_prov = ir_prov(ir, "attention.stagger"),
                      .interleave = c->pp->attn_interleave, .kv_resident = c->pp->attn_kv == ATTKV_RESIDENT,
                      .kv_shared = c->pp->attn_kv == ATTKV_SHARED,
                      .staged = c->pp->attn_softmax == SOFTMAX_STAGED,
                      .interleave_prov = ir_prov(ir, "attention.interleave"), .kv_prov = ir_prov(ir, "attention.kv"),
                      .softmax_prov = ir_prov(ir, "attention.softmax")};
  at.publish_tiles = c->pp->tile_sync[PROJ_WO], at.publish_prov = c->sync_prov[PROJ_WO]; /* tile_sync.c */
  if (c->pp->attn_tile_sync) /* tile_sync.c: the qkv owners' tile events, one per panel */
    at.sync = (LwP1AttSync){.on = TRUE, .layer = l, .rows = c->rows, .R = c->R,
                            .per_tile = 3 * c->d / c->qkv.panel, .prov = ir_prov(ir, "attention.tile_sync")};
  if (wo_rf) return att_wo_rf(c, l, stage, &at, wo_rf, err);
  return lw_p1_attention_stage(ir, &at, err);
}

static gboolean stage_att_grouped(P1 *c, int l, int stage, GError **err) {
  return stage_att_with(c, l, stage, NULL, err);
}

/* A projection stage: acc = A . W panel + bias, then either the q|k|v
 * store (qkv: kv_sym set) or (-> GELU) (+ residual panel) stored to dst. */
struct ProjStage {
  const char *name, *res_sym, *dst_sym;
  const char *a_sym;      /* A's symbol (NULL: scratch); ln_fold: x_in for layer 0's qkv */
  const LwP1LnFold *fold; /* refinements.ln_fold (ln_fold_centred.c), or NULL */
  LwP1LnStatsOut *stats;  /* refinements.ln_stats: producer (ln_stats.c), or NULL */
  const char *kv_sym[2];  /* qkv: k_out.lL, v_out.lL; else NULL          */
  IrRoleKind role;
  const LwProj *pj;
  int a_col, K, N, res_col, dst_col, gelu;
};

/* What a projection task does with acc (R x P, bias added: columns c0.. of
 * row tile `tile`): the tail shared by both weight strategies.  Its
 * tensors are made on first use, once per task (*gelu, *res: -1 at first). */
typedef struct ProjTail {
  P1 *c;
  const ProjStage *ps;
  int task, gelu, res;
  gboolean no_res; /* the residual is added by the last K shard (chain_last) */
  gboolean blocks; /* the task finishes several blocks (store_qkv)          */
} ProjTail;

static void proj_tail(ProjTail *pt, int task, const char *tag, int tile, int c0, IrView acc) {
  P1 *c = pt->c;
  const ProjStage *ps = pt->ps;
  Ir *ir = c->ir;
  if (ps->kv_sym[0]) {
    store_qkv(c, task, acc, c0, tile, ps->kv_sym, pt->blocks);
    return;
  }
  int P = acc.cols;
  IrView out = acc;
  if (ps->gelu) {
    if (pt->gelu < 0) pt->gelu = lw_rf_sub(ir, task, tag, "gelu", c->R, P);
    out = ir_all(ir, pt->gelu);
    lw_gelu(ir, task, acc, out, c->base); /* refinements.gelu_factor: vecmath.c */
  }
  if (ps->res_sym && !pt->no_res) {
    if (pt->res < 0) pt->res = lw_rf_sub(ir, task, tag, "res", c->R, P);
    IrView r = ir_all(ir, pt->res);
    LwMat rm = mat(c, ps->res_sym, ps->res_col, c->d);
    lw_load_mat(ir, task, r, ps->res_sym, &rm, tile * c->R, c0, c->base);
    IrOp *op = ir_emit(ir, task, IR_VADD);
    op->d = acc, op->a = acc, op->b = r, op->prov = c->base;
  }
  spacing(c, task);
  LwMat m = mat(c, ps->dst_sym, ps->dst_col, ps->gelu ? c->f : c->d); /* out: the ABI's, row-major */
  lw_store_mat(ir, task, out, ps->dst_sym, &m, tile * c->R, c0, c->base);
  if (ps->stats) lw_p1_ln_stats_emit(ir, task, tag, out, tile, c0, ps->stats); /* ln_stats.c */
}

static void tail_cb(void *ctx, int task, const char *tag, int tile, int c0, IrView acc) {
  ProjTail *pt = ctx;
  if (pt->task != task) { /* the next owner task: its own tensors and fences */
    pt->task = task, pt->gelu = pt->res = -1;
    pt->c->fences = 0;
  }
  proj_tail(pt, task, tag, tile, c0, acc);
}

/* Streamed weights (the baseline): one task per (row tile, panel) streams
 * its A rows and W panel chunk by chunk (lw_project). */
static gboolean stage_proj(P1 *c, int l, int stage, const ProjStage *ps, GError **err) {
  (void)err;
  Ir *ir = c->ir;
  int np = ps->N / ps->pj->panel, P = ps->pj->panel;
  g_autofree char *wsym = lw_weight_sym(ps->pj->proj, l), *bsym = lw_bias_sym(ps->pj->proj, l);
  g_autofree char *done = stage_event(ps->name, l);
  int after, grp = next_group(c, done, &after);
  for (int tile = 0; tile < c->N / c->R; tile++)
    for (int p = 0; p < np; p++) {
      g_autofree char *tag = g_strdup_printf("l%d.%s.r%d.p%d", l, ps->name, tile, p);
      IrRole role = ir_role(ps->role);
      role.layer = l, role.tile = tile, role.proj = ps->pj->proj, role.panel = p;
      int task = lw_task(ir, tag, stage, ps->pj->prov, role);
      c->fences = 0;
      depend(c, task, grp, after);
      IrView acc = ir_all(ir, lw_rf_sub(ir, task, tag, "acc", c->R, P));
      LwSource src = {.sym = "scratch", .row = tile * c->R, .col = ps->a_col, .stride = ps->K, .prov = c->base};
      lw_project(ir, task, tag, &src, ps->K, wsym, ps->N, p * P, acc, ps->pj);
      lw_add_bias(ir, task, tag, acc, bsym, p * P, ps->pj->prov);
      ProjTail pt = {c, ps, task, -1, -1, FALSE, FALSE};
      proj_tail(&pt, task, tag, tile, p * P, acc);
    }
  return TRUE;
}

/* rf_grid.k_split's partial sums: the longest run of scratch buffers (in
 * layout order) dead during the stage: not its A, residual or output, not
 * x while wo has still to read it (qkv, wo), not x1 while w2 has (w1, w2),
 * not kv in temp mode (qkv).  Its float offset in *col; returns its floats. */
static int64_t dead_run(const P1 *c, const ProjStage *ps, int *col) {
  const P1Scratch *b = &c->scr;
  int64_t Nd = (int64_t)c->N * c->d;
  const struct { int off; int64_t n; } buf[] = {{b->x, Nd},  {b->h, Nd},  {b->q, Nd},          {b->att, Nd},
                                                {b->x1, Nd}, {b->h2, Nd}, {b->g, Nd / c->d * c->f}, {b->kv, 2 * Nd}};
  gboolean qkv = ps->kv_sym[0] != NULL, wo = ps->pj->proj == PROJ_WO;
  int64_t best = 0, run = 0;
  int start = 0;
  *col = 0;
  for (unsigned k = 0; k < G_N_ELEMENTS(buf); k++) {
    int o = buf[k].off;
    gboolean live = o == ps->a_col || (ps->res_sym && strcmp(ps->res_sym, "scratch") == 0 && o == ps->res_col) ||
                    (ps->dst_sym && strcmp(ps->dst_sym, "scratch") == 0 && o == ps->dst_col) ||
                    (qkv && (o == b->q || o == b->x || (o == b->kv && c->pp->kv_writeback == KV_TEMP))) ||
                    (wo && o == b->x) || (!qkv && !wo && o == b->x1);
    if (live) {
      run = 0;
      continue;
    }
    if (run == 0) start = o;
    run += buf[k].n;
    if (run > best) best = run, *col = start;
  }
  return best;
}

/* rf_grid.* (grid.c): streamed weights, a rows x cols grid of
 * accumulators per task, K split over rf_grid.k_split tasks. */
static gboolean stage_proj_grid(P1 *c, int l, int stage, const ProjStage *ps, GError **err) {
  Ir *ir = c->ir;
  g_autofree char *wsym = lw_weight_sym(ps->pj->proj, l), *bsym = lw_bias_sym(ps->pj->proj, l);
  g_autofree char *done = stage_event(ps->name, l);
  int after, grp = next_group(c, done, &after);
  ProjTail pt = {c, ps, -1, -1, -1, FALSE, c->pp->rf_grid_rows * c->pp->rf_grid_cols > 1};
  IrRole role = ir_role(ps->role);
  role.layer = l, role.proj = ps->pj->proj;
  LwP1Grid g = {.name = sched_proj_name[ps->pj->proj], .layer = l, .stage = stage, .role = role, .pj = ps->pj,
                .K = ps->K, .N = ps->N, .tiles = c->N / c->R, .R = c->R, .rows = c->pp->rf_grid_rows,
                .cols = c->pp->rf_grid_cols, .shards = c->pp->rf_grid_k,
                .a = {.sym = "scratch", .col = ps->a_col, .stride = ps->K, .prov = c->base},
                .wsym = wsym, .bsym = bsym, .extra = (ps->gelu != 0) + (ps->res_sym != NULL),
                .after = after, .grp = grp, .finish = tail_cb, .ctx = &pt,
                .prov = ir_prov(ir, "rf_grid.rows"), .kprov = ps->pj->kprov};
  if (c->pp->rf_grid_mc) { /* a set of LD.mc targets on different WGs: at most one per WG placement takes */
    g.mc_prov = ir_prov(ir, "rf_grid.multicast");
    g.wave_prov = ir_prov(ir, "rf_grid.wave_wgs");
    int sms = c->pp->sms_used > 0 ? c->pp->sms_used : ir->hw.sms;
    g.mc_wave = sms * MIN(c->pp->rf_grid_wave_wgs, ir->hw.wgs_per_sm);
    g.finish_transfers = 1 + (ps->res_sym != NULL);
    g.mc_set = sms * ir->hw.wgs_per_sm; /* less the pacing WG where placement keeps it free (place.c) */
    g.mc_set -= c->pp->pacing_wg >= 0 && c->pp->pacing_wg < g.mc_set;
  }
  g.part_room = dead_run(c, ps, &g.part_col);
  return lw_p1_grid_stage(ir, &g, err);
}

/* tile_sync.PROJ (tile_sync.c): the stage's issuers wait per row tile
 * for the stage before it, a LayerNorm (qkv, w1) or W1 (w2), which signals
 * its tiles; W1 signals its own when tile_sync.w2 is set. */
static gboolean tile_sync_desc(P1 *c, int l, const ProjStage *ps, LwP1Resident *st, GError **err) {
  SchedProj k = ps->pj->proj;
  st->sync_prov = c->sync_prov[k];
  /* with ln_fold, Wo and W2 publish their tiles for W1 and the next qkv */
  gboolean for_fold = c->pp->ln_fold && ((k == PROJ_WO && c->pp->tile_sync[PROJ_W1]) ||
                                         (k == PROJ_W2 && c->pp->tile_sync[PROJ_QKV] && l < c->ir->prob.layers - 1));
  st->publish_tiles = (k == PROJ_W1 && c->pp->tile_sync[PROJ_W2]) || for_fold;
  if (for_fold && !c->pp->tile_sync[k]) st->sync_prov = c->sync_prov[k == PROJ_WO ? PROJ_W1 : PROJ_QKV];
  if (k == PROJ_QKV && c->pp->attn_tile_sync) { /* tile_sync.c: attention waits per qkv tile */
    st->publish_tiles = TRUE;
    if (!c->pp->tile_sync[k]) st->sync_prov = ir_prov(c->ir, "attention.tile_sync");
  }
  if (!c->pp->tile_sync[k]) return TRUE;
  if (k == PROJ_WO && c->pp->attn_query_tiles < 2) {
    ir_error(c->ir, err, c->sync_prov[k], "tile_sync.wo: with attention.query_tiles 1 the attention tasks do not "
             "signal their row tiles; tile_sync.wo needs attention.query_tiles > 1 (only grouped attention tasks signal them)");
    return FALSE;
  }
  if (c->pp->multicast_pass && c->pp->multicast[k]) {
    ir_error(c->ir, err, c->sync_prov[k], "tile_sync.%s: with multicast.pass the stage has no issuers of its own "
             "to wait per row tile (the multicast pass makes them; its owners wait for the whole stage)",
             sched_proj_name[k]);
    return FALSE;
  }
  if (ps->fold) { /* ln_fold_centred.c: the rows' producer, wo (w1) or the last layer's w2 (qkv) */
    st->wait_tiles = fold_sync(c, k, l);
    return TRUE;
  }
  if (c->pp->handoff == HANDOFF_RF && (k == PROJ_W1 || k == PROJ_W2)) {
    ir_error(c->ir, err, c->sync_prov[k], "tile_sync.%s: with handoff: rf W1's owners feed W2 themselves, "
             "chunk by chunk: there is no stage barrier to replace", sched_proj_name[k]);
    return FALSE;
  }
  if (k == PROJ_WO) /* every head's attention task stores its part of a row tile */
    st->wait_tiles = (LwP1TileSync){"att", l, c->H};
  else if (k == PROJ_W2)
    st->wait_tiles = (LwP1TileSync){"w1", l, c->w1.panel > 0 ? c->f / c->w1.panel : 1};
  else
    st->wait_tiles = (LwP1TileSync){k == PROJ_QKV ? "ln1" : "ln2", l, c->R / c->ln_rows};
  return TRUE;
}

/* Resident weights (resident_owners.c): one owner task per (K shard, panel)
 * keeps its weights for every row tile.  K shards' partial sums go through
 * scratch buffers that are dead in the stage (h, q, att, h2, kv).  The
 * stage's description into *st (its finish: pt; part_col: P1_DEAD ints). */
enum { P1_DEAD = 6 };
static gboolean resident_desc(P1 *c, int l, int stage, const ProjStage *ps, LwP1Resident *st, ProjTail *pt,
                              int *part_col, GError **err) {
  Ir *ir = c->ir;
  char mc[32];
  g_snprintf(mc, sizeof mc, "multicast.%s", sched_proj_name[ps->pj->proj]);
  /* the N x d buffers dead during wo and w2 (less wo's A, att) */
  const int dead[P1_DEAD] = {c->scr.h, c->scr.q, c->scr.att, c->scr.h2, c->scr.kv, c->scr.kv + c->N * c->d};
  int nparts = 0;
  for (unsigned k = 0; k < G_N_ELEMENTS(dead); k++)
    if (dead[k] != ps->a_col) part_col[nparts++] = dead[k];
  int shards = c->pp->k_split[ps->pj->proj];
  gboolean mcast = c->pp->multicast[ps->pj->proj]; /* partial sums RF to RF, no scratch */
  if (!mcast && (shards - 1 > nparts || (shards > 1 && ps->N != c->d))) {
    char ks[32];
    g_snprintf(ks, sizeof ks, "k_split.%s", sched_proj_name[ps->pj->proj]);
    ir_error(ir, err, ir_prov(ir, ks),
             "weights: resident: k_split.%s=%d: without multicast the partial sums go through "
             "scratch, which has room for at most %d K shards of a d_model-wide projection (wo, w2)",
             sched_proj_name[ps->pj->proj], shards, nparts + 1);
    return FALSE;
  }
  if (ps->fold && shards > 1) { /* ln_fold_centred.c folds whole columns of W */
    char ks[32];
    g_snprintf(ks, sizeof ks, "k_split.%s", sched_proj_name[ps->pj->proj]);
    ir_error(ir, err, ir_prov(ir, ks),
             "k_split.%s=%d: refinements.ln_fold folds the LayerNorm into whole panels (a column's mean "
             "over all K rows): k_split.%s must be 1", sched_proj_name[ps->pj->proj], shards,
             sched_proj_name[ps->pj->proj]);
    return FALSE;
  }
  if (ps->stats && !mcast && /* ln_stats.c: its partials' buffer is not a partial sums' */
      !lw_p1_ln_stats_room(ir, sched_proj_name[ps->pj->proj], part_col, shards - 1, ps->pj->proj == PROJ_WO ? c->scr.h2 : c->scr.h, err))
    return FALSE;
  g_autofree char *done = stage_event(ps->name, l);
  int after, grp = next_group(c, done, &after);
  if (ps->fold) after = c->fold_after; /* x, not the statistics (ln_fold_centred.c) */
  *pt = (ProjTail){c, ps, -1, -1, -1, FALSE, TRUE};
  IrRole role = ir_role(ps->role);
  role.layer = l, role.proj = ps->pj->proj;
  *st = (LwP1Resident){.name = sched_proj_name[ps->pj->proj], .layer = l, .stage = stage, .role = role,
                     .pj = ps->pj, .K = ps->K, .N = ps->N, .shards = shards, .tiles = c->N / c->R,
                     .R = c->R, .extra = (ps->gelu != 0) + (ps->res_sym != NULL), .multicast = mcast,
                     .from = mcast && c->pp->multicast_pass ? LW_P1_FROM_PASS : LW_P1_FROM_ISSUERS,
                     .a = {.sym = ps->a_sym ? ps->a_sym : "scratch", .col = ps->a_col, .stride = ps->K,
                           .prov = c->base, .packed = mat(c, ps->a_sym ? ps->a_sym : "scratch", ps->a_col, ps->K).packed},
                     .fold = ps->fold,
                     .part_col = part_col, .part_stride = c->d, .after = after, .grp = grp,
                     .finish = tail_cb, .ctx = pt, .prov = ir_prov(ir, "weights"), .mc_prov = ir_prov(ir, mc)};
  g_autofree char *split = g_strdup_printf("k_split.%s", sched_proj_name[ps->pj->proj]);
  st->split_prov = st->last_prov = ir_prov(ir, split);
  if (!tile_sync_desc(c, l, ps, st, err)) return FALSE;
  if (c->pp->k_split_last[ps->pj->proj] && shards > 1 && mcast) { /* resident_owners.c: chain_last */
    g_autofree char *last = g_strdup_printf("k_split_last.%s", sched_proj_name[ps->pj->proj]);
    st->chain_last = TRUE;
    st->last_prov = ir_prov(ir, last);
    if (ps->res_sym) {
      st->res = (LwSource){.sym = ps->res_sym, .col = ps->res_col, .stride = c->d, .prov = st->last_prov,
                           .packed = mat(c, ps->res_sym, ps->res_col, c->d).packed};
      st->extra--;
      pt->no_res = TRUE;
    }
  }
  return TRUE;
}

/* panel_groups.PROJ = G > 1: the stage's panels in G groups of N / G
 * columns, each a resident stage of its own (owners, issuers, events
 * "l0_qkv_g1_..") whose owners take the WGs after the previous group's, so
 * that a stage with more (K shard, panel) units than the SMs have WGs runs
 * them in rounds: every weight is still read once, A once per group.  Every
 * group waits for the stage before; the next stage waits for all of them
 * (one family of groups).  A stage built with its neighbour (handoff: rf,
 * attention.handoff) has one group only. */
static gboolean stage_proj_resident(P1 *c, int l, int stage, const ProjStage *ps, GError **err) {
  LwP1Resident st;
  ProjTail pt;
  int part_col[P1_DEAD];
  SchedProj k = ps->pj->proj;
  int G = c->pp->panel_groups[k];
  if (G <= 1)
    return resident_desc(c, l, stage, ps, &st, &pt, part_col, err) && lw_p1_resident_stage(c->ir, &c->res, &st, err);
  char knob[32];
  g_snprintf(knob, sizeof knob, "panel_groups.%s", sched_proj_name[k]);
  if (ps->N % (G * ps->pj->panel) != 0) { /* the schema checks it at the plan's shape */
    ir_error(c->ir, err, ir_prov(c->ir, knob), "%s=%d does not divide the %d panels of %s", knob, G,
             ps->N / ps->pj->panel, sched_proj_name[k]);
    return FALSE;
  }
  if (c->pp->multicast_pass && c->pp->multicast[k]) {
    ir_error(c->ir, err, ir_prov(c->ir, "multicast.pass"),
             "multicast.pass: the pass puts a stage's issuers on WGs with no task of the stage, and %s=%d "
             "runs %s's owners in groups over the WGs; use multicast.pass: false", knob, G, sched_proj_name[k]);
    return FALSE;
  }
  int prev = c->prev;
  for (int g = 0; g < G; g++) {
    ProjStage pg = *ps;
    pg.N = ps->N / G;
    c->prev = prev; /* every group after the stage before, not after each other */
    if (!resident_desc(c, l, stage, &pg, &st, &pt, part_col, err)) return FALSE;
    g_autofree char *unit = g == 0 ? g_strdup(st.name) : g_strdup_printf("%s_g%d", st.name, g);
    st.unit = unit, st.col0 = g * pg.N, st.ld = ps->N;
    st.prov = ir_prov(c->ir, knob); /* its owners' weight columns */
    if (!lw_p1_resident_stage(c->ir, &c->res, &st, err)) return FALSE;
  }
  return TRUE;
}

/* A stage built with its neighbour runs as one group (above). */
static gboolean one_group(P1 *c, SchedProj k, const char *with, GError **err) {
  if (c->pp->panel_groups[k] <= 1) return TRUE;
  ir_error(c->ir, err, ir_prov(c->ir, with),
           "%s: this hand-off builds %s's owners together with the stage that feeds them, as one group, "
           "but panel_groups.%s=%d asks for %d; use the hand-off through HBM", with, sched_proj_name[k],
           sched_proj_name[k], c->pp->panel_groups[k], c->pp->panel_groups[k]);
  return FALSE;
}

/* issue_spacing.PROJ spaces a multicast stage's issuer tasks; a stage fed
 * RF to RF has none, so the knob would do nothing: refused at it. */
static gboolean no_issuers(P1 *c, SchedProj k, const char *why, GError **err) {
  if (c->ir->sched.issue_spacing[k] <= 0) return TRUE;
  char path[32];
  g_snprintf(path, sizeof path, "issue_spacing.%s", sched_proj_name[k]);
  ir_error(c->ir, err, ir_prov(c->ir, path), "%s: with %s %s's chunks come RF to RF: it has no issuers to space",
           path, why, sched_proj_name[k]);
  return FALSE;
}

/* handoff: rf (ffn_rf.c): W1 and W2 as one stage pair, GELU(h2 . W1)
 * RF to RF from W1's owners into W2's. */
static gboolean stage_ffn_rf(P1 *c, int l, int stage, const ProjStage *w1, const ProjStage *w2, GError **err) {
  LwP1Resident s1, s2;
  ProjTail t1, t2;
  int part1[P1_DEAD], part2[P1_DEAD];
  if (!no_issuers(c, PROJ_W2, "handoff: rf", err)) return FALSE; /* W1's owners issue (resident_owners.c) */
  if (!one_group(c, PROJ_W1, "handoff", err) || !one_group(c, PROJ_W2, "handoff", err)) return FALSE;
  return resident_desc(c, l, stage, w1, &s1, &t1, part1, err) &&
         resident_desc(c, l, stage + 1, w2, &s2, &t2, part2, err) &&
         lw_p1_ffn_rf(c->ir, &c->res, &s1, &s2, ir_prov(c->ir, "handoff"), err);
}

/* attention.handoff: rf | relay (attention_wo.c): wo (stage + 1) built with
 * attention, which it places. */
static gboolean att_wo_rf(P1 *c, int l, int stage, LwP1Attention *at, const ProjStage *wo, GError **err) {
  LwP1Resident st;
  ProjTail pt;
  int part_col[P1_DEAD];
  if (!no_issuers(c, PROJ_WO, c->pp->attn_handoff == ATTHANDOFF_RELAY ? "attention.handoff: relay"
                                                                        : "attention.handoff: rf", err))
    return FALSE;
  if (!one_group(c, PROJ_WO, "attention.handoff", err)) return FALSE;
  return resident_desc(c, l, stage + 1, wo, &st, &pt, part_col, err) &&
         lw_p1_att_wo_rf(c->ir, &c->res, at, &st, c->pp->attn_handoff == ATTHANDOFF_RELAY,
                         ir_prov(c->ir, "attention.handoff"), err);
}

typedef gboolean (*ProjFn)(P1 *c, int l, int stage, const ProjStage *ps, GError **err);

/* layout: packed or packed_x: a resident stage's A chunk (row_tile x
 * k_chunk) must be one 32 x 32 block, one LD (or LD.mc) of one segment. */
static const char *layout_name(const P1 *c) { return c->packed_x ? "packed_x" : "packed"; }

static gboolean packed_fits(P1 *c, GError **err) {
  Ir *ir = c->ir;
  if (c->R != LW_BLOCK) {
    ir_error(ir, err, c->tile_prov, "layout: %s stores 32 x 32 blocks: row_tile must be 32, got %d", layout_name(c),
             c->R);
    return FALSE;
  }
  const LwProj *pj[] = {&c->qkv, &c->wo, &c->w1, &c->w2};
  const int K[] = {c->d, c->d, c->d, c->f};
  for (unsigned k = 0; k < G_N_ELEMENTS(pj); k++) {
    int ks = K[k] / MAX(1, c->pp->k_split[pj[k]->proj]);
    if (MIN(pj[k]->k_chunk, ks) != LW_BLOCK) {
      char knob[32];
      g_snprintf(knob, sizeof knob, "k_chunk.%s", sched_proj_name[pj[k]->proj]);
      ir_error(ir, err, ir_prov(ir, knob), "layout: %s loads A in 32 x 32 blocks: k_chunk.%s must be 32, got %d",
               layout_name(c), sched_proj_name[pj[k]->proj], pj[k]->k_chunk);
      return FALSE;
    }
  }
  return TRUE;
}

/* weights: resident: the tasks made since task t0 (a LayerNorm or attention
 * stage) go round robin to the WGs that the next resident stage `next` will
 * not take, so that its owners, which wait only for the previous resident
 * stage, start and load their weights during this one (resident_owners.c). */
static void keep_clear(P1 *c, guint t0, const ProjStage *next) {
  Ir *ir = c->ir;
  if (c->pp->weights != WEIGHTS_RESIDENT) return;
  LwP1Resident st = {.pj = next->pj, .N = next->N / MAX(1, c->pp->panel_groups[next->pj->proj]),
                     .shards = c->pp->k_split[next->pj->proj], .multicast = c->pp->multicast[next->pj->proj]};
  int taken = lw_p1_resident_owners(ir, &st);
  for (guint k = t0; k < ir->tasks->len; k++) ir_task_at(ir, (int)k)->pin = lw_p1_free_wg(ir, &c->res, taken, (int)(k - t0));
}

/* attention.tile_sync (tile_sync.c): the attention tasks made since t0
 * of every sequence but the last on WGs with no task of the layer's qkv
 * stage (lowering stage qkv_stage) that the next stage's owners leave free,
 * the last sequence's on qkv's WGs; as keep_clear when either is empty. */
static void keep_clear_att(P1 *c, guint t0, int qkv_stage, const ProjStage *next) {
  Ir *ir = c->ir;
  int taken = 0;
  if (c->pp->weights == WEIGHTS_RESIDENT) {
    LwP1Resident st = {.pj = next->pj, .N = next->N / MAX(1, c->pp->panel_groups[next->pj->proj]),
                       .shards = c->pp->k_split[next->pj->proj], .multicast = c->pp->multicast[next->pj->proj]};
    taken = lw_p1_resident_owners(ir, &st);
  }
  if (!lw_p1_att_place(ir, &c->res, t0, qkv_stage, taken, c->N / c->rows - 1)) keep_clear(c, t0, next);
}

/* The program size limit, after stage k (1..7) of layer l: layer 0 is
 * checked stage by stage (a layer grows with seqs, or rows when there is one
 * sequence), so that a plan far over the limit stops early. */
static gboolean budget(P1 *c, int l, int k, GError **err) {
  const Problem *pb = &c->ir->prob;
  gboolean many = pb->seqs > 1;
  if (l > 0) return TRUE;
  return lw_budget_stage(c->ir, err, k, 7, "layer", ir_prov(c->ir, many ? "problem.seqs" : "problem.rows"),
                         many ? "seqs" : "rows", many ? pb->seqs : pb->rows);
}

/* ---- the program size from the arithmetic -----------------------------
 *
 * A lower bound on the instructions one layer's lowering counts (ir->nops),
 * from the decisions alone, so that a plan far over the limit is refused
 * before anything is built (at the largest dims a layer is 5.5 M
 * instructions: building up to the limit cost 3.7 s and 1.4 GB).  Each term
 * counts only instructions the stage below certainly emits for every
 * technique it applies to (the others count 0: the stage-by-stage check
 * stays behind it), so the bound never refuses a program that fits; for the
 * streamed weights of the baseline it is within a few percent
 * (test_gen.c checks both on many shapes):
 *
 *   projections (weights: streamed, no rf_grid: stage_proj), per row tile
 *     and panel: per K chunk its A and W loads and the MMA (lw_project),
 *     the bias (load, add), the tail: qkv its store (one net: the K/V
 *     round trip's transient instructions are not counted, qkv_store.c),
 *     wo and w2 the residual (load, add) and the store, w1 the GELU (8
 *     factored, else 9) and the store;
 *   attention (one row tile a task: stage_att), per (seq, head, row tile i):
 *     the q load, the causal mask (1 + row_tile fills), the store, and
 *     whole rows: 4 per key tile (K load, MMA, V load, MMA) + scale, mask
 *     add and the softmax's 6; blocked: 9 for the first key block, 16 for
 *     each later one, the mask add, the final 2;
 *   LayerNorm (not ln_fold: stage_ln), per task: g and b, and per sub-tile
 *     of rows its load, store and the last three ops of lw_layernorm;
 *   and each task's dependencies, which the sync pass makes a SIG and WAITs
 *     and the lowering counts: a SIG, and a WAIT for the stage before (every
 *     projection and attention task has one). */
typedef struct P1Size {
  int64_t layer;             /* the bound on one layer */
  int64_t tiles, proj_per_tile, att_per_head, ln_tasks, ln_per_task;
  int np[PROJ__COUNT], per[PROJ__COUNT]; /* panels, and per (tile, panel) */
  int att_tiles, att_first, att_blocks, att_per_block;
} P1Size;

static void p1_size(const Ir *ir, int seqs, int rows, P1Size *z) {
  const Schedule *pp = &ir->sched;
  const Problem *pb = &ir->prob;
  int d = pb->d_model, f = pb->d_ff, R = pp->row_tile;
  memset(z, 0, sizeof *z);
  if (R <= 0 || rows % R != 0) return;
  int64_t N = (int64_t)seqs * rows;
  z->tiles = N / R;
  gboolean resident = pp->weights == WEIGHTS_RESIDENT;
  gboolean grid = pp->rf_grid_rows * pp->rf_grid_cols * pp->rf_grid_k > 1 || pp->rf_grid_mc;
  if (!resident && !grid) {
    const int cols[PROJ__COUNT] = {[PROJ_QKV] = 3 * d, [PROJ_WO] = d, [PROJ_W1] = f, [PROJ_W2] = d};
    const int K[PROJ__COUNT] = {[PROJ_QKV] = d, [PROJ_WO] = d, [PROJ_W1] = d, [PROJ_W2] = f};
    const int tail[PROJ__COUNT] = {[PROJ_QKV] = 1, [PROJ_WO] = 3, [PROJ_W1] = (pp->gelu_factor ? 8 : 9) + 1,
                                   [PROJ_W2] = 3};
    for (int k = 0; k < PROJ__COUNT; k++) {
      int P = pp->panel[k], kc = MIN(pp->k_chunk[k], K[k]);
      if (P <= 0 || kc <= 0) continue;
      z->np[k] = cols[k] / P;
      z->per[k] = 3 * ((K[k] + kc - 1) / kc) + 2 + tail[k] + 2; /* + its SIG and WAIT */
      z->proj_per_tile += (int64_t)z->np[k] * z->per[k];
    }
  }
  if (pp->attn_query_tiles <= 1) {
    int t = rows / R;
    /* row tile i: q, mask (1 + R), store, and either the first key block (9)
     * + mask add + the final 2, or scale + mask add + softmax (8) + the
     * diagonal key tile (4): R + 15 both ways; then i more key tiles of 16
     * (blocked) or 4 */
    z->att_tiles = t;
    z->att_first = R + 15 + 2; /* + its SIG and WAIT */
    z->att_blocks = t * (t - 1) / 2;
    z->att_per_block = att_blocked(ir, R, rows) ? 16 : 4;
    z->att_per_head = (int64_t)t * z->att_first + (int64_t)z->att_blocks * z->att_per_block;
  }
  if (!pp->ln_fold && !resident) { /* streamed: a task per row tile (pass_lower_p1's ln_rows) */
    int sub = R, rf = ir->hw.rf_kib * 1024;
    while (sub > 1 && 2 * sub * d * 4 > rf / 2) sub /= 2;
    z->ln_tasks = 2 * (N / R);
    z->ln_per_task = 2 + 5 * ((R + sub - 1) / sub) + 1; /* + its SIG */
  }
  z->layer = z->tiles * z->proj_per_tile + (int64_t)seqs * pb->heads * z->att_per_head + z->ln_tasks * z->ln_per_task;
}

int64_t lw_p1_layer_floor(const Ir *ir) {
  P1Size z;
  p1_size(ir, ir->prob.seqs, ir->prob.rows, &z);
  return z.layer;
}

/* The arithmetic of z, for the refusal. */
static char *size_text(const Ir *ir, int seqs, const P1Size *z) {
  GString *o = g_string_new(NULL);
  if (z->proj_per_tile) {
    g_string_append_printf(o, "projections %" G_GINT64_FORMAT " row tiles x (", z->tiles);
    for (int k = 0; k < PROJ__COUNT; k++)
      g_string_append_printf(o, "%s%s %d panels x %d", k ? " + " : "", sched_proj_name[k], z->np[k], z->per[k]);
    g_string_append_printf(o, ") = %" G_GINT64_FORMAT, z->tiles * z->proj_per_tile);
  }
  if (z->att_per_head)
    g_string_append_printf(o, "%sattention %d seqs x %d heads x (%d row tiles x %d + %d key blocks x %d) = %" G_GINT64_FORMAT,
                           o->len ? ", " : "", seqs, ir->prob.heads, z->att_tiles, z->att_first, z->att_blocks,
                           z->att_per_block, (int64_t)seqs * ir->prob.heads * z->att_per_head);
  if (z->ln_per_task)
    g_string_append_printf(o, "%slayer norms %" G_GINT64_FORMAT " tasks x %" G_GINT64_FORMAT, o->len ? ", " : "",
                           z->ln_tasks, z->ln_per_task);
  return g_string_free(o, FALSE);
}

/* Refuse a plan whose program is over the limit by the arithmetic alone
 * (docs/plan.md section 5): one layer over it, at seqs (or rows when there
 * is one sequence), with the most that fit; else all layers, at layers. */
static gboolean budget_arith(Ir *ir, GError **err) {
  const Problem *pb = &ir->prob;
  P1Size z;
  p1_size(ir, pb->seqs, pb->rows, &z);
  int64_t max = (int64_t)ir->max_ops;
  if (z.layer == 0 || z.layer * pb->layers <= max) return TRUE;
  g_autofree char *arith = size_text(ir, pb->seqs, &z);
  if (z.layer <= max) {
    ir_error(ir, err, ir_prov(ir, "problem.layers"),
             "layers=%d makes a program of at least %" G_GINT64_FORMAT " instructions (at least %" G_GINT64_FORMAT
             " per layer: %s), more than tcc-gen's limit of %" G_GSIZE_FORMAT "; at most %" G_GINT64_FORMAT " fit",
             pb->layers, z.layer * pb->layers, z.layer, arith, ir->max_ops, max / z.layer);
    return FALSE;
  }
  gboolean many = pb->seqs > 1;
  const char *name = many ? "seqs" : "rows";
  int value = many ? pb->seqs : pb->rows, fit = 0;
  if (many) { /* linear in seqs */
    fit = (int)MIN(max / (z.layer / pb->seqs), (int64_t)value);
  } else { /* rows: the largest multiple of row_tile (and 32) that fits */
    int R = ir->sched.row_tile;
    for (int r = value - 1; r >= R && !fit; r--) {
      if (r % R != 0 || r % 32 != 0) continue;
      P1Size y;
      p1_size(ir, 1, r, &y);
      if (y.layer <= max) fit = r;
    }
  }
  g_autofree char *hint = fit >= 1 ? g_strdup_printf("at most %d fit", fit)
                                   : g_strdup_printf("even %s=%d does not fit: the other dims make it large", name,
                                                     many ? 1 : ir->sched.row_tile);
  ir_error(ir, err, ir_prov(ir, many ? "problem.seqs" : "problem.rows"),
           "%s=%d makes one layer's program alone more than tcc-gen's limit of %" G_GSIZE_FORMAT
           " instructions (at least %" G_GINT64_FORMAT ": %s); %s",
           name, value, ir->max_ops, z.layer, arith, hint);
  return FALSE;
}

gboolean pass_lower_p1(Ir *ir, GError **err) {
  const Schedule *pp = &ir->sched;
  if (!pp->present || ir->prob.kind != PROB_P1) {
    ir_error(ir, err, ir->section, "the plan has no p1 section");
    return FALSE;
  }
  const Problem *pb = &ir->prob;
  int d = pb->d_model, f = pb->d_ff, N = pb->seqs * pb->rows;
  P1 c = {.ir = ir, .pp = pp, .d = d, .f = f, .H = pb->heads, .N = N,
          .R = pp->row_tile, .rows = pb->rows,
          .qkv = lw_proj(ir, PROJ_QKV), .wo = lw_proj(ir, PROJ_WO), .w1 = lw_proj(ir, PROJ_W1),
          .w2 = lw_proj(ir, PROJ_W2), .tile_prov = ir_prov(ir, "row_tile"),
          .kv_prov = ir_prov(ir, "kv_writeback"), .prev = -1,
          .res = {.prev_after = -1}};
  for (int k = 0; k < PROJ__COUNT; k++) {
    char knob[32];
    g_snprintf(knob, sizeof knob, "tile_sync.%s", sched_proj_name[k]);
    c.sync_prov[k] = ir_prov(ir, knob);
  }
  /* x h q att x1 h2: N x d each; g: N x f; kv: N x 2d */
  int off = 0, *bufs[] = {&c.scr.x, &c.scr.h, &c.scr.q, &c.scr.att, &c.scr.x1, &c.scr.h2};
  for (unsigned k = 0; k < G_N_ELEMENTS(bufs); k++, off += N * d) *bufs[k] = off;
  c.scr.g = off;
  c.scr.kv = off + N * f;
  /* refinements.ln_stats: producer: 2 N (d / panel) floats each, after rstd */
  IrProv sp = ir_prov(ir, "refinements.ln_stats");
  c.stats_out[0] = (LwP1LnStatsOut){.col = c.scr.h + N, .d = d, .prov = sp, .task = -1};
  c.stats_out[1] = (LwP1LnStatsOut){.col = c.scr.h2 + N, .d = d, .prov = sp, .task = -1};
  /* the ABI sizes scratch for exactly this layout (wl_scratch_bytes) */
  uint64_t need = 4u * ((uint64_t)c.scr.kv + 2u * (uint64_t)N * (uint64_t)d);
  if (need > wl_scratch_bytes(pb)) {
    ir_error(ir, err, c.base, "p1 baseline needs %" G_GUINT64_FORMAT " bytes of scratch, the ABI has %" G_GUINT64_FORMAT,
             need, wl_scratch_bytes(pb));
    return FALSE;
  }
  /* the weights strategy of the projection stages (docs/plan.md, weights);
   * with resident weights LayerNorm (VEC-bound) gets half the WGs used (the
   * owners of the next stage keep the others: keep_clear), tasks of N /
   * (WGs / 2) rows that stream them in 4 pieces: all WGs loading their rows
   * at once, then storing them at once, passed 20 W */
  gboolean resident = pp->weights == WEIGHTS_RESIDENT;
  c.packed = pp->layout != LAYOUT_ROW;
  c.packed_x = pp->layout == LAYOUT_PACKED_X;
  if (c.packed && !packed_fits(&c, err)) return FALSE;
  gboolean grid = pp->rf_grid_rows * pp->rf_grid_cols * pp->rf_grid_k > 1 || pp->rf_grid_mc;
  if (grid && resident) {
    const char *knob = pp->rf_grid_rows > 1   ? "rf_grid.rows"
                       : pp->rf_grid_cols > 1 ? "rf_grid.cols"
                       : pp->rf_grid_k > 1    ? "rf_grid.k_split"
                                              : "rf_grid.multicast";
    ir_error(ir, err, ir_prov(ir, knob),
             "%s needs weights: streamed: resident owners keep their W blocks in RF, so a grid saves no W "
             "loads; their grid is panels.* (the columns one A chunk feeds) and their K split k_split.*",
             knob);
    return FALSE;
  }
  ProjFn proj = resident ? stage_proj_resident : grid ? stage_proj_grid : stage_proj;
  gboolean (*att)(P1 *, int, int, GError **) = pp->attn_query_tiles > 1 ? stage_att_grouped : stage_att;
  int wgs = (pp->sms_used > 0 ? pp->sms_used : ir->hw.sms) * ir->hw.wgs_per_sm;
  c.ln_rows = c.R;
  while (resident && c.ln_rows > 1 && N / c.ln_rows < wgs / 2 && c.ln_rows % 2 == 0) c.ln_rows /= 2;
  c.ln_sub = resident ? MAX(1, c.ln_rows / 4) : 0;
  if (!budget_arith(ir, err)) return FALSE; /* before anything is built */
  for (int l = 0; l < pb->layers; l++) {
    int s0 = 7 * l;
    g_autofree char *ksym = g_strdup_printf("k_out.l%d", l), *vsym = g_strdup_printf("v_out.l%d", l);
    gboolean last = l == pb->layers - 1;
    ProjStage qkv = {.name = "qkv", .kv_sym = {ksym, vsym}, .role = ROLE_QKV, .pj = &c.qkv,
                     .a_col = c.scr.h, .K = d, .N = 3 * d};
    if (pp->ln_fold) /* ln_fold_centred.c: x itself, normalised by the owners */
      qkv.a_sym = in_sym(l), qkv.a_col = in_col(&c, l), qkv.fold = &c.fold[PROJ_QKV];
    ProjStage wo = {.name = "wo", .res_sym = in_sym(l), .dst_sym = "scratch", .role = ROLE_WO, .pj = &c.wo,
                    .a_col = c.scr.att, .K = d, .N = d, .res_col = in_col(&c, l), .dst_col = c.scr.x1};
    ProjStage w1 = {.name = "w1", .dst_sym = "scratch", .role = ROLE_W1, .pj = &c.w1, .a_col = c.scr.h2,
                    .K = d, .N = f, .dst_col = c.scr.g, .gelu = 1};
    if (pp->ln_fold) w1.a_col = c.scr.x1, w1.fold = &c.fold[PROJ_W1];
    ProjStage w2 = {.name = "w2", .res_sym = "scratch", .dst_sym = last ? "out" : "scratch", .role = ROLE_W2,
                    .pj = &c.w2, .a_col = c.scr.g, .K = f, .N = d, .res_col = c.scr.x1,
                    .dst_col = last ? 0 : c.scr.x};
    if (lw_p1_ln_stats_producer(pp, PROJ_W1)) wo.stats = &c.stats_out[1]; /* ln_stats.c: x1's producers */
    if (lw_p1_ln_stats_producer(pp, PROJ_QKV) && !last) w2.stats = &c.stats_out[0]; /* the next x's */
    guint t0 = ir->tasks->len;
    stage_ln(&c, l, s0, "ln1", in_sym(l), in_col(&c, l), c.scr.h, PROJ_QKV);
    keep_clear(&c, t0, &qkv);
    if (!budget(&c, l, 1, err)) return FALSE;
    if (!proj(&c, l, s0 + 1, &qkv, err) || !budget(&c, l, 2, err)) return FALSE;
    if (resident && pp->attn_handoff != ATTHANDOFF_HBM && pp->attn_query_tiles > 1) { /* attention_wo.c */
      if (!stage_att_with(&c, l, s0 + 2, &wo, err) || !budget(&c, l, 4, err)) return FALSE;
    } else {
      t0 = ir->tasks->len;
      if (!att(&c, l, s0 + 2, err)) return FALSE;
      if (pp->attn_tile_sync)
        keep_clear_att(&c, t0, s0 + 1, &wo);
      else
        keep_clear(&c, t0, &wo);
      if (!budget(&c, l, 3, err)) return FALSE;
      if (!proj(&c, l, s0 + 3, &wo, err) || !budget(&c, l, 4, err)) return FALSE;
    }
    t0 = ir->tasks->len;
    stage_ln(&c, l, s0 + 4, "ln2", "scratch", c.scr.x1, c.scr.h2, PROJ_W1);
    keep_clear(&c, t0, &w1);
    if (!budget(&c, l, 5, err)) return FALSE;
    if (resident && pp->handoff == HANDOFF_RF) { /* ffn_rf.c */
      if (!stage_ffn_rf(&c, l, s0 + 5, &w1, &w2, err) || !budget(&c, l, 7, err)) return FALSE;
    } else {
      if (!proj(&c, l, s0 + 5, &w1, err) || !budget(&c, l, 6, err)) return FALSE;
      if (!proj(&c, l, s0 + 6, &w2, err) || !budget(&c, l, 7, err)) return FALSE;
    }
    if (!lw_budget_units(ir, err, l + 1, pb->layers, "layer", ir_prov(ir, "problem.layers"),
                         "layers"))
      return FALSE;
  }
  return TRUE;
}
