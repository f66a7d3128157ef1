/* power.c - the hottest window of a power trace (docs/machine.md §5). */
#include "sim.h"

/* Highest average power over windows [s, s+window), 0 <= s <= max(0, n-window),
 * of the dynamic energy trace pj[0..n) (pJ per cycle) plus static_w.  A trace
 * shorter than the window is measured over [0, window).  The window sum
 * slides by one cycle at a time and is recomputed from scratch every `window`
 * steps, so rounding never accumulates: O(n) with a fixed summation order. */
double sim_peak_window(const double *pj, int64_t n, int64_t window, double static_w,
                       int64_t *start) {
  double sum = 0;
  for (int64_t t = 0; t < n && t < window; t++) sum += pj[t];
  double best = sum;
  int64_t best_s = 0;
  for (int64_t s = 1; s + window <= n; s++) {
    if (s % window == 0) {
      sum = 0;
      for (int64_t t = s; t < s + window; t++) sum += pj[t];
    } else {
      sum += pj[s + window - 1] - pj[s - 1];
    }
    if (sum > best) {
      best = sum;
      best_s = s;
    }
  }
  if (start) *start = best_s;
  /* pJ over `window` ns -> mW */
  return best / (double)window * 1e-3 + static_w;
}

/* ---- the same from a run-length trace ------------------------------------
 *
 * The simulator keeps the trace as runs: pj(t) = v[i] for the last i with
 * t0[i] <= t (t0[0] = 0).  sim_peak_window_runs gives exactly the bytes of
 * sim_peak_window on the expanded trace -- every addition it makes is one
 * that sim_peak_window makes, in the same order -- but skips the steps that
 * cannot change anything: a slide step whose entering and leaving cycles
 * have the same value adds exactly 0, and inside one run every window sum
 * recomputed from scratch is the same.  Its work is O(runs * window) at
 * worst, independent of n. */

#define RUN_END (INT64_MAX / 2) /* "no further run" */

/* A forward-only cursor over the runs. */
typedef struct Cursor {
  const int64_t *t0;
  const double *v;
  size_t n, i;
} Cursor;

/* pj(t) for t >= every earlier query; *end = first cycle of the next run. */
static double cur_at(Cursor *c, int64_t t, int64_t *end) {
  while (c->i + 1 < c->n && c->t0[c->i + 1] <= t) c->i++;
  *end = c->i + 1 < c->n ? c->t0[c->i + 1] : RUN_END;
  return c->v[c->i];
}

/* 0 + pj(a) + pj(a+1) + ... + pj(b-1), one addition per cycle, in order. */
static double cur_fold(Cursor *c, int64_t a, int64_t b) {
  double sum = 0;
  while (a < b) {
    int64_t end;
    double v = cur_at(c, a, &end);
    for (int64_t stop = MIN(end, b); a < stop; a++) sum += v;
  }
  return sum;
}

double sim_peak_window_runs(const int64_t *t0, const double *v, size_t nruns, int64_t n,
                            int64_t window, double static_w, int64_t *start) {
  Cursor ce = {t0, v, nruns, 0}, cl = ce, cr = ce; /* entering, leaving, recompute */
  double sum = cur_fold(&cr, 0, MIN(n, window));
  double best = sum, memo_v = 0, memo_sum = 0;
  gboolean memo = FALSE;
  int64_t best_s = 0;
  for (int64_t s = 1; s + window <= n;) {
    int64_t last = n - window + 1; /* one past the last window start */
    if (s % window == 0) { /* the sum recomputed from scratch */
      int64_t end;
      double x = cur_at(&cr, s, &end);
      if (end >= s + window) { /* a window inside one run: x added `window` times */
        if (!memo || memo_v != x) {
          memo_sum = cur_fold(&cr, s, s + window);
          memo_v = x;
          memo = TRUE;
        }
        sum = memo_sum;
        if (sum > best) {
          best = sum;
          best_s = s;
        }
        /* the next starts up to end - window: windows inside the run, and the
         * slide steps between them add 0; the next recomputations give the
         * same sum */
        s = MAX(s + 1, MIN(end - window + 1, last));
        continue;
      }
      sum = cur_fold(&cr, s, s + window);
      if (sum > best) {
        best = sum;
        best_s = s;
      }
      s++;
      continue;
    }
    int64_t ee, el;
    double ve = cur_at(&ce, s + window - 1, &ee), vl = cur_at(&cl, s - 1, &el);
    /* the next step where ve, vl or the kind of step may change */
    int64_t stop = MIN(MIN(ee - (window - 1), el + 1), MIN((s / window + 1) * window, last));
    if (ve == vl) { /* sum += 0 until then */
      s = stop;
      continue;
    }
    double d = ve - vl;
    for (; s < stop; s++) {
      sum += d;
      if (sum > best) {
        best = sum;
        best_s = s;
      }
    }
  }
  if (start) *start = best_s;
  return best / (double)window * 1e-3 + static_w;
}
