/* census_space.h - a hardware space for tcc-census (docs/tools.md, "tcc-census"):
 * per hardware key of a plan, the values to try.  The space is their cartesian
 * product; point i is the mixed-radix number i over the keys in plan order
 * (the last key varies fastest).
 *
 *   version: 1
 *   hardware:
 *     sms: [8, 12, 16]                      # a list of values
 *     rf_kib: {from: 16, to: 128, factor: 2} # 16, 32, 64, 128
 *     mma_arrays: {from: 1, to: 3}          # step 1 unless `step` says
 *     sh_kib: {values: [0, 64]}             # the list, spelled out
 *     sfu: {same_as: vl}                    # each point's vl
 *     dma: {engines: 4, depth: [1, 2]}      # a single value: fixed
 *     multicast: [false, true]
 *
 * A key not written keeps the default machine's value.  Errors are one line,
 * "file:line:col: error: ..." (PLAN_ERROR domain), with a did-you-mean for a
 * mistyped key. */
#ifndef TCC_CENSUS_SPACE_H
#define TCC_CENSUS_SPACE_H

#include "plan.h"

#define CENSUS_VERSION 1
/* At most this many points (the product), so that a typo cannot start an
 * enumeration of hours (a kept point takes 16 bytes until the table is
 * written row by row, census.h). */
#define CENSUS_MAX_POINTS 10000000ull
/* At most this many values per key. */
#define CENSUS_MAX_VALUES 4096

typedef struct CensusSpace {
  char *file;
  GArray *values[PLAN_NHW]; /* int: the values of each key (plan order)      */
  int same_as[PLAN_NHW];    /* -1, or the key whose value this key takes     */
  guint64 points;           /* the product of the free keys' value counts    */
} CensusSpace;

CensusSpace *census_space_load(const char *file, GError **err);
CensusSpace *census_space_parse(const char *file, const char *text, size_t len, GError **err);
void census_space_free(CensusSpace *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CensusSpace, census_space_free)

/* Point `index` (< s->points) as a machine; FALSE when the machine's
 * cross-parameter check fails (sim_machine_validate), with *err set. */
gboolean census_space_point(const CensusSpace *s, guint64 index, Machine *m, GError **err);
/* TRUE when key i varies (more than one value, or follows a key that does). */
gboolean census_space_varies(const CensusSpace *s, int i);

#endif
