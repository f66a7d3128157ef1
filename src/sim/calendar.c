/* calendar.c - earliest-fit busy-interval calendars (see calendar.h). */
#include "calendar.h"

#include <glib.h>
#include <string.h>

void cal_init(Cal *c) { memset(c, 0, sizeof *c); }

void cal_free(Cal *c) {
  g_free(c->s);
  g_free(c->e);
  memset(c, 0, sizeof *c);
}

/* Index of the first live interval whose end is > t.  Requests land near
 * the end of the calendar (the booking horizon is short, the pruned past
 * long), so gallop back from the last interval, then bisect the last step:
 * O(log distance from the end), on cache lines just touched. */
static int first_after(const Cal *c, int64_t t) {
  int hi = c->n, lo = c->lo;
  for (int step = 1; hi > c->lo; step *= 2) {
    int probe = c->n - step < c->lo ? c->lo : c->n - step;
    if (c->e[probe] <= t) {
      lo = probe + 1;
      break;
    }
    hi = probe;
  }
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (c->e[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t cal_fit(const Cal *c, int64_t t, int64_t d) {
  if (c->n == c->lo || t >= c->e[c->n - 1]) return t; /* past the last booking */
  for (int i = first_after(c, t); i < c->n; i++) {
    if (c->s[i] >= t + d) return t;
    if (c->e[i] > t) t = c->e[i];
  }
  return t;
}

static void grow(Cal *c) {
  if (c->lo > 0 && c->lo >= c->n / 2) { /* compact instead of growing */
    memmove(c->s, c->s + c->lo, (size_t)(c->n - c->lo) * sizeof *c->s);
    memmove(c->e, c->e + c->lo, (size_t)(c->n - c->lo) * sizeof *c->e);
    c->n -= c->lo;
    c->lo = 0;
    if (c->n < c->cap) return;
  }
  c->cap = c->cap ? c->cap * 2 : 16;
  c->s = g_renew(int64_t, c->s, c->cap);
  c->e = g_renew(int64_t, c->e, c->cap);
}

/* Book [s, e) at index i: interval i-1 ends at or before s, interval i
 * starts at or after e; joined to a neighbour it touches. */
static void put(Cal *c, int i, int64_t s, int64_t e) {
  gboolean join_prev = i > c->lo && c->e[i - 1] == s, join_next = i < c->n && c->s[i] == e;
  if (join_prev && join_next) {
    c->e[i - 1] = c->e[i];
    memmove(c->s + i, c->s + i + 1, (size_t)(c->n - i - 1) * sizeof *c->s);
    memmove(c->e + i, c->e + i + 1, (size_t)(c->n - i - 1) * sizeof *c->e);
    c->n--;
  } else if (join_prev) {
    c->e[i - 1] = e;
  } else if (join_next) {
    c->s[i] = s;
  } else {
    if (c->n == c->cap) {
      int off = c->lo;
      grow(c);
      i -= off - c->lo;
    }
    memmove(c->s + i + 1, c->s + i, (size_t)(c->n - i) * sizeof *c->s);
    memmove(c->e + i + 1, c->e + i, (size_t)(c->n - i) * sizeof *c->e);
    c->s[i] = s;
    c->e[i] = e;
    c->n++;
  }
}

void cal_take(Cal *c, int64_t s, int64_t d) {
  if (d <= 0) return;
  if (c->n > c->lo && s == c->e[c->n - 1]) { /* the common case: extend the tail */
    c->e[c->n - 1] = s + d;
    return;
  }
  int i = first_after(c, s - 1); /* first interval ending at >= s */
  if (i < c->n && c->e[i] == s) i++; /* interval i ends exactly at s: after it */
  put(c, i, s, s + d);
}

/* cal_fit then cal_take, with one search: the scan that finds the gap
 * also finds where the interval goes. */
int64_t cal_book_slow(Cal *c, int64_t t, int64_t d) {
  if (d <= 0) return cal_fit(c, t, d);
  int i = c->n;
  if (c->n > c->lo && t < c->e[c->n - 1])
    for (i = first_after(c, t); i < c->n; i++) {
      if (c->s[i] >= t + d) break;
      if (c->e[i] > t) t = c->e[i];
    }
  /* [t, t+d) is free, after interval i-1 (which ends at or before t) and
   * before interval i (which starts at or after t+d) */
  put(c, i, t, t + d);
  return t;
}

void cal_prune(Cal *c, int64_t now) {
  while (c->lo < c->n && c->e[c->lo] <= now) c->lo++;
  if (c->lo == c->n) c->lo = c->n = 0;
}
