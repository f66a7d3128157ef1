/* plan_internal.h - what the frontend's files share and nobody else reads:
 * the YAML node tree (plan_yaml.c), the knob table (plan_schema.c) and the
 * diagnostic helpers.  See plan.h for the public side. */
#ifndef TCC_PLAN_INTERNAL_H
#define TCC_PLAN_INTERNAL_H

#include "plan.h"

/* ---- plan_yaml.c: YAML text -> tree of nodes, every limit enforced ---- */

typedef enum { PN_SCALAR, PN_MAP, PN_SEQ } PNodeKind;

typedef struct PNode {
  PNodeKind kind;
  int line, col;      /* 1-based start of the node                     */
  char *text;         /* PN_SCALAR: the value, NUL-terminated          */
  gboolean plain;     /* PN_SCALAR: plain style (not quoted, not block) */
  GPtrArray *kids;    /* PN_MAP: key0, value0, key1, ...; PN_SEQ: items */
} PNode;

typedef struct PTree {
  PNode *root;        /* NULL for an empty document                    */
  int line, col;      /* start of the document                         */
  GPtrArray *nodes;   /* owns every node                               */
} PTree;

/* Parse one YAML document.  Keys are unique scalars; no anchors, aliases or
 * tags; at most PLAN_MAX_* of everything. */
PTree *plan_yaml_parse(const char *file, const char *text, size_t len, GError **err);
void plan_yaml_free(PTree *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PTree, plan_yaml_free)

/* Number of key/value pairs of a mapping, and the i-th key and value. */
int plan_map_len(const PNode *map);
const PNode *plan_map_key(const PNode *map, int i);
const PNode *plan_map_val(const PNode *map, int i);
/* TRUE for `key:` with nothing after it (plain empty scalar). */
gboolean plan_node_empty(const PNode *n);

/* Set *err to "file:line:col: error: MESSAGE"; returns FALSE. */
gboolean plan_fail(GError **err, PlanErrorCode code, const char *file, int line,
                   int col, const char *fmt, ...) G_GNUC_PRINTF(6, 7);
/* "file:line:col: error: unknown key 'x' WHERE; did you mean 'y'?" at key
 * node k, the suggestion from names[0..n); returns FALSE. */
gboolean plan_unknown_key(GError **err, const char *file, const PNode *k, const char *where,
                          const char *const *names, int n);
/* A scalar for a message: control characters escaped, at most 64 bytes. */
char *plan_quote(const char *s);
/* "a mapping", "a sequence", "an empty value", "a quoted string \"x\"", "'x'" */
char *plan_describe_node(const PNode *n);

/* ---- plan_schema.c: the knobs of a problem section ---- */

typedef enum { KT_INT, KT_BOOL, KT_ENUM, KT_DIM } PlanKnobType;

typedef struct PlanKnobDef PlanKnobDef;
/* Checks a value against the dims and the hardware: 0, or a PlanErrorCode
 * with the message in *msg. */
typedef int (*PlanCheckFn)(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw,
                           long v, GString *msg);

struct PlanKnobDef {
  const char *path;         /* "panels.w1", relative to the section       */
  const char *full[2];      /* by ProblemKind: "d1.panels.w1", "p1.panels.w1" */
  PlanKnobType type;
  unsigned applies;         /* bit (1 << ProblemKind)                     */
  size_t offset;            /* of the int-sized field in PlanProblem      */
  int min, max, def;        /* static range (KT_INT) and default          */
  const char *const *names; /* KT_ENUM: value names, enum order, NULL-ended */
  int proj;                 /* PROJ_* of per-projection knobs, else -1    */
  PlanCheckFn check;        /* replaces the static range check when set   */
  int step[2];              /* by ProblemKind: roadmap step that implements
                               non-default values; 0 = implemented        */
  const char *follows;      /* not written, the knob takes this knob's value
                               (a path of the section; NULL: its `def`)   */
  gboolean pacing;          /* cycles of delay that only shape the power
                               (spacings, staggers): power.fit: relax may
                               lower them                                 */
};

extern const PlanKnobDef plan_knobs[PLAN_NKNOBS];

/* "Has no effect unless": knob `path` may only be written when knob `needs`
 * is >= needs_min. */
typedef struct PlanNeed {
  const char *path, *needs;
  int needs_min;
  const char *text; /* "attention.slices > 1" */
  unsigned only;    /* the problems the rule applies to (bits 1 << ProblemKind); 0: both */
} PlanNeed;
extern const PlanNeed plan_needs[];
extern const int plan_nneeds;

/* A technique's companion: when knob `path` is switched on (moved from
 * below `min` to `min` or more), a tuner sets knob `companion` to the value
 * that goes with the technique at the plan's shape and machine (`value`;
 * PLAN_NO_COMPANION: none there).  A companion is derived from the shape
 * and machine, never a value tuned on one shape: residency takes every SM,
 * its panels' K shards and A chunks sized to fit a WG's RF (docs/tools.md,
 * "Technique bundles"). */
#define PLAN_NO_COMPANION (-1L - 0x7fffffffL)
typedef long (*PlanCompanionFn)(const PlanKnobDef *companion, const PlanProblem *pp, const Machine *hw);
typedef struct PlanCompanion {
  const char *path;
  int min;
  const char *companion;
  PlanCompanionFn value;
  const char *text; /* why: "the resident panels live in the RF of every SM" */
  unsigned only;    /* the problems the row applies to (bits 1 << ProblemKind) */
} PlanCompanion;
extern const PlanCompanion plan_companions[];
extern const int plan_ncompanions;

/* The knob's check (or its static range): 0, or a PlanErrorCode and *msg. */
int plan_knob_check(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v,
                    GString *msg);
/* Index of a knob by path (relative or full), -1 if none. */
int plan_knob_index(const char *path);
/* The int-sized field of a knob inside a PlanProblem. */
int *plan_knob_field(PlanProblem *pp, const PlanKnobDef *k);
int plan_knob_get(const PlanProblem *pp, const PlanKnobDef *k);
/* Defaults of every non-dim knob for pp->dims and the hardware; locs reset. */
void plan_problem_defaults(PlanProblem *pp, const Machine *hw);
/* Value text as a plan writes it: "32", "true", "resident". */
char *plan_knob_value_text(const PlanKnobDef *k, long v);
/* Fill pp->value (the schedule record's texts) from the knobs' values:
 * once the section is loaded. */
void plan_problem_record(PlanProblem *pp);
/* Defaults that depend on other knobs, once the section's knobs are loaded:
 * an unwritten k_chunk fits its panel width and the RF; an unwritten knob
 * that follows another takes its value. */
void plan_problem_fit_defaults(PlanProblem *pp, const Machine *hw);

#endif
