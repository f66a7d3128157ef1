/* test_power.c - calendars, the hottest-window arithmetic and the power
 * calibration of docs/machine.md §5. */
#include <math.h>
#include <stdio.h>

#include "calendar.h"
#include "tests.h"

START_TEST(test_calendar_fit) {
  Cal c;
  cal_init(&c, NULL);
  ck_assert_int_eq(cal_book(&c, 10, 5), 10);  /* [10,15) */
  ck_assert_int_eq(cal_book(&c, 12, 1), 15);  /* after it */
  ck_assert_int_eq(cal_book(&c, 0, 10), 0);   /* the hole before fits exactly */
  ck_assert_int_eq(cal_fit(&c, 0, 1), 16);    /* [0,16) is now one interval */
  ck_assert_int_eq(cal_book(&c, 30, 2), 30);
  ck_assert_int_eq(cal_fit(&c, 16, 15), 32);  /* gap [16,30) too small */
  ck_assert_int_eq(cal_fit(&c, 16, 14), 16);  /* exactly fits */
  cal_prune(&c, 20);
  ck_assert_int_eq(cal_fit(&c, 20, 1), 20);
  ck_assert_int_eq(cal_fit(&c, 30, 1), 32);
  for (int i = 0; i < 1000; i++) cal_book(&c, 100 + 2 * i, 1); /* many holes */
  ck_assert_int_eq(cal_book(&c, 100, 1), 101);
  ck_assert_int_eq(cal_fit(&c, 100, 2), 2099);
  cal_free(&c);
}
END_TEST

/* brute force: every window from scratch */
static SimEnergy brute(const SimEnergy *e, int64_t n, int64_t w, int64_t *start) {
  SimEnergy best = -1;
  for (int64_t s = 0; s + w <= (n > w ? n : w); s++) {
    SimEnergy sum = 0;
    for (int64_t t = s; t < s + w; t++) sum += t < n ? e[t] : 0;
    if (sum > best) best = sum, *start = s;
  }
  return best;
}

START_TEST(test_window) {
  int64_t n = 5000, s1, s2;
  SimEnergy *e = g_new0(SimEnergy, n);
  guint32 x = 12345;
  for (int64_t t = 0; t < n; t++) {
    x = x * 1103515245u + 12345u;
    e[t] = (SimEnergy)(x >> 16) * 3; /* up to ~10 W per cycle, in units of 1/20 pJ */
  }
  for (int64_t t = 3000; t < 3500; t++) e[t] = 600000; /* a hot spot */
  SimEnergy w = sim_peak_window(e, n, 1000, &s1);
  SimEnergy b = brute(e, n, 1000, &s2);
  ck_assert_int_eq(w, b);
  ck_assert_int_eq(s1, s2);
  ck_assert(s1 > 2000 && s1 <= 3000);
  /* constant trace: 160000 units (8 pJ) per cycle is 8 W */
  for (int64_t t = 0; t < n; t++) e[t] = 160000;
  ck_assert_int_eq(sim_peak_window(e, n, 1000, &s1), 160000 * 1000);
  ck_assert_double_eq_tol(sim_e_w(160000 * 1000, 1000), 8.0, 1e-12);
  ck_assert_int_eq(s1, 0);
  /* a 200-cycle program is measured over [0, 1000) */
  ck_assert_int_eq(sim_peak_window(e, 200, 1000, &s1), 160000 * 200);
  ck_assert_double_eq_tol(sim_e_w(160000 * 200, 1000), 8.0 * 200 / 1000, 1e-12);
  g_free(e);
}
END_TEST

/* Programs where each of `nsm` SMs streams `loads` 4-KiB blocks from HBM,
 * with `mma` MMA blocks issued after each load (operands stay resident). */
static char *load_program(int nsm, int loads, int mma) {
  GString *g = g_string_new(t_machine("dma=4x2"));
  g_string_append(g, "\n.problem p1\n");
  for (int sm = 0; sm < nsm; sm++) {
    g_string_append_printf(g, ".wg %d\n.rf a p0 32x32\n.rf b p1 32x32\n.rf c p2 32x32\n"
                              ".rf l0 p3 32x32\n.rf l1 p4 32x32\n", sm * 4);
    g_string_append(g, "    LD a, hbm[x_in]\n    LD b, hbm[x_in + 4096]\n    VEC.fill c, 0.0\n");
    for (int i = 0; i < loads; i++) {
      g_string_append_printf(g, "    LD l%d, hbm[wqkv.l0 + %d]\n", i % 2, (sm * 97 + i) % 180 * 4096);
      for (int k = 0; k < mma; k++) g_string_append(g, "    MMA c, a, b\n");
    }
    g_string_append(g, "    END\n");
  }
  return g_string_free(g, FALSE);
}

static double peak(const char *text) {
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  SimResult r;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(text, &o, &r, &err), "%s", err ? err->message : "");
  double p = r.peak_w;
  sim_result_clear(&r);
  return p;
}

START_TEST(test_calibration) {
  /* all HBM channels saturated by 16 SMs streaming: over 20 W */
  g_autofree char *hot = load_program(16, 60, 0);
  double p_hot = peak(hot);
  ck_assert_msg(p_hot > POWER_LIMIT_W, "saturated HBM: %.3f W", p_hot);
  /* about half of it: under */
  g_autofree char *half = load_program(4, 60, 0);
  double p_half = peak(half);
  ck_assert_msg(p_half < POWER_LIMIT_W, "half HBM: %.3f W", p_half);
  /* all 16 arrays busy plus loads: over; half the arrays and loads: under */
  g_autofree char *mma = load_program(16, 60, 4);
  double p_mma = peak(mma);
  ck_assert_msg(p_mma > POWER_LIMIT_W, "MMA + loads: %.3f W", p_mma);
  g_autofree char *mma_half = load_program(8, 30, 4);
  double p_mh = peak(mma_half);
  ck_assert_msg(p_mh < POWER_LIMIT_W, "half MMA: %.3f W", p_mh);
}
END_TEST

Suite *suite_power(void) {
  Suite *s = suite_create("power");
  TCase *tc = tcase_create("power");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_calendar_fit);
  tcase_add_test(tc, test_window);
  tcase_add_test(tc, test_calibration);
  suite_add_tcase(s, tc);
  return s;
}
