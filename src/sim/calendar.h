/* calendar.h - "earliest free" resource calendars (HBM channels, NoC links,
 * SH ports, RF partition ports; docs/machine.md §4).
 *
 * A request that arrives at t for d cycles takes the first d free cycles in
 * a row at or after t; so a late small request can fill a hole left by
 * earlier traffic.  The calendar is a bitmap of busy cycles over a window
 * that slides with the simulator's clock: finding a hole is a few word
 * operations (count trailing zeros) wherever the hole lies, where a sorted
 * list of busy intervals had to search and shift its tail to fill one (the
 * HBM channels and NoC links of a saturated P1 fill holes on almost every
 * line).  Cycles before the window (pruned: behind the clock, where no
 * request can start) count as free.
 */
#ifndef TCC_CALENDAR_H
#define TCC_CALENDAR_H

#include <stdint.h>

typedef struct Cal {
  uint64_t *w;   /* bit i of w[k]: cycle base + 64k + i is busy          */
  int64_t base;  /* first cycle of the window, a multiple of 64          */
  int64_t nw;    /* words in use: cycles >= base + 64 nw are free        */
  int64_t cap;   /* words allocated                                      */
  int64_t end;   /* every cycle >= end is free (1 + the last busy cycle) */
  const int64_t *clock; /* the simulator's clock, or NULL: before the    */
                 /* window grows, it drops what lies behind the clock, so */
                 /* that a jump in time (a long WAITT) costs no memory    */
} Cal;

/* An empty calendar; `clock` may be NULL (then only cal_prune slides the
 * window). */
void cal_init(Cal *c, const int64_t *clock);
void cal_free(Cal *c);
/* Earliest start >= t such that [start, start+d) is free (t for d <= 0). */
int64_t cal_fit_slow(const Cal *c, int64_t t, int64_t d);
static inline int64_t cal_fit(const Cal *c, int64_t t, int64_t d) {
  /* the common case of a compute instruction's RF ports: nothing booked at
   * or after t (cal_fit_slow's first test, without the call) */
  if (d <= 0 || t >= c->end) return t;
  return cal_fit_slow(c, t, d);
}
/* Mark [s, s+d) busy (nothing for d <= 0); it should be free (a result of
 * cal_fit).  Cycles before the window are dropped. */
void cal_take_slow(Cal *c, int64_t s, int64_t d);
static inline void cal_take(Cal *c, int64_t s, int64_t d) {
  /* the common case of a compute instruction's RF ports: the cycles lie
   * inside the window, in one word (cal_take_slow's bits, without its
   * window arithmetic) */
  int64_t i = s - c->base, j = i + d;
  if (d > 0 && i >= 0 && j <= 64 * c->nw && (i >> 6) == ((j - 1) >> 6)) {
    c->w[i >> 6] |= (~0ull << (i & 63)) & (~0ull >> (63 - ((j - 1) & 63)));
    if (s + d > c->end) c->end = s + d;
    return;
  }
  cal_take_slow(c, s, d);
}
/* cal_fit then cal_take; returns the start. */
int64_t cal_book_slow(Cal *c, int64_t t, int64_t d);
/* cal_book of one cycle whose word k of the window (t's) is full: the
 * scan goes on from word k + 1. */
int64_t cal_book1_after(Cal *c, int64_t k);
static inline int64_t cal_book(Cal *c, int64_t t, int64_t d) {
  /* the common case of a one-cycle request (a line on a channel, a piece
   * on an RF port) with a free cycle in t's word of the window */
  int64_t i = t - c->base;
  if (d == 1 && i >= 0 && (i >> 6) < c->nw) {
    /* the first free cycle at or after t in t's word (cal_book_slow's
     * first step): a busy channel or link mostly has one a few cycles on */
    uint64_t x = ~c->w[i >> 6] & (~0ull << (i & 63));
    if (x) {
      int64_t s = c->base + (i & ~(int64_t)63) + __builtin_ctzll(x);
      c->w[i >> 6] |= x & -x;
      if (s >= c->end) c->end = s + 1;
      return s;
    }
    return cal_book1_after(c, i >> 6);
  }
  return cal_book_slow(c, t, d);
}
/* Forget the cycles before `now` (no request starts before the clock). */
void cal_prune(Cal *c, int64_t now);

#endif
