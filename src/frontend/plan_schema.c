/* plan_schema.c - the knobs of a problem section (`p1:` / `d1:`): one row per
 * knob with its type, the problems it applies to, its range and default, the
 * check against the dims and the hardware, and the roadmap step that will
 * implement its non-default values.  docs/plan.md is the prose version of this
 * table; a knob added here must be added there.
 */
#include <stddef.h>
#include <string.h>

#include "plan_internal.h"

/* ORDER-MATTERS: the enums of schedule.h. */
static const char *const layout_names[] = {"row", "packed", "packed_x", NULL};
static const char *const weights_names[] = {"streamed", "resident", NULL};
static const char *const kv_names[] = {"direct", "temp", NULL};
static const char *const solver_names[] = {"constructive", "ilp", NULL};
static const char *const slicemap_names[] = {"round_robin", "blocked", NULL};
static const char *const attkv_names[] = {"streamed", "shared", "resident", NULL};
static const char *const softmax_names[] = {"online", "staged", NULL};
static const char *const handoff_names[] = {"hbm", "rf", NULL};
static const char *const atthandoff_names[] = {"hbm", "rf", "relay", NULL}; /* attention_wo.c */
static const char *const wave_order_names[] = {"sm", "need", NULL};
static const char *const defer_after_names[] = {"layer", "qkv", "att", "wo", "w1", NULL};
static const char *const fit_names[] = {"on", "off", "relax", NULL};
static const char *const ln_stats_names[] = {"rows", "producer", "producer_ln1", "producer_ln2", NULL};

G_STATIC_ASSERT(sizeof(PlanLayout) == sizeof(int) && sizeof(PlanWeights) == sizeof(int) &&
                sizeof(PlanKv) == sizeof(int) && sizeof(PlanSolver) == sizeof(int) &&
                sizeof(PlanSliceMap) == sizeof(int) && sizeof(PlanHandoff) == sizeof(int) && sizeof(PlanWaveOrder) == sizeof(int) && sizeof(gboolean) == sizeof(int));
G_STATIC_ASSERT(sizeof(SchedLnStats) == sizeof(int) && sizeof(SchedFit) == sizeof(int));

/* How a message names a projection's N and K. */
static const char *const n_name[PROJ__COUNT] = {"3*d_model", "d_model", "d_ff", "d_model"};
static const char *const k_name[PROJ__COUNT] = {"d_model", "d_model", "d_model", "d_ff"};

/* ---- checks against the dims and the hardware ---- */

static int range(const PlanKnobDef *k, long v, long lo, long hi, const char *why,
                 GString *msg) {
  if (v >= lo && v <= hi) return 0;
  g_string_printf(msg, "%s=%ld out of range %ld..%ld", k->path, v, lo, hi);
  if (why) g_string_append_printf(msg, " (%s)", why);
  return PLAN_ERROR_RANGE;
}

static int multiple(const PlanKnobDef *k, long v, long of, GString *msg) {
  if (v % of == 0) return 0;
  g_string_printf(msg, "%s=%ld must be a multiple of %ld", k->path, v, of);
  return PLAN_ERROR_DIVIDE;
}

static int divides(const PlanKnobDef *k, long v, long n, const char *name, GString *msg) {
  if (n % v == 0) return 0;
  g_string_printf(msg, "%s=%ld does not divide %s=%ld", k->path, v, name, n);
  return PLAN_ERROR_DIVIDE;
}

static int check_sms_used(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                          long v, GString *msg) {
  (void)pp;
  return range(k, v, 1, hw->sms, "hardware.sms", msg);
}

static int check_rf_temp(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                         long v, GString *msg) {
  (void)pp;
  return range(k, v, 0, hw->rf_kib, "hardware.rf_kib", msg);
}

static int check_resident_layers(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                                 long v, GString *msg) {
  (void)hw;
  return range(k, v, 0, pp->dims.layers, "problem.layers", msg);
}

static int check_row_tile(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                          long v, GString *msg) {
  (void)hw;
  int rows = pp->dims.rows, e;
  if ((e = range(k, v, 32, rows, "problem.rows", msg))) return e;
  if ((e = multiple(k, v, 32, msg))) return e;
  return divides(k, v, rows, "rows", msg);
}

static int check_panel(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v,
                       GString *msg) {
  (void)hw;
  int e;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if ((e = multiple(k, v, 8, msg))) return e;
  return divides(k, v, sched_proj_n(&pp->dims, k->proj), n_name[k->proj], msg);
}

static int check_k_chunk(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                         long v, GString *msg) {
  (void)hw;
  int e;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if ((e = multiple(k, v, 32, msg))) return e;
  return divides(k, v, sched_proj_k(&pp->dims, k->proj), k_name[k->proj], msg);
}

static int check_k_split(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                         long v, GString *msg) {
  (void)hw;
  int e, kk = sched_proj_k(&pp->dims, k->proj);
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if (kk % (32 * v) == 0) return 0;
  g_string_printf(msg, "%s=%ld does not split %s=%d into multiples of 32 rows", k->path, v,
                  k_name[k->proj], kk);
  return PLAN_ERROR_DIVIDE;
}

/* P1: the groups take whole panels (the stage's N / panels.PROJ of them). */
static int check_panel_groups(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v,
                              GString *msg) {
  (void)hw;
  int e, P = pp->panel[k->proj], np = P > 0 ? sched_proj_n(&pp->dims, k->proj) / P : 0;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if (np <= 0 || np % v == 0) return 0;
  g_string_printf(msg, "%s=%ld does not divide the %d panels of %s (%s=%d / panels.%s=%d)", k->path, v, np,
                  sched_proj_name[k->proj], n_name[k->proj], sched_proj_n(&pp->dims, k->proj),
                  sched_proj_name[k->proj], P);
  return PLAN_ERROR_DIVIDE;
}

static int check_multicast(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                           long v, GString *msg) {
  (void)pp;
  if (!v || hw->multicast) return 0;
  g_string_printf(msg, "'%s: true' needs hardware.multicast: true", k->path);
  return PLAN_ERROR_CONFLICT;
}

static int check_pacing_wg(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                           long v, GString *msg) {
  (void)pp;
  int wgs = sim_machine_wgs(hw);
  g_autofree char *why = g_strdup_printf("the machine has %d WGs", wgs);
  return range(k, v, -1, wgs - 1, why, msg);
}

static int check_slices(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                        long v, GString *msg) {
  (void)hw;
  int e, h = pp->dims.history;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if (v == 1 || (h >= 16 * v && h % (16 * v) == 0)) return 0;
  g_string_printf(msg, "%s=%ld does not split history=%d into slices of a multiple of 16 "
                  "positions", k->path, v, h);
  return PLAN_ERROR_DIVIDE;
}

/* P1: a query tile group takes whole row tiles of one sequence. */
static int check_query_tiles(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v,
                             GString *msg) {
  (void)hw;
  int e, R = pp->row_tile, T = R > 0 ? pp->dims.rows / R : 0;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  if (T <= 0 || T % v == 0) return 0;
  g_string_printf(msg, "%s=%ld does not divide the %d row tiles of a sequence (rows=%d / row_tile=%d)", k->path, v,
                  T, pp->dims.rows, R);
  return PLAN_ERROR_DIVIDE;
}

static int check_ffn_channels(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                              long v, GString *msg) {
  (void)hw;
  int e;
  if ((e = range(k, v, k->min, k->max, NULL, msg))) return e;
  return divides(k, v, pp->dims.d_ff, "d_ff", msg);
}

/* ---- the table ---- */

#define D1 (1u << PROB_D1)
#define P1 (1u << PROB_P1)
#define BOTH (D1 | P1)
#define FULL(p) {[PROB_D1] = "d1." p, [PROB_P1] = "p1." p}
#define STEP(d, p) {[PROB_D1] = d, [PROB_P1] = p}
#define DIM(p, app)                                                                  \
  {.path = "problem." #p, .full = FULL("problem." #p), .type = KT_DIM, .applies = app,   \
   .offset = offsetof(PlanProblem, dims.p), .proj = -1}
#define INT(p, app, fld, lo, hi, d, pr, chk, sd, sp)                                      \
  {.path = p, .full = FULL(p), .type = KT_INT, .applies = app,                            \
   .offset = offsetof(PlanProblem, fld), .min = lo, .max = hi, .def = d, .proj = pr,      \
   .check = chk, .step = STEP(sd, sp)}
#define BOOL(p, app, fld, d, pr, chk, sd, sp)                                             \
  {.path = p, .full = FULL(p), .type = KT_BOOL, .applies = app,                           \
   .offset = offsetof(PlanProblem, fld), .min = 0, .max = 1, .def = d, .proj = pr,        \
   .check = chk, .step = STEP(sd, sp)}
/* a pacing knob: cycles of delay, 0..100000, that only shape the power */
#define PACE(p, app, fld, d, pr)                                                          \
  {.path = p, .full = FULL(p), .type = KT_INT, .applies = app,                            \
   .offset = offsetof(PlanProblem, fld), .min = 0, .max = 100000, .def = d, .proj = pr,   \
   .pacing = TRUE}
#define ENUM(p, app, fld, nm, d, sd, sp)                                                  \
  {.path = p, .full = FULL(p), .type = KT_ENUM, .applies = app,                           \
   .offset = offsetof(PlanProblem, fld), .def = d, .names = nm, .proj = -1,               \
   .step = STEP(sd, sp)}
#define PER_PROJ(M, group)                                                   \
  M(group ".qkv", PROJ_QKV), M(group ".wo", PROJ_WO), M(group ".w1", PROJ_W1), \
      M(group ".w2", PROJ_W2)
#define PANEL(p, pr) INT(p, BOTH, panel[pr], 8, 128, 32, pr, check_panel, 0, 0)
#define KCHUNK(p, pr) INT(p, BOTH, k_chunk[pr], 32, 4096, 128, pr, check_k_chunk, 0, 0)
/* k_split: D1's wo and w2 now (resident weights, RF hand-offs); qkv and w1,
 * whose tasks also normalise their whole input row, later; P1 now */
#define KSPLIT(p, pr) INT(p, BOTH, k_split[pr], 1, 8, 1, pr, check_k_split, pr == PROJ_WO || pr == PROJ_W2 ? 0 : 3, 0)
#define MCAST(p, pr) BOOL(p, BOTH, multicast[pr], 0, pr, check_multicast, 4, 0)
/* panel_groups.PROJ: p1.c's stage_proj_resident (a stage's owners in rounds) */
#define PGROUPS(p, pr) INT(p, P1, panel_groups[pr], 1, 64, 1, pr, check_panel_groups, 0, 0)
#define KLAST(p, pr) BOOL(p, P1, k_split_last[pr], 0, pr, NULL, 0, 0)
#define TSYNC(p, pr) BOOL(p, P1, tile_sync[pr], 0, pr, NULL, 0, 0)
/* weight_spacing.PROJ: spacing.c */
#define WSPACE(p, pr) PACE(p, P1, weight_spacing[pr], 0, pr)
#define WSTAGGER(p, pr) PACE(p, P1, weight_stagger[pr], 0, pr)
/* shard_group.PROJ: shard_group.c; issue_spacing.PROJ: spacing.c */
#define SGROUP(p, pr) BOOL(p, P1, shard_group[pr], 0, pr, NULL, 0, 0)
#define ISPACE(p, pr) PACE(p, P1, issue_spacing[pr], 0, pr)
/* store_spacing.STAGE: a stage's own spacing; not written, it takes
 * store_spacing's value (plan_problem_fit_defaults).  D1 has no LayerNorm
 * tasks (its projections normalise their input row). */
#define SPACING(p, app, st)                                                                \
  {.path = p, .full = FULL(p), .type = KT_INT, .applies = app,                             \
   .offset = offsetof(PlanProblem, stage_spacing[st]), .min = 0, .max = 100000, .def = 0,  \
   .proj = -1, .follows = "store_spacing", .pacing = TRUE}

/* power.stage_rate.STAGE: the rate of one kind of stage (pace.c); 0 (not
 * written) leaves it power.stage_rate's.  D1 has no LayerNorm tasks. */
#define SRATE(p, app, st) INT(p, app, stage_rates[st], 0, 65536, 0, -1, NULL, 0, 0)

/* ORDER-MATTERS: docs/plan.md lists the knobs in this order; `problem.*`
 * first (they are applied before every other knob).  Columns:
 *   INT(path, applies, field, min, max, default, proj, check, step d1, step p1)
 *   BOOL(path, applies, field, default, proj, check, step d1, step p1)
 *   ENUM(path, applies, field, names, default, step d1, step p1)
 * step = the roadmap step that implements non-default values (0: now); a
 * check replaces the static min..max (it checks its own range). */
const PlanKnobDef plan_knobs[PLAN_NKNOBS] = {
    DIM(d_model, BOTH), DIM(heads, BOTH), DIM(d_ff, BOTH), DIM(layers, BOTH),
    DIM(history, D1), DIM(steps, D1), DIM(seqs, P1), DIM(rows, P1),
    INT("sms_used", BOTH, sms_used, 1, 64, 16, -1, check_sms_used, 0, 0),
    INT("row_tile", P1, row_tile, 32, 1024, 32, -1, check_row_tile, 0, 0),
    PER_PROJ(PANEL, "panels"),
    PER_PROJ(KCHUNK, "k_chunk"),
    /* stream_depth: project.c's chunk buffers of a streamed projection */
    INT("stream_depth", BOTH, stream_depth, 1, 8, 1, -1, NULL, 0, 0),
    /* stream_prefetch: d1.c's streamed tasks load their first chunks first */
    BOOL("stream_prefetch", D1, stream_prefetch, 0, -1, NULL, 0, 0),
    PER_PROJ(KSPLIT, "k_split"),
    PER_PROJ(PGROUPS, "panel_groups"),
    PER_PROJ(KLAST, "k_split_last"),
    PER_PROJ(TSYNC, "tile_sync"),
    PER_PROJ(WSPACE, "weight_spacing"),
    PER_PROJ(WSTAGGER, "weight_stagger"),
    PER_PROJ(SGROUP, "shard_group"),
    PER_PROJ(ISPACE, "issue_spacing"),
    /* ln_fold_stagger.PROJ, ln_fold_slots.PROJ, ln_fold_first_gap: ln_fold_centred.c's
     * pacing of the folds (qkv and w1 fold; the defaults are its old constants) */
    PACE("ln_fold_stagger.qkv", P1, ln_fold_stagger[PROJ_QKV], 100, PROJ_QKV),
    PACE("ln_fold_stagger.w1", P1, ln_fold_stagger[PROJ_W1], 100, PROJ_W1),
    INT("ln_fold_slots.qkv", P1, ln_fold_slots[PROJ_QKV], 1, 512, 4, PROJ_QKV, NULL, 0, 0),
    INT("ln_fold_slots.w1", P1, ln_fold_slots[PROJ_W1], 1, 512, 4, PROJ_W1, NULL, 0, 0),
    PACE("ln_fold_first_gap", P1, ln_fold_first_gap, 400, -1),
    /* ln_first_stagger: spacing.c's pacing of the program's first stage */
    PACE("ln_first_stagger", P1, ln_first_stagger, 0, -1),
    /* ln_stagger: the same for every other LayerNorm stage */
    PACE("ln_stagger", P1, ln_stagger, 0, -1),
    ENUM("layout", BOTH, layout, layout_names, LAYOUT_ROW, 4, 0),
    ENUM("weights", BOTH, weights, weights_names, WEIGHTS_STREAMED, 0, 0),
    INT("rf_temp_kib", BOTH, rf_temp_kib, 0, 256, 16, -1, check_rf_temp, 0, 0),
    INT("resident_layers", D1, resident_layers, 0, 8, 0, -1, check_resident_layers, 0, 0),
    ENUM("kv_writeback", BOTH, kv_writeback, kv_names, KV_DIRECT, 0, 0),
    PACE("store_spacing", BOTH, store_spacing, 0, -1),
    SPACING("store_spacing.ln", P1, SPACE_LN), SPACING("store_spacing.qkv", BOTH, SPACE_QKV),
    SPACING("store_spacing.att", BOTH, SPACE_ATT), SPACING("store_spacing.wo", BOTH, SPACE_WO),
    SPACING("store_spacing.w1", BOTH, SPACE_W1), SPACING("store_spacing.w2", BOTH, SPACE_W2),
    ENUM("handoff", BOTH, handoff, handoff_names, HANDOFF_HBM, 0, 0),
    INT("handoff_relays", D1, handoff_relays, 0, 8, 0, -1, NULL, 0, 0),
    BOOL("handoff_forward", D1, handoff_forward, 0, -1, NULL, 0, 0),
    /* handoff_fanout: P1's W1 -> W2 blocks forwarded along chains (fanout.c) */
    INT("handoff_fanout", P1, handoff_fanout, 0, 64, 0, -1, NULL, 0, 0),
    /* handoff_hop_flow: handoff_fanout's chains with a free event per owner (fanout.c) */
    BOOL("handoff_hop_flow", P1, handoff_hop_flow, 0, -1, NULL, 0, 0),
    PER_PROJ(MCAST, "multicast"),
    BOOL("multicast.pass", P1, multicast_pass, 0, -1, NULL, 0, 0),
    INT("multicast.issuers", P1, multicast_issuers, 0, 8, 4, -1, NULL, 0, 0),
    INT("rf_grid.rows", P1, rf_grid_rows, 1, 8, 1, -1, NULL, 0, 0),
    INT("rf_grid.cols", P1, rf_grid_cols, 1, 8, 1, -1, NULL, 0, 0),
    INT("rf_grid.k_split", P1, rf_grid_k, 1, 8, 1, -1, NULL, 0, 0),
    BOOL("rf_grid.multicast", P1, rf_grid_mc, 0, -1, check_multicast, 0, 0),
    /* rf_grid.wave_wgs: grid.c's waves, at most N WGs of each SM */
    INT("rf_grid.wave_wgs", P1, rf_grid_wave_wgs, 1, 8, 2, -1, NULL, 0, 0),
    INT("power.preload_waves", BOTH, preload_waves, 1, 64, 1, -1, NULL, 0, 4),
    ENUM("power.wave_order", BOTH, wave_order, wave_order_names, WAVES_BY_SM, 0, 4),
    INT("power.bucket_bytes", BOTH, bucket_bytes, 0, 1 << 30, 0, -1, NULL, 0, 0),
    INT("power.event_interval", BOTH, event_interval, 0, 100000, 0, -1, NULL, 0, 0),
    INT("power.pacing_wg", BOTH, pacing_wg, -1, 511, -1, -1, check_pacing_wg, 0, 0),
    INT("power.in_flight", BOTH, in_flight, 0, 512, 0, -1, NULL, 0, 0),
    /* power.stage_rate: each stage's HBM loads at most N bytes a cycle (pace.c) */
    INT("power.stage_rate", BOTH, stage_rate, 0, 65536, 0, -1, NULL, 0, 0),
    SRATE("power.stage_rate.ln", P1, SPACE_LN), SRATE("power.stage_rate.qkv", BOTH, SPACE_QKV),
    SRATE("power.stage_rate.att", BOTH, SPACE_ATT), SRATE("power.stage_rate.wo", BOTH, SPACE_WO),
    SRATE("power.stage_rate.w1", BOTH, SPACE_W1), SRATE("power.stage_rate.w2", BOTH, SPACE_W2),
    BOOL("power.deferred_loads", BOTH, deferred_loads, 0, -1, NULL, 0, 4),
    INT("power.preload_window", D1, preload_window, 0, 512, 0, -1, NULL, 0, 0),
    ENUM("power.deferred_after", D1, deferred_after, defer_after_names, DEFER_AFTER_LAYER, 0, 0),
    ENUM("power.fit", BOTH, power_fit, fit_names, FIT_ON, 0, 0),
    ENUM("placement.solver", BOTH, solver, solver_names, SOLVER_CONSTRUCTIVE, 0, 4),
    INT("placement.time_limit_s", BOTH, solver_time_limit_s, 1, 3600, 10, -1, NULL, 0, 0),
    INT("placement.k_divisor", BOTH, obj_k_divisor, 1, 1024, 4, -1, NULL, 0, 0),
    INT("placement.partition_weight", BOTH, obj_partition_weight, 0, 10000, 20, -1, NULL, 0,
        0),
    INT("placement.active_weight", BOTH, obj_active_weight, 0, 10000, 0, -1, NULL, 0, 0),
    INT("attention.slices", D1, attn_slices, 1, 8, 1, -1, check_slices, 0, 0),
    ENUM("attention.slice_map", D1, slice_map, slicemap_names, SLICEMAP_ROUND_ROBIN, 0, 0),
    /* attention.new_slice: the new positions get a slice of their own
     * instead of joining the last history slice (src/lower/d1.c, resident.c) */
    BOOL("attention.new_slice", D1, attn_new_slice, 0, -1, NULL, 0, 0),
    INT("attention.query_tiles", P1, attn_query_tiles, 1, 8, 1, -1, check_query_tiles, 0, 0),
    INT("attention.waves", P1, attn_waves, 1, 8, 1, -1, NULL, 0, 0),
    PACE("attention.stagger", P1, attn_stagger, 0, -1),
    ENUM("attention.kv", P1, attn_kv, attkv_names, ATTKV_STREAMED, 0, 0),
    ENUM("attention.softmax", P1, attn_softmax, softmax_names, SOFTMAX_ONLINE, 0, 0),
    INT("attention.interleave", P1, attn_interleave, 1, 2, 1, -1, NULL, 0, 0),
    /* attention.tile_sync: the attention tasks wait per row tile for the
     * q|k|v rows they read, not for the whole qkv stage (tile_sync.c) */
    BOOL("attention.tile_sync", P1, attn_tile_sync, 0, -1, NULL, 0, 0),
    /* attention.handoff: rf: each attention task puts its output tiles
     * into wo's owners' A buffers RF to RF instead of HBM (attention_wo.c) */
    ENUM("attention.handoff", P1, attn_handoff, atthandoff_names, ATTHANDOFF_HBM, 0, 0),
    BOOL("ffn.fused", D1, ffn_fused, 0, -1, NULL, 0, 0),
    BOOL("refinements.ln_fold", BOTH, ln_fold, 0, -1, NULL, 0, 0), /* P1: ln_fold_centred.c */
    BOOL("refinements.first_token", D1, first_token, 0, -1, NULL, 0, 0),
    BOOL("refinements.q_first", D1, q_first, 0, -1, NULL, 0, 0),
    BOOL("refinements.gelu_factor", BOTH, gelu_factor, 0, -1, NULL, 0, 0),
    BOOL("refinements.split_stats", D1, split_stats, 0, -1, NULL, 0, 0),
    /* refinements.ln_stats: P1 LayerNorm statistics from the producers (ln_stats.c) */
    ENUM("refinements.ln_stats", P1, ln_stats, ln_stats_names, LN_STATS_ROWS, 0, 0),
    INT("ffn.producers", D1, ffn_producers, 1, 512, 32, -1, NULL, 0, 0),
    INT("ffn.channels", D1, ffn_channels, 1, 4096, 16, -1, check_ffn_channels, 0, 0),
    INT("ffn.consumers", D1, ffn_consumers, 1, 512, 16, -1, NULL, 0, 0),
};

const PlanNeed plan_needs[] = {
    {"attention.slice_map", "attention.slices", 2, "attention.slices > 1", BOTH},
    {"attention.new_slice", "attention.slices", 2, "attention.slices > 1", BOTH},
    {"attention.waves", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.stagger", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.kv", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.interleave", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.tile_sync", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.tile_sync", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"attention.handoff", "attention.query_tiles", 2, "attention.query_tiles > 1", BOTH},
    {"attention.handoff", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"attention.handoff", "multicast.wo", 1, "multicast.wo is true", P1},
    {"attention.softmax", "attention.kv", ATTKV_RESIDENT, "attention.kv is resident", BOTH},
    {"power.preload_waves", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"power.wave_order", "power.preload_waves", 2, "power.preload_waves > 1", BOTH},
    {"refinements.ln_fold", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"refinements.first_token", "refinements.ln_fold", 1, "refinements.ln_fold is true", BOTH},
    {"refinements.q_first", "attention.slices", 2, "attention.slices > 1", BOTH},
    {"refinements.split_stats", "refinements.ln_fold", 1, "refinements.ln_fold is true", BOTH},
    {"refinements.ln_stats", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"ln_fold_stagger.qkv", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"ln_fold_stagger.w1", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"ln_fold_slots.qkv", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"ln_fold_slots.w1", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"ln_fold_first_gap", "refinements.ln_fold", 1, "refinements.ln_fold is true", P1},
    {"rf_grid.wave_wgs", "rf_grid.multicast", 1, "rf_grid.multicast is true", P1},
    {"refinements.split_stats", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"power.deferred_loads", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"power.preload_window", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"power.deferred_after", "power.deferred_loads", 1, "power.deferred_loads is true", BOTH},
    {"k_split.wo", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"k_split.wo", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"k_split.w2", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"k_split.w2", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"ffn.fused", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"handoff_relays", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"resident_layers", "weights", WEIGHTS_RESIDENT, "weights is resident", D1},
    {"handoff_relays", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"handoff_forward", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"handoff_fanout", "handoff", HANDOFF_RF, "handoff is rf", P1},
    {"handoff_hop_flow", "handoff_fanout", 1, "handoff_fanout > 0", P1},
    {"ffn.fused", "handoff", HANDOFF_RF, "handoff is rf", D1},
    {"k_split.qkv", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"layout", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"handoff", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"handoff", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"panel_groups.qkv", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"panel_groups.wo", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"panel_groups.w1", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"panel_groups.w2", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"k_split_last.qkv", "k_split.qkv", 2, "k_split.qkv > 1", P1},
    {"k_split_last.wo", "k_split.wo", 2, "k_split.wo > 1", P1},
    {"k_split_last.w1", "k_split.w1", 2, "k_split.w1 > 1", P1},
    {"k_split_last.w2", "k_split.w2", 2, "k_split.w2 > 1", P1},
    {"k_split_last.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"k_split_last.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"k_split_last.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"k_split_last.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"tile_sync.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"tile_sync.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"tile_sync.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"tile_sync.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"weight_spacing.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"weight_spacing.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"weight_spacing.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"weight_spacing.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"weight_stagger.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"weight_stagger.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"weight_stagger.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"weight_stagger.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"shard_group.qkv", "k_split.qkv", 2, "k_split.qkv > 1", P1},
    {"shard_group.wo", "k_split.wo", 2, "k_split.wo > 1", P1},
    {"shard_group.w1", "k_split.w1", 2, "k_split.w1 > 1", P1},
    {"shard_group.w2", "k_split.w2", 2, "k_split.w2 > 1", P1},
    {"shard_group.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"shard_group.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"shard_group.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"shard_group.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"issue_spacing.qkv", "multicast.qkv", 1, "multicast.qkv is true", P1},
    {"issue_spacing.wo", "multicast.wo", 1, "multicast.wo is true", P1},
    {"issue_spacing.w1", "multicast.w1", 1, "multicast.w1 is true", P1},
    {"issue_spacing.w2", "multicast.w2", 1, "multicast.w2 is true", P1},
    {"k_split.w1", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"multicast.qkv", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"multicast.wo", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"multicast.w1", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"multicast.w2", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"multicast.pass", "weights", WEIGHTS_RESIDENT, "weights is resident", P1},
    {"multicast.issuers", "multicast.pass", 1, "multicast.pass is true", P1},
    {"ffn.producers", "ffn.fused", 1, "ffn.fused is true", BOTH},
    {"ffn.channels", "ffn.fused", 1, "ffn.fused is true", BOTH},
    {"ffn.consumers", "ffn.fused", 1, "ffn.fused is true", BOTH},
    {"placement.solver", "weights", WEIGHTS_RESIDENT, "weights is resident", BOTH},
    {"placement.time_limit_s", "placement.solver", SOLVER_ILP, "placement.solver is ilp", BOTH},
    {"placement.k_divisor", "placement.solver", SOLVER_ILP, "placement.solver is ilp", BOTH},
    {"placement.partition_weight", "placement.solver", SOLVER_ILP, "placement.solver is ilp", BOTH},
    {"placement.active_weight", "placement.solver", SOLVER_ILP, "placement.solver is ilp", BOTH},
    {"power.bucket_bytes", "power.event_interval", 1, "power.event_interval > 0", BOTH},
    {"power.event_interval", "power.bucket_bytes", 1, "power.bucket_bytes > 0", BOTH},
    {"power.pacing_wg", "power.bucket_bytes", 1, "power.bucket_bytes > 0", BOTH},
    {"power.in_flight", "power.pacing_wg", 0, "power.pacing_wg >= 0", BOTH},
};
const int plan_nneeds = G_N_ELEMENTS(plan_needs);

/* ---- technique companions (PlanCompanion) ---- */

static long all_sms(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)c, (void)pp;
  return hw->sms;
}

/* A bool companion that is on wherever the machine allows it. */
static long on(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)c, (void)pp, (void)hw;
  return 1;
}

static long on_with_multicast(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)c, (void)pp;
  return hw->multicast ? 1 : PLAN_NO_COMPANION;
}

/* The most a knob takes (attention.interleave: 2, both tiles' chains). */
static long most(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)pp, (void)hw;
  return c->max;
}

static long kv_shared(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)c, (void)pp, (void)hw;
  return ATTKV_SHARED;
}

/* P1 residency's K shards of a projection: the fewest of those that split
 * K into multiples of 32 whose panel shard (K/S x panel x 4 bytes) takes at
 * most half a WG's RF (the other half: the A buffers and the results),
 * then more while the stage's owners (panels x S) are fewer than the SMs
 * and more would still fit the machine's WGs: every SM's MMA busy. */
static int resident_split(int proj, const PlanProblem *pp, const Machine *hw) {
  int K = sched_proj_k(&pp->dims, (PlanProj)proj), N = sched_proj_n(&pp->dims, (PlanProj)proj);
  int P = pp->panel[proj] > 0 ? pp->panel[proj] : 32, np = MAX(N / P, 1), wgs = hw->sms * hw->wgs_per_sm;
  int64_t half = (int64_t)hw->rf_kib * 1024 / 2;
  int best = 0;
  for (int s = 1; s <= 8; s++) {
    if (K % (32 * s) != 0) continue;
    if (!best) {
      if ((int64_t)(K / s) * P * 4 <= half) best = s;
    } else if (np * best < hw->sms && np * s <= wgs) {
      best = s;
    }
  }
  return best ? best : 1;
}

static long resident_k_split(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  return resident_split(c->proj, pp, hw);
}

/* P1 residency's A chunks: the largest (a multiple of 32 that divides the
 * K shard, at most 128) with which 4 A buffers (LW_P1R_BUFFERS: a chunk
 * lands while others are multiplied), the shard and two R x panel results
 * take at most a WG's RF partitions (one left for the bias and rstd);
 * else 32. */
static long resident_k_chunk(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  int proj = c->proj, K = sched_proj_k(&pp->dims, (PlanProj)proj), KS = K / resident_split(proj, pp, hw);
  int P = pp->panel[proj] > 0 ? pp->panel[proj] : 32, R = pp->row_tile > 0 ? pp->row_tile : 32;
  int64_t part = (int64_t)hw->rf_kib * 1024 / MAX(hw->vl, 1);
#define PARTS(bytes) (((int64_t)(bytes) + part - 1) / part)
  for (int kc = MIN(128, KS) / 32 * 32; kc >= 32; kc -= 32)
    if (KS % kc == 0 && PARTS(4 * KS * P) + 4 * PARTS(4 * R * kc) + 2 * PARTS(4 * R * P) + 1 <= hw->vl) return kc;
#undef PARTS
  return 32;
}

/* A head's width (d_model / heads): with attention.handoff rf or relay one
 * head's tile is one wo A chunk. */
static long head_width(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  (void)c, (void)hw;
  return pp->dims.heads > 0 ? pp->dims.d_model / pp->dims.heads : PLAN_NO_COMPANION;
}

/* D1's relays for RF hand-offs: the widest hand-off (wo's row into W1's
 * d_ff / panels.w1 panels and W2's residual: C stores) queues ~30 cycles
 * per store on an SM's engines x depth DMA slots.  Within two rounds of
 * the slots it goes direct (0); else R relays make it R + C/R stores,
 * fewest at R = sqrt(C). */
static long d1_relays(const PlanKnobDef *c, const PlanProblem *pp, const Machine *hw) {
  int C = sched_proj_n(&pp->dims, PROJ_W1) / MAX(pp->panel[PROJ_W1], 8) + 1;
  int slots = MAX(hw->dma_engines * hw->dma_depth, 1);
  if (C <= 2 * slots) return 0;
  long r = 1;
  while ((r + 1) * (r + 1) <= C) r++;
  if (C - r * r > (r + 1) * (r + 1) - C) r++; /* the nearer root */
  return CLAMP(r, 1, c->max);
}

#define PER_PROJ_COMPANION(tech, min, group, fn, why, only)                                        \
  {tech, min, group ".qkv", fn, why, only}, {tech, min, group ".wo", fn, why, only},               \
      {tech, min, group ".w1", fn, why, only}, {tech, min, group ".w2", fn, why, only}

/* ORDER-MATTERS: a tuner applies them in this order (a companion switched
 * on brings its own: k_split.w2 by residency, then k_split_last.w2), a
 * later row's value over an earlier one's (attention.handoff's k_chunk.wo
 * over residency's). */
const PlanCompanion plan_companions[] = {
    {"weights", WEIGHTS_RESIDENT, "sms_used", all_sms, "the resident panels live in the RF of every SM", BOTH},
    PER_PROJ_COMPANION("weights", WEIGHTS_RESIDENT, "k_split", resident_k_split,
                       "K shards that fit half a WG's RF, an owner on every SM", P1),
    PER_PROJ_COMPANION("weights", WEIGHTS_RESIDENT, "k_chunk", resident_k_chunk,
                       "A chunks of which 4 buffers fit beside the shard", P1),
    PER_PROJ_COMPANION("weights", WEIGHTS_RESIDENT, "multicast", on_with_multicast,
                       "each A chunk read once for a stage's owners (LD.mc)", P1),
    {"k_split.qkv", 2, "k_split_last.qkv", on, "the last shard adds bias and residual", P1},
    {"k_split.wo", 2, "k_split_last.wo", on, "the last shard adds bias and residual", P1},
    {"k_split.w1", 2, "k_split_last.w1", on, "the last shard adds bias and residual", P1},
    {"k_split.w2", 2, "k_split_last.w2", on, "the last shard adds bias and residual", P1},
    {"attention.query_tiles", 2, "attention.kv", kv_shared, "a K/V block read once for the task's tiles", P1},
    {"attention.query_tiles", 2, "attention.interleave", most, "the tiles' chains software-pipelined", P1},
    {"attention.handoff", ATTHANDOFF_RF, "k_chunk.wo", head_width, "one head's tile is one wo A chunk", P1},
    {"handoff", HANDOFF_RF, "handoff_fanout", on, "one chain by SM per shard, paced hop by hop", P1},
    {"handoff", HANDOFF_RF, "handoff_hop_flow", on, "one chain by SM per shard, paced hop by hop", P1},
    {"handoff", HANDOFF_RF, "handoff_relays", d1_relays, "relays when the SMs' DMA slots are few", D1},
};
const int plan_ncompanions = G_N_ELEMENTS(plan_companions);

/* ---- access ---- */

int plan_knob_check(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v,
                    GString *msg) {
  if (k->check) return k->check(k, pp, hw, v, msg);
  if (k->type != KT_INT) return 0;
  return range(k, v, k->min, k->max, NULL, msg);
}

int plan_knob_index(const char *path) {
  if (!path) return -1;
  if (g_str_has_prefix(path, "d1.") || g_str_has_prefix(path, "p1.")) path += 3;
  for (int i = 0; i < PLAN_NKNOBS; i++)
    if (strcmp(plan_knobs[i].path, path) == 0) return i;
  return -1;
}

int *plan_knob_field(PlanProblem *pp, const PlanKnobDef *k) {
  return (int *)((char *)pp + k->offset);
}

int plan_knob_get(const PlanProblem *pp, const PlanKnobDef *k) {
  return *(const int *)((const char *)pp + k->offset);
}

/* The default k_chunk: the largest of 128, 96, 64, 32 that divides K (a
 * multiple of 32) and whose chunk of a `panel`-wide panel (c x panel x 4
 * bytes) takes at most half a WG's RF; 32 when none is that small. */
static int default_k_chunk(int k, int panel, const Machine *hw) {
  int64_t half = (int64_t)hw->rf_kib * 1024 / 2;
  for (int c = 128; c > 32; c -= 32)
    if (k % c == 0 && 4 * (int64_t)c * panel <= half) return c;
  return 32;
}

const char *plan_knob_follows(const char *path) {
  int i = plan_knob_index(path);
  return i < 0 ? NULL : plan_knobs[i].follows;
}

void plan_problem_fit_defaults(PlanProblem *pp, const Machine *hw) {
  for (int i = 0; i < PLAN_NKNOBS; i++) /* store_spacing.STAGE: store_spacing's */
    if (plan_knobs[i].follows && pp->loc[i].line == 0)
      *plan_knob_field(pp, &plan_knobs[i]) = plan_knob_get(pp, &plan_knobs[plan_knob_index(plan_knobs[i].follows)]);
  for (int p = 0; p < PROJ__COUNT; p++) {
    char path[32];
    g_snprintf(path, sizeof path, "k_chunk.%s", sched_proj_name[p]);
    int i = plan_knob_index(path);
    if (i >= 0 && pp->loc[i].line == 0)
      pp->k_chunk[p] = default_k_chunk(sched_proj_k(&pp->dims, (PlanProj)p), pp->panel[p], hw);
  }
}

void plan_problem_defaults(PlanProblem *pp, const Machine *hw) {
  ProblemKind kind = pp->dims.kind;
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    gboolean applies = (k->applies & (1u << kind)) != 0;
    pp->loc[i] = (PlanLoc){0, 0, applies ? k->full[kind] : NULL};
    if (k->type != KT_DIM) *plan_knob_field(pp, k) = k->def;
  }
  pp->sms_used = hw->sms;
  for (int p = 0; p < PROJ__COUNT; p++)
    pp->k_chunk[p] = default_k_chunk(sched_proj_k(&pp->dims, (PlanProj)p), pp->panel[p], hw);
}

char *plan_knob_value_text(const PlanKnobDef *k, long v) {
  if (k->type == KT_BOOL) return g_strdup(v ? "true" : "false");
  if (k->type == KT_ENUM && v >= 0 && v < (long)g_strv_length((char **)k->names))
    return g_strdup(k->names[v]);
  return g_strdup_printf("%ld", v);
}

void plan_problem_record(PlanProblem *pp) {
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    pp->value[i][0] = '\0';
    if (!pp->loc[i].path) continue;
    g_autofree char *v = plan_knob_value_text(&plan_knobs[i], plan_knob_get(pp, &plan_knobs[i]));
    g_strlcpy(pp->value[i], v, sizeof pp->value[i]);
  }
}

/* A path naming a knob of this problem: relative, or full with the right
 * section prefix. */
static int knob_of(const PlanProblem *pp, const char *path) {
  const char *sec = wl_problem_name(pp->dims.kind);
  if (path && (g_str_has_prefix(path, "d1.") || g_str_has_prefix(path, "p1.")) &&
      strncmp(path, sec, 2) != 0)
    return -1;
  int i = plan_knob_index(path);
  if (i < 0 || !(plan_knobs[i].applies & (1u << pp->dims.kind))) return -1;
  return i;
}

PlanLoc plan_knob_loc(const PlanProblem *pp, const char *path) {
  int i = knob_of(pp, path);
  return i < 0 ? (PlanLoc){0, 0, NULL} : pp->loc[i];
}

char *plan_knob_describe(const PlanProblem *pp, const char *path) {
  int i = knob_of(pp, path);
  if (i < 0) return NULL;
  g_autofree char *v = plan_knob_value_text(&plan_knobs[i], plan_knob_get(pp, &plan_knobs[i]));
  if (pp->loc[i].line == 0) return g_strdup_printf("%s=%s (default)", pp->loc[i].path, v);
  return g_strdup_printf("%s=%s (line %d)", pp->loc[i].path, v, pp->loc[i].line);
}

gboolean plan_knob_fit(PlanProblem *pp, const char *path, long v) {
  int i = knob_of(pp, path);
  if (i < 0 || plan_knobs[i].type == KT_DIM) return FALSE;
  *plan_knob_field(pp, &plan_knobs[i]) = (int)v;
  g_autofree char *text = plan_knob_value_text(&plan_knobs[i], v);
  g_strlcpy(pp->value[i], text, sizeof pp->value[i]);
  pp->fitted[i] = 1;
  return TRUE;
}

int plan_knob_relax(PlanProblem *pp, int num, int den) {
  int n = 0;
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    if (!k->pacing || !(k->applies & (1u << pp->dims.kind))) continue;
    long was = plan_knob_get(pp, k), v = was * num / den;
    if (v == was) continue;
    *plan_knob_field(pp, k) = (int)v;
    g_autofree char *text = plan_knob_value_text(k, v);
    g_strlcpy(pp->value[i], text, sizeof pp->value[i]);
    pp->fitted[i] = 1;
    n++;
  }
  return n;
}

gboolean plan_knob_repair(PlanProblem *pp, const Machine *hw, const char *path, long v, GString *changed) {
  int i = knob_of(pp, path);
  if (i < 0 || (plan_knobs[i].type != KT_INT && plan_knobs[i].type != KT_BOOL)) return FALSE;
  const PlanKnobDef *k = &plan_knobs[i];
  long was = plan_knob_get(pp, k);
  g_autoptr(GString) msg = g_string_new(NULL);
  if (v == was || plan_knob_check(k, pp, hw, v, msg) != 0) return FALSE;
  for (int j = 0; v != k->def && j < plan_nneeds; j++) { /* what a value other than the default needs */
    const PlanNeed *n = &plan_needs[j];
    if (strcmp(n->path, k->path) != 0 || (n->only && !(n->only & (1u << pp->dims.kind)))) continue;
    int d = plan_knob_index(n->needs);
    if (d >= 0 && plan_knob_get(pp, &plan_knobs[d]) < n->needs_min) return FALSE;
  }
  *plan_knob_field(pp, k) = (int)v;
  pp->chosen[i] = SCHED_FALLBACK;
  g_autofree char *from = plan_knob_value_text(k, was), *to = plan_knob_value_text(k, v);
  g_strlcpy(pp->value[i], to, sizeof pp->value[i]);
  if (changed) g_string_append_printf(changed, "%s%s: %s -> %s", changed->len ? ", " : "", k->path, from, to);
  return TRUE;
}

gboolean plan_knob_number(const PlanProblem *pp, const char *path, long *v) {
  int i = knob_of(pp, path);
  if (i < 0) return FALSE;
  *v = plan_knob_get(pp, &plan_knobs[i]);
  return TRUE;
}

int plan_knob_at(const PlanProblem *pp, int line, int col) {
  for (int i = 0; line > 0 && i < PLAN_NKNOBS; i++)
    if (pp->loc[i].path && pp->loc[i].line == line && pp->loc[i].col == col && plan_knobs[i].type != KT_DIM)
      return i;
  return -1;
}

void plan_knob_fallback(PlanProblem *pp, int i, GString *changed) {
  const PlanKnobDef *k = &plan_knobs[i];
  long was = plan_knob_get(pp, k);
  if (was == k->def) return; /* nothing to revert */
  *plan_knob_field(pp, k) = k->def;
  pp->chosen[i] = SCHED_FALLBACK;
  g_autofree char *from = plan_knob_value_text(k, was), *to = plan_knob_value_text(k, k->def);
  g_strlcpy(pp->value[i], to, sizeof pp->value[i]);
  if (changed) g_string_append_printf(changed, "%s%s: %s -> %s", changed->len ? ", " : "", k->path, from, to);
  for (int j = 0; j < plan_nneeds; j++) { /* what needed it, written and now without effect */
    const PlanNeed *n = &plan_needs[j];
    if (strcmp(n->needs, k->path) != 0 || (n->only && !(n->only & (1u << pp->dims.kind)))) continue;
    int d = plan_knob_index(n->path);
    if (d < 0 || pp->loc[d].line == 0 || plan_knob_get(pp, &plan_knobs[d]) == plan_knobs[d].def) continue;
    if (plan_knob_get(pp, k) >= n->needs_min) continue;
    plan_knob_fallback(pp, d, changed);
  }
}
