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

/* LD `rf` (rows x cols) from HBM symbol `sym` at element (r0, c0) of a
 * matrix with `stride` floats per row. */
void lw_load(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov);
/* ST `rf` to HBM symbol `sym` at element (r0, c0). */
void lw_store(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov);

/* h = LayerNorm(x) * g + b over the rows of x (R x d); g, b are 1 x d RF
 * views; `tmp` is R x d scratch, `mean`/`var` R x 1. */
void lw_layernorm(Ir *ir, int task, IrView x, IrView h, IrView g, IrView b, IrView tmp,
                  IrView mean, IrView var, IrProv prov);
/* Row softmax of s (R x n) in place: m = row max, s = exp(s - m),
 * z = 1 / row sum, s *= z; m and z are R x 1 scratch. */
void lw_softmax(Ir *ir, int task, IrView s, IrView m, IrView z, IrProv prov);
/* Where a q|k|v projection's output goes (kv_writeback.c): q to scratch
 * (row q_row, columns q_col.., row stride d_model), K and V of head h to
 * rows kv_row + h * head_rows of kv_sym[0] / kv_sym[1] (32 floats a row),
 * directly or through the temp area of scratch (row temp_row, columns
 * temp_col.., stride temp_stride), with `spacing` cycles before each store. */
typedef struct LwQkvStore {
  int d_model;
  int q_row, q_col;
  const char *kv_sym[2];
  int kv_row, head_rows;
  SchedKv mode;
  int temp_row, temp_col, temp_stride;
  int *fences;      /* the task's fence count (lw_fence)                    */
  int64_t spacing;
  IrProv prov, kv_prov, spacing_prov;
} LwQkvStore;
/* Store the panel acc (R x P: columns c0.. of the 3d-wide q|k|v row). */
void lw_store_qkv(Ir *ir, int task, IrView acc, int c0, const LwQkvStore *s);

/* Resident weights (resident.c, weights: resident): which WG keeps each
 * (layer, projection, panel) and the RF tensors of its weights (K x P) and
 * bias (1 x P), owned by that WG's preload task. */
typedef struct LwResident {
  int layers, max_panels;
  int *wg, *w, *b;
} LwResident;
/* Give every panel a WG (FALSE with an error at the knob when they do not
 * fit), then make the preload tasks that load them (before any step). */
gboolean lw_resident_place(Ir *ir, LwResident *r, GError **err);
void lw_resident_preload(Ir *ir, LwResident *r, IrProv prov);
int lw_resident_wg(const LwResident *r, int l, SchedProj j, int p);
/* The partitions a task may fill beside resident weights: rf_temp_kib's. */
int lw_resident_task_parts(const Ir *ir);
/* acc (1 x P) = a . W + b with the panel's resident tensors; the task must
 * be pinned to lw_resident_wg. */
void lw_resident_project(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j, int p,
                         IrView acc, IrProv prov);
void lw_resident_free(LwResident *r);

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

/* g = GELU_tanh(f), elementwise; g must not alias f. */
void lw_gelu(Ir *ir, int task, IrView f, IrView g, IrProv prov);

/* A projection's A operand (project.c): resident in the RF (`rf`, sym
 * NULL), or streamed from HBM symbol `sym` (rows row.., columns col.., row
 * stride `stride`) chunk by chunk beside W, for RF budgets that cannot hold
 * all of A. */
typedef struct LwSource {
  IrView rf;
  const char *sym;
  int row, col, stride;
  IrProv prov;
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
typedef struct LwP1Resident {
  const char *name;       /* the projection: "qkv", "wo", "w1", "w2"        */
  int layer, stage;
  IrRole role;            /* kind and layer (panel, kshard set per owner)   */
  const LwProj *pj;       /* panel width P, k_chunk = A chunk columns       */
  int K, N, shards;       /* reduction, output columns, K shards (k_split)  */
  int tiles, R;           /* row tiles of R rows                            */
  int extra;              /* R x P tensors `finish` keeps (GELU, residual)  */
  gboolean multicast;     /* A by LD.mc from one issuer per shard            */
  LwSource a;             /* A: sym, col (of K's first column), stride, prov */
  const int *part_col;    /* shards > 1: scratch columns of shard 1.. partials */
  int part_stride;        /*   (matrices of part_stride floats a row)         */
  int after, grp;         /* the group waited for (-1: none) and completed  */
  LwTileFinish finish;
  void *ctx;
  IrProv prov, mc_prov;   /* "weights", "multicast.PROJ"                    */
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
  const char *qsym, *osym, *ksym, *vsym;
  int q_col, o_col, stride;
  int after, grp;          /* the group waited for (-1: none) and completed */
  int64_t spacing;         /* WAITT before each store (store_spacing)     */
  IrProv prov, group_prov, spacing_prov, waves_prov;
} LwP1Attention;
void lw_p1_attention_stage(Ir *ir, const LwP1Attention *at);

void lw_sig(Ir *ir, int task, const char *ev, IrProv prov);
void lw_wait(Ir *ir, int task, const char *ev, int64_t n, IrProv prov);
void lw_waitt(Ir *ir, int task, int64_t n, IrProv prov);
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
