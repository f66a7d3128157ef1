/* calendar.c - "earliest free" calendars as bitmaps of busy cycles (see
 * calendar.h).  The answers are those of the plain definition, which
 * tests/unit/test_calendar.c checks against a brute-force model on random
 * request streams. */
#include "calendar.h"

#include <glib.h>
#include <string.h>

void cal_init(Cal *c, const int64_t *clock) {
  memset(c, 0, sizeof *c);
  c->clock = clock;
}

void cal_free(Cal *c) {
  g_free(c->w);
  memset(c, 0, sizeof *c);
}

/* Bits [b, 64) of a word. */
static inline uint64_t from_bit(int64_t b) { return ~0ull << (b & 63); }

/* First free cycle >= t. */
static int64_t next_free(const Cal *c, int64_t t) {
  int64_t i = t - c->base;
  if (i < 0) return t;
  for (int64_t k = i >> 6; k < c->nw; k++) {
    uint64_t x = ~c->w[k] & (k == i >> 6 ? from_bit(i) : ~0ull);
    if (x) return c->base + 64 * k + __builtin_ctzll(x);
  }
  return t > c->base + 64 * c->nw ? t : c->base + 64 * c->nw;
}

/* First busy cycle in [t, lim), or lim if there is none. */
static int64_t next_busy(const Cal *c, int64_t t, int64_t lim) {
  int64_t i = t - c->base;
  if (i < 0) i = 0;
  for (int64_t k = i >> 6; k < c->nw && c->base + 64 * k < lim; k++) {
    uint64_t x = c->w[k] & (k == i >> 6 ? from_bit(i) : ~0ull);
    if (x) {
      int64_t b = c->base + 64 * k + __builtin_ctzll(x);
      return b < lim ? b : lim;
    }
  }
  return lim;
}

int64_t cal_fit_slow(const Cal *c, int64_t t, int64_t d) {
  if (d <= 0 || t >= c->end) return t;
  for (;;) {
    t = next_free(c, t);
    int64_t b = next_busy(c, t, t + d);
    if (b == t + d) return t;
    t = b;
  }
}

/* Make the window reach cycle e - 1 (e > the clock). */
static void reach(Cal *c, int64_t e) {
  int64_t need = (e - 1 - c->base) / 64 + 1;
  if (need <= c->nw) return;
  if (need > c->cap && c->clock) { /* first drop the words behind the clock */
    cal_prune(c, *c->clock);
    need = (e - 1 - c->base) / 64 + 1;
    if (need <= c->nw) return;
  }
  if (need > c->cap) {
    int64_t cap = c->cap ? c->cap : 4;
    while (cap < need) cap *= 2;
    c->w = g_renew(uint64_t, c->w, cap);
    c->cap = cap;
  }
  memset(c->w + c->nw, 0, sizeof(uint64_t) * (size_t)(need - c->nw));
  c->nw = need;
}

void cal_take_slow(Cal *c, int64_t s, int64_t d) {
  int64_t e = s + d;
  if (s < c->base) s = c->base;
  if (e <= s) return;
  reach(c, e);
  int64_t i = s - c->base, j = e - c->base; /* bits [i, j) */
  int64_t k = i >> 6, kl = (j - 1) >> 6;
  uint64_t hi = (j & 63) ? ~from_bit(j) : ~0ull; /* bits below j in word kl */
  if (k == kl) {
    c->w[k] |= from_bit(i) & hi;
  } else {
    c->w[k] |= from_bit(i);
    for (int64_t m = k + 1; m < kl; m++) c->w[m] = ~0ull;
    c->w[kl] |= hi;
  }
  if (e > c->end) c->end = e;
}

/* A one-cycle request: the first clear bit at or after t, set. */
static int64_t book1(Cal *c, int64_t t) {
  int64_t i = t - c->base;
  if (i >= 0)
    for (int64_t k = i >> 6; k < c->nw; k++) {
      uint64_t x = ~c->w[k] & (k == i >> 6 ? from_bit(i) : ~0ull);
      if (x) {
        int64_t s = c->base + 64 * k + __builtin_ctzll(x);
        c->w[k] |= x & -x;
        if (s >= c->end) c->end = s + 1;
        return s;
      }
    }
  int64_t s = next_free(c, t); /* before or past the window */
  cal_take(c, s, 1);
  return s;
}

int64_t cal_book1_after(Cal *c, int64_t k) {
  /* every cycle from t to the end of word k is busy: the first free one
   * is the first clear bit of a later word, or the first cycle past the
   * window (book1's answer, without its first word again) */
  for (k++; k < c->nw; k++) {
    uint64_t x = ~c->w[k];
    if (x) {
      int64_t s = c->base + 64 * k + __builtin_ctzll(x);
      c->w[k] |= x & -x;
      if (s >= c->end) c->end = s + 1;
      return s;
    }
  }
  int64_t s = c->base + 64 * c->nw;
  cal_take(c, s, 1);
  return s;
}

int64_t cal_book_slow(Cal *c, int64_t t, int64_t d) {
  if (d == 1) return book1(c, t);
  int64_t s = cal_fit(c, t, d);
  cal_take(c, s, d);
  return s;
}

void cal_prune(Cal *c, int64_t now) {
  int64_t shift = (now - c->base) >> 6; /* whole words behind the clock */
  if (shift <= 0) return;
  if (shift >= c->nw) {
    c->nw = 0;
  } else {
    memmove(c->w, c->w + shift, sizeof(uint64_t) * (size_t)(c->nw - shift));
    c->nw -= shift;
  }
  c->base += 64 * shift;
}
