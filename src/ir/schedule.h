/* schedule.h - the schedule record: one problem section's decisions, every
 * knob with its value and where it came from, as the IR carries them
 * (Ir.sched).  The frontend fills it from the plan (plan.h calls it
 * PlanProblem); the pipeline copies it into the IR before the first pass, and
 * from there on no pass reads the plan.  docs/plan.md describes each knob.
 */
#ifndef TCC_SCHEDULE_H
#define TCC_SCHEDULE_H

#include <glib.h>

#include "workload.h"

/* Where a value came from: 1-based line/col in the plan file, and its full
 * path ("d1.attention.slices", "hardware.dma.engines").  line == 0: the value
 * is a default (path is still set).  path is a static string. */
typedef struct SchedLoc {
  int line, col;
  const char *path;
} SchedLoc;

typedef enum { LAYOUT_ROW, LAYOUT_PACKED, LAYOUT_PACKED_X } SchedLayout;
typedef enum { WEIGHTS_STREAMED, WEIGHTS_RESIDENT } SchedWeights;
typedef enum { KV_DIRECT, KV_TEMP } SchedKv;
typedef enum { SOLVER_CONSTRUCTIVE, SOLVER_ILP } SchedSolver;
typedef enum { SLICEMAP_ROUND_ROBIN, SLICEMAP_BLOCKED } SchedSliceMap;
/* P1 attention (attention_tiles.c): K/V streamed in blocks, resident or shared
 * by a head's tasks (multicast); softmax. */
/* ORDER-MATTERS: plan_needs compares (softmax: staged needs kv >= RESIDENT). */
typedef enum { ATTKV_STREAMED, ATTKV_SHARED, ATTKV_RESIDENT } SchedAttKv;
typedef enum { SOFTMAX_ONLINE, SOFTMAX_STAGED } SchedSoftmax;
typedef enum { HANDOFF_HBM, HANDOFF_RF } SchedHandoff;
/* P1 attention.handoff: att through HBM, RF to RF into wo's owners by the
 * attention tasks, or through relay tasks of wo (attention_wo.c) */
typedef enum { ATTHANDOFF_HBM, ATTHANDOFF_RF, ATTHANDOFF_RELAY } SchedAttHandoff;
typedef enum { WAVES_BY_SM, WAVES_BY_NEED } SchedWaveOrder;
/* power.fit: tcc-gen fits the program under the power limit (src/fit). */
typedef enum { FIT_ON, FIT_OFF, FIT_RELAX } SchedFit;
/* P1, with ln_fold: where the LayerNorm statistics tasks get a row's
 * statistics: its rows, or the producers' partials (ln_stats.c) for
 * both LayerNorms, LN1's only (W2's) or LN2's only (Wo's). */
typedef enum { LN_STATS_ROWS, LN_STATS_PRODUCER, LN_STATS_PRODUCER_LN1, LN_STATS_PRODUCER_LN2 } SchedLnStats;
/* D1, deferred loads (defer.c): the next layer's preload after step 0's
 * whole layer, or after its STAGE.  ORDER-MATTERS: defer.c (stage rank =
 * value - 1). */
typedef enum { DEFER_AFTER_LAYER, DEFER_AFTER_QKV, DEFER_AFTER_ATT, DEFER_AFTER_WO, DEFER_AFTER_W1 } SchedDeferAfter;

/* The projections that have panel widths and splits.  ORDER-MATTERS: indexes
 * Schedule's per-projection arrays and sched_proj_name. */
typedef enum { PROJ_QKV, PROJ_WO, PROJ_W1, PROJ_W2, PROJ__COUNT } SchedProj;
extern const char *const sched_proj_name[PROJ__COUNT]; /* "qkv", "wo", "w1", "w2" */

/* Output width N and reduction length K of a projection for these dims:
 * qkv 3*d_model x d_model, wo d_model x d_model, w1 d_ff x d_model,
 * w2 d_model x d_ff (N x K). */
int sched_proj_n(const Problem *dims, SchedProj proj);
int sched_proj_k(const Problem *dims, SchedProj proj);

/* The stages with a store spacing of their own (store_spacing.STAGE,
 * spacing.c): LayerNorm (ln1 and ln2), the projections and attention.
 * ORDER-MATTERS: indexes Schedule.stage_spacing and sched_space_name. */
typedef enum { SPACE_LN, SPACE_QKV, SPACE_ATT, SPACE_WO, SPACE_W1, SPACE_W2, SPACE__COUNT } SchedSpace;
extern const char *const sched_space_name[SPACE__COUNT]; /* "ln", "qkv", "att", "wo", "w1", "w2" */

/* Number of knobs (the frontend's table, plan_schema.c), problem dims
 * included. */
#define SCHED_NKNOBS 130
/* Longest value text of a knob ("round_robin", "-1", "1073741824"). */
#define SCHED_VALUE_MAX 16

/* The knobs of one problem (section `p1:` or `d1:`).  Every field is filled:
 * a knob not written in the plan has its default.  A knob whose strategy is
 * not implemented yet is rejected by the frontend when set to anything but its
 * default ("not supported yet"), so the compiler may rely on the "planned"
 * fields holding their defaults. */
typedef struct Schedule {
  gboolean present;         /* the section exists in the file            */
  SchedLoc where;           /* the section's key (line 0 when absent)    */
  Problem dims;             /* workload dims, `problem:` overrides; kind set */
  int sms_used;             /* SMs the program may use (default: hw.sms) */
  int row_tile;             /* P1: rows per tile, mult. of 32 dividing rows */
  int panel[PROJ__COUNT];   /* output columns per panel (8..128, mult. 8, | N) */
  int k_chunk[PROJ__COUNT]; /* K rows per loaded chunk (mult. 32, | K)   */
  int stream_depth;         /* streamed W chunks in flight: buffers      */
  gboolean stream_prefetch; /* D1: a streamed task's first chunks before */
                            /* it waits for its input                    */
  int k_split[PROJ__COUNT]; /* planned (> 1): partial sums over K shards */
  int panel_groups[PROJ__COUNT];      /* P1, resident weights: a stage's panels in
                                       * this many groups, one after another */
  gboolean k_split_last[PROJ__COUNT]; /* P1: the last K shard starts the sum
                                       * (bias, residual), shards staggered */
  gboolean tile_sync[PROJ__COUNT];    /* P1: the issuers wait for the previous
                                       * stage's row tiles, not the whole stage */
  int weight_spacing[PROJ__COUNT];    /* P1: cycles of WAITT between a paced
                                       * resident owner's weight pieces */
  int weight_stagger[PROJ__COUNT];    /* P1: cycles between consecutive resident
                                       * owners' first weight pieces */
  gboolean shard_group[PROJ__COUNT];  /* P1: a resident stage's owners given its
                                       * WGs by SM, a K shard's together (shard_group.c) */
  int issue_spacing[PROJ__COUNT];     /* P1: cycles of WAITT between a multicast
                                       * issuer's LD.mc's (spacing.c) */
  int ln_fold_stagger[PROJ__COUNT];   /* P1, ln_fold (qkv, w1): cycles between
                                       * consecutive owners' folds (ln_fold_centred.c) */
  int ln_fold_slots[PROJ__COUNT];     /* P1, ln_fold (qkv, w1): owner o folds
                                       * (o mod slots) * stagger cycles late */
  int ln_fold_first_gap;              /* P1, ln_fold: cycles between the first
                                       * stage's (layer 0's qkv) weight pieces */
  int ln_first_stagger;               /* P1: layer 0's LN1 task t waits t * N
                                       * cycles first (spacing.c) */
  int ln_stagger;                     /* P1: every other LayerNorm's task t
                                       * waits t * N cycles first (spacing.c) */
  SchedLayout layout;       /* P1: packed (q, att, g in 32x32 blocks), packed_x (x1, x too); D1 planned */
  SchedWeights weights;     /* planned: resident                        */
  int rf_temp_kib;          /* KiB of each WG's RF kept for activations, */
                            /* not weights (the capacity report)         */
  int resident_layers;      /* D1, resident weights: layers 0.. that keep */
                            /* theirs (0: every layer); the rest stream   */
  SchedKv kv_writeback;     /* direct (default) or via a temp round trip */
  int store_spacing;        /* cycles of WAITT between a stage's output stores */
  int stage_spacing[SPACE__COUNT]; /* store_spacing.STAGE: a stage's own (not */
                            /* written: store_spacing's value)             */
  SchedHandoff handoff;     /* stage -> stage through HBM scratch or RF (P1: W1 -> W2) */
  int handoff_relays;       /* D1: relays of the wide RF hand-offs (0: none) */
  int handoff_fanout;       /* P1, handoff rf: W2 owners a W1 block is stored into, */
                            /* forwarding along chains (fanout.c; 0: all) */
  gboolean handoff_hop_flow; /* P1, with handoff_fanout's chains: each W2 owner */
                            /* frees its own buffers, each store waits for its */
                            /* target's (fanout.c)                        */
  gboolean multicast[PROJ__COUNT]; /* planned: true                     */
  gboolean multicast_pass;  /* P1: the multicast pass merges the owners'  */
                            /* loads (multicast.c), no issuer tasks       */
  int multicast_issuers;    /* P1, with multicast_pass: the pass's issuer */
                            /* tasks per merged set (0: members in turn)  */
  int rf_grid_rows, rf_grid_cols, rf_grid_k; /* P1, planned: not all 1   */
  gboolean rf_grid_mc;      /* P1 grid: A chunks multicast per row group  */
  int rf_grid_wave_wgs;     /* P1 grid, multicast: WGs of an SM a wave    */
                            /* may take (grid.c)                          */
  int preload_waves;        /* preload waves (resident weights)         */
  SchedWaveOrder wave_order; /* which WGs make up each wave             */
  int bucket_bytes;         /* bytes of HBM loads per bucket (0 = none) */
  int event_interval;       /* cycles between buckets (0 = no pacing)   */
  int pacing_wg;            /* WG that paces buckets (-1 = self-paced)  */
  int in_flight;            /* with pacing_wg: buckets in flight (0 = no cap) */
  int stage_rate;           /* HBM bytes a stage loads per cycle, spread */
                            /* over its WGs (0 = no cap; pace.c)         */
  int stage_rates[SPACE__COUNT]; /* power.stage_rate.STAGE: that kind of */
                            /* stage's own rate (0: stage_rate's)        */
  gboolean deferred_loads;  /* planned: true                            */
  int preload_window;       /* D1: preload tasks in flight (0 = no window) */
  SchedDeferAfter deferred_after; /* D1: where the next layer's preload goes */
  SchedFit power_fit;       /* power fitting on (default), off, or relax */
                            /* (it may also lower the pacing knobs)      */
  SchedSolver solver;       /* planned: ilp                             */
  int solver_time_limit_s;  /* seconds; only with ilp                   */
  int obj_k_divisor;        /* ILP objective: load = K/k_divisor        */
  int obj_partition_weight; /*   + partition_weight * partitions        */
  int obj_active_weight;    /*   + active_weight per WG a stage uses    */
  int attn_slices;          /* D1: attention slices per head (1 = none); planned > 1 */
  SchedSliceMap slice_map;  /* D1: slice -> WG mapping (only with slices > 1) */
  gboolean attn_new_slice;  /* D1, with slices: the new positions in a slice of their own */
  int attn_query_tiles;     /* P1: row tiles per attention task sharing K/V blocks */
  int attn_waves;           /* P1 (query_tiles > 1): attention tasks start in waves */
  int attn_stagger;         /* P1 (query_tiles > 1): cycles between a wave's task starts */
  SchedAttKv attn_kv;       /* P1: K/V streamed in blocks or resident per task */
  SchedSoftmax attn_softmax; /* P1 (kv resident): online or staged softmax     */
  int attn_interleave;      /* P1 (query_tiles > 1): tiles whose chains interleave */
  gboolean attn_tile_sync;  /* P1 (query_tiles > 1, resident): attention waits per q|k|v row tile */
  SchedAttHandoff attn_handoff; /* P1: attention -> wo through HBM, RF, or RF via relays (attention_wo.c) */
  gboolean ffn_fused;       /* D1, planned: true                        */
  gboolean ln_fold;         /* D1, P1: LayerNorm folded into the projection (resident) */
  gboolean first_token;     /* D1, with ln_fold: step 0 makes the folded constants */
  gboolean q_first;         /* D1, with slices: history slices wait for q only */
  gboolean gelu_factor;     /* GELU's polynomial factored (one op fewer) */
  gboolean split_stats;     /* D1: LN statistics merged from the producers' pieces */
  SchedLnStats ln_stats;    /* P1, with ln_fold: statistics from the rows or the producers (ln_stats.c) */
  gboolean handoff_forward; /* D1: a copy a consumer already holds is forwarded by it (forward.c) */
  int ffn_producers, ffn_channels, ffn_consumers; /* only with fused    */
  /* The record, by knob index (the frontend's table order): where each knob
   * came from (path NULL: the knob does not apply to this problem) and its
   * value as a plan writes it ("16", "resident", "true"). */
  SchedLoc loc[SCHED_NKNOBS];
  char value[SCHED_NKNOBS][SCHED_VALUE_MAX];
  /* Set by the power fitting (src/fit): the knob's value is the fitting's,
   * and its provenance is power.fit (ir_prov; the record's text says so). */
  unsigned char fitted[SCHED_NKNOBS];
  /* Set by the plan loader for a knob the plan wrote (its place is kept):
   * SCHED_FALLBACK, the written value did not fit the shape and the
   * nearest legal one took its place; SCHED_AUTO, the plan wrote `auto`
   * and the compiler chose (docs/plan.md, "Shape-relative knobs"). */
  unsigned char chosen[SCHED_NKNOBS];
} Schedule;
enum { SCHED_WRITTEN = 0, SCHED_FALLBACK = 1, SCHED_AUTO = 2 };

/* The record entry of a knob by path: relative to the section
 * ("panels.w1") or full ("d1.panels.w1").  path NULL when this problem has
 * no such knob. */
SchedLoc sched_loc(const Schedule *s, const char *path);
/* Did the power fitting set this knob (path as for sched_loc)? */
gboolean sched_fitted(const Schedule *s, const char *path);
/* The record as text, one knob a line, in table order:
 * "  d1.panels.w1 = 16  ; line 9:5", "... ; default", for a value the
 * power fitting set "... ; power.fit", for one the loader chose "... ;
 * fallback line 9:5" or "... ; auto line 9:5". */
void sched_print(GString *out, const Schedule *s);

#endif
