/* census.h - tcc-census: every point of a hardware space (census_space.h),
 * the area-legal ones evaluated: area, static power, the RF budget of D1's
 * resident weights (explain_rf, as tcc-gen --explain computes it) and the
 * lower bounds of P1 and D1 (sim_bounds, docs/bounds.md); sorted by bound,
 * written as CSV or JSON (json-glib).  docs/tools.md, "tcc-census". */
#ifndef TCC_CENSUS_H
#define TCC_CENSUS_H
#define TCC_CENSUS_VERSION "tcc-census 0.1.0"

#include "bounds.h"
#include "census_space.h"
#include "explain.h"

/* A problem's bounds, as much of sim_bounds' record as the table shows (a
 * row stays small: a space may keep millions of points). */
typedef struct CensusBound {
  int64_t cycles[BOUND__COUNT];
  int64_t bound;
  BoundKind binding;
} CensusBound;

typedef struct CensusRow {
  guint64 index;          /* the point's number in the space (census_space.h) */
  Machine hw;
  double area_mm2, static_w;
  ExplainRf rf;           /* D1 at its defaults on this machine              */
  CensusBound p1, d1;     /* the default problems' lower bounds              */
  double geo_bound;       /* sqrt(p1.bound * d1.bound): the sort key         */
} CensusRow;

/* A kept (area-legal) point as the census holds it until the table is
 * written: its number and its sort key, 16 bytes.  Its row (CensusRow) is
 * evaluated again as it is written (census_row): the memory grows with the
 * kept points by 16 bytes each, not by a row and its text. */
typedef struct CensusKept {
  guint64 index;
  int64_t key;            /* p1.bound * d1.bound                             */
} CensusKept;

typedef struct Census {
  char *space;            /* the space file's name                           */
  const CensusSpace *s;   /* the space (census_run's; it must outlive this)  */
  guint64 points, invalid, legal;
  GArray *kept;           /* CensusKept of the area-legal points, sorted     */
} Census;

/* Called every `every` points with the points done so far (a progress bar). */
typedef void (*CensusProgress)(guint64 done, guint64 total, gpointer data);

/* Enumerate and evaluate the space; the kept points sorted by the product
 * of the two bounds (the same order as geo_bound), ties by index. */
Census *census_run(const CensusSpace *s, CensusProgress progress, gpointer data);
void census_free(Census *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Census, census_free)

/* Row r (< c->legal) of the sorted table, evaluated into *row. */
void census_row(const Census *c, guint64 r, CensusRow *row);

/* Where census_write puts the table, a piece at a time (at most about 1 MiB
 * each); FALSE stops the writing (an I/O error). */
typedef gboolean (*CensusWrite)(const char *text, gsize len, gpointer data);

/* The table streamed to `write`: the CSV (a header and one line per row)
 * or the JSON document (the counts and the rows), row by row, so that the
 * text is never whole in memory; the same bytes as census_csv /
 * census_json.  FALSE when a write returned FALSE. */
gboolean census_write(const Census *c, gboolean json, CensusWrite write, gpointer data);

/* The table as one string (census_write into memory; for small spaces and
 * the tests).  g_free it. */
char *census_csv(const Census *c);
char *census_json(const Census *c);
/* "7776 points, 0 invalid, 2480 area-legal (<= 24 mm^2)" */
char *census_summary(const Census *c);

#endif
