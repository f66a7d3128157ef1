/* builder.h - the lowering's building blocks (builder.c): RF tensors sized for the
 * partition rule, tasks, ops, loads and stores of HBM windows (packed or
 * not), events and fences, a projection's knobs, the program size budget.
 * Every technique module of src/lower includes it. */
#ifndef TCC_LOWER_BUILDER_H
#define TCC_LOWER_BUILDER_H

#include "ir.h"

/* The knobs of a projection, with their provenance. */
typedef struct LwProj {
  SchedProj proj;
  int panel;        /* output columns per task */
  int k_chunk;      /* K rows per loaded chunk */
  IrProv prov;      /* "d1.panels.qkv": the task's knob            */
  IrProv kprov;     /* "d1.k_chunk.qkv": cited by the chunk loads and MMAs */
  int depth;        /* stream_depth: W chunk buffers of a streamed panel */
  IrProv dprov;     /* "d1.stream_depth": cited by the loads run ahead */
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
