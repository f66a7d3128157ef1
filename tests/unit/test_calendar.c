/* test_calendar.c - the bitmap calendars (calendar.c) against the plain
 * definition of "earliest free": a brute-force model that keeps one flag
 * per cycle and tries every start in turn.  Random request streams of the
 * shapes the simulator makes (one-cycle lines and ports, short NoC and SH
 * bookings, long compute spans crossing many words, requests that fill
 * holes behind the last booking, the clock moving and pruning) must get
 * the same start from both, request by request. */
#include "calendar.h"
#include "tests.h"

#define HORIZON 20000 /* cycles the model tracks; requests stay below */

typedef struct Model {
  uint8_t busy[HORIZON];
} Model;

/* The earliest start >= t of d free cycles, or HORIZON if none is tracked. */
static int64_t model_fit(const Model *m, int64_t t, int64_t d) {
  for (int64_t s = t; s + d <= HORIZON; s++) {
    int64_t i = s;
    while (i < s + d && !m->busy[i]) i++;
    if (i == s + d) return s;
  }
  return HORIZON;
}

static void model_take(Model *m, int64_t s, int64_t d) {
  for (int64_t i = s; i < s + d; i++) m->busy[i] = 1;
}

/* One random stream: `maxd` bounds a request's length, `spread` how far
 * after the clock it may arrive (small: a crowded calendar full of holes). */
static void stream(guint32 seed, int64_t maxd, int64_t spread) {
  Model *m = g_new0(Model, 1);
  Cal c;
  cal_init(&c, NULL);
  GRand *r = g_rand_new_with_seed(seed);
  int64_t now = 0;
  for (int op = 0; op < 6000; op++) {
    int64_t d = g_rand_int_range(r, 0, 4) ? 1 : g_rand_int_range(r, 1, (gint32)maxd + 1);
    int64_t t = now + g_rand_int_range(r, 0, (gint32)spread);
    int kind = g_rand_int_range(r, 0, 10);
    if (model_fit(m, t, d) + d >= HORIZON) break; /* the end of the model's cycles */
    if (kind == 0) { /* the clock moves on */
      now += g_rand_int_range(r, 0, 40);
      cal_prune(&c, now);
      continue;
    }
    int64_t want = model_fit(m, t, d);
    if (kind < 4) { /* fit alone, then take it (compute_issue's way) */
      int64_t got = cal_fit(&c, t, d);
      ck_assert_msg(got == want, "seed %u op %d: fit(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                    ") = %" G_GINT64_FORMAT ", want %" G_GINT64_FORMAT, seed, op, t, d, got, want);
      cal_take(&c, got, d);
    } else { /* book (the transfers' way) */
      int64_t got = cal_book(&c, t, d);
      ck_assert_msg(got == want, "seed %u op %d: book(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                    ") = %" G_GINT64_FORMAT ", want %" G_GINT64_FORMAT, seed, op, t, d, got, want);
    }
    model_take(m, want, d);
  }
  /* every cycle from the clock on agrees */
  for (int64_t t = now; t < HORIZON - 1; t++)
    ck_assert_msg(cal_fit(&c, t, 1) == model_fit(m, t, 1), "seed %u: cycle %" G_GINT64_FORMAT, seed, t);
  g_rand_free(r);
  cal_free(&c);
  g_free(m);
}

START_TEST(test_calendar_random) {
  for (guint32 seed = 1; seed <= 12; seed++) {
    stream(seed, 3, 8);      /* one-cycle traffic on a saturated channel */
    stream(seed, 12, 300);   /* NoC and SH bookings, holes far behind */
    stream(seed, 300, 1000); /* compute spans over several words */
  }
}
END_TEST

/* The edges of the bitmap: a span that ends on a word boundary, one that
 * covers whole words, a request before the window after a prune. */
START_TEST(test_calendar_words) {
  Cal c;
  cal_init(&c, NULL);
  cal_take(&c, 60, 68); /* [60, 128): the end of word 0, all of word 1 */
  ck_assert_int_eq(cal_fit(&c, 0, 61), 128);
  ck_assert_int_eq(cal_fit(&c, 0, 60), 0);
  ck_assert_int_eq(cal_fit(&c, 100, 1), 128);
  ck_assert_int_eq(cal_book(&c, 127, 1), 128);
  ck_assert_int_eq(cal_book(&c, 0, 200), 129);
  cal_take(&c, 1000, 640); /* ten whole words */
  ck_assert_int_eq(cal_fit(&c, 999, 2), 1640);
  ck_assert_int_eq(cal_fit(&c, 999, 1), 999);
  cal_prune(&c, 1100);
  ck_assert_int_eq(c.base, 1088);
  ck_assert_int_eq(cal_fit(&c, 1100, 1), 1640); /* pruning keeps what is ahead */
  ck_assert_int_eq(cal_fit(&c, 10, 5), 10);     /* behind the window: free */
  cal_prune(&c, 5000); /* everything behind the clock */
  ck_assert_int_eq(c.nw, 0);
  ck_assert_int_eq(cal_book(&c, 5000, 3), 5000);
  ck_assert_int_eq(cal_book(&c, 5000, 1), 5003);
  cal_free(&c);
}
END_TEST

/* A one-cycle booking whose word is full from t on (cal_book1_after): the
 * first free cycle of a later word, past busy whole words, or the first
 * cycle past the window. */
START_TEST(test_calendar_book_full_word) {
  Cal c;
  cal_init(&c, NULL);
  cal_take(&c, 10, 54);  /* [10, 64): word 0 full from 10 on */
  cal_take(&c, 64, 70);  /* [64, 134): word 1 full, word 2 up to 134 */
  cal_take(&c, 140, 52); /* [140, 192): the rest of word 2 but [134, 140) */
  ck_assert_int_eq(c.nw, 3);
  ck_assert_int_eq(cal_book(&c, 12, 1), 134); /* two full words skipped */
  ck_assert_int_eq(cal_book(&c, 70, 1), 135);
  ck_assert_int_eq(cal_book(&c, 5, 1), 5);    /* a hole in t's own word */
  cal_take(&c, 136, 4);                        /* [134, 192) full now */
  ck_assert_int_eq(cal_book(&c, 130, 1), 192); /* past the window */
  ck_assert_int_eq(c.nw, 4);
  ck_assert_int_eq(c.end, 193);
  ck_assert_int_eq(cal_book(&c, 191, 1), 193);
  cal_free(&c);
}
END_TEST

/* A jump of the clock (a WAITT of 10^15 cycles) moves the window instead
 * of stretching it: the bitmap stays a few words long. */
START_TEST(test_calendar_clock_jump) {
  int64_t now = 0;
  Cal c;
  cal_init(&c, &now);
  ck_assert_int_eq(cal_book(&c, 0, 100), 0);
  now = 50;
  ck_assert_int_eq(cal_book(&c, 50, 1), 100);
  now = 1000000000000000;
  ck_assert_int_eq(cal_book(&c, now, 3), now);
  ck_assert_int_eq(cal_book(&c, now, 1), now + 3);
  ck_assert_int_le(c.cap, 8);
  ck_assert_int_eq(cal_fit(&c, now, 2), now + 4);
  cal_free(&c);
}
END_TEST

/* cal_take's inline path (inside the window, one word) against
 * cal_take_slow: the same random takes on two calendars leave the same
 * words, window and end, take by take; lengths from 1 to 130 cycles at
 * any offset, so both one-word takes and takes across words and past the
 * window's end occur. */
START_TEST(test_calendar_take_fast) {
  for (guint32 seed = 1; seed <= 20; seed++) {
    Cal a, b;
    int64_t now = 0;
    cal_init(&a, &now);
    cal_init(&b, &now);
    GRand *r = g_rand_new_with_seed(seed);
    int fast = 0;
    for (int op = 0; op < 3000; op++) {
      if (g_rand_int_range(r, 0, 50) == 0) { /* the clock moves on */
        now += g_rand_int_range(r, 0, 200);
        cal_prune(&a, now);
        cal_prune(&b, now);
      }
      int64_t s = now + g_rand_int_range(r, -8, 400);
      int64_t d = g_rand_int_range(r, 0, 4) ? g_rand_int_range(r, 1, 9) : g_rand_int_range(r, 1, 131);
      int64_t i = s - a.base;
      fast += d > 0 && i >= 0 && i + d <= 64 * a.nw && (i >> 6) == ((i + d - 1) >> 6);
      cal_take(&a, s, d);
      cal_take_slow(&b, s, d);
      ck_assert_msg(a.base == b.base && a.nw == b.nw && a.end == b.end, "seed %u op %d", seed, op);
      for (int64_t k = 0; k < a.nw; k++)
        ck_assert_msg(a.w[k] == b.w[k], "seed %u op %d word %" G_GINT64_FORMAT, seed, op, k);
    }
    ck_assert_int_gt(fast, 1000); /* the inline path was taken */
    g_rand_free(r);
    cal_free(&a);
    cal_free(&b);
  }
}
END_TEST

Suite *suite_calendar(void) {
  Suite *s = suite_create("calendar");
  TCase *tc = tcase_create("calendar");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_calendar_random);
  tcase_add_test(tc, test_calendar_words);
  tcase_add_test(tc, test_calendar_book_full_word);
  tcase_add_test(tc, test_calendar_clock_jump);
  tcase_add_test(tc, test_calendar_take_fast);
  suite_add_tcase(s, tc);
  return s;
}
