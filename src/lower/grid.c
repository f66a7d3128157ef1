/* grid.c - P1's 2-D register grid (rf_grid.rows, rf_grid.cols,
 * rf_grid.k_split; seeds' techniques 9 and 10) for the projections with
 * streamed weights (grid.h, lw_p1_grid_stage).
 *
 * The baseline streams, per task = (row tile, panel), an A chunk and a W
 * chunk for each MMA: 2 loads per MMA.  A grid task takes `rows` row tiles
 * x `cols` panels, i.e. rows x cols accumulators, and per K round (k_chunk
 * rows of K) loads the rows A chunks and the cols W chunks once each and
 * issues rows x cols MMAs, one per accumulator:
 *
 *   per K round k (of the task's K shard), b = k % (buffer sets):
 *     LD a[b][i] <- A[tile t0+i, k ..]      i < rows
 *     LD w[b][j] <- W[k .., panel p0+j]     j < cols
 *     MMA acc[i][j] (+)= a[b][i] . w[b][j]
 *
 * so rows + cols loads feed rows x cols MMAs (2 x 4: 6 loads for 8 MMAs,
 * 16 in the baseline).  The accumulators are independent chains: with
 * hardware.mma_arrays > 1 one WG's MMAs can run on several arrays at once.
 *
 * Double buffering: when both sets of A/W buffers fit the WG's RF beside
 * the accumulators and the finish's tensors, round k+1's loads are issued
 * before round k's MMAs (into the other set), so the loads run while the
 * MMAs do; otherwise one set, each round's loads waiting for the previous
 * round's MMAs.  When not even one set fits, rf_alloc refuses the task and
 * names rf_grid.rows (the task's knob).
 *
 * rf_grid.k_split = S splits each grid's K over S tasks: shards 1..S-1
 * store their partial accumulators to a scratch buffer dead in the stage
 * and SIG l<L>_<proj>_r<T>_p<P>_part; shard 0 WAITs for all S-1 of them,
 * adds the partials, then the bias and the finish.  Every shard > 0 task
 * is made before every shard 0 task, so a WG never holds a shard 0 task
 * ahead of a shard it waits for (placement keeps each WG's program in task
 * order): no deadlock.
 *
 * Resident weights (resident_owners.c) keep every W block in its owner's RF:
 * there a grid would save no W loads, and an owner's panel (panels.*) is
 * already its grid's columns fed by one A chunk; p1.c refuses
 * rf_grid there (docs/techniques.md measures the resident equivalents). */
#include <string.h>

#include "grid.h"

#include "attention.h"
#include "builder.h"

/* The RF tensors of one grid task with nb buffer sets. */
static gboolean task_fits(const Ir *ir, const LwP1Grid *g, int kc, int nb) {
  int n = 0, shape[2 * 16 + 64 + 4][2];
  int P = g->pj->panel;
  for (int b = 0; b < nb; b++) {
    for (int i = 0; i < g->rows; i++) shape[n][0] = g->R, shape[n++][1] = kc;
    for (int j = 0; j < g->cols; j++) shape[n][0] = kc, shape[n++][1] = P;
  }
  for (int k = 0; k < g->rows * g->cols; k++) shape[n][0] = g->R, shape[n++][1] = P;
  shape[n][0] = 1, shape[n++][1] = g->cols * P; /* bias */
  for (int k = 0; k < g->extra; k++) shape[n][0] = g->R, shape[n++][1] = P;
  if (g->shards > 1) shape[n][0] = g->R, shape[n++][1] = P; /* a partial sum */
  return lw_attention_fits(ir, (const int(*)[2])shape, n, ir->hw.vl);
}

int lw_p1_grid_buffers(const Ir *ir, const LwP1Grid *g) {
  int kc = MIN(g->pj->k_chunk, g->K / g->shards);
  return task_fits(ir, g, kc, 2) ? 2 : 1;
}

gboolean lw_p1_grid_check(Ir *ir, const LwP1Grid *g, GError **err) {
  int np = g->N / g->pj->panel, KS = g->K / g->shards;
  if (g->tiles % g->rows != 0) {
    ir_error(ir, err, ir_prov(ir, "rf_grid.rows"),
             "rf_grid.rows=%d does not divide the %d row tiles (%d rows / row_tile=%d)", g->rows, g->tiles,
             g->tiles * g->R, g->R);
    return FALSE;
  }
  if (np % g->cols != 0) {
    char knob[32];
    g_snprintf(knob, sizeof knob, "panels.%s", g->name);
    ir_error(ir, err, ir_prov(ir, "rf_grid.cols"),
             "rf_grid.cols=%d does not divide %s's %d panels (N=%d / panels.%s=%d)", g->cols, g->name, np, g->N,
             g->name, g->pj->panel);
    return FALSE;
  }
  if (g->K % g->shards != 0 || KS % 32 != 0) {
    ir_error(ir, err, ir_prov(ir, "rf_grid.k_split"),
             "rf_grid.k_split=%d: %s's K=%d must split into shards of a multiple of 32 rows", g->shards, g->name,
             g->K);
    return FALSE;
  }
  int kc = MIN(g->pj->k_chunk, KS);
  if (KS % kc != 0) {
    char knob[32];
    g_snprintf(knob, sizeof knob, "k_chunk.%s", g->name);
    ir_error(ir, err, ir_prov(ir, knob), "k_chunk.%s=%d does not divide a K shard of %d rows (K=%d / rf_grid.k_split=%d)",
             g->name, g->pj->k_chunk, KS, g->K, g->shards);
    return FALSE;
  }
  if (g->shards > 1 && g->part_room < (int64_t)(g->shards - 1) * g->tiles * g->R * g->N) {
    ir_error(ir, err, ir_prov(ir, "rf_grid.k_split"),
             "rf_grid.k_split=%d: %s's %d partial sums of %d x %d floats need %" G_GINT64_FORMAT
             " floats of scratch, and the buffers dead during the stage have %" G_GINT64_FORMAT
             ": lower rf_grid.k_split",
             g->shards, g->name, g->shards - 1, g->tiles * g->R, g->N,
             (int64_t)(g->shards - 1) * g->tiles * g->R * g->N, g->part_room);
    return FALSE;
  }
  return TRUE;
}

/* The event shard s > 0 of grid (tile t0, panel p0) signals. */
static char *part_event(const LwP1Grid *g, int t0, int p0) {
  return g_strdup_printf("l%d_%s_r%d_p%d_part", g->layer, g->name, t0, p0);
}

/* One grid task being built: its A/W buffers (set b, block i/j). */
typedef struct GridTask {
  Ir *ir;
  const LwP1Grid *g;
  int task, t0, p0, s, nb, kc, KS;
  int wave; /* rf_grid.multicast: the task's wave (-1: plain loads) */
  int a[2][8], w[2][8];
} GridTask;

/* K round k's loads (rows A chunks, cols W chunks) into buffer set k % nb,
 * in the order the previous round's MMAs (row by row) are done with the
 * buffers: A_i after MMA (i, cols-1), W_j after MMA (rows-1, j), ties A
 * first.  Single-buffered, a load waits for the last MMA that reads its
 * buffer and the WG issues in order, so a load freed early is not held
 * behind one freed late (2 x 4: A0, W0, W1, W2, A1, W3 instead of A1
 * before any W). */
static void round_loads(const GridTask *gt, int k) {
  const LwP1Grid *g = gt->g;
  Ir *ir = gt->ir;
  int k0 = gt->s * gt->KS + k * gt->kc, b = k % gt->nb, P = g->pj->panel, R = g->rows, C = g->cols;
  LwMat am = {g->a.col, g->a.stride, g->a.packed};
  GArray *ops = ir_task_at(ir, gt->task)->ops;
  for (int i = 0, j = 0; i < R || j < C;) {
    if (i < R && (j >= C || i * C + C - 1 <= (R - 1) * C + j)) {
      guint from = ops->len;
      lw_load_mat(ir, gt->task, ir_all(ir, gt->a[b][i]), g->a.sym, &am, (gt->t0 + i) * g->R, k0,
                  gt->wave >= 0 ? g->mc_prov : g->a.prov);
      for (guint o = from; gt->wave >= 0 && o < ops->len; o++) /* the multicast pass's candidates */
        g_array_index(ops, IrOp, o).mods |= IR_MOD_CAND;
      i++;
    } else {
      lw_load(ir, gt->task, ir_all(ir, gt->w[b][j]), g->wsym, k0, (gt->p0 + j) * P, g->N, g->kprov);
      if (gt->wave >= 0) g_array_index(ops, IrOp, ops->len - 1).mods |= IR_MOD_CAND;
      j++;
    }
  }
}

/* rf_grid.multicast: the waves' shape, `a` row groups x `b` panel
 * groups of grids (divisors of the stage's), a x b tasks that divide the
 * WGs placement deals to (mc_set): placement deals the tasks round robin
 * in task order, so a wave's tasks are on different WGs and every wave
 * runs alone on its WGs, after the wave before.  At most rf_grid.wave_wgs
 * tasks per SM (mc_wave): placement deals the SMs in turn, so a wave of
 * n x SMs tasks takes n WGs of each, and the SM's other WGs run other
 * waves.  Fewer keep the members that wait for each other's buffers few
 * and the arrays busy (at d_model 1024, waves of 16 tasks: 867,972 cycles
 * unfitted; of 64: 1,015,876; of 8: 915,039); more share each chunk among
 * more tasks, which lowers HBM's lines and so the power that the fitting
 * must bring under the limit (the largest P1 of the suite, waves of 32
 * against 16: 1,842,912 cycles against 1,770,499, HBM's energy 9.69 mJ
 * against 13.15, and 1000-cycle windows of 17-18 W against 20-21 W between
 * the rounds).  Of those, the shape with the fewest loads per MMA: a
 * wave's K round reads a x rows A chunks and b x cols W chunks for
 * a b rows cols MMAs.  FALSE (plain loads) when no wave has two tasks. */
static gboolean wave_shape(const LwP1Grid *g, int *wa, int *wb) {
  int rg = g->tiles / g->rows, pg = g->N / g->pj->panel / g->cols;
  double best = 0;
  *wa = *wb = 1;
  for (int a = 1; a <= rg; a++)
    for (int b = 1; rg % a == 0 && b <= pg; b++) {
      if (pg % b != 0 || a * b < 2 || g->mc_set % (a * b) != 0) continue;
      if (a * b > g->mc_wave) continue;
      double loads = 1.0 / (b * g->cols) + 1.0 / (a * g->rows); /* per MMA */
      if (best == 0 || loads < best - 1e-12) best = loads, *wa = a, *wb = b;
    }
  return best > 0;
}

/* rf_grid.multicast: the cycles a task waits before each accumulator's
 * finish but the first.  The members of a set run in step, so a round's
 * tasks (one per WG: mc_set) end together, and their finishes (each
 * accumulator's store, and wo's and w2's residual load) would reach HBM
 * at once: at d_model 1024 about 32,000 lines in a few thousand cycles,
 * 1000-cycle windows of 25-29 W that no load pacing reaches.  Spaced by
 * mc_set x a block's lines x its transfers / (hbm_channels / 2) cycles,
 * a round's finishes take at most half of HBM's lines a cycle (at d_model
 * 1024, qkv: 1,024 cycles; fitted 3,800,475 -> 1,988,003 cycles,
 * docs/techniques.md).  The first finishes are spread too: the task of
 * rank q among a wave's n waits q / n of the gap before its first, so
 * that the tasks of a wave take their turns within each gap instead of
 * finishing together at its start (grid_task). */
static int64_t finish_gap(const Ir *ir, const LwP1Grid *g) {
  int64_t lines = ((int64_t)g->R * g->pj->panel * 4 + 63) / 64, rate = MAX(1, ir->hw.hbm_channels / 2);
  return ((int64_t)g->mc_set * lines * g->finish_transfers + rate - 1) / rate;
}

/* One task: grid (tiles t0.., panels p0..), K shard s. */
static void grid_task(Ir *ir, const LwP1Grid *g, int t0, int p0, int s, int nb, int wave, int rank, int nwave) {
  int P = g->pj->panel, GR = g->rows, GC = g->cols, S = g->shards, KS = g->K / S;
  int kc = MIN(g->pj->k_chunk, KS), nk = KS / kc;
  g_autofree char *tag = S > 1 ? g_strdup_printf("l%d.%s.r%d.p%d.k%d", g->layer, g->name, t0, p0, s)
                               : g_strdup_printf("l%d.%s.r%d.p%d", g->layer, g->name, t0, p0);
  IrRole role = g->role;
  role.tile = t0, role.panel = p0, role.kshard = S > 1 ? s : role.kshard;
  GridTask gt = {.ir = ir, .g = g, .t0 = t0, .p0 = p0, .s = s, .nb = nb, .kc = kc, .KS = KS, .wave = wave};
  int task = gt.task = lw_task(ir, tag, g->stage, g->prov, role);
  if (g->after >= 0) ir_task_waits(ir, task, g->after);
  ir_task_signals(ir, task, g->grp);
  /* buffers a<set><i>, w<set><j>; accumulators acc<i><j>.  With
   * rf_grid.multicast the A buffers are named alike on the wave's tasks of
   * a row group, the W buffers on those of a panel group: the multicast
   * pass's LD.mc targets */
  g_autofree char *atag = wave >= 0 ? g_strdup_printf("l%d.%s.r%d.x%d", g->layer, g->name, t0, wave) : g_strdup(tag);
  g_autofree char *wtag = wave >= 0 ? g_strdup_printf("l%d.%s.p%d.x%d", g->layer, g->name, p0, wave) : g_strdup(tag);
  int acc[8][8];
  for (int b = 0; b < nb; b++) {
    char what[8];
    for (int i = 0; i < GR; i++) {
      g_snprintf(what, sizeof what, "a%d%d", b, i);
      gt.a[b][i] = lw_rf_sub(ir, task, atag, what, g->R, kc);
    }
    for (int j = 0; j < GC; j++) {
      g_snprintf(what, sizeof what, "w%d%d", b, j);
      gt.w[b][j] = lw_rf_sub(ir, task, wtag, what, kc, P);
    }
  }
  for (int i = 0; i < GR; i++)
    for (int j = 0; j < GC; j++) {
      char what[8];
      g_snprintf(what, sizeof what, "acc%d%d", i, j);
      acc[i][j] = lw_rf_sub(ir, task, tag, what, g->R, P);
    }
  if (nb > 1) round_loads(&gt, 0);
  for (int k = 0; k < nk; k++) {
    if (nb == 1)
      round_loads(&gt, k);
    else if (k + 1 < nk)
      round_loads(&gt, k + 1); /* the other set, while this round's MMAs run */
    for (int i = 0; i < GR; i++)
      for (int j = 0; j < GC; j++) {
        IrOp *op = lw_op(ir, task, IR_MMA, ir_all(ir, acc[i][j]), ir_all(ir, gt.a[k % nb][i]),
                         ir_all(ir, gt.w[k % nb][j]), g->kprov);
        if (k == 0) op->mods = IR_MOD_Z;
      }
  }
  g_autofree char *ev = part_event(g, t0, p0);
  int64_t plane = (int64_t)g->tiles * g->R * g->N; /* one shard's partial matrix */
  if (s > 0) { /* the partial sums, for shard 0 */
    for (int i = 0; i < GR; i++)
      for (int j = 0; j < GC; j++)
        lw_store(ir, task, ir_all(ir, acc[i][j]), "scratch", (t0 + i) * g->R,
                 (int)(g->part_col + (s - 1) * plane) + (p0 + j) * P, g->N, g->kprov);
    lw_sig(ir, task, ev, g->kprov);
    return;
  }
  if (S > 1) { /* add the other shards' partial sums */
    IrView pv = ir_all(ir, lw_rf_sub(ir, task, tag, "part", g->R, P));
    lw_wait(ir, task, ev, S - 1, g->kprov);
    for (int i = 0; i < GR; i++)
      for (int j = 0; j < GC; j++)
        for (int q = 1; q < S; q++) {
          IrView av = ir_all(ir, acc[i][j]);
          lw_load(ir, task, pv, "scratch", (t0 + i) * g->R, (int)(g->part_col + (q - 1) * plane) + (p0 + j) * P,
                  g->N, g->kprov);
          lw_op(ir, task, IR_VADD, av, av, pv, g->kprov);
        }
  }
  int bias = lw_rf_sub(ir, task, tag, "bias", 1, GC * P); /* one load for the grid's columns */
  lw_load(ir, task, ir_all(ir, bias), g->bsym, 0, p0 * P, g->N, g->pj->prov);
  int64_t gap = wave >= 0 ? finish_gap(ir, g) : 0;
  for (int i = 0; i < GR; i++)
    for (int j = 0; j < GC; j++) {
      IrView av = ir_all(ir, acc[i][j]);
      lw_op(ir, task, IR_VADD, av, av, ir_win(bias, 0, 1, j * P, P), g->pj->prov);
      if (i + j > 0) lw_waitt(ir, task, gap, g->mc_prov);
      else if (rank > 0) lw_waitt(ir, task, (gap * rank + nwave - 1) / nwave, g->wave_prov); /* its turn */
      g->finish(g->ctx, task, tag, t0 + i, (p0 + j) * P, av);
    }
}

gboolean lw_p1_grid_stage(Ir *ir, const LwP1Grid *g, GError **err) {
  if (!lw_p1_grid_check(ir, g, err)) return FALSE;
  int np = g->N / g->pj->panel, nb = lw_p1_grid_buffers(ir, g), wa = g->tiles / g->rows, wb = np / g->cols;
  gboolean mc = g->mc_set > 1 && wave_shape(g, &wa, &wb);
  int wave = 0;
  /* shards S-1..1 of every grid first, then the shard 0 tasks (see
   * above); a shard's grids wave by wave (one wave: all of them) */
  for (int s = g->shards - 1; s >= 0; s--)
    for (int r0 = 0; r0 < g->tiles; r0 += wa * g->rows)
      for (int q0 = 0; q0 < np; q0 += wb * g->cols, wave++)
        for (int t0 = r0; t0 < r0 + wa * g->rows; t0 += g->rows)
          for (int p0 = q0; p0 < q0 + wb * g->cols; p0 += g->cols)
            grid_task(ir, g, t0, p0, s, nb, mc ? wave : -1, /* its rank in the wave */
                      ((t0 - r0) / g->rows) * wb + (p0 - q0) / g->cols, wa * wb);
  return TRUE;
}
