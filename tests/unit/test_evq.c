/* test_evq.c - the event queue (evq.c) against the plain definition of its
 * order: a list searched for the least (time, WG wake-ups last, insertion)
 * at every pop.  Random streams push events near the clock (the wheel),
 * past the window (the heap), at the clock itself, and many at one time, of
 * every kind, between pops; both must give the same sequence. */
#include "evq.h"
#include "tests.h"

static gboolean ref_before(const Event *a, const Event *b) {
  if (a->t != b->t) return a->t < b->t;
  if ((a->type == EV_WG) != (b->type == EV_WG)) return b->type == EV_WG;
  return a->seq < b->seq;
}

static void stream(guint32 seed, int64_t far) {
  EvQueue q;
  evq_init(&q);
  GRand *r = g_rand_new_with_seed(seed);
  GArray *ref = g_array_new(FALSE, FALSE, sizeof(Event));
  uint64_t seq = 0;
  int64_t now = g_rand_int_range(r, 0, 100000);
  int id = 0;
  for (int op = 0; op < 20000; op++) {
    if (g_rand_int_range(r, 0, 5) < 3 || ref->len == 0) { /* push */
      int64_t dt;
      switch (g_rand_int_range(r, 0, 6)) {
      case 0: dt = 0; break;                                  /* at the clock */
      case 1: dt = g_rand_int_range(r, 0, 4); break;          /* crowded cycles */
      case 2: dt = far + g_rand_int_range(r, 0, 3 * EVQ_SLOTS); break; /* past the window */
      case 3: dt = EVQ_SLOTS - 1 + g_rand_int_range(r, 0, 3); break;   /* its edge */
      default: dt = g_rand_int_range(r, 0, 300); break;
      }
      Event e = {now + dt, 0, (EvType)g_rand_int_range(r, 0, 4), id++, 0, -1};
      evq_push(&q, e);
      e.seq = seq++;
      g_array_append_val(ref, e);
    } else { /* pop: both give the least event */
      guint best = 0;
      for (guint i = 1; i < ref->len; i++)
        if (ref_before(&g_array_index(ref, Event, i), &g_array_index(ref, Event, best))) best = i;
      Event want = g_array_index(ref, Event, best);
      g_array_remove_index(ref, best);
      /* evq_min_t before half the pops: evq_pop's inline path wants the
       * earliest slot known, its slow path finds it */
      if (g_rand_int_range(r, 0, 2)) ck_assert_int_eq(evq_min_t(&q), want.t);
      Event got = evq_pop(&q);
      ck_assert_msg(got.t == want.t && got.a == want.a && got.type == want.type,
                    "seed %u op %d: popped event %d at %" G_GINT64_FORMAT ", want %d at %" G_GINT64_FORMAT,
                    seed, op, got.a, got.t, want.a, want.t);
      now = got.t;
    }
  }
  ck_assert_int_eq(evq_empty(&q), ref->len == 0);
  g_array_free(ref, TRUE);
  g_rand_free(r);
  evq_free(&q);
}

START_TEST(test_evq_random) {
  for (guint32 seed = 1; seed <= 8; seed++) {
    stream(seed, EVQ_SLOTS);     /* past the window by up to 4 windows */
    stream(seed, 1000000000000); /* far past it (a WAITT) */
  }
}
END_TEST

/* An empty queue; one event past the window, then one inside it. */
START_TEST(test_evq_basic) {
  EvQueue q;
  evq_init(&q);
  ck_assert(evq_empty(&q));
  ck_assert_int_eq(evq_min_t(&q), INT64_MAX);
  Event far = {10 * EVQ_SLOTS, 0, EV_XFER, 1, 0, -1}, wg = {5, 0, EV_WG, 2, 0, -1},
        sig = {5, 0, EV_SIG, 3, 0, -1};
  evq_push(&q, far);
  evq_push(&q, wg);
  evq_push(&q, sig);
  ck_assert_int_eq(evq_min_t(&q), 5);
  ck_assert_int_eq(evq_pop(&q).a, 3); /* at one time, the WG wakes last */
  ck_assert_int_eq(evq_pop(&q).a, 2);
  ck_assert_int_eq(evq_pop(&q).a, 1);
  ck_assert(evq_empty(&q));
  evq_free(&q);
}
END_TEST

Suite *suite_evq(void) {
  Suite *s = suite_create("evq");
  TCase *tc = tcase_create("evq");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_evq_basic);
  tcase_add_test(tc, test_evq_random);
  suite_add_tcase(s, tc);
  return s;
}
