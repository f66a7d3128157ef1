/* test_e2e.c - the hand-written tiny D1 and P1 programs end to end on the
 * four seeds (proof that the harness, the ABI and the host protocol work),
 * and determinism of the whole report. */
#include <string.h>

#include "tests.h"

static const uint64_t seeds[] = {7, 13, 11, 23};

static void run_file(const char *rel, uint64_t seed, SimResult *r, Program **pp) {
  g_autoptr(GError) err = NULL;
  g_autofree char *path = g_strconcat(TCC_TOP "/", rel, NULL);
  *pp = sim_asm_load(path, &err);
  ck_assert_msg(*pp, "%s", err ? err->message : "");
  SimOptions o;
  sim_options_default(&o);
  o.seed = seed;
  o.profile = TRUE;
  ck_assert_msg(sim_run(*pp, &o, r, &err), "%s", err ? err->message : "");
}

static void check_file(const char *rel) {
  for (unsigned i = 0; i < G_N_ELEMENTS(seeds); i++) {
    SimResult r;
    Program *p;
    run_file(rel, seeds[i], &r, &p);
    ck_assert_msg(r.checked && r.check.pass, "%s seed %" G_GUINT64_FORMAT ": error %g at %s, %ld unwritten",
                  rel, seeds[i], r.check.max_abs_err, r.check.worst, r.check.unwritten);
    ck_assert(r.check.max_abs_err < 1e-5); /* FP32 vs double: far inside the tolerance */
    ck_assert_int_eq(sim_verdict_exit(p, &r), 0);
    ck_assert(r.cycles > 0 && r.peak_w > r.static_w);
    sim_result_clear(&r);
    sim_program_free(p);
  }
}

START_TEST(test_tiny_d1) { check_file("tests/asm/tiny_d1.asm"); }
END_TEST

START_TEST(test_tiny_p1) { check_file("tests/asm/tiny_p1.asm"); }
END_TEST

/* D1 is sequential: step 1 cannot start before step 0's output is stored and
 * the host's latency has passed, so the run takes at least two latencies. */
START_TEST(test_d1_host_paces) {
  SimResult r;
  Program *p;
  run_file("tests/asm/tiny_d1.asm", 7, &r, &p);
  ck_assert(r.cycles > 2 * T_HOST_LATENCY);
  sim_result_clear(&r);
  sim_program_free(p);
}
END_TEST

/* Same program and seed: byte-identical reports (text and JSON, profile on);
 * another seed changes the numbers' check but not the timing. */
START_TEST(test_determinism) {
  char *rep[2][2];
  int64_t cyc[2];
  for (int k = 0; k < 2; k++) {
    SimResult r;
    Program *p;
    run_file("tests/asm/tiny_p1.asm", 7, &r, &p);
    ReportOptions t = {FALSE, TRUE, 7}, j = {TRUE, TRUE, 7};
    rep[k][0] = sim_report(p, &r, &t);
    rep[k][1] = sim_report(p, &r, &j);
    cyc[k] = r.cycles;
    sim_result_clear(&r);
    sim_program_free(p);
  }
  ck_assert_str_eq(rep[0][0], rep[1][0]);
  ck_assert_str_eq(rep[0][1], rep[1][1]);
  ck_assert_int_eq(cyc[0], cyc[1]);
  ck_assert(strstr(rep[0][0], "verdict   numerics PASS, area PASS, power PASS"));
  ck_assert(strstr(rep[0][1], "\"program_sha256\": \""));
  for (int k = 0; k < 2; k++) g_free(rep[k][0]), g_free(rep[k][1]);
}
END_TEST

/* Timing-only mode gives the same cycles and power as a full run. */
START_TEST(test_timing_only_same_timing) {
  SimResult r;
  Program *p;
  run_file("tests/asm/tiny_d1.asm", 7, &r, &p);
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  SimResult q;
  ck_assert(sim_run(p, &o, &q, NULL));
  ck_assert_int_eq(q.cycles, r.cycles);
  ck_assert_double_eq(q.peak_w, r.peak_w);
  ck_assert(!q.checked);
  sim_result_clear(&q);
  sim_result_clear(&r);
  sim_program_free(p);
}
END_TEST

Suite *suite_e2e(void) {
  Suite *s = suite_create("e2e");
  TCase *tc = tcase_create("tiny");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_tiny_d1);
  tcase_add_test(tc, test_tiny_p1);
  tcase_add_test(tc, test_d1_host_paces);
  tcase_add_test(tc, test_determinism);
  tcase_add_test(tc, test_timing_only_same_timing);
  suite_add_tcase(s, tc);
  return s;
}
