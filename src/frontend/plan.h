/* plan.h - a validated plan: the hardware plus, per problem, how the work is
 * tiled, placed and scheduled.  docs/plan.md is the prose version (schema,
 * ranges, defaults, error classes).
 *
 * The frontend (plan_yaml.c: YAML -> node tree with hard limits; plan_schema.c:
 * the knob table and its checks; plan_load.c: sections -> Plan) fills a Plan
 * and checks every value; everything downstream reads it as plain data.
 * Every knob remembers where it was written (PlanLoc), so passes can report
 * against the plan and the backend can cite it in provenance comments.
 *
 * Conventions: a knob's *path* is its dotted name inside its problem section
 * ("panels.w1"); its *full path* adds the section ("d1.panels.w1").  Errors
 * are one line, "FILE:LINE:COL: error: MESSAGE" (1-based), GError domain
 * PLAN_ERROR with a PlanErrorCode.
 */
#ifndef TCC_PLAN_H
#define TCC_PLAN_H

#include <glib.h>
#include <stdint.h>

#include "machine.h"
#include "workload.h"

#define PLAN_VERSION 1

/* Hard limits against hostile YAML (docs/plan.md "Limits"). */
enum {
  PLAN_MAX_BYTES = 1 << 20, /* file size                                  */
  PLAN_MAX_DEPTH = 8,       /* nested mappings/sequences                  */
  PLAN_MAX_SCALAR = 256,    /* bytes of one scalar (keys included)        */
  PLAN_MAX_NODES = 10000,   /* scalars + mappings + sequences             */
};

/* Where a value came from: 1-based line/col in the plan file, and its full
 * path ("d1.attention.slices", "hardware.dma.engines").  line == 0: the value
 * is a default (path is still set).  path is a static string. */
typedef struct PlanLoc {
  int line, col;
  const char *path;
} PlanLoc;

typedef enum { LAYOUT_ROW, LAYOUT_PACKED } PlanLayout;
typedef enum { WEIGHTS_STREAMED, WEIGHTS_RESIDENT } PlanWeights;
typedef enum { KV_DIRECT, KV_TEMP } PlanKv;
typedef enum { SOLVER_CONSTRUCTIVE, SOLVER_ILP } PlanSolver;
typedef enum { SLICEMAP_ROUND_ROBIN, SLICEMAP_BLOCKED } PlanSliceMap;

/* The projections that have panel widths and splits.  ORDER-MATTERS: indexes
 * PlanProblem's per-projection arrays and plan_proj_name. */
typedef enum { PROJ_QKV, PROJ_WO, PROJ_W1, PROJ_W2, PROJ__COUNT } PlanProj;
extern const char *const plan_proj_name[PROJ__COUNT]; /* "qkv", "wo", "w1", "w2" */

/* Output width N and reduction length K of a projection for these dims:
 * qkv 3*d_model x d_model, wo d_model x d_model, w1 d_ff x d_model,
 * w2 d_model x d_ff (N x K). */
int plan_proj_n(const Problem *dims, PlanProj proj);
int plan_proj_k(const Problem *dims, PlanProj proj);

/* Number of knobs in the table (plan_schema.c), problem dims included. */
#define PLAN_NKNOBS 50
/* Number of hardware keys (sms ... reduce_units, dma.engines/dma.depth). */
#define PLAN_NHW 13

/* Knobs of one problem (section `p1:` or `d1:`).  Every field is filled: a
 * knob not written in the plan has its default.  A knob whose strategy is not
 * implemented yet is rejected when set to anything but its default
 * ("not supported yet"), so the compiler may rely on the "planned" fields
 * holding their defaults. */
typedef struct PlanProblem {
  gboolean present;         /* the section exists in the file            */
  PlanLoc where;            /* the section's key (line 0 when absent)    */
  Problem dims;             /* workload dims, `problem:` overrides; kind set */
  int sms_used;             /* SMs the program may use (default: hw.sms) */
  int row_tile;             /* P1: rows per tile, mult. of 32 dividing rows */
  int panel[PROJ__COUNT];   /* output columns per panel (8..128, mult. 8, | N) */
  int k_chunk[PROJ__COUNT]; /* K rows per loaded chunk (mult. 32, | K)   */
  int k_split[PROJ__COUNT]; /* planned (> 1): partial sums over K shards */
  PlanLayout layout;        /* planned: packed                          */
  PlanWeights weights;      /* planned: resident                        */
  PlanKv kv_writeback;      /* direct (default) or via a temp round trip */
  int store_spacing;        /* cycles of WAITT between a stage's output stores */
  gboolean multicast[PROJ__COUNT]; /* planned: true                     */
  int rf_grid_rows, rf_grid_cols, rf_grid_k; /* P1, planned: not all 1   */
  int preload_waves;        /* planned: != 1                            */
  int bucket_bytes;         /* planned: != 0                            */
  int event_interval;       /* planned: != 0                            */
  int pacing_wg;            /* WG that paces buckets (-1 = self-paced)  */
  int in_flight;            /* with pacing_wg: buckets in flight (0 = no cap) */
  gboolean deferred_loads;  /* planned: true                            */
  PlanSolver solver;        /* planned: ilp                             */
  int solver_time_limit_s;  /* seconds; only with ilp                   */
  int obj_k_divisor;        /* ILP objective: load = K/k_divisor        */
  int obj_partition_weight; /*   + partition_weight * partitions        */
  int obj_active_weight;    /*   + active_weight per WG a stage uses    */
  int attn_slices;          /* D1: attention slices per head (1 = none); planned > 1 */
  PlanSliceMap slice_map;   /* D1: slice -> WG mapping (only with slices > 1) */
  gboolean ffn_fused;       /* D1, planned: true                        */
  int ffn_producers, ffn_channels, ffn_consumers; /* only with fused    */
  PlanLoc loc[PLAN_NKNOBS]; /* by knob index; use plan_knob_loc()       */
} PlanProblem;

typedef struct Plan {
  char *file;               /* as given to plan_load/plan_parse         */
  int version;              /* PLAN_VERSION                             */
  Machine hw;               /* validated (sim_machine_validate)         */
  PlanLoc hw_loc[PLAN_NHW]; /* use plan_hw_loc()                        */
  PlanProblem p1, d1;       /* always filled; .present says if written  */
} Plan;

/* Load and validate `file` (at most PLAN_MAX_BYTES).  NULL with *err set to
 * "file:line:col: error: ..." (domain PLAN_ERROR). */
Plan *plan_load(const char *file, GError **err);
/* The same from memory; `file` only names the text in messages. */
Plan *plan_parse(const char *file, const char *text, size_t len, GError **err);
void plan_free(Plan *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Plan, plan_free)

/* The section of a problem kind (always non-NULL; check ->present). */
const PlanProblem *plan_problem(const Plan *p, ProblemKind kind);

/* Location of a knob for provenance.  `path` is the knob's path inside the
 * section ("panels.w1", "attention.slices", "problem.d_ff", "sms_used"), or
 * its full path ("d1.panels.w1").  For a default, line == col == 0.  For a
 * path that names no knob of this problem (unknown, or not applicable, like
 * "row_tile" in d1), path == NULL. */
PlanLoc plan_knob_loc(const PlanProblem *pp, const char *path);
/* Location of a hardware key: "sms", "dma.engines", or "hardware.sms". */
PlanLoc plan_hw_loc(const Plan *p, const char *key);
/* "d1.panels.w1=32 (line 14)" or "d1.panels.w1=32 (default)": the value as
 * written in a plan (enum names, true/false) and where it came from, for
 * provenance comments and reports.  NULL for an unknown path.  g_free it. */
char *plan_knob_describe(const PlanProblem *pp, const char *path);

/* Error classes (GError codes of PLAN_ERROR); docs/plan.md lists examples. */
typedef enum {
  PLAN_ERROR_IO = 1,       /* cannot read the file                          */
  PLAN_ERROR_SYNTAX,       /* YAML syntax (libyaml's message and mark)      */
  PLAN_ERROR_LIMIT,        /* size, depth, scalar length, node count, alias */
  PLAN_ERROR_STRUCTURE,    /* not a mapping, non-scalar key, 2nd document   */
  PLAN_ERROR_UNKNOWN_KEY,  /* with a did-you-mean                           */
  PLAN_ERROR_DUPLICATE,    /* duplicate key                                 */
  PLAN_ERROR_MISSING,      /* required key missing                          */
  PLAN_ERROR_TYPE,         /* integer / bool / enum / mapping expected      */
  PLAN_ERROR_RANGE,        /* out of range (also hardware and problem dims) */
  PLAN_ERROR_DIVIDE,       /* does not divide / multiple of                 */
  PLAN_ERROR_NOT_APPLICABLE, /* knob of the other problem                   */
  PLAN_ERROR_CONFLICT,     /* knob without effect / needs another setting   */
  PLAN_ERROR_PLANNED,      /* recognised, not supported yet                 */
  PLAN_ERROR_VERSION,      /* version != 1                                  */
} PlanErrorCode;

#define PLAN_ERROR (plan_error_quark())
GQuark plan_error_quark(void);

#endif
