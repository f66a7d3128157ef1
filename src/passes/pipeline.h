/* pipeline.h - plan -> IR through every pass (pipeline.c), and the pass
 * table that drives it, `tcc-gen --dump-after` and `--help`, and the tests. */
#ifndef TCC_PIPELINE_H
#define TCC_PIPELINE_H

#include "ir.h"
#include "plan.h"

/* One pass: its name (for --dump-after), what it does (for --help), and the
 * function Ir -> Ir. */
typedef struct PassDef {
  const char *name;
  const char *what;
  gboolean (*run)(Ir *ir, GError **err);
} PassDef;
/* The passes in pipeline order, ending with {NULL}. */
extern const PassDef pass_table[];

/* Plan -> IR: the problem section's schedule record into a new IR, then
 * every pass of pass_table in order.  `dump_after` names the passes whose IR
 * is returned in *dump (NULL: none): pass names separated by commas, or
 * "all"; with the prefix "changed:", a pass that left the IR as it was
 * gets only its header (tcc-gen --print-changed).  Each dump starts with a
 * header line naming its pass, "; *** IR after PASS ***", a comment to the
 * IR parser.  With `verify`, ir_verify runs after every
 * pass and its failure is an error naming the pass (tests; tcc-gen --verify). */
Ir *pass_pipeline(const Plan *plan, ProblemKind kind, const char *dump_after, char **dump,
                  gboolean verify, GError **err);
/* The same for a problem section given apart from the plan (the power
 * fitting's variants of it, src/fit); its dims say which problem. */
Ir *pass_pipeline_section(const Plan *plan, const PlanProblem *pp, const char *dump_after, char **dump,
                          gboolean verify, GError **err);

#endif
