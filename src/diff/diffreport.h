/* diffreport.h - tcc-diff's report: the differing knobs, each problem's
 * code difference and its metric deltas, as text or as JSON (json-glib).
 * docs/tools.md describes both formats. */
#ifndef TCC_DIFFREPORT_H
#define TCC_DIFFREPORT_H

#include "codediff.h"
#include "knobdiff.h"
#include "sim.h"

#define TCC_DIFF_VERSION "tcc-diff 0.1.0"

typedef struct ProblemDiff {
  gboolean on;            /* this problem is compared                   */
  CodeDiff *code;
  SimResult res[2];       /* a's and b's run at DiffReport.seed         */
} ProblemDiff;

typedef struct DiffReport {
  const char *file[2];    /* the plans, a and b                         */
  uint64_t seed;
  GArray *knobs;          /* KnobDiff (knobdiff.h)                      */
  ProblemDiff prob[2];    /* by ProblemKind                             */
  guint limit;            /* text: changed tasks (WGs) listed one a row,
                             the rest summed in one (0: all)            */
} DiffReport;

/* "PASS", or "FAIL: numerics, power" (the constraints a run fails). */
char *diff_verdict(const SimResult *r);
gboolean diff_pass(const SimResult *r);

char *diff_report_text(const DiffReport *r);
char *diff_report_json(const DiffReport *r);

#endif
