/* test_bounds.c - the lower bounds of bounds.c (docs/bounds.md): the
 * default machine's figures pinned as docs/bounds.md derives them, a
 * non-default machine's, and real programs at or above their bounds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "tests.h"

/* The bounds of problem `kind` with the keys of `problem_extra` set (e.g.
 * "d_model=64 heads=2"; the result must be valid) on the default machine
 * with the keys of `machine_extra` set. */
static void bounds_shape(const char *machine_extra, ProblemKind kind, const char *problem_extra, Bounds *b) {
  Machine m;
  sim_machine_default(&m);
  g_auto(GStrv) kv = g_strsplit(machine_extra, " ", -1);
  for (int i = 0; kv[i] && *kv[i]; i++) {
    g_auto(GStrv) pair = g_strsplit(kv[i], "=", 2);
    ck_assert_msg(sim_machine_set(&m, pair[0], atol(pair[1]), NULL), "%s", kv[i]);
  }
  Problem p;
  wl_problem_default(&p, kind);
  g_auto(GStrv) pk = g_strsplit(problem_extra, " ", -1);
  for (int i = 0; pk[i] && *pk[i]; i++) {
    g_auto(GStrv) pair = g_strsplit(pk[i], "=", 2);
    ck_assert_msg(wl_problem_set(&p, pair[0], atol(pair[1]), NULL), "%s", pk[i]);
  }
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wl_problem_validate(&p, &err), "%s: %s", problem_extra, err ? err->message : "?");
  sim_bounds(&m, &p, b);
}

static void bounds_of(const char *machine_extra, ProblemKind kind, Bounds *b) {
  bounds_shape(machine_extra, kind, "", b);
}

/* docs/bounds.md, "P1 on the default machine" */
START_TEST(test_bounds_p1_default) {
  Bounds b;
  bounds_of("", PROB_P1, &b);
  ck_assert_int_eq(b.mma_blocks, 26880);
  ck_assert_int_eq(b.cycles[BOUND_MMA], 53760);
  ck_assert_int_eq(b.hbm_lines, 147872);
  ck_assert_int_eq(b.hbm_bytes, 9463808);
  ck_assert_int_eq(b.hbm_busiest, 18484);
  ck_assert_int_eq(b.cycles[BOUND_HBM], 18592);
  ck_assert_double_eq_tol(b.e_mma_uj, 550.5024, 1e-9);
  ck_assert_double_eq_tol(b.e_hbm_uj, 325.3184, 1e-9);
  ck_assert_double_eq_tol(b.e_noc_uj, 3.7855232, 1e-9);
  ck_assert_double_eq_tol(b.e_rf_uj, 22.819328, 1e-6);
  ck_assert_double_eq_tol(b.e_sfu_uj, 16.826368, 1e-9);
  ck_assert_double_eq_tol(b.e_total_uj, 919.252019, 1e-6);
  ck_assert_double_eq_tol(b.dyn_w, 20.0 - 0.15 * 22.7192, 1e-9);
  ck_assert_int_eq(b.cycles[BOUND_POWER], 55001);
  ck_assert_int_eq(b.cycles[BOUND_CHAIN], 0);
  ck_assert_int_eq(b.binding, BOUND_POWER);
  ck_assert_int_eq(b.bound, 55001);
}
END_TEST

/* docs/bounds.md, "D1 on the default machine" */
START_TEST(test_bounds_d1_default) {
  Bounds b;
  bounds_of("", PROB_D1, &b);
  ck_assert_int_eq(b.mma_blocks, 3712);
  ck_assert_int_eq(b.cycles[BOUND_MMA], 7424);
  ck_assert_int_eq(b.hbm_lines, 29264);
  ck_assert_int_eq(b.hbm_busiest, 3658);
  ck_assert_int_eq(b.cycles[BOUND_HBM], 3766);
  ck_assert_double_eq_tol(b.e_total_uj, 141.840022, 1e-6);
  ck_assert_int_eq(b.cycles[BOUND_POWER], 8001);
  ck_assert_int_eq(b.io_latency, 119);
  ck_assert_int_eq(b.step_compute, 198);
  ck_assert_int_eq(b.step_period, 636);
  ck_assert_int_eq(b.load_ready, 3729);
  ck_assert_int_eq(b.cycles[BOUND_CHAIN], 3729 + 119 + 7 * 636);
  ck_assert_int_eq(b.binding, BOUND_CHAIN);
  ck_assert_int_eq(b.bound, 8300);
}
END_TEST

/* Another machine, other bounds: twice the channels halve the HBM bound,
 * more SFU lanes shorten the chain, the static power changes the budget,
 * and the binding bounds change (P1: MMA work, D1: power). */
START_TEST(test_bounds_other_machine) {
  const char *hw = "sms=8 mma_arrays=2 sfu=16 hbm=16 vl=8 rf_kib=128";
  Bounds p1, d1;
  bounds_of(hw, PROB_P1, &p1);
  bounds_of(hw, PROB_D1, &d1);
  ck_assert_int_eq(p1.cycles[BOUND_MMA], 53760);
  ck_assert_int_eq(p1.hbm_busiest, 9242);
  ck_assert_int_eq(p1.cycles[BOUND_HBM], 9350);
  ck_assert_double_eq_tol(p1.e_rf_uj, 16.828673, 1e-6); /* a larger RF: fewer operand bytes */
  ck_assert_int_eq(p1.cycles[BOUND_POWER], 52001);
  ck_assert_int_eq(p1.binding, BOUND_MMA);
  ck_assert_int_eq(d1.cycles[BOUND_HBM], 1944);
  ck_assert_int_eq(d1.step_compute, 196);
  ck_assert_int_eq(d1.cycles[BOUND_CHAIN], 6488);
  ck_assert_int_eq(d1.cycles[BOUND_POWER], 8001);
  ck_assert_int_eq(d1.binding, BOUND_POWER);
}
END_TEST

/* A machine whose static power alone is over the limit has no power bound. */
START_TEST(test_bounds_no_power_budget) {
  Bounds b;
  bounds_of("sms=64 mma_arrays=4 sfu=64 sh_kib=1024 rf_kib=256 wgs_per_sm=8", PROB_P1, &b);
  ck_assert(b.dyn_w <= 0);
  ck_assert_int_eq(b.cycles[BOUND_POWER], 0);
  ck_assert(b.bound > 0);
}
END_TEST

/* A range's lines past a whole round of the channels go to the channels
 * from its first line's on, not from channel 0.  D1 with 2 heads, history
 * 32, 1 step (d_model 64, d_ff 32): a head's cache rows are 33 rows of
 * 128 bytes, 66 lines, so head 1's ranges start mid-channel; the only
 * ranges that start off channel 0 with lines past a whole round are head
 * 1's new rows of k_cache and v_cache (2 lines each, from line 1986 and
 * 2178: channels 2 and 3).  Every symbol starts on channel 0 (4096-byte
 * aligned: 64 lines).  Channel 0 carries a whole round's share of every
 * range (wqkv 96, wo 32, w1 16, w2 16, each cache's history 8 + 8) plus one
 * line of each range from channel 0 with a part round (x_in, ln1_g, ln1_b,
 * bo, ln2_g, ln2_b, b1, b2, out, head 0's new rows: 1 each; bqkv's 12
 * lines: 2): 205 lines, as channel 1; channels 2 and 3 carry head 1's new
 * rows but not b1: 204; channels 4..7 193.  Counted from channel 0, head
 * 1's new rows would make channels 0 and 1 the busiest with 207. */
START_TEST(test_bounds_hbm_mid_channel) {
  Bounds b;
  bounds_shape("", PROB_D1, "d_model=64 heads=2 d_ff=32 layers=1 history=32 steps=1", &b);
  ck_assert_int_eq(b.hbm_lines, 1590);
  ck_assert_int_eq(b.hbm_busiest, 205);
  ck_assert_int_eq(b.cycles[BOUND_HBM], 8 + 205 - 1 + 100 + 1);
}
END_TEST

/* Every program in DIR (correct: golden-check and asm-check run them) runs
 * at or above its bound; returns how many were checked. */
static int check_dir(const char *dir_path) {
  g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_msg(dir != NULL, "%s", dir_path);
  int n = 0;
  for (const char *f; (f = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(f, ".asm")) continue;
    g_autofree char *path = g_build_filename(dir_path, f, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(Program) p = sim_asm_load(path, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : path);
    SimOptions o;
    sim_options_default(&o);
    o.timing_only = TRUE;
    SimResult r;
    ck_assert_msg(sim_run(p, &o, &r, &err), "%s", err ? err->message : path);
    Bounds b;
    sim_bounds(&p->hw, &p->prob, &b);
    ck_assert_msg(r.cycles >= b.bound, "%s: %" G_GINT64_FORMAT " cycles < bound %" G_GINT64_FORMAT " (%s)", f,
                  r.cycles, b.bound, sim_bound_name[b.binding]);
    sim_result_clear(&r);
    n++;
  }
  return n;
}

/* The bounds are lower bounds for real programs: the golden programs and
 * the hand-written tiny ones. */
START_TEST(test_bounds_below_programs) {
  ck_assert_int_ge(check_dir(TOP_PATH("tests/golden")), 10);
  ck_assert_int_ge(check_dir(TOP_PATH("tests/asm")), 2);
}
END_TEST

Suite *suite_bounds(void) {
  Suite *s = suite_create("bounds");
  TCase *tc = tcase_create("sim_bounds");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_bounds_p1_default);
  tcase_add_test(tc, test_bounds_d1_default);
  tcase_add_test(tc, test_bounds_other_machine);
  tcase_add_test(tc, test_bounds_no_power_budget);
  tcase_add_test(tc, test_bounds_hbm_mid_channel);
  tcase_add_test(tc, test_bounds_below_programs);
  suite_add_tcase(s, tc);
  return s;
}
