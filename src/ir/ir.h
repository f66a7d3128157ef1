/* ir.h - the dataflow IR of tcc-gen: tensors with a home and a layout, tasks
 * bound to WGs, the ops of each task, events, and provenance back to the
 * plan.  One header for every IR type and every pass's entry point (style.md:
 * QBE).  Passes are functions Ir -> Ir (+ diagnostics); `ir_verify` checks the
 * invariants after each one in tests.
 *
 * Conventions
 * - Everything is stored in arrays in creation order and referred to by
 *   index; the lowering creates things in plan order, so output order (and
 *   the assembly) never depends on pointers or hashes.
 * - Names are stable and derived from the plan's structure ("l0.qkv.p3"), so
 *   a one-knob change renames nothing else.
 * - Ops mirror the machine's instructions (src/spec/ops.def; docs/machine.md
 *   §3) one to one: the backend is a printer, not a second compiler.
 */
#ifndef TCC_IR_H
#define TCC_IR_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "machine.h"
#include "ops.h"
#include "schedule.h"
#include "workload.h"

/* Where a tensor lives. */
typedef enum {
  HOME_HBM, /* an ABI symbol (weights, inputs, outputs, scratch)          */
  HOME_RF,  /* the RF of its task's WG                                     */
} IrHome;

/* A tensor: a rows x cols FP32 matrix, row-major with a row stride.
 * HBM tensors are views of an ABI symbol (`sym` + byte `offset`, `stride`
 * floats between rows); RF tensors belong to one task and get a partition
 * and offset from the rf_alloc pass. */
typedef struct IrTensor {
  char *name;       /* stable, unique: "l0.qkv.p3.w"                         */
  int rows, cols;   /* the region's shape (RF: as declared to the assembler) */
  int used_rows;    /* rows the program uses (<= rows): an RF region larger  */
                    /* than a partition is padded to whole partitions, and   */
                    /* ir_all() is the used part, never the padding          */
  IrHome home;
  /* HBM */
  char *sym;        /* ABI symbol, e.g. "wqkv.l0", "scratch"                 */
  uint64_t offset;  /* bytes from the symbol                                 */
  int stride;       /* floats between rows                                   */
  /* RF */
  int task;         /* owning task (its WG holds the tensor)                 */
  int part;         /* first partition (-1 until rf_alloc)                   */
  int nparts;       /* partitions covered (1 when inside one)                */
  int part_off;     /* byte offset inside the first partition                */
  int first_op, last_op; /* live range in the task's WG program (rf_alloc)  */
} IrTensor;

/* A window of a tensor: rows [r0, r0+rows) x cols [c0, c0+cols). */
typedef struct IrView {
  int t;            /* tensor index, -1 = absent */
  int r0, rows, c0, cols;
} IrView;

/* Op kinds: the machine's instructions, one to one, generated from ops.def
 * (IR_LD is the opcode OP_LD; IR_END exists but no task contains it: the
 * backend ends every WG's program). */
typedef enum {
#define X(e, m, u, f) IR_##e = OP_##e,
#include "ops.def"
#undef X
  IR__COUNT = OP__COUNT
} IrOpKind;
#define ir_op_mnemonic sim_op_mnemonic /* "LD", "VEC.add", ... (ops.h) */

/* IR_MOD_CAND (LD only): a multicast candidate, a load of a WG's own that
 * the lowering leaves for the multicast pass (multicast.c) to merge with
 * the same load of other WGs into one LD.mc; the pass clears it on every
 * load, merged or not.  The IR's text shows it (`LD.cand`, as after
 * `--dump-after=lower`); the backend never prints it. */
enum { IR_MOD_Z = 1, IR_MOD_T = 2, IR_MOD_MC = 4, IR_MOD_CAND = 8 };

/* Provenance: the plan knob that decided this op and the IR node. */
typedef struct IrProv {
  const char *knob; /* plan path, e.g. "d1.panels.qkv" (static string)      */
  int line, col;    /* where it is written in the plan (0 = default value)  */
} IrProv;

/* One op.  LD: d <- mem.  ST: mem <- a (mem may be an RF tensor of another
 * task: a remote copy).  MMA: d (+)= a . b.  VEC/SFU: d = f(a, b, c, imm).
 * SIG/WAIT: event, n.  WAITT: n cycles.
 *
 * 128 bytes, no padding (a P1 program has ~170k ops, and GArray rounds each
 * task's array to a power of two bytes: 152-byte ops took 38.5 MB of
 * arrays for plans/best.yaml's P1, these 27.5 MB).  So c (VEC.fma's only)
 * and mem (LD's and ST's only) share their bytes: read c through ir_op_c
 * and mem only on LD and ST (ir_op_has_mem) where an op's kind is not
 * known; kind, mods and ntargets are bit-fields (IR__COUNT < 256, IR_MOD_*
 * < 256, at most IR_MAX_TARGETS targets). */
typedef struct IrOp {
  IrOpKind kind : 8;
  unsigned mods : 8;
  unsigned ntargets : 16;
  int event;        /* index into Ir.events, -1 = none                       */
  IrView d, a, b;
  union {
    IrView c;       /* VEC.fma's third operand                              */
    IrView mem;     /* LD source / ST destination                           */
  };
  float imm;
  int64_t n;
  int *targets;     /* LD.mc: the destination RF tensors (owned), one per    */
                    /* receiving task, all named and shaped like d's tensor,  */
                    /* d.t among them; the asm's {WG, ...} are their WGs      */
  IrProv prov;
} IrOp;

enum { IR_MAX_TARGETS = 65535 }; /* IrOp.ntargets' bits */

/* Does an op of this kind have a memory side (IrOp.mem)? */
static inline gboolean ir_op_has_mem(IrOpKind kind) { return kind == IR_LD || kind == IR_ST; }

/* An op's c: absent (t -1) on LD and ST, whose mem shares its bytes. */
static inline IrView ir_op_c(const IrOp *op) {
  IrView none = {-1, 0, 0, 0, 0};
  return ir_op_has_mem(op->kind) ? none : op->c;
}

/* What a task computes, so that passes find tasks by meaning (never by
 * parsing names).  ORDER-MATTERS: ir_role_name. */
typedef enum {
  ROLE_NONE, ROLE_LN1, ROLE_QKV, ROLE_ATT, ROLE_WO, ROLE_LN2, ROLE_W1, ROLE_W2, ROLE_PACER,
  ROLE_PRELOAD, ROLE_RELAY, ROLE__COUNT
} IrRoleKind;
extern const char *const ir_role_name[ROLE__COUNT + 1]; /* "none", "ln1", "qkv", ..., NULL */

/* A task's role: its stage kind and where in the problem it works; -1 where
 * a coordinate does not apply (ir_role() starts them all at -1). */
typedef struct IrRole {
  IrRoleKind kind;
  int step;         /* D1 step                                              */
  int layer;
  int proj;         /* SchedProj of a projection task                       */
  int panel;        /* output panel of a projection                         */
  int tile;         /* P1 row tile (over all sequences)                     */
  int seq, head;    /* attention                                            */
  int slice;        /* attention slice                                      */
  int kshard;       /* K shard of a split projection                        */
} IrRole;
IrRole ir_role(IrRoleKind kind); /* every coordinate -1 */
/* The kind of stage (SchedSpace: store_spacing.STAGE, power.stage_rate.STAGE)
 * of a role; -1 for none (pacer, preload, relay). */
int ir_role_space(IrRoleKind kind);

/* A task: a sequence of ops run in order by one WG. */
typedef struct IrTask {
  char *name;       /* stable: "s3.l0.qkv.p5"                                */
  int wg;           /* -1 until placement                                    */
  int pin;          /* the WG the task must run on (-1: place chooses): a    */
                    /* task using RF tensors kept by an earlier task of the  */
                    /* same WG (resident weights)                            */
  int stage;        /* lowering stage index (for reports; the IR printer)   */
  IrRole role;      /* what it computes (ROLE_NONE until the lowering sets it) */
  GArray *ops;      /* IrOp                                                  */
  IrProv prov;
  /* Dependencies (the sync pass turns them into SIG/WAIT): the group this
   * task completes (-1: none) and the groups whose tasks must all have
   * completed before it starts (int, NULL: none), in the order waited for. */
  int signals;
  GArray *waits;
  int prelude;      /* leading ops that need none of the waits (loads of    */
                    /* weights: stream_prefetch): the sync pass puts the     */
                    /* WAITs after them (and sets it to 0)                   */
} IrTask;

/* A group of tasks that consumers wait for as a whole: one stage of one
 * layer (and D1 step).  Groups with the same event form a family that the
 * sync pass counts on one cumulative event counter, in creation order. */
typedef struct IrGroup {
  char *event;      /* the family's event name: "qkv_l0"                     */
  gboolean any_order; /* the family's groups may complete in any order      */
                    /* (power.preload_window's: task i waits for i - K + 1  */
                    /* completions of any of them), so a WAIT for its count  */
                    /* certifies no particular group: ir_order.c learns      */
                    /* nothing from it.  IR text: "group FAMILY any  ; ..."  */
  IrProv prov;      /* what made the dependency, when a pass did (the knob  */
                    /* of power.preload_waves' waves): the SIG and WAIT ops  */
                    /* the sync pass makes for it cite it; knob NULL: the    */
                    /* tasks' own provenance.  One per family in IR text.    */
} IrGroup;

/* The ILP placement's account (resident_ilp.c, placement.solver: ilp), for
 * tcc-gen --explain: what the solver proved and, per stage (layer,
 * projection), the busiest SM's load of its placement and of the
 * constructive one, by the same formula.  No solve time: it varies. */
typedef enum {
  IR_ILP_OPTIMAL,   /* proved optimal                                     */
  IR_ILP_FEASIBLE,  /* the time limit stopped it with an incumbent        */
  IR_ILP_FALLBACK,  /* it stopped with none: the constructive placement   */
                    /* is used (objective: its score), with a warning     */
} IrIlpStatus;
typedef struct IrIlpStage {
  char name[24];    /* "l0.w1"                                             */
  int64_t max_load, constructive_max_load;
} IrIlpStage;
typedef struct IrIlp {
  IrIlpStatus status;
  int64_t objective, bound;  /* bound: the best bound proved (= objective when optimal) */
  int64_t constructive;      /* the constructive placement's objective (-1: it failed) */
  gboolean constructive_red_shared; /* it put a panel's RED K shards on one WG: */
                             /* no candidate (resident_ilp.c)                 */
  int units, wgs, columns, rows; /* the model's size                        */
  GArray *stages;            /* IrIlpStage, in (layer, projection) order    */
} IrIlp;

/* The multicast pass's account (multicast.c, multicast.pass), for tcc-gen
 * --explain: per stage (the role and layer of the loads' tasks), the
 * groups of same-window loads it merged into one LD.mc each, the loads they
 * replaced and the HBM lines those loads would have read beyond the one
 * read each group makes; and the candidates it left as plain loads. */
typedef struct IrMcStage {
  char name[24];    /* "l0.w1"                                             */
  int groups;       /* LD.mc made                                          */
  int loads;        /* candidate loads they replace (>= 2 per group)       */
  int64_t lines_saved; /* HBM lines the replaced loads read beyond one per group */
} IrMcStage;
typedef struct IrMulticast {
  GArray *stages;   /* IrMcStage, in order of the first task of each stage */
  int groups, loads, unmerged;
  int64_t lines_saved;
} IrMulticast;

typedef struct Ir {
  Machine hw;
  Problem prob;
  Schedule sched;     /* the problem section's decisions (ir_set_schedule): */
                      /* what the passes read, never the plan              */
  char *plan_file;
  GPtrArray *tensors; /* IrTensor*                                          */
  GPtrArray *tasks;   /* IrTask*, in program order                          */
  GPtrArray *events;  /* char*: names without "ev."; "in" is index 0        */
  GHashTable *event_index; /* ir_event's name -> index + 1 (not owning the  */
                      /* names); NULL when events changed (ir_events_changed) */
  GPtrArray *groups;  /* IrGroup*, in creation order                        */
  int sms_used;
  gboolean history_streamed; /* D1: the history K/V was to stay beside the   */
                      /* resident weights (attention slices) and found no  */
                      /* room: it streams each step (resident.c); the      */
                      /* fitting then tries more, smaller slices           */
  gboolean synced;    /* the sync pass has made the SIG/WAIT ops; the tasks */
                      /* keep their dependencies, for the analyses after it */
                      /* (ir_order.c); a second sync does nothing          */
  gsize nops;         /* ops made by ir_emit (the lowering's program size;  */
                      /* less the round trips kv_writeback removes)        */
  gsize max_ops;      /* the lowering's limit on nops (ir_new: IR_MAX_OPS)   */
  IrProv section;     /* the problem section's key in the plan: where an     */
                      /* error that no written knob explains points (ir_error) */
  IrIlp *ilp;         /* the ILP placement's account (NULL: not used); owned */
  IrMulticast *mc;    /* the multicast pass's account (NULL: no candidates); owned */
  GPtrArray *warnings; /* char*, "file:line:col: warning: ...": the capacity */
                      /* fallbacks that made the plan compile (src/fit),   */
                      /* then the passes' own (ir_warning); NULL: none;    */
                      /* owned                                              */
  char *fit_note;     /* the power fitting's account when it changed the   */
                      /* schedule (src/fit), a line of text; NULL: none;   */
                      /* the backend prints it under the header; owned     */
  char *fit_account;  /* its account when it measured the program and      */
                      /* changed nothing (runs, watts): for --explain;     */
                      /* NULL: not measured, or fit_note; owned            */
  /* ir.c's storage of the tensors: `tensors` points into these blocks of
   * IrTensor (owned), filled in creation order; fewer and denser allocations
   * than one per tensor (a P1 program has ~34k tensors). */
  GPtrArray *tensor_mem;
  guint tensor_fill;     /* IrTensors used in the last block                 */
} Ir;

/* tcc-gen's limit on the size of a program (docs/plan.md, "Limits"): the
 * lowering refuses a plan whose program would have more instructions, at the
 * dim that makes it large, before it spends the memory to build it. */
#define IR_MAX_OPS (1u << 22)

/* ir.c: building and freeing. */
Ir *ir_new(const Machine *hw, const Problem *prob, const char *plan_file);
void ir_free(Ir *ir);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Ir, ir_free)
/* Copy a problem section's schedule record into the IR (the first step of
 * the pipeline): prob, sched, section and sms_used follow from it. */
void ir_set_schedule(Ir *ir, const Schedule *s);
/* The provenance of a knob of the schedule, by path ("panels.w1" or
 * "d1.panels.w1"): its full path and place in the plan (line 0: default). */
IrProv ir_prov(const Ir *ir, const char *path);
int ir_tensor_hbm(Ir *ir, const char *name, const char *sym, uint64_t offset, int rows,
                  int cols, int stride);
int ir_tensor_rf(Ir *ir, int task, const char *name, int rows, int cols);
int ir_task(Ir *ir, const char *name, int stage, IrProv prov);
/* Task `task`'s ops become `ops` (an array of IrOp, taken; it gets the
 * clear function of a task's ops); the old array is freed with the target
 * lists its ops still own (a pass that moves them sets them NULL). */
void ir_task_replace_ops(Ir *ir, int task, GArray *ops);
int ir_event(Ir *ir, const char *name); /* find or add */
/* Say that Ir.events was changed other than by ir_event (renumbered,
 * parsed): ir_event rebuilds its index. */
void ir_events_changed(Ir *ir);
IrOp *ir_emit(Ir *ir, int task, IrOpKind kind); /* appends a zeroed op (views absent) */
/* Remove the tensors and events marked in dead_tensor[] / dead_event[]
 * (either may be NULL; event 0, "in", stays), which no op may use any more,
 * and renumber the others' uses in every op, keeping their order. */
void ir_drop(Ir *ir, const gboolean *dead_tensor, const gboolean *dead_event);
/* A new group of the family `event`; task completes it / waits for it. */
int ir_group(Ir *ir, const char *event);
/* ir_group for a dependency a pass adds for knob `prov` (IrGroup.prov). */
int ir_group_for(Ir *ir, const char *event, IrProv prov);
void ir_task_signals(Ir *ir, int task, int group);
void ir_task_waits(Ir *ir, int task, int group);
IrView ir_all(const Ir *ir, int t);             /* the whole tensor (used rows) */
IrView ir_win(int t, int r0, int rows, int c0, int cols);
IrTensor *ir_tensor(const Ir *ir, int t);
IrTask *ir_task_at(const Ir *ir, int k);
int ir_wg_sm(const Ir *ir, int wg);

/* The decimal text of v, for the printers' hot paths (no printf): written
 * at the end of buf (IR_INT_CHARS bytes, no NUL); returns where it starts,
 * and its length in *len. */
enum { IR_INT_CHARS = 20 };
static inline const char *ir_int_text(char buf[IR_INT_CHARS], int64_t v, gsize *len) {
  static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";
  char *q = buf + IR_INT_CHARS;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  for (; u >= 100; u /= 100) {
    q -= 2;
    memcpy(q, pairs + 2 * (u % 100), 2);
  }
  if (u >= 10) {
    q -= 2;
    memcpy(q, pairs + 2 * u, 2);
  } else {
    *--q = (char)('0' + u);
  }
  if (v < 0) *--q = '-';
  *len = (gsize)(buf + IR_INT_CHARS - q);
  return q;
}

/* ir_order.c: for every RF tensor that another WG writes (ST wgN.x, an
 * LD.mc target), the first op of its WG's program (tasks in order, ops
 * numbered from 0 as rf_alloc numbers them) at which such a write may land:
 * the first op of the first task of that WG that the writer's dependencies
 * do not order before it; -1 for every other tensor.  Needs placed tasks.
 * g_free the array (one int per tensor). */
int *ir_remote_first_op(const Ir *ir);

/* ir_print.c: the text form (tcc-gen --emit=ir). */
char *ir_print(const Ir *ir);
/* One operand as ir_print writes it: "x", "x[0:1, :]", "h2@s5.ffn" (an RF
 * tensor of a task other than `task`; -1: never), "hbm[wqkv.l0 + 256 stride
 * 384]".  Safe on invalid views (for diagnostics). */
char *ir_view_str(const Ir *ir, int task, IrView v);

/* ir_verify.c: invariants; FALSE with *err naming the task/op/tensor.
 * `allocated`: also check rf_alloc's results. */
gboolean ir_verify(const Ir *ir, gboolean allocated, GError **err);
/* The placed program runs to its end as far as its events go (each WG in
 * program order, SIGs counting up, WAITs passing at their counts, RED
 * rounds completing at their N-th contribution as tcc-sim runs them):
 * FALSE with the stuck WAIT or RED round when it deadlocks.  Part of ir_verify once
 * allocated; pass_pipeline runs it on every program. */
gboolean ir_verify_progress(const Ir *ir, GError **err);

#define IR_ERROR (ir_error_quark())
GQuark ir_error_quark(void);

/* Set *err to one line "PLAN:LINE:COL: error: MESSAGE" at the plan knob
 * `at` (as cited by provenance); a knob at its default value (line 0) has no
 * place in the file, so the error points at the problem section (ir->section),
 * or at 1:1 when that is unknown too. */
void ir_error(const Ir *ir, GError **err, IrProv at, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
/* The same line as a warning ("PLAN:LINE:COL: warning: MESSAGE"), added to
 * ir->warnings: a pass that compiles the plan otherwise than it asks
 * (the ILP placement's fallback to the constructive one). */
void ir_warning(Ir *ir, IrProv at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* ---- passes (src/passes, one file each) ---- */

/* Every pass is a function Ir -> Ir (+ diagnostics) that reads the
 * decisions from ir->sched, never from the plan; pipeline.c runs them in the
 * order of its pass table (pipeline.h). */
/* The first pass, `lower`, is the strategy: src/lower (lower.h). */
/* kv_writeback.c: direct K/V write-back (kv_writeback: direct) - each
 * round trip of a K/V piece through the temp area of scratch (store,
 * fence, load back, store) becomes the one store of the piece to its
 * final place. */
gboolean pass_kv_writeback(Ir *ir, GError **err);
/* waves.c: power.preload_waves - the preload tasks in waves (by SM, or by
 * the first stage that reads what they load), each waiting for the previous
 * wave's group. */
gboolean pass_waves(Ir *ir, GError **err);
/* waves.c: the stage a task of D1's chain belongs to by its role: qkv 0
 * (LayerNorm 1 too), attention 1, wo 2, w1 3 (LayerNorm 2 too), w2 4; 5
 * for the others (relays, preload, pacer). */
int ir_stage_rank(IrRoleKind k);
/* waves.c: per task, the first stage (qkv 0 .. w2 4; 5: none) that reads
 * what it keeps in RF (g_free it). */
int *ir_preload_rank(const Ir *ir);
/* defer.c: power.deferred_after - layer l's deferred preload tasks moved
 * before the first task of step 0's layer l-1 after that stage. */
gboolean pass_defer(Ir *ir, GError **err);
/* preload_window.c: power.preload_window K - the preload tasks in need
 * order, each waiting until all but K - 1 of the earlier ones completed. */
gboolean pass_preload_window(Ir *ir, GError **err);
/* forward.c: handoff_forward - a producer's store of a window to a later
 * consumer moved to an earlier consumer that received the same window. */
gboolean pass_forward(Ir *ir, GError **err);
/* sync.c: the tasks' dependencies (signals / waits of groups) -> events,
 * a SIG at the end of each producer, a WAIT at the start of each consumer
 * with the cumulative count of its family. */
gboolean pass_sync(Ir *ir, GError **err);
/* pacer.c: the pacing WG's task (role pacer, empty) when power.pacing_wg
 * paces byte buckets: place binds it, pace fills it. */
gboolean pass_pacer(Ir *ir, GError **err);
/* place.c: bind every task to a WG (constructive: spread over the SMs used). */
gboolean pass_place(Ir *ir, GError **err);
/* multicast.c: multicast insertion (multicast.pass): candidate loads
 * (IR_MOD_CAND) of the same HBM window into same-named, same-shaped RF
 * tensors of tasks on different WGs, the k-th such load of each, become
 * one LD.mc issued by the members in turn, with the events that make it
 * race-free: each member SIGs `NAME_free` once done with its copy of the
 * buffer, the issuer WAITs for the others' before the LD.mc and SIGs
 * `NAME_full` after it, the others WAIT for it where their load was.
 * Records its account in ir->mc. */
gboolean pass_multicast(Ir *ir, GError **err);
/* pace.c: byte-bucket load pacing (power.bucket_bytes, power.event_interval):
 * a WG waits event_interval cycles after every bucket of HBM loads. */
gboolean pass_pace(Ir *ir, GError **err);
/* rf_alloc.c: give every RF tensor partitions per the machine's rules; on
 * failure, report the tensor, the WG, the partitions needed and free. */
gboolean pass_rf_alloc(Ir *ir, GError **err);

/* ---- backend (src/backend) ---- */
/* emit.c: the assembly text of an allocated IR. */
char *be_emit(const Ir *ir);
/* The same text streamed: passed to `write` a piece at a time as it is made
 * (a P1 program is ~6 MB: no need to hold it all).  `write` returns FALSE to
 * stop; be_emit_to then returns FALSE. */
typedef gboolean (*BeWrite)(const char *text, gsize len, gpointer data);
gboolean be_emit_to(const Ir *ir, BeWrite write, gpointer data);

#endif
