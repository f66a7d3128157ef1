/* power.c - the hottest window of a power trace (docs/machine.md §5).
 *
 * The trace is exact integers (energy units per cycle, sim.h SimEnergy), so
 * a window's sum is the same however it is computed: sliding it one cycle
 * at a time, or jumping over the steps where it changes by a constant. */
#include "sim.h"

/* The reference: the first window sum, then one slide step per start. */
SimEnergy sim_peak_window(const SimEnergy *e, int64_t n, int64_t window, int64_t *start) {
  SimEnergy sum = 0;
  for (int64_t t = 0; t < n && t < window; t++) sum += e[t];
  SimEnergy best = sum;
  int64_t best_s = 0;
  for (int64_t s = 1; s + window <= n; s++) {
    sum += e[s + window - 1] - e[s - 1];
    if (sum > best) {
      best = sum;
      best_s = s;
    }
  }
  if (start) *start = best_s;
  return best;
}

/* ---- the same from a run-length trace ------------------------------------
 *
 * The simulator keeps the trace as runs: e(t) = v[i] for the last i with
 * t0[i] <= t (t0[0] = 0).  Sliding the window from s-1 to s adds
 * d = e(s+window-1) - e(s-1), which stays the same until the entering or
 * the leaving cycle crosses into another run.  Over such a stretch of
 * starts the sum moves by d per step: when d > 0 its largest value is at
 * the stretch's last start; otherwise no start of it beats the one before
 * the stretch.  Each stretch ends at a run boundary of one
 * of the two cursors, so the work is O(runs), independent of n; and a
 * stretch with d != 0 is at most `window` starts long (longer, and the
 * two cursors would be in the same run), so d * length stays far inside
 * int64. */

#define RUN_END (INT64_MAX / 2) /* "no further run" */

/* A forward-only cursor over the runs. */
typedef struct Cursor {
  const int64_t *t0;
  const SimEnergy *v;
  size_t n, i;
} Cursor;

/* e(t) for t >= every earlier query; *end = first cycle of the next run. */
static SimEnergy cur_at(Cursor *c, int64_t t, int64_t *end) {
  while (c->i + 1 < c->n && c->t0[c->i + 1] <= t) c->i++;
  *end = c->i + 1 < c->n ? c->t0[c->i + 1] : RUN_END;
  return c->v[c->i];
}

/* e(a) + e(a+1) + ... + e(b-1). */
static SimEnergy cur_sum(Cursor *c, int64_t a, int64_t b) {
  SimEnergy sum = 0;
  while (a < b) {
    int64_t end;
    SimEnergy v = cur_at(c, a, &end);
    int64_t stop = MIN(end, b);
    sum += v * (stop - a);
    a = stop;
  }
  return sum;
}

SimEnergy sim_peak_window_runs(const int64_t *t0, const SimEnergy *v, size_t nruns, int64_t n,
                               int64_t window, int64_t *start) {
  Cursor ce = {t0, v, nruns, 0}, cl = ce; /* entering, leaving */
  SimEnergy sum = cur_sum(&ce, 0, MIN(n, window)); /* the window at s = 0 */
  SimEnergy best = sum;
  int64_t best_s = 0, last = n - window + 1; /* one past the last window start */
  for (int64_t s = 1; s < last;) {
    int64_t ee, el;
    SimEnergy ve = cur_at(&ce, s + window - 1, &ee), vl = cur_at(&cl, s - 1, &el);
    /* starts s .. stop-1 enter and leave the same two runs */
    int64_t stop = MIN(MIN(ee - (window - 1), el + 1), last);
    SimEnergy d = ve - vl;
    sum += d * (stop - s);
    /* rising: the stretch's last start has its largest sum (and is the
     * first start with it); falling or flat: no start of the stretch
     * beats the window at s - 1, already seen */
    if (d > 0 && sum > best) {
      best = sum;
      best_s = stop - 1;
    }
    s = stop;
  }
  if (start) *start = best_s;
  return best;
}
