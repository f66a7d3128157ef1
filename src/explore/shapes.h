/* shapes.h - tcc-shapes' logic (shapes.c; docs/tools.md, "tcc-shapes"): each
 * plan compiled, power-fitted and run on each shape of a suite, and the
 * table of what came out. */
#ifndef TCC_SHAPES_H
#define TCC_SHAPES_H

#include "shape_suite.h"

typedef enum {
  SHAPE_PASS,      /* numerics, area and power pass                       */
  SHAPE_FAIL,      /* tcc-gen wrote a program that fails one: a bug       */
  SHAPE_LIMIT,     /* refused: over tcc-gen's program size limit          */
  SHAPE_REFUSED,   /* refused otherwise                                   */
  SHAPE_SKIPPED,   /* the plan has no section for the shape's problem    */
} ShapeStatus;
extern const char *const shape_status_name[]; /* "PASS", "FAIL", "limit", "refused", "skipped" */

typedef struct ShapeRun {
  int plan;                /* index into the plan list                    */
  guint shape;             /* index into the suite's shapes               */
  ShapeStatus status;
  char *why;               /* refused: the message; FAIL: the verdicts    */
  int64_t cycles, bound;   /* bound: docs/bounds.md's, for the shape      */
  double peak_w;
  int fit_runs;            /* the power fitting's runs                    */
  gboolean fitted;         /* it paced the loads or took SMs away         */
  gboolean relaxed;        /* it lowered the spacings (power.fit: relax)  */
} ShapeRun;

/* Run every plan (files[0 .. nplans)) on every shape of the suite (quick:
 * the fast subset only), on `jobs` threads; the runs in plan-major, suite
 * order, *n of them.  NULL with *err when a plan cannot be read. */
ShapeRun *shapes_run(const ShapeSuite *s, char **files, int nplans, gboolean quick, int jobs, guint *n,
                     GError **err);
void shapes_free(ShapeRun *runs, guint n);
/* The table and, per plan, the counts and the geometric mean of
 * cycles/bound over its passing shapes; *bad gets the FAIL and refused
 * (not limit) runs, *failed the FAIL ones. */
char *shapes_table(const ShapeSuite *s, char **files, int nplans, const ShapeRun *runs, guint n, guint *bad,
                   guint *failed);

#endif
