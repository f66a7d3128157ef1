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
  ck_assert_double_eq_tol(b.e_sfu_uj, 16.826368, 1e-9);
  /* the elementwise work: 2,103,296 SFU elements x 8 B; 1,048,576
   * activations x 3 products x (2 pJ + 12 B); 1,044,480 softmax additions
   * x (2 pJ + 4 B); 2,048 LayerNorm rows x (255 products x (2 pJ + 12 B)
   * + 254 additions x 4 B); a byte 0.25 pJ */
  ck_assert_double_eq_tol(b.e_sfu_rf_uj, 4.206592, 1e-9);
  ck_assert_double_eq_tol(b.e_gelu_uj, 15.72864, 1e-9);
  ck_assert_double_eq_tol(b.e_sums_uj, 3.13344, 1e-9);
  ck_assert_double_eq_tol(b.e_var_uj, 3.131392, 1e-9);
  ck_assert_double_eq_tol(b.e_vec_uj, (3 * 1048576 + 2048 * 255 + 1044480) * 2e-6, 1e-9);
  /* the moved bytes and the MMA operands (22.819328) and the elementwise work's bytes */
  ck_assert_double_eq_tol(b.e_rf_uj, 22.819328 + (2103296 * 8 + 3145728 * 12 + 1044480 * 4 + 2048 * (255 * 12 + 254 * 4)) * 0.25e-6,
                          1e-6);
  ck_assert_double_eq_tol(b.e_total_uj, 945.452083, 1e-6);
  ck_assert_double_eq_tol(b.dyn_w, 20.0 - 0.15 * 22.7192, 1e-9);
  ck_assert_int_eq(b.cycles[BOUND_POWER], 56001); /* 56,982.0 cycles of budget: 57 windows */
  ck_assert_int_eq(b.cycles[BOUND_CHAIN], 0);
  ck_assert_int_eq(b.binding, BOUND_POWER);
  ck_assert_int_eq(b.bound, 56001);
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
  /* 141.840022 uJ of products, lines and SFU elements; the elementwise
   * work 0.205888: 16,704 SFU elements x 8 B, 8,192 activations x 15 pJ,
   * 8,416 softmax additions x 3 pJ, 32 LayerNorm rows x 761 pJ */
  ck_assert_double_eq_tol(b.e_sfu_rf_uj, 0.033408, 1e-9);
  ck_assert_double_eq_tol(b.e_gelu_uj, 0.12288, 1e-9);
  ck_assert_double_eq_tol(b.e_sums_uj, 0.025248, 1e-9);
  ck_assert_double_eq_tol(b.e_var_uj, 0.024352, 1e-9);
  ck_assert_double_eq_tol(b.e_total_uj, 142.04591, 1e-6);
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
 * and D1's binding bound changes to power.  P1's power bound (54,001) is
 * just above the MMA work (53,760): without the elementwise work (16.775
 * uJ of RF, 9.425 of VEC) it would be 52,001 and the MMA work would bind. */
START_TEST(test_bounds_other_machine) {
  const char *hw = "sms=8 mma_arrays=2 sfu=16 hbm=16 vl=8 rf_kib=128";
  Bounds p1, d1;
  bounds_of(hw, PROB_P1, &p1);
  bounds_of(hw, PROB_D1, &d1);
  ck_assert_int_eq(p1.cycles[BOUND_MMA], 53760);
  ck_assert_int_eq(p1.hbm_busiest, 9242);
  ck_assert_int_eq(p1.cycles[BOUND_HBM], 9350);
  /* a larger RF: fewer MMA operand bytes (16.828673 uJ with the moved
   * bytes), the elementwise work's as on the default machine (16.775168) */
  ck_assert_double_eq_tol(p1.e_rf_uj, 16.828673 + 16.775168, 1e-6);
  ck_assert_double_eq_tol(p1.e_total_uj, 939.461428, 1e-6);
  ck_assert_int_eq(p1.cycles[BOUND_POWER], 54001);
  ck_assert_int_eq(p1.binding, BOUND_POWER);
  ck_assert_int_eq(d1.cycles[BOUND_HBM], 1944);
  ck_assert_int_eq(d1.step_compute, 196);
  ck_assert_int_eq(d1.cycles[BOUND_CHAIN], 6488);
  ck_assert_int_eq(d1.cycles[BOUND_POWER], 8001);
  ck_assert_int_eq(d1.binding, BOUND_POWER);
}
END_TEST

/* The elementwise work (docs/bounds.md §3) is the problem's, whatever the
 * machine.  On plans/best.yaml's machine (DMA depth 5, 1024-bit NoC links:
 * 23.8712 mm^2, 16.41932 W of dynamic budget) the default P1's 945.452083
 * uJ take 57,581.7 cycles, 58 windows, where the default machine's budget
 * needs 57; without the elementwise work (919.252019 uJ: 55,986.0 cycles)
 * both would need 56.  On another shape (d 128, 4 heads, d_ff 512, 1
 * layer, 1 sequence of 128 rows) each part follows its count:
 *   SFU operands  4 x 128 x 129 / 2 exps + 128 x 512 tanh + 256 rsqrt
 *                 = 98,816 elements x 8 B x 0.25 pJ               0.197632 uJ
 *   GELU          65,536 activations x 3 x (2 pJ + 12 x 0.25 pJ)  0.98304
 *   softmax sums  4 x 128 x 127 / 2 = 32,512 additions x (2 + 1)  0.097536
 *   variance      256 rows x (127 x (2 + 3) + 126 x 1)            0.194816
 * Half the SMs leave a larger budget, and the MMA work binds. */
START_TEST(test_bounds_elementwise) {
  Bounds best, small, half;
  bounds_of("dma_depth=5 noc=1024", PROB_P1, &best);
  ck_assert_double_eq_tol(best.dyn_w, 20.0 - 0.15 * 23.8712, 1e-9);
  ck_assert_double_eq_tol(best.e_total_uj, 945.452083, 1e-6);
  ck_assert_double_eq_tol(best.e_total_uj - best.e_sfu_rf_uj - best.e_gelu_uj - best.e_sums_uj - best.e_var_uj,
                          919.252019, 1e-6);
  ck_assert_int_eq(best.cycles[BOUND_POWER], 57001);
  ck_assert_int_eq(best.bound, 57001);

  bounds_shape("", PROB_P1, "d_model=128 heads=4 d_ff=512 layers=1 seqs=1 rows=128", &small);
  ck_assert_double_eq_tol(small.e_sfu_rf_uj, 0.197632, 1e-9);
  ck_assert_double_eq_tol(small.e_gelu_uj, 0.98304, 1e-9);
  ck_assert_double_eq_tol(small.e_sums_uj, 0.097536, 1e-9);
  ck_assert_double_eq_tol(small.e_var_uj, 0.194816, 1e-9);
  ck_assert_double_eq_tol(small.e_vec_uj, (3 * 65536 + 32512 + 256 * 127) * 2e-6, 1e-9);
  ck_assert_double_eq_tol(small.e_sfu_uj, 98816 * 8e-6, 1e-9);
  ck_assert_double_eq_tol(small.e_total_uj, 57.229453, 1e-6);
  ck_assert_int_eq(small.cycles[BOUND_POWER], 3001);

  bounds_of("sms=8", PROB_P1, &half);
  ck_assert_int_eq(half.cycles[BOUND_POWER], 52001);
  ck_assert_int_eq(half.binding, BOUND_MMA);
  ck_assert_int_eq(half.bound, 107520);
}
END_TEST

/* The SFU's elements over every SM's lanes, between a load and a store
 * (docs/bounds.md §5): below the others at the default shape, binding
 * where the FFN is wide against d_model, or on a machine with few lanes. */
START_TEST(test_bounds_sfu) {
  Bounds def, narrow, one_lane, d1;
  bounds_of("", PROB_P1, &def);
  /* 2 layers x (2 x 8 x 256 x 257 / 2 exps + 512 x 1024 tanh + 1024 rsqrt) */
  ck_assert_int_eq(def.sfu_elems, 2103296);
  ck_assert_int_eq(def.sfu_lanes, 128);
  ck_assert_int_eq(def.io_latency, 119);
  ck_assert_int_eq(def.cycles[BOUND_SFU], 119 + 16432 + 119);
  ck_assert_int_eq(def.binding, BOUND_POWER);

  /* one head: 2 x (2 x 32,896 + 524,288 + 1,024) = 1,182,208 elements */
  bounds_shape("", PROB_P1, "d_model=32 heads=1", &narrow);
  ck_assert_int_eq(narrow.sfu_elems, 1182208);
  ck_assert_int_eq(narrow.cycles[BOUND_SFU], 119 + 9236 + 119);
  ck_assert_int_gt(narrow.cycles[BOUND_SFU], narrow.cycles[BOUND_POWER]);
  ck_assert_int_gt(narrow.cycles[BOUND_SFU], narrow.cycles[BOUND_MMA]);
  ck_assert_int_eq(narrow.binding, BOUND_SFU);
  ck_assert_int_eq(narrow.bound, 9474);

  bounds_of("sfu=1", PROB_P1, &one_lane);
  ck_assert_int_eq(one_lane.sfu_lanes, 16);
  ck_assert_int_eq(one_lane.cycles[BOUND_SFU], 119 + 131456 + 119);
  ck_assert_int_eq(one_lane.binding, BOUND_SFU);

  /* D1: per step and layer 4 heads x (129 + t) exps, 512 tanh, 2 rsqrt */
  bounds_of("", PROB_D1, &d1);
  ck_assert_int_eq(d1.sfu_elems, 2 * (8 * (4 * 129 + 512 + 2) + 4 * 28));
  ck_assert_int_eq(d1.cycles[BOUND_SFU], 119 + (d1.sfu_elems + 127) / 128 + 119);
  ck_assert_int_eq(d1.binding, BOUND_CHAIN);
}
END_TEST

/* docs/bounds.md §4, "What a step must load again".  The default machine
 * holds 64 WGs x 64 KiB = 4,194,304 B (no SH); the default D1's last step
 * needs its 1,572,864 B of weight matrices and 2 layers x 2 caches x 4
 * heads x 135 rows x 128 B of K/V: nothing to load again.  With d_model 512
 * (16 heads) the matrices are 2 x (512 x 2048 + 1024 x 512) floats =
 * 12,582,912 B and step t's rows 8,192 x (128 + t) B: over the RFs by
 * 9,437,184 + 8,192 t B, 147,456 + 128 t lines, 18,432 + 16 t on each of 8
 * channels, far more than a step's chain of 238 + 222. */
START_TEST(test_bounds_d1_reload) {
  Bounds def, b, rf, sh;
  bounds_of("", PROB_D1, &def);
  ck_assert_int_eq(def.onchip_bytes, 4194304);
  ck_assert_int_eq(def.step_need_bytes, 1572864 + 2048 * 135);
  ck_assert_int_eq(def.reload_lines, 0);
  ck_assert_int_eq(def.reload_bytes, 0);

  bounds_shape("", PROB_D1, "d_model=512 heads=16", &b);
  ck_assert_int_eq(b.step_need_bytes, 12582912 + 8192 * 135);
  ck_assert_int_eq(b.reload_bytes, 7 * 9437184 + 8192 * 28);
  ck_assert_int_eq(b.reload_lines, 7 * 147456 + 128 * 28);
  /* the channels carry the lines once and again, spread at best evenly */
  int64_t spread = (b.hbm_lines + b.reload_lines + 7) / 8;
  ck_assert_int_gt(spread, b.hbm_busiest);
  ck_assert_int_eq(b.cycles[BOUND_HBM], 8 + spread - 1 + 100 + 1);
  /* each later step: host, its lines loaded (issued after the release), ST */
  int64_t steps = 0;
  for (int t = 1; t < 8; t++) steps += 200 + (18432 + 16 * t - 1 + 119) + 119;
  ck_assert_int_eq(b.cycles[BOUND_CHAIN], MAX(b.step_period, b.load_ready + 119) + steps);
  /* and each line again costs its HBM line, NoC and RF bytes */
  ck_assert_double_eq_tol(b.e_hbm_uj, (b.hbm_lines + b.reload_lines) * 2200e-6, 1e-6);
  ck_assert_double_eq_tol(b.e_noc_uj, (double)(b.hbm_bytes + b.reload_bytes) * E_NOC_BYTE * 1e-6, 1e-6);
  ck_assert_int_eq(b.binding, BOUND_POWER);

  /* twice the RF, or the same again as SH (256 KiB per SM), halves what is
   * over: 5,242,880 + 8,192 t B */
  bounds_shape("rf_kib=128", PROB_D1, "d_model=512 heads=16", &rf);
  bounds_shape("sh_kib=256", PROB_D1, "d_model=512 heads=16", &sh);
  ck_assert_int_eq(rf.onchip_bytes, 8388608);
  ck_assert_int_eq(rf.reload_lines, 7 * 81920 + 128 * 28);
  ck_assert_int_eq(sh.onchip_bytes, 8388608);
  ck_assert_int_eq(sh.reload_lines, rf.reload_lines);

  /* P1 makes one pass over its weights: nothing again */
  Bounds p1;
  bounds_shape("", PROB_P1, "d_model=1024 heads=32", &p1);
  ck_assert_int_eq(p1.reload_lines, 0);
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
 * at or above its bound and spends at least the power bound's energy of
 * each unit class; returns how many were checked. */
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
    /* and the power bound's energy, unit by unit */
    const struct { UnitClass u; double min; } part[] = {
        {UC_MMA, b.e_mma_uj}, {UC_HBM, b.e_hbm_uj}, {UC_NOC, b.e_noc_uj},
        {UC_RF, b.e_rf_uj},   {UC_VEC, b.e_vec_uj}, {UC_SFU, b.e_sfu_uj},
    };
    for (size_t k = 0; k < G_N_ELEMENTS(part); k++)
      ck_assert_msg(r.unit_energy_uj[part[k].u] >= part[k].min - 1e-9, "%s: %s %.6f uJ < the bound's %.6f", f,
                    sim_unit_class_name[part[k].u], r.unit_energy_uj[part[k].u], part[k].min);
    sim_result_clear(&r);
    n++;
  }
  return n;
}

/* The bounds are lower bounds for real programs: the golden programs and
 * the hand-written tiny ones. */
START_TEST(test_bounds_below_programs) {
  /* tests/golden/d1_reload.asm loads weights again each step */
  Bounds b;
  bounds_shape("sms=1 wgs_per_sm=2 rf_kib=32", PROB_D1, "d_model=64 heads=2 d_ff=128 layers=1 history=32 steps=2", &b);
  ck_assert_int_eq(b.reload_lines, 1288);
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
  tcase_add_test(tc, test_bounds_elementwise);
  tcase_add_test(tc, test_bounds_sfu);
  tcase_add_test(tc, test_bounds_d1_reload);
  tcase_add_test(tc, test_bounds_no_power_budget);
  tcase_add_test(tc, test_bounds_hbm_mid_channel);
  tcase_add_test(tc, test_bounds_below_programs);
  suite_add_tcase(s, tc);
  return s;
}
