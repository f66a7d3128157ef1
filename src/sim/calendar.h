/* calendar.h - busy-interval calendars for "earliest free" resources (HBM
 * channels, NoC links, SH ports, RF partition ports; docs/machine.md §4).
 *
 * A calendar is a sorted list of disjoint busy intervals [s, e).  A request
 * that arrives at t for d cycles takes the first gap at or after t; so a late
 * small request can fill a hole left by earlier traffic.  Intervals that end
 * before the simulator's clock are pruned: no request can start before it.
 */
#ifndef TCC_CALENDAR_H
#define TCC_CALENDAR_H

#include <stdint.h>

typedef struct Cal {
  int64_t *s, *e; /* busy intervals, sorted, disjoint, not touching */
  int lo;         /* first live interval (earlier ones are pruned)  */
  int n, cap;     /* intervals [lo, n) are live                      */
} Cal;

void cal_init(Cal *c);
void cal_free(Cal *c);
/* Earliest start >= t such that [start, start+d) is free. */
int64_t cal_fit(const Cal *c, int64_t t, int64_t d);
/* Mark [s, s+d) busy; it must be free (a result of cal_fit). */
void cal_take(Cal *c, int64_t s, int64_t d);
/* cal_fit then cal_take; returns the start. */
int64_t cal_book_slow(Cal *c, int64_t t, int64_t d);
static inline int64_t cal_book(Cal *c, int64_t t, int64_t d) {
  /* the common case: at or past the last booking */
  if (c->n > c->lo && t >= c->e[c->n - 1]) {
    if (t == c->e[c->n - 1] && d > 0) {
      c->e[c->n - 1] = t + d;
      return t;
    }
  }
  return cal_book_slow(c, t, d);
}
/* Forget intervals that end at or before `now`. */
void cal_prune(Cal *c, int64_t now);

#endif
