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
#include "schedule.h"
#include "workload.h"

#define PLAN_VERSION 1

/* Hard limits against hostile YAML (docs/plan.md "Limits"). */
enum {
  PLAN_MAX_BYTES = 1 << 20, /* file size                                  */
  PLAN_MAX_DEPTH = 8,       /* nested mappings/sequences                  */
  PLAN_MAX_SCALAR = 256,    /* bytes of one scalar (keys included)        */
  PLAN_MAX_NODES = 10000,   /* scalars + mappings + sequences             */
};

/* A problem section's knobs are the IR's schedule record (src/ir/schedule.h):
 * the frontend fills a Schedule; the names below are the frontend's. */
typedef SchedLoc PlanLoc;
typedef SchedLayout PlanLayout;
typedef SchedWeights PlanWeights;
typedef SchedKv PlanKv;
typedef SchedSolver PlanSolver;
typedef SchedSliceMap PlanSliceMap;
typedef SchedHandoff PlanHandoff;
typedef SchedWaveOrder PlanWaveOrder;
typedef SchedProj PlanProj;
typedef Schedule PlanProblem;
#define PLAN_NKNOBS SCHED_NKNOBS
/* Number of hardware keys (sms ... reduce_units, dma.engines/dma.depth). */
#define PLAN_NHW 13

typedef struct Plan {
  char *file;               /* as given to plan_load/plan_parse         */
  int version;              /* PLAN_VERSION                             */
  Machine hw;               /* validated (sim_machine_validate)         */
  PlanLoc hw_loc[PLAN_NHW]; /* use plan_hw_loc()                        */
  PlanProblem p1, d1;       /* always filled; .present says if written  */
  /* Per problem (indexed by ProblemKind), one line each, "file:line:col:
   * warning: ...": the written values that did not fit the shape and what
   * took their place (Schedule.chosen), in the order the loader met them. */
  GPtrArray *warnings[2];   /* char*                                    */
  gboolean strict;          /* loaded with --strict: no fallbacks       */
} Plan;

/* Load and validate `file` (at most PLAN_MAX_BYTES).  NULL with *err set to
 * "file:line:col: error: ..." (domain PLAN_ERROR). */
Plan *plan_load(const char *file, GError **err);
/* The same from memory; `file` only names the text in messages. */
Plan *plan_parse(const char *file, const char *text, size_t len, GError **err);
/* plan_load / plan_parse with `strict`: a written value that does not fit
 * the shape is refused (PLAN_ERROR_DIVIDE, ...) instead of falling back
 * to the nearest legal value, and the compiler refuses instead of falling
 * back on capacity (tcc-gen --strict).  TCC_STRICT=1 in the environment
 * makes every load strict. */
Plan *plan_load_strict(const char *file, gboolean strict, GError **err);
Plan *plan_parse_strict(const char *file, const char *text, size_t len, gboolean strict, GError **err);
void plan_free(Plan *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Plan, plan_free)

/* The text of a YAML file of the plan's syntax (a plan, a census space, a
 * shape suite; `what` names it), read by the bounded reader (file_read.h):
 * at most PLAN_MAX_BYTES, never more than PLAN_MAX_BYTES + 1 bytes of a pipe
 * or a device.  FALSE with "FILE:1:1: error: cannot read WHAT: REASON"
 * (PLAN_ERROR_IO) or "FILE:1:1: error: WHAT is larger than the limit of
 * 1048576 bytes" (PLAN_ERROR_LIMIT).  *text is NUL-terminated; g_free it. */
gboolean plan_read_text(const char *file, const char *what, char **text, gsize *len, GError **err);

/* The section of a problem kind (always non-NULL; check ->present). */
const PlanProblem *plan_problem(const Plan *p, ProblemKind kind);

/* Location of a knob for provenance.  `path` is the knob's path inside the
 * section ("panels.w1", "attention.slices", "problem.d_ff", "sms_used"), or
 * its full path ("d1.panels.w1").  For a default, line == col == 0.  For a
 * path that names no knob of this problem (unknown, or not applicable, like
 * "row_tile" in d1), path == NULL. */
PlanLoc plan_knob_loc(const PlanProblem *pp, const char *path);
/* The knob whose value knob `path` takes when not written
 * ("store_spacing" for "p1.store_spacing.w1"), or NULL. */
const char *plan_knob_follows(const char *path);
/* Location of a hardware key: "sms", "dma.engines", or "hardware.sms". */
PlanLoc plan_hw_loc(const Plan *p, const char *key);
/* The i-th hardware key (0 <= i < PLAN_NHW, the schema's order, as in
 * Plan.hw_loc): its full path ("hardware.dma.engines") and its value as a
 * plan writes it ("2", "true"); g_free the value. */
const char *plan_hw_path(int i);
char *plan_hw_value_text(const Plan *p, int i);
/* A problem section as a plan that does not write it gets it on machine
 * `hw`: the default dims and every knob at its default (present FALSE). */
void plan_default_problem(PlanProblem *pp, ProblemKind kind, const Machine *hw);
/* The i-th hardware key (0 <= i < PLAN_NHW) as a plan writes it ("sms",
 * "dma.engines"), and as sim_machine_set names it ("sms", "dma_engines");
 * NULL out of range.  ORDER-MATTERS: the order of Plan.hw_loc. */
const char *plan_hw_key(int i);
const char *plan_hw_sim_key(int i);
/* The name of names[0..n) closest to `key` within edit distance 2 (the
 * plan loader's did-you-mean), or NULL. */
const char *plan_did_you_mean(const char *key, const char *const *names, int n);
/* "d1.panels.w1=32 (line 14)" or "d1.panels.w1=32 (default)": the value as
 * written in a plan (enum names, true/false) and where it came from, for
 * provenance comments and reports.  NULL for an unknown path.  g_free it. */
char *plan_knob_describe(const PlanProblem *pp, const char *path);
/* Set knob `path` of a section to v (an int, a bool, an enum's index) for
 * the power fitting (src/fit): its value text follows, and the record marks
 * it fitted (its provenance is power.fit).  No range or rule is checked:
 * the caller keeps them.  FALSE for a path that names no knob of it. */
gboolean plan_knob_fit(PlanProblem *pp, const char *path, long v);
/* power.fit: relax (src/fit): every pacing knob of the section (its
 * spacings and staggers: cycles of delay that only shape the power) times
 * num / den, rounded down, marked fitted as plan_knob_fit does.  Returns
 * how many changed. */
int plan_knob_relax(PlanProblem *pp, int num, int den);
/* The written knob whose place is line:col, or -1 (the place an error of
 * the compiler cites: ir_error at the knob's provenance). */
int plan_knob_at(const PlanProblem *pp, int line, int col);
/* A capacity fallback (src/fit): knob i back to its default, marked
 * SCHED_FALLBACK, and every written knob that needs it (plan_needs) and
 * has no effect any more too, in turn.  Appends each knob reverted to
 * `changed` as "path: old -> new" (may be NULL). */
void plan_knob_fallback(PlanProblem *pp, int i, GString *changed);
/* A capacity repair (src/fit): int or bool (0 or 1) knob `path` set to v,
 * when its rule takes v at the section's shape and machine `hw` and the
 * knobs a value other than its default needs have theirs (plan_needs);
 * marked SCHED_FALLBACK, and "path: old -> new" appended to `changed` (may
 * be NULL).  FALSE, and nothing changed, for a path that names no int or
 * bool knob of the section, the value it has, or a value its rule refuses. */
gboolean plan_knob_repair(PlanProblem *pp, const Machine *hw, const char *path, long v, GString *changed);
/* The value of knob `path` of the section as a number (an int, a bool
 * 0/1, an enum's index); FALSE for a path that names none of its knobs. */
gboolean plan_knob_number(const PlanProblem *pp, const char *path, long *v);

/* ---- Search spaces (plan_space.c): what a tuner may move ----
 * A knob of the space: its full path as a plan writes it ("p1.panels.w1",
 * "hardware.dma.depth"), its values in order (ints ascending, an enum's in
 * its order) with the number each compares as (bool 0/1, enum index), and
 * the index of its default among them (-1: the shape does not take it). */
typedef struct PlanSpaceKnob {
  char *path;
  GPtrArray *values; /* char*                                  */
  GArray *num;       /* long, one per value                     */
  int def;
} PlanSpaceKnob;
void plan_space_knob_free(PlanSpaceKnob *k);
/* Every knob of problem `kind` that is implemented, applies and that a
 * search should move (not the fitting's own: power.fit, the buckets, the
 * pacer; not the ILP placement's options), with the values the schema
 * takes at the plan's shape and machine: all of an enum or bool, an int's
 * that its check takes (thinned to about 1.5x steps past 64 values), a
 * wide range's 1.5x ladder (0, 1, 2, 3, 4, 6, 8, ...); the plan's value is
 * always among them.  With `hardware`, the hardware keys first. */
GPtrArray *plan_space(const Plan *plan, ProblemKind kind, gboolean hardware);
/* The number a knob's value text compares as (full path "p1.weights",
 * "resident" -> 1); FALSE for a path that is not a section knob or a
 * text that is not one of its values. */
gboolean plan_value_number(const char *path, const char *text, long *v);
/* The static default of a section knob by full path (sms_used: 16). */
gboolean plan_knob_default_number(const char *path, long *v);
/* The n-th "has no effect unless" rule of section knob `path` (full):
 * knob *needs (full path, g_free it) must be >= *min for a value other
 * than the default to be written.  FALSE past the last. */
gboolean plan_space_need(const char *path, int n, char **needs, long *min);
/* The n-th technique companion of section knob `path` (full) at the
 * plan's shape and machine (plan_schema.c's plan_companions): when `path`
 * goes from below *min to *min or more, a tuner sets *companion (full
 * path, g_free it) to *value.  FALSE past the last; a row that has no value
 * at this shape and machine (multicast on a machine without LD.mc) is
 * skipped. */
gboolean plan_space_companion(const Plan *plan, const char *path, int n, long *min, char **companion, long *value);

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
