/* linediff.h - how many lines a line diff adds and removes: the length of
 * a longest common subsequence of two sequences of lines, found with
 * Myers' O((N+M)D) greedy algorithm (E. Myers, "An O(ND) Difference
 * Algorithm and Its Variations", 1986), counts only (no edit script).
 *
 * Lines are compared as strings; a DiffInterner maps each distinct string
 * to a small integer first, so that the algorithm compares integers.  Ids
 * only test equality: nothing printed depends on their values or on hash
 * order. */
#ifndef TCC_LINEDIFF_H
#define TCC_LINEDIFF_H

#include <glib.h>

/* The outcome of a line diff of a (na lines) against b (nb lines):
 * `removed` lines of a and `added` lines of b are outside the common
 * subsequence (removed = na - lcs, added = nb - lcs).  `exact` is FALSE
 * when the edit distance passed the work limit: then the counts are those
 * of the lines' multisets (each line of a matched with an equal line of b
 * wherever it is), a lower bound of the true counts. */
typedef struct DiffCount {
  gint64 added, removed;
  gboolean exact;
} DiffCount;

/* The default limit on the edit distance D searched (the work is about
 * D * D / 2 + N + M steps once unique lines are dropped). */
#define DIFF_MAX_D 5000

/* Diff two sequences of line ids.  Lines of one side that do not occur on
 * the other at all are counted first and dropped (they cannot be in a
 * common subsequence), as are a common prefix and suffix; Myers' search
 * then runs on the rest, up to an edit distance of max_d (0: DIFF_MAX_D). */
DiffCount diff_ids(const guint *a, gsize na, const guint *b, gsize nb, gsize max_d);

/* Distinct strings -> ids 1, 2, ... (the strings are copied). */
typedef struct DiffInterner DiffInterner;
DiffInterner *diff_interner_new(void);
void diff_interner_free(DiffInterner *in);
guint diff_intern(DiffInterner *in, const char *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DiffInterner, diff_interner_free)

/* The same on strings: a[0..na) against b[0..nb). */
DiffCount diff_lines(const char *const *a, gsize na, const char *const *b, gsize nb);

#endif
