/* knobdiff.h - the knobs that differ between two plans (tcc-diff, part 1).
 *
 * Plans are compared after the frontend has loaded them, on effective
 * values: a knob left out of one plan and written at its default value in
 * the other is no difference; a default that depends on other knobs (an
 * unwritten k_chunk, sms_used) is compared at the value it takes, but a
 * knob that follows another (store_spacing.STAGE: store_spacing's value)
 * written on neither side is left out: its difference is the other's.
 * Each side says where its value came from: a plan line, or the default. */
#ifndef TCC_KNOBDIFF_H
#define TCC_KNOBDIFF_H

#include "plan.h"

typedef struct KnobDiff {
  const char *path;           /* full path ("hardware.sms", "d1.panels.w1"); static */
  char a[SCHED_VALUE_MAX];    /* the value as a plan writes it ("16", "resident") */
  char b[SCHED_VALUE_MAX];
  PlanLoc a_loc, b_loc;       /* line 0: the default                    */
} KnobDiff;

/* The differing knobs of the hardware and of the problems with
 * problems[kind] set (indexed by ProblemKind), in schema order: the
 * hardware keys, then p1's knobs, then d1's, each in the knob table's
 * order (docs/plan.md).  A GArray of KnobDiff. */
GArray *diff_knobs(const Plan *a, const Plan *b, const gboolean problems[2]);

/* "16 (line 3)" or "16 (default)"; g_free it. */
char *diff_knob_side(const char *value, PlanLoc loc);

#endif
