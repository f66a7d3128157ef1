/* explain.h - the capacity report (tcc-gen --explain): what a problem's
 * weights, history and temp space take of the machine's RF, each panel's size
 * in partitions and its placement load, and, when the plan compiled, what the
 * RF allocation placed on each WG.  Text for people, JSON (json-glib) for
 * tools; both from one computation. */
#ifndef TCC_EXPLAIN_H
#define TCC_EXPLAIN_H

#include "ir.h"

/* The RF budget of a problem's resident weights (the report's "RF" lines):
 * SMs used x WGs x rf_kib, minus the temp space of every WG, minus the D1
 * history K/V, against the weights of every layer. */
typedef struct ExplainRf {
  int64_t rf, temp, history, left; /* bytes; left = rf - temp - history (may be < 0) */
  int64_t weights;                 /* every layer's weights, bytes                  */
  int64_t short_bytes;             /* weights - left when > 0, else 0               */
  gboolean fits;                   /* left >= weights: fit in total                 */
} ExplainRf;
void explain_rf(const Machine *hw, const Schedule *s, ExplainRf *out);

/* The report of schedule `s` on machine `hw` for plan `file`.  `ir` is the
 * allocated IR when the plan compiled (per-WG placement), else NULL with
 * `failure` the compiler's one-line error (or NULL). */
char *explain_text(const Machine *hw, const Schedule *s, const char *file, const Ir *ir,
                   const char *failure);
/* The same as JSON; NULL with *err when the JSON module cannot be loaded
 * (jdoc.h). */
char *explain_json(const Machine *hw, const Schedule *s, const char *file, const Ir *ir,
                   const char *failure, GError **err);

#endif
