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
