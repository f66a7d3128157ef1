/* shape_suite.h - a shape suite for tcc-shapes (docs/tools.md, "tcc-shapes"):
 * problem shapes, each a set of `problem:` dims, that a plan is compiled
 * and run on.
 *
 *   version: 1
 *   p1:
 *     - {d_model: 256, heads: 8, d_ff: 1024, layers: 2, seqs: 2, rows: 256}
 *     - {rows: 1024}                    # the default shape but for rows
 *     - {d_model: 64, heads: 2, quick: true}
 *   d1:
 *     - {history: 0}
 *
 * A dim not written keeps the problem's default (docs/workloads.md);
 * `quick: true` puts the shape in the fast subset (`--quick`, make check).
 * Each shape is checked by wl_problem_validate, so it lies inside the
 * documented ranges.  Errors are one line, "file:line:col: error: ..."
 * (PLAN_ERROR domain), with a did-you-mean for a mistyped key. */
#ifndef TCC_SHAPE_SUITE_H
#define TCC_SHAPE_SUITE_H

#include "plan.h"

#define SHAPE_SUITE_VERSION 1
/* At most this many shapes in a suite. */
#define SHAPE_SUITE_MAX 4096

typedef struct Shape {
  Problem dims;     /* kind set; every dim filled                      */
  gboolean quick;   /* in the fast subset                              */
  int line;         /* where the suite lists it                        */
} Shape;

typedef struct ShapeSuite {
  char *file;
  GArray *shapes;   /* Shape, P1's then D1's, each in the file's order  */
} ShapeSuite;

ShapeSuite *shape_suite_load(const char *file, GError **err);
ShapeSuite *shape_suite_parse(const char *file, const char *text, size_t len, GError **err);
void shape_suite_free(ShapeSuite *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ShapeSuite, shape_suite_free)

/* "d_model=256 heads=8 d_ff=1024 layers=2 seqs=2 rows=256" (g_free it). */
char *shape_text(const Problem *p);

#endif
