/* unified.h - the generated code's difference as unified diffs (tcc-diff's
 * default view; --stat gives the counts of codediff.h instead).
 *
 * One diff per WG whose instructions differ, in WG order:
 *
 *   --- LABEL_A wg 3
 *   +++ LABEL_B wg 3
 *   @@ -L,N +L,M @@ TASK
 *    context
 *   -removed
 *   +added
 *
 * L is the hunk's first line in each .asm (the line tcc-sim and an editor
 * show), N and M the hunk's lines of each side, TASK the task of its first
 * changed line.  Lines compare without their provenance comment and print
 * whole.  A WG whose sides need more than `max_d` edits is shown whole,
 * removed then added, with a hunk header that says so. */
#ifndef TCC_UNIFIED_H
#define TCC_UNIFIED_H

#include "program.h"

/* A shortest edit script of a (na ids) into b (nb): a guchar per step, 0
 * keep (a and b advance), 1 remove (a advances), 2 add (b advances); the
 * removals come before the additions of a change.  NULL when it needs more
 * than max_d edits. */
GArray *diff_edit_script(const guint *a, int na, const guint *b, int nb, int max_d);

/* The unified diffs of a and b (assembled), `context` lines of context;
 * *wgs_shown (may be NULL) gets how many WGs differ.  g_free it. */
char *diff_unified(const Program *a, const Program *b, const char *label_a, const char *label_b, int context,
                   int max_d, int *wgs_shown);

#endif
