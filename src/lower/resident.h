/* resident.h - D1's resident weights and history K/V (resident.c) and
 * their placement by integer program (resident_ilp.c). */
#ifndef TCC_LOWER_RESIDENT_H
#define TCC_LOWER_RESIDENT_H

#include "ir.h"

/* The shape of projection j's resident units: panel columns and K shards
 * (the knobs panels.* and k_split.*; with ffn.fused, W1 in panels of
 * ffn.channels columns and W2 in ffn.producers shards of its full width,
 * shard p kept with W1's panel p). */
void lw_unit_shape(const Ir *ir, SchedProj j, int *panel, int *ks);

/* Resident weights (resident.c, weights: resident): which WG keeps each
 * (layer, projection, panel) and the RF tensors of its weights (K x P) and
 * bias (1 x P), owned by that WG's preload task.  With attention slices,
 * the history K/V too where it fits beside the weights (kv, layer by layer
 * from layer 0): each (layer, head, slice) gets a WG keeping its block of
 * history K and V rows, and the
 * last slice also the rows of the new positions (kv_rows = rows of each
 * slice's K/V tensors: the block, + steps for the last slice). */
typedef struct LwResident {
  int layers, max_panels, max_split; /* layers: those that keep their weights */
  int *wg, *w, *b;
  int *used;           /* partitions taken on each WG                     */
  int *preload;        /* per (layer, WG): the preload task loading what  */
                       /* the WG keeps of the layer (-1: none); one task  */
                       /* for all layers unless deferred                  */
  gboolean deferred;   /* power.deferred_loads: a preload task per layer  */
  IrProv prov;
  GHashTable *consts;  /* "wg/sym" -> tensor of lw_resident_const          */
  gboolean kv;         /* some layer's history K/V is resident: layers     */
  int kv_layers;       /* 0 .. kv_layers - 1 (those whose blocks all fit)   */
  int heads, slices, block; /* slices per head (attention.new_slice's too),   */
                       /* history rows of each history slice               */
  gboolean new_slice;  /* attention.new_slice: the last slice holds only   */
                       /* the new positions (else also the last block)     */
  int *kv_wg, *kt, *vt; /* per (layer, head, slice)                         */
} LwResident;
/* Give every panel a WG (FALSE with an error at the knob when they do not
 * fit), and, with attention slices, every slice's history K/V of the first
 * layers whose slices all fit beside the weights; then make the preload
 * tasks that load them (before any step). */
gboolean lw_resident_place(Ir *ir, LwResident *r, GError **err);
void lw_resident_preload(Ir *ir, LwResident *r, IrProv prov);
/* power.deferred_loads: lw_resident_preload makes layer 0's preload tasks
 * only; the lowering makes layer l's (l >= 1) with this, after step 0's
 * tasks of layer l-1, so that they come after those in each WG's program:
 * the next layer's loads run during this layer's compute. */
void lw_resident_preload_layer(Ir *ir, LwResident *r, int l);
int lw_resident_preload_task(const Ir *ir, const LwResident *r, int wg, int l);
/* Does layer l keep its history K/V (lw_resident_kv_wg and the rest apply)? */
gboolean lw_resident_kv_has(const LwResident *r, int l);
/* The resident K and V tensors of (layer, head, slice) and their WG. */
int lw_resident_kv_wg(const LwResident *r, int l, int h, int k);
int lw_resident_k(const LwResident *r, int l, int h, int k);
int lw_resident_v(const LwResident *r, int l, int h, int k);
/* The row of the last slice's K/V tensors where new position t goes. */
int lw_resident_new_row(const LwResident *r, int t);
/* A constant vector (columns 0..cols of HBM symbol `sym`, e.g. a LayerNorm
 * gain of layer l) kept in the RF of `wg` by its preload task (of layer l): loaded the first time
 * a task of that WG asks, then shared. */
IrView lw_resident_const(Ir *ir, LwResident *r, int wg, int l, const char *sym, int cols, IrProv prov);
/* Does layer l keep its weights (resident_layers: the first layers do)? */
gboolean lw_resident_has(const LwResident *r, int l);
int lw_resident_wg(const LwResident *r, int l, SchedProj j, int p);
/* With k_split: the WG of K shard s of a panel (shard 0's is lw_resident_wg),
 * acc = a . W_s (a: the shard's K/ks columns of the input; no bias), and
 * the panel's bias (kept with shard 0). */
int lw_resident_shard_wg(const LwResident *r, int l, SchedProj j, int p, int s);
void lw_resident_project_shard(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j,
                               int p, int s, IrView acc, IrProv prov);
IrView lw_resident_bias(const Ir *ir, const LwResident *r, int l, SchedProj j, int p);
IrView lw_resident_weights(const Ir *ir, const LwResident *r, int l, SchedProj j, int p);
/* The partitions a task may fill beside resident weights: rf_temp_kib's. */
int lw_resident_task_parts(const Ir *ir);
/* acc (1 x P) = a . W + b with the panel's resident tensors; the task must
 * be pinned to lw_resident_wg. */
void lw_resident_project(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j, int p,
                         IrView acc, IrProv prov);
void lw_resident_free(LwResident *r);

/* Do the resident K shards of projection j all-reduce their partial sums
 * with RED (d1.c, stage_proj_split: k_split.wo or k_split.w2 > 1 on a
 * machine with REDUCE units)?  Then a panel's shards must be on different
 * WGs: shard 0 reads the sum right after its own contribution, so a second
 * shard behind it on the same WG never contributes (a deadlock). */
gboolean lw_red_split(const Ir *ir, SchedProj j);

/* One unit of resident placement: K shard k of panel p of projection j in
 * layer l, and the RF partitions its weights take. */
typedef struct LwUnit {
  int parts, l, j, p, k;
} LwUnit;
/* placement.solver: ilp (resident_ilp.c): a WG for each of the n units from
 * GLPK (wg[i]), among the WGs of `order` (the SMs used, less the pacing
 * WG), each holding at most `cap` partitions of units, and the K shards of
 * a panel that all-reduce with RED (lw_red_split) on different WGs;
 * `constructive` (or NULL when first fit failed) is the constructive
 * placement, the solver's first incumbent and its reported yardstick (not
 * offered, nor kept on a tie, when it puts two RED shards of a panel on one
 * WG).  Records its account in ir->ilp.  When GLPK stops at
 * placement.time_limit_s with no placement, the constructive one (if it
 * fits and keeps the RED shards apart) is used, with a warning
 * (ir_warning) and the status IR_ILP_FALLBACK.  FALSE with an error at
 * placement.solver when no placement exists, or none is found and the
 * constructive one cannot stand in. */
gboolean lw_place_ilp(Ir *ir, const LwUnit *u, int n, const GArray *order, int cap,
                      const int *constructive, int *wg, GError **err);
/* Tests only: GLPK's time limit in milliseconds instead of
 * placement.time_limit_s (0: the plan's).  1 stops the search at GLPK's
 * first check of the clock, before any incumbent, on any machine (its test
 * is limit - 1 <= the milliseconds spent). */
extern int lw_ilp_test_tm_lim_ms;

#endif
