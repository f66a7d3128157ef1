/* lower.h - building blocks shared by the lowering passes (lower_d1.c,
 * lower_p1.c): legal RF tensors, LayerNorm, GELU, K-chunked projections and
 * output stores.  Each emits ops into one task. */
#ifndef TCC_LOWER_H
#define TCC_LOWER_H

#include "ir.h"

/* The knobs of a projection, with their provenance. */
typedef struct LwProj {
  SchedProj proj;
  int panel;        /* output columns per task */
  int k_chunk;      /* K rows per loaded chunk */
  IrProv prov;      /* "d1.panels.qkv": the task's knob            */
  IrProv kprov;     /* "d1.k_chunk.qkv": cited by the chunk loads and MMAs */
} LwProj;

/* The knobs of projection k in a problem section, with their provenance. */
LwProj lw_proj(const Ir *ir, SchedProj k);

/* An RF tensor of `task` sized legally for the partition rule: rows are
 * padded when rows x cols is larger than a partition but not a whole number
 * of partitions; ir_all() and lw_view() give the unpadded rows (the padding is
 * never read or written). */
int lw_rf(Ir *ir, int task, const char *name, int rows, int cols);
IrView lw_view(const Ir *ir, int t, int rows, int cols);
/* lw_rf named "TAG.WHAT" (built without printf: the lowering names
 * thousands of tensors). */
int lw_rf_sub(Ir *ir, int task, const char *tag, const char *what, int rows, int cols);

/* The ABI symbols of a projection's weights and bias in layer l
 * ("wqkv.l0", "bqkv.l0"; docs/workloads.md §3).  g_free them. */
char *lw_weight_sym(SchedProj j, int l);
char *lw_bias_sym(SchedProj j, int l);

/* A new task with its role (what it computes; ir.h). */
int lw_task(Ir *ir, const char *tag, int stage, IrProv prov, IrRole role);

/* An op d = k(a, b) (b absent: ir_win(-1, ...)), or d = k(a, imm), citing
 * `prov`; returns it for its modifiers. */
IrOp *lw_op(Ir *ir, int task, IrOpKind k, IrView d, IrView a, IrView b, IrProv prov);
IrOp *lw_opi(Ir *ir, int task, IrOpKind k, IrView d, IrView a, float imm, IrProv prov);

/* LD `rf` (rows x cols) from HBM symbol `sym` at element (r0, c0) of a
 * matrix with `stride` floats per row. */
void lw_load(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov);

/* A matrix of `width` floats a row at float offset `base` of an HBM symbol,
 * row-major or (layout: packed) in LW_BLOCK x LW_BLOCK blocks, each block
 * contiguous and row-major inside, the blocks of a block row in column
 * order: a block is one DMA segment.  lw_mat_at gives the lw_load/lw_store
 * (r0, c0, stride) of element (r, c); a packed window must lie inside one
 * block.  lw_load_mat / lw_store_mat move any window, one transfer per
 * block it touches when packed. */
#define LW_BLOCK 32
typedef struct LwMat {
  int base, width;
  gboolean packed;
} LwMat;
void lw_mat_at(const LwMat *m, int r, int c, int *r0, int *c0, int *stride);
void lw_load_mat(Ir *ir, int task, IrView rf, const char *sym, const LwMat *m, int r, int c, IrProv prov);
void lw_store_mat(Ir *ir, int task, IrView rf, const char *sym, const LwMat *m, int r, int c, IrProv prov);
/* ST `rf` to HBM symbol `sym` at element (r0, c0). */
void lw_store(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov);

/* LayerNorm's statistics of the rows of x (R x d), two-pass as the
 * reference: mean (R x 1) = sum(x) / d, c = x - mean, sq = c * c (R x d; sq
 * may be c), rstd (R x 1) = 1 / sqrt(sum(sq) / d + eps).  lw_ln_rstd_tail:
 * its last step, var (R x 1, the row sums of squares) -> rstd in place. */
void lw_ln_rstd(Ir *ir, int task, IrView x, IrView c, IrView sq, IrView mean, IrView rstd,
                IrProv prov);
void lw_ln_rstd_tail(Ir *ir, int task, IrView var, int d, IrProv prov);
/* h = LayerNorm(x) * g + b over the rows of x (R x d); g, b are 1 x d RF
 * views; `tmp` is R x d scratch, `mean`/`var` R x 1. */
void lw_layernorm(Ir *ir, int task, IrView x, IrView h, IrView g, IrView b, IrView tmp,
                  IrView mean, IrView var, IrProv prov);
/* Row softmax of s (R x n) in place: m = row max, s = exp(s - m),
 * z = 1 / row sum, s *= z; m and z are R x 1 scratch. */
void lw_softmax(Ir *ir, int task, IrView s, IrView m, IrView z, IrProv prov);
/* A matrix handed from one stage's tasks to the next's (handoff.c): through
 * HBM (rf FALSE: the producer stores each part as it is put, the consumer
 * loads what it gets) or from RF to RF (rf TRUE: when a consumer gets a
 * window, every producer part that meets it gets an `ST wgN.x` of the
 * overlap into the consumer's tensor).  Element (r, c) of the matrix lives
 * in HBM at float (row, col + r * stride + c) of `sym`, moved with row
 * stride `stride` (0: a one-row matrix, moved with the transfer's width). */
typedef struct LwHand {
  gboolean rf;
  const char *sym;
  int row, col, stride;
  IrProv prov;
  GArray *pieces;   /* rf: the parts put so far */
  /* replicated (lw_hand_replicate): nrep copies of the matrix, each put with
   * its replica number; a consumer gets from one, by its WG (rep_of) */
  int nrep, cursor;
  int *rep_of;      /* per WG: its replica, -1 until its first get          */
  /* refinements.split_stats: the companion hand-off of the row's partial
   * LayerNorm statistics, a 2 x np matrix (sums; M2s) whose column k comes
   * from the producer of columns [k d/np, (k+1) d/np); owned (lw_hand_clear) */
  struct LwHand *stats;
  int stats_np;
} LwHand;
void lw_hand_init(LwHand *h, gboolean rf, const char *sym, int row, int col, int stride, IrProv prov);
/* The producer `task` made v, elements (r0.., c0..) of the matrix. */
void lw_hand_put(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0);
/* The consumer `task` needs elements (r0.., c0..) in dst (rf: every part
 * must have been put before). */
void lw_hand_get(Ir *ir, LwHand *h, int task, IrView dst, int r0, int c0);
void lw_hand_clear(LwHand *h);
/* Give rf hand-off h (a 1 x d row) a companion hand-off of the partial
 * statistics of its np equal pieces (refinements.split_stats). */
void lw_hand_add_stats(LwHand *h, int np, IrProv prov);
/* Make h a replicated hand-off of nrep copies; host[r] is the WG holding
 * replica r (a consumer on that WG takes it; the others take turns). */
void lw_hand_replicate(Ir *ir, LwHand *h, int nrep, const int *host);
/* lw_hand_put of replica rep of a replicated hand-off. */
void lw_hand_put_rep(Ir *ir, LwHand *h, int task, IrView v, int r0, int c0, int rep);
/* Relay the 1 x cols row of rf hand-off h (every part put) through R tasks
 * "<tag>0".."<tag>R-1" pinned to host[0..R-1], which wait for group
 * `after`: each takes the whole row and hands on a copy; h becomes the
 * replicated hand-off of the copies.  Returns the relays' group (event
 * `event`), for the consumers to wait for. */
int lw_hand_relay(Ir *ir, LwHand *h, int cols, int after, const int *host, int R, const char *tag,
                  const char *event, int stage, IrRole role, IrProv prov);

/* Where a q|k|v projection's output goes (kv_writeback.c): q to scratch
 * (row q_row, columns q_col.., row stride d_model), K and V of head h to
 * rows kv_row + h * head_rows of kv_sym[0] / kv_sym[1] (32 floats a row),
 * (or put into the hand-off `q`), directly or through the temp area of scratch (row temp_row, columns
 * temp_col.., stride temp_stride), with the stage's store spacing before
 * each store (lw_space: the store task's and kv_task's roles). */
typedef struct LwQkvStore {
  int d_model;
  int q_row, q_col;
  gboolean q_packed; /* q's scratch matrix packed (LwMat)                    */
  LwHand *q;        /* q goes here (columns 0..d of its matrix) when set     */
  const char *kv_sym[2];
  int kv_row, head_rows;
  SchedKv mode;
  /* With resident K/V (direct mode only): each head's new K / V row also
   * goes to kv_rf[0 / 1][head] (a 1 x 32 window in another WG's RF), and
   * the HBM stores are issued by task kv_task instead (one made for them,
   * which nothing waits for: they leave the critical path). */
  const IrView *kv_rf[2];
  int kv_task;
  int temp_row, temp_col, temp_stride;
  const char *back_tag; /* temp mode: names the read-back tensors (NULL: the
                           task's name; a task storing several blocks sets
                           one per block)                                   */
  int *fences;      /* the task's fence count (lw_fence)                    */
  IrProv prov, kv_prov;
} LwQkvStore;
/* Store the panel acc (R x P: columns c0.. of the 3d-wide q|k|v row). */
void lw_store_qkv(Ir *ir, int task, IrView acc, int c0, const LwQkvStore *s);

/* The shape of projection j's resident units: panel columns and K shards
 * (the knobs panels.* and k_split.*; with ffn.fused, W1 in panels of
 * ffn.channels columns and W2 in ffn.producers shards of its full width,
 * shard p kept with W1's panel p). */
void lw_unit_shape(const Ir *ir, SchedProj j, int *panel, int *ks);

/* Resident weights (resident.c, weights: resident): which WG keeps each
 * (layer, projection, panel) and the RF tensors of its weights (K x P) and
 * bias (1 x P), owned by that WG's preload task.  With attention slices,
 * the history K/V too when it fits beside the weights (kv): each (layer,
 * head, slice) gets a WG keeping its block of history K and V rows, and the
 * last slice also the rows of the new positions (kv_rows = rows of each
 * slice's K/V tensors: the block, + steps for the last slice). */
typedef struct LwResident {
  int layers, max_panels, max_split;
  int *wg, *w, *b;
  int *used;           /* partitions taken on each WG                     */
  int *preload;        /* per (layer, WG): the preload task loading what  */
                       /* the WG keeps of the layer (-1: none); one task  */
                       /* for all layers unless deferred                  */
  gboolean deferred;   /* power.deferred_loads: a preload task per layer  */
  IrProv prov;
  GHashTable *consts;  /* "wg/sym" -> tensor of lw_resident_const          */
  gboolean kv;         /* the history K/V is resident                      */
  int heads, slices, block; /* slices per head (attention.new_slice's too),   */
                       /* history rows of each history slice               */
  gboolean new_slice;  /* attention.new_slice: the last slice holds only   */
                       /* the new positions (else also the last block)     */
  int *kv_wg, *kt, *vt; /* per (layer, head, slice)                         */
} LwResident;
/* Give every panel a WG (FALSE with an error at the knob when they do not
 * fit), and, with attention slices, every slice's history K/V when all fit
 * beside the weights; then make the preload tasks that load them (before
 * any step). */
gboolean lw_resident_place(Ir *ir, LwResident *r, GError **err);
void lw_resident_preload(Ir *ir, LwResident *r, IrProv prov);
/* power.deferred_loads: lw_resident_preload makes layer 0's preload tasks
 * only; the lowering makes layer l's (l >= 1) with this, after step 0's
 * tasks of layer l-1, so that they come after those in each WG's program:
 * the next layer's loads run during this layer's compute. */
void lw_resident_preload_layer(Ir *ir, LwResident *r, int l);
int lw_resident_preload_task(const Ir *ir, const LwResident *r, int wg, int l);
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
int lw_resident_wg(const LwResident *r, int l, SchedProj j, int p);
/* With k_split: the WG of K shard s of a panel (shard 0's is lw_resident_wg),
 * acc = a . W_s (a: the shard's K/ks columns of the input; no bias), and
 * the panel's bias (kept with shard 0). */
int lw_resident_shard_wg(const LwResident *r, int l, SchedProj j, int p, int s);
void lw_resident_project_shard(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j,
                               int p, int s, IrView acc, IrProv prov);
IrView lw_resident_bias(const Ir *ir, const LwResident *r, int l, SchedProj j, int p);
IrView lw_resident_weights(const Ir *ir, const LwResident *r, int l, SchedProj j, int p);
/* acc (1 x P) = LN(x) . W + c for a resident panel (unsplit) with the
 * LayerNorm folded into the projection (ln_fold.c, refinements.ln_fold):
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
/* The partitions a task may fill beside resident weights: rf_temp_kib's. */
int lw_resident_task_parts(const Ir *ir);
/* acc (1 x P) = a . W + b with the panel's resident tensors; the task must
 * be pinned to lw_resident_wg. */
void lw_resident_project(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j, int p,
                         IrView acc, IrProv prov);
void lw_resident_free(LwResident *r);

/* One unit of resident placement: K shard k of panel p of projection j in
 * layer l, and the RF partitions its weights take. */
typedef struct LwUnit {
  int parts, l, j, p, k;
} LwUnit;
/* placement.solver: ilp (place_ilp.c): a WG for each of the n units from
 * GLPK (wg[i]), among the WGs of `order` (the SMs used, less the pacing
 * WG), each holding at most `cap` partitions of units; `constructive` (or
 * NULL when first fit failed) is the constructive placement, the solver's
 * first incumbent and its reported yardstick.  Records its account in
 * ir->ilp.  FALSE with an error at placement.solver when no placement
 * exists or none is found within placement.time_limit_s. */
gboolean lw_place_ilp(Ir *ir, const LwUnit *u, int n, const GArray *order, int cap,
                      const int *constructive, int *wg, GError **err);

/* Attention of one query block against `keys` keys streamed in blocks
 * (attention.c): q (R x 32) is loaded; K and V rows row0.. of `ksym`/`vsym`
 * (32 floats a row); `mask` (R x R, or absent: t = -1) is added to the
 * scores of the last block, which then must be R keys wide; o (R x 32)
 * gets softmax(q K^T * scale) V through an online softmax. */
/* The softmax scale 1/sqrt(WL_HEAD_DIM), rounded to FP32 once. */
float lw_att_scale(void);
#define LW_MASKED (-1e30f) /* a masked score: exp(LW_MASKED - max) is 0 */
typedef struct LwAttention {
  IrView q, o, mask;
  const char *ksym, *vsym;
  int row0, keys, block;
  float scale;
  IrProv prov;
} LwAttention;
/* With `partial` NULL, o ends normalised (divided by the row sum).  Else o
 * is left as u = sum_j exp(s_j - m) V_j and *partial gets the views of the
 * row max m and the row sum z (R x 1): one slice's (m, z, u) for
 * lw_attention_merge. */
typedef struct LwPartial {
  IrView m, z;
} LwPartial;
void lw_attention_blocked(Ir *ir, int task, const char *tag, const LwAttention *at, LwPartial *partial);
/* The same with the keys and values already in the RF (resident K/V): rows
 * row0.. of kres and vres; no loads (ksym/vsym unused). */
void lw_attention_resident(Ir *ir, int task, const char *tag, const LwAttention *at, IrView kres,
                           IrView vres, LwPartial *partial);
/* The merge of S slices of one query row (attention slices): m and z are
 * 1 x S (each slice's row max and row sum), u is S x 32 (each slice's
 * unnormalised output): M = max m, a = exp(m - M), o (1 x 32) = (a . u) /
 * (a . z).  Slices are weighted by exp(m - M), never averaged.  m, z and u
 * are overwritten. */
void lw_attention_merge(Ir *ir, int task, const char *tag, IrView m, IrView z, IrView u, IrView o,
                        IrProv prov);
/* Whether tensors of these n shapes (rows, cols), live at once, fit in
 * `parts` partitions (what a task may fill: the whole RF, or the temp space
 * when resident weights keep the rest): the choice between the whole-row
 * attention and the blocked one. */
gboolean lw_attention_fits(const Ir *ir, const int (*shape)[2], int n, int parts);
/* The key block of lw_attention_blocked for `rows` query rows: the largest
 * of max_block, max_block/2, ... (down to LW_KEY_BLOCK, one MMA block of
 * keys) whose tensors fit the RF. */
#define LW_KEY_BLOCK 32
int lw_attention_block(const Ir *ir, int rows, int keys, int max_block, int parts);

/* g = GELU_tanh(f), elementwise; g must not alias f.  With
 * refinements.gelu_factor the polynomial is factored, one VEC op fewer
 * (equal up to FP32 rounding), and the ops cite the refinement, not prov. */
void lw_gelu(Ir *ir, int task, IrView f, IrView g, IrProv prov);
/* f = GELU_tanh(f) through the temporary g: the same operations and
 * rounding as lw_gelu, its last two writing f. */
void lw_gelu_into(Ir *ir, int task, IrView f, IrView g, IrProv prov);

/* A projection's A operand (project.c): resident in the RF (`rf`, sym
 * NULL), or streamed from HBM symbol `sym` (rows row.., columns col.., row
 * stride `stride`) chunk by chunk beside W, for RF budgets that cannot hold
 * all of A. */
typedef struct LwSource {
  IrView rf;
  const char *sym;
  int row, col, stride;
  IrProv prov;
  gboolean packed;  /* p1_resident.c: A packed (LwMat: base col, width stride) */
} LwSource;
/* acc (R x P) = A (R x K) . W[0..K rows, cols c0..c0+P) of HBM symbol `wsym`
 * (row stride `wstride`), loading W in chunks of p->k_chunk rows into one RF
 * buffer (project.c). */
void lw_project(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                int wstride, int c0, IrView acc, const LwProj *p);

/* d (R x C) = a + (row-broadcast) bias loaded from `bsym` columns c0.. */
void lw_add_bias(Ir *ir, int task, const char *tag, IrView acc, const char *bsym, int c0,
                 IrProv prov);

/* P1 weight reuse by output-column split (p1_resident.c, p1 weights:
 * resident): one projection stage of one layer as one owner task per (K
 * shard, panel), pinned to its own WG, that loads its weights once and
 * multiplies every row tile by them; A reaches the owners chunk by chunk,
 * multicast or loaded by each.  `finish` gets each tile's R x P result (the
 * bias and the K shards' partial sums added) to finish and store: it is the
 * lowering's, as for streamed weights. */
typedef void (*LwTileFinish)(void *ctx, int task, const char *tag, int tile, int c0, IrView acc);
/* Where a multicast stage's A chunks come from: issuer tasks on WGs of
 * their own (the default); the owners themselves, taking turns by chunk
 * (LD.mc; for a stage that leaves no WG spare); or another stage's owners,
 * which put their results straight into the owners' buffers
 * (lw_p1_resident_feed: P1 `handoff: rf`, p1_handoff.c). */
/* LW_P1_FROM_PASS (multicast.pass): each owner loads its own chunks as
 * multicast candidates (IR_MOD_CAND), which the multicast pass merges into
 * LD.mc from issuer tasks of its own (multicast.c). */
typedef enum { LW_P1_FROM_ISSUERS = 0, LW_P1_FROM_OWNERS, LW_P1_FROM_STAGE, LW_P1_FROM_PASS } LwP1Source;
/* P1 stages synchronised per row tile (p1_tile_sync.c, tile_sync.PROJ):
 * the tile events of a stage, `lL_<stage>_t<t>`, each complete after
 * per_tile signals (stage NULL: none, wait for the stage's group). */
typedef struct LwP1TileSync {
  const char *stage;
  int layer, per_tile;
} LwP1TileSync;
char *lw_p1_tile_event(int layer, const char *stage, int tile);
void lw_p1_tile_signal(Ir *ir, int task, int layer, const char *stage, int tile, IrProv prov);
void lw_p1_tile_wait(Ir *ir, int task, const LwP1TileSync *ts, int tile, IrProv prov);

/* P1 refinements.ln_fold (p1_ln_fold.c): LayerNorm folded into the
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
 * pieces when it folds (p1_resident.c's owners, which have no stage before
 * to pace them); *prov cites the knob. */
int64_t lw_p1_ln_fold_first_gap(const Ir *ir, IrProv *prov);
void lw_p1_ln_fold_finish(Ir *ir, int task, IrView acc, IrView rstd, IrView bias, int t, const LwP1LnFold *f);

/* P1 refinements.ln_stats: producer (p1_ln_stats.c): the LayerNorm
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

typedef struct LwP1Resident {
  const char *name;       /* the projection: "qkv", "wo", "w1", "w2"        */
  int layer, stage;
  IrRole role;            /* kind and layer (panel, kshard set per owner)   */
  const LwProj *pj;       /* panel width P, k_chunk = A chunk columns       */
  int K, N, shards;       /* reduction, output columns, K shards (k_split)  */
  int tiles, R;           /* row tiles of R rows                            */
  int extra;              /* R x P tensors `finish` keeps (GELU, residual)  */
  int extra_rows;         /* their rows, when fewer than R (0: R)           */
  gboolean multicast;     /* A by LD.mc from one issuer per shard            */
  LwP1Source from;        /* with multicast: who issues A's chunks          */
  LwSource a;             /* A: sym, col (of K's first column), stride, prov */
  const int *part_col;    /* shards > 1: scratch columns of shard 1.. partials */
  int part_stride;        /*   (matrices of part_stride floats a row)         */
  int after, grp;         /* the group waited for (-1: none) and completed  */
  /* chain_last: with K shards (and multicast), the last shard starts the
   * sum with the bias and `res` (R x P of res.sym at rows t*R.., columns
   * res.col + p*P.., when res.sym is set), which `finish` then leaves out,
   * and shard s takes its part of the sum (S-1-s)/S of the way into the
   * next tile, after the shard above has sent it */
  gboolean chain_last;
  LwSource res;
  LwTileFinish finish;
  LwTileFinish post;      /* or NULL: tile t's hand-off (acc: its finished  */
                          /* result), emitted whole in tile t+2 after chunk */
  int (*post_at)(void *ctx, int c0, int nk); /* post_at(c0) of its nk      */
  void *ctx;
  IrProv prov, mc_prov;   /* "weights", "multicast.PROJ"                    */
  /* tile_sync (p1_tile_sync.c): the issuers wait for these tile events of
   * the previous stage instead of its group `after` (stage NULL: the group);
   * publish: the finishing owners signal this stage's tile events */
  LwP1TileSync wait_tiles;
  gboolean publish_tiles;
  IrProv sync_prov;       /* "tile_sync.PROJ"                               */
  const LwP1LnFold *fold; /* refinements.ln_fold (p1_ln_fold.c), or NULL   */
  /* LW_P1_FROM_STAGE: the owners' order of the row tiles (round i is tile
   * tile_order[i]; NULL: 0, 1, ..), that in which the feeding stage
   * finishes them (p1_att_wo.c) */
  const int *tile_order;
  /* LW_P1_FROM_STAGE: a feed stores into `fanout` owners of the shard,
   * which forward along chains (p1_fanout.c); 0: into every owner */
  int fanout;
  IrProv fanout_prov;     /* "handoff_fanout"                               */
  /* with fanout: each owner's own free events, each store into an owner
   * waits for that owner's (p1_hop_flow.c) */
  gboolean hop_flow;
  IrProv hop_prov;        /* "handoff_hop_flow"                             */
} LwP1Resident;
/* What one resident stage leaves to the next (start it zeroed, prev_after
 * -1): where its owners start in the placer's SM-interleaved order of WGs,
 * so that stages spread over the SMs, and, after a multicast stage, what
 * the next stage's owners pace their weight loads by: its shard 0 `full`
 * events, buffers and chunks, and the group it waited for. */
typedef struct LwP1State {
  int cursor;
  char prev_stage[32];    /* "l0_w1_k0" ("": no multicast stage before) */
  int prev_nb, prev_total, prev_after;
  gboolean prev_pass;     /* its chunks merged by the multicast pass: its */
                          /* shard 0 events are the pass's l0_w1_k0_aB_full */
} LwP1State;
/* Make the stage's owner (and issuer) tasks; FALSE with an error at the
 * knob when an owner does not fit its WG or the stage has more owners than
 * the SMs used have WGs. */
gboolean lw_p1_resident_stage(Ir *ir, LwP1State *state, const LwP1Resident *st, GError **err);
/* The WGs the owners of stage `st` will take, from state->cursor on; and
 * the k-th (cyclically) of the others: where the tasks of the stage before
 * it go, so that its owners can start during that stage (its issuers wait
 * for that stage anyway). */
int lw_p1_resident_owners(const Ir *ir, const LwP1Resident *st);
int lw_p1_free_wg(const Ir *ir, const LwP1State *state, int taken, int k);
/* The same in three steps, for stages built together (p1_handoff.c): open
 * makes the owner tasks and their tensors on the WGs `skip` places after
 * state->cursor (NULL with an error when they do not fit); build writes
 * the owners' (and issuers') programs; close advances the state past the
 * stage and frees it.  Open every stage of a group, then build them, then
 * close them in order: build reads the state the group started from. */
typedef struct LwP1Res LwP1Res;
LwP1Res *lw_p1_resident_open(Ir *ir, const LwP1State *state, const LwP1Resident *st, int skip, GError **err);
void lw_p1_resident_build(LwP1Res *r, const LwP1State *state);
void lw_p1_resident_close(LwP1Res *r, LwP1State *state);
/* The WGs a stage's owners and issuers take. */
int lw_p1_resident_wgs(const LwP1Res *r);
/* In `task` (an owner of another stage), put v (R x k_chunk of the open
 * stage `to`, whose A comes LW_P1_FROM_STAGE) into the buffers of the
 * owners that multiply A's columns col.. of row tile `tile`: wait until
 * they have started (the first round) or freed the buffer, ST it to each,
 * SIG the buffer full.  Each chunk of `to`'s A must be put exactly once. */
void lw_p1_resident_feed(Ir *ir, const LwP1Res *to, int task, int tile, int col, IrView v, IrProv prov);
/* Which of its K shard's nk chunks of a row tile column col of `r`'s A is. */
int lw_p1_resident_chunk(const LwP1Res *r, int col, int *nk);
/* P1 handoff: rf (p1_handoff.c): W1 and W2 of one layer (their resident
 * descriptions, as for lw_p1_resident_stage) as a pair of stages on
 * disjoint WGs, W1's GELU rows RF to RF into W2's A buffers; FALSE with an
 * error at the knob (prov: `handoff`) that the pair cannot satisfy. */
gboolean lw_p1_ffn_rf(Ir *ir, LwP1State *state, const LwP1Resident *w1, const LwP1Resident *w2, IrProv prov,
                      GError **err);

/* P1 rf_grid.* with streamed weights (p1_grid.c): each task computes a
 * rows x cols grid of (row tile x panel) accumulators, per K round loading
 * rows A chunks and cols W chunks for rows x cols MMAs (double-buffered when
 * two sets fit the RF), K split over k_split tasks whose partial sums go
 * through scratch (part_col, part_room floats dead in the stage) to shard
 * 0, which adds the bias and calls `finish` per accumulator. */
typedef struct LwP1Grid {
  const char *name;       /* the projection: "qkv", "wo", "w1", "w2"        */
  int layer, stage;
  IrRole role;            /* kind, layer and proj (tile, panel set per task) */
  const LwProj *pj;       /* panel width P, k_chunk                         */
  int K, N, tiles, R;     /* reduction, output columns, row tiles of R rows */
  int rows, cols, shards; /* rf_grid.rows, rf_grid.cols, rf_grid.k_split   */
  LwSource a;             /* A: sym, col, stride (packed: LwMat)            */
  const char *wsym, *bsym;
  int part_col;           /* scratch float offset of the partial sums       */
  int64_t part_room;      /* floats of scratch free from part_col on        */
  int extra;              /* R x P tensors `finish` keeps (GELU, residual)  */
  int after, grp;         /* the group waited for (-1: none) and completed  */
  LwTileFinish finish;
  void *ctx;
  IrProv prov, kprov;     /* the tasks' knob (rf_grid.rows), k_chunk's      */
} LwP1Grid;
/* FALSE with an error at the rf_grid knob the stage cannot satisfy. */
gboolean lw_p1_grid_check(Ir *ir, const LwP1Grid *g, GError **err);
/* The buffer sets a task gets: 2 when they fit the RF, else 1. */
int lw_p1_grid_buffers(const Ir *ir, const LwP1Grid *g);
gboolean lw_p1_grid_stage(Ir *ir, const LwP1Grid *g, GError **err);

/* attention.tile_sync (p1_att_sync.c): an attention task waits per q|k|v
 * row tile (the qkv owners' tile events, per_tile signals each: one per
 * qkv panel) instead of for the qkv stage.  lw_p1_att_sync_wait: in task,
 * before its first load of row last_row (0-based in the sequence) of
 * sequence seq: wait for that row's tile unless *waited (the last tile
 * waited for, -1 at first) is already as far.  lw_p1_att_place: pin the
 * tasks made since t0: those of sequence last_seq to the WGs of lowering
 * stage qkv_stage, the others to WGs with no task of it, not among the next
 * stage's `taken` owners' WGs; FALSE (no pins) when either set is empty. */
typedef struct LwP1AttSync {
  gboolean on;
  int layer, rows, R, per_tile;
  IrProv prov;             /* "attention.tile_sync"                        */
} LwP1AttSync;
void lw_p1_att_sync_wait(Ir *ir, const LwP1AttSync *as, int task, int seq, int last_row, int *waited);
gboolean lw_p1_att_place(Ir *ir, const LwP1State *res, guint t0, int qkv_stage, int taken, int last_seq);

/* P1 causal attention with K/V blocks shared by the query tiles of a group
 * (p1_attention.c, attention.query_tiles > 1): one task per (sequence,
 * head, group of `group` row tiles of R rows, folded for equal causal
 * work) loads each K/V block once for all its tiles.  q of head h from
 * qsym (rows of the sequence, columns q_col + 32h.., stride), K/V rows
 * [seq][head][row][32] of ksym/vsym, the output to osym like q. */
typedef struct LwP1Attention {
  int layer, stage;
  int seqs, heads, rows, R, group;
  int waves;               /* the tasks start in waves (attention.waves)   */
  int64_t stagger;         /* and, in a wave, this many cycles apart        */
  const char *qsym, *osym, *ksym, *vsym;
  int q_col, o_col, stride;
  gboolean packed;         /* q and the output packed (LwMat)             */
  int after, grp;          /* the group waited for (-1: none) and completed */
  int interleave;          /* tiles whose op chains interleave (attention.interleave) */
  gboolean kv_resident;    /* K/V loaded once, whole (attention.kv: resident) */
  gboolean kv_shared;      /* K/V blocks multicast to a head's tasks (attention.kv: shared) */
  gboolean staged;         /* with kv_resident: staged softmax (attention.softmax) */
  IrProv prov, group_prov, waves_prov, stagger_prov; /* (stores: lw_space) */
  IrProv interleave_prov, kv_prov, softmax_prov;
  LwP1AttSync sync;        /* attention.tile_sync (p1_att_sync.c)          */
  gboolean publish_tiles;  /* tile_sync.wo: each stored row tile signals   */
  IrProv publish_prov;     /* its event lL_att_t<t> ("tile_sync.wo")       */
  /* attention.handoff: rf (p1_att_wo.c): when set, each finished tile o
   * (R x 32 of head h, row tile `tile` of all N rows) goes to deliver
   * instead of HBM */
  void (*deliver)(void *ctx, int task, int tile, int col, IrView o);
  void *deliver_ctx;
} LwP1Attention;
/* FALSE with an error at attention.kv when the resident K/V and the
 * tiles' state do not fit a WG's RF. */
gboolean lw_p1_attention_stage(Ir *ir, const LwP1Attention *at, GError **err);
/* The order in which the tasks of `at` (query_tiles > 1) finish their row
 * tiles, round by round: every task's first tile (sequence by sequence,
 * group by group), then every task's second, ...: seqs x rows / R tiles
 * (global row tile indices) into order. */
void lw_p1_attention_tile_order(const LwP1Attention *at, int *order);
/* attention.handoff: rf | relay (p1_att_wo.c): attention `at` and the
 * resident wo stage `wo` (multicast) built together, each attention task
 * putting its o tiles into wo's owners' A buffers (wo's A comes
 * LW_P1_FROM_STAGE), itself or (relays) through relay tasks of wo; the
 * attention tasks are pinned to WGs the owners and relays leave free.
 * FALSE with an error at the knob that prevents it. */
gboolean lw_p1_att_wo_rf(Ir *ir, LwP1State *state, LwP1Attention *at, const LwP1Resident *wo, gboolean relays,
                         IrProv prov, GError **err);

void lw_sig(Ir *ir, int task, const char *ev, IrProv prov);
void lw_wait(Ir *ir, int task, const char *ev, int64_t n, IrProv prov);
void lw_waitt(Ir *ir, int task, int64_t n, IrProv prov);

/* spacing.c: write-back spacing per stage (store_spacing.STAGE).  The
 * stage (SchedSpace) of a task role, -1 for none (those use
 * store_spacing); the spacing of a role's stage and, into *prov (may be
 * NULL), the knob that set it; lw_space: WAITT that many cycles in task
 * (nothing when 0), before one of its stage's output stores. */
int lw_space_stage(IrRoleKind kind);
int64_t lw_spacing_of(const Ir *ir, IrRoleKind kind, IrProv *prov);
void lw_space(Ir *ir, int task);

/* piece_spacing.c: weight_spacing.PROJ, the cycles between a paced resident
 * owner's weight pieces and, into *prov (may be NULL), the knob; lw_piece_space:
 * WAITT that many cycles in task (nothing when 0), before one of its pieces
 * after the first. */
int64_t lw_piece_spacing_of(const Ir *ir, SchedProj proj, IrProv *prov);
void lw_piece_space(Ir *ir, int task, SchedProj proj);
/* piece_spacing.c: weight_stagger.PROJ: lw_piece_stagger WAITTs owner * N
 * cycles (weight_stagger.PROJ = N; nothing when 0) in task, before the
 * first weight piece of the stage's owner-th owner. */
void lw_piece_stagger(Ir *ir, int task, SchedProj proj, int owner);
/* piece_spacing.c: issue_spacing.PROJ: lw_issue_space WAITTs N cycles in an
 * issuer task (issue_spacing.PROJ = N; nothing when 0), between one of its
 * LD.mc's of the stage's A chunks and the next. */
void lw_issue_space(Ir *ir, int task, SchedProj proj);
/* piece_spacing.c: ln_first_stagger: lw_ln_first_stagger WAITTs tile * N
 * cycles (ln_first_stagger = N; nothing when 0) at the start of layer 0's
 * LN1 task for row tile `tile`. */
void lw_ln_first_stagger(Ir *ir, int task, int tile);
/* shard_group.c: ord[0 .. n-1] = 0 .. n-1 sorted stably by the SM of
 * wgs[i] (n at most a machine's WGs): the order of owners by SM that
 * shard_group.PROJ and handoff_fanout's chains (p1_fanout.c) both use. */
void lw_order_by_sm(const Ir *ir, const int *wgs, int n, int *ord);
/* shard_group.c: with shard_group.PROJ, give a resident stage's owners
 * (o = shard * panels + panel) the WGs `wgs` sorted by SM, so that a K
 * shard's owners share SMs; nothing otherwise. */
void lw_shard_group(const Ir *ir, SchedProj proj, int *wgs, int owners);
/* p1_fanout.c (handoff_fanout): the forwarding chains of a resident stage's
 * n owners of one K shard whose A comes LW_P1_FROM_STAGE (wgs[i]: owner i's
 * WG): fanout (0 or more than n: n) chains of owners by SM; next[i] is the
 * owner i forwards to (-1: none), head[0 .. F-1] the chains' first owners.
 * Returns F. */
int lw_p1_fanout_chains(const Ir *ir, int fanout, const int *wgs, int n, int *next, int *head);
/* p1_hop_flow.c (handoff_hop_flow): owner o's own free event of buffer b,
 * [o * nb + b], named lL_STAGE_kS_pP_freeB (o = S * np + P); g_free it. */
int *lw_p1_hop_flow_events(Ir *ir, int layer, const char *stage, int owners, int np, int nb);
/* Before a store of chunk c (buffer c % nb) into `owner`'s buffer: WAIT
 * until the owner has freed the buffer's c / nb earlier uses (none for the
 * first). */
void lw_p1_hop_flow_wait(Ir *ir, int task, const int *ofree, int owner, int nb, int c, IrProv prov);

/* Order memory within a task: SIG a task-private event (it fires when every
 * earlier instruction has completed) and WAIT for its n-th firing.  Memory is
 * not hazard-tracked, so a read-back of a store needs this. */
void lw_fence(Ir *ir, int task, int n, IrProv prov);

/* The program size limit (ir->max_ops).  Called after `done` of `total`
 * units (P1 layers, D1 steps: `unit`) whose programs are about the same
 * size: FALSE with an error at `dim` (the problem dim `name` that counts
 * them) when the whole program would pass the limit, naming about the
 * largest count that fits. */
gboolean lw_budget_units(Ir *ir, GError **err, int done, int total, const char *unit, IrProv dim,
                         const char *name);
/* Called after each stage of the first unit: FALSE with an error at `dim`
 * (`name` = `value`, the dim the unit's size grows with) once one unit alone
 * passes the limit; `stages` of its `of` are done. */
gboolean lw_budget_stage(Ir *ir, GError **err, int stages, int of, const char *unit, IrProv dim,
                         const char *name, int value);


#endif
