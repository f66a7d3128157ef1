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
    rep[k][0] = sim_report(p, &r, &t, NULL);
    rep[k][1] = sim_report(p, &r, &j, NULL);
    cyc[k] = r.cycles;
    sim_result_clear(&r);
    sim_program_free(p);
  }
  ck_assert_str_eq(rep[0][0], rep[1][0]);
  ck_assert_str_eq(rep[0][1], rep[1][1]);
  ck_assert_int_eq(cyc[0], cyc[1]);
  ck_assert(strstr(rep[0][0], "verdict   numerics PASS, area PASS, power PASS"));
  ck_assert(strstr(rep[0][1], "\"program_sha256\" : \""));
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

/* Grade once, check many: sim_check(sim_time(p), seed) against sim_run(p,
 * seed), on every seed, for programs that pass, programs whose numerics fail
 * and programs that stop on a run-time error: the same figures and check,
 * or the same error message. */
static void same_result(const char *what, uint64_t seed, const SimResult *a, const SimResult *b) {
  g_autofree char *ctx = g_strdup_printf("%s seed %" G_GUINT64_FORMAT, what, seed);
  ck_assert_msg(a->cycles == b->cycles && a->peak_start == b->peak_start && a->insns == b->insns &&
                    a->mma_blocks == b->mma_blocks && a->hbm_lines == b->hbm_lines,
                "%s: timing differs", ctx);
  ck_assert_msg(a->peak_e == b->peak_e && a->dyn_e == b->dyn_e &&
                    memcmp(a->unit_e, b->unit_e, sizeof a->unit_e) == 0,
                "%s: energy units differ", ctx);
  ck_assert_msg(memcmp(&a->area_mm2, &b->area_mm2, sizeof(double)) == 0 &&
                    memcmp(&a->static_w, &b->static_w, sizeof(double)) == 0 &&
                    memcmp(&a->peak_w, &b->peak_w, sizeof(double)) == 0 &&
                    memcmp(&a->energy_uj, &b->energy_uj, sizeof(double)) == 0 &&
                    memcmp(a->unit_energy_uj, b->unit_energy_uj, sizeof a->unit_energy_uj) == 0 &&
                    memcmp(a->unit_busy, b->unit_busy, sizeof a->unit_busy) == 0,
                "%s: area, power or energy differs", ctx);
  ck_assert_msg(a->checked && b->checked, "%s: not checked", ctx);
  ck_assert_msg(memcmp(&a->check.max_abs_err, &b->check.max_abs_err, sizeof(double)) == 0 &&
                    strcmp(a->check.worst, b->check.worst) == 0 && a->check.checked == b->check.checked &&
                    a->check.unwritten == b->check.unwritten && a->check.pass == b->check.pass,
                "%s: numerics differ: %g at %s vs %g at %s", ctx, a->check.max_abs_err, a->check.worst,
                b->check.max_abs_err, b->check.worst);
}

static void time_once_check_each(const char *rel) {
  g_autoptr(GError) err = NULL;
  g_autofree char *path = g_strconcat(TCC_TOP "/", rel, NULL);
  g_autoptr(Program) p = sim_asm_load(path, &err);
  /* an assembler error: nothing runs; the largest dims (run_max_dims_*):
   * gigabytes of data per run, too slow for eight runs here */
  if (!p || p->abi.hbm_bytes > (64u << 20)) return;
  SimOptions o;
  sim_options_default(&o);
  g_autoptr(SimTiming) t = sim_time(p, &o);
  for (unsigned i = 0; i < G_N_ELEMENTS(seeds); i++) {
    SimResult full, once;
    g_autoptr(GError) e1 = NULL;
    g_autoptr(GError) e2 = NULL;
    o.seed = seeds[i];
    /* the reference computed by sim_check, or beforehand (as tcc-grade does) */
    WlRef *ref = i % 2 ? wl_reference(&p->prob, &p->abi, seeds[i]) : NULL;
    gboolean ok1 = sim_run(p, &o, &full, &e1), ok2 = sim_check(t, seeds[i], ref, &once, &e2);
    wl_reference_free(ref);
    ck_assert_msg(ok1 == ok2, "%s seed %" G_GUINT64_FORMAT ": sim_run %s, sim_check %s", rel, seeds[i],
                  ok1 ? "ok" : e1->message, ok2 ? "ok" : e2->message);
    if (ok1) {
      same_result(rel, seeds[i], &full, &once);
      ck_assert_int_eq(sim_verdict_exit(p, &full), sim_verdict_exit(p, &once));
      sim_result_clear(&full);
      sim_result_clear(&once);
    } else {
      ck_assert_str_eq(e1->message, e2->message);
    }
  }
}

START_TEST(test_time_once) {
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  const char *dirs[] = {"tests/asm", "tests/bad"};
  for (unsigned d = 0; d < G_N_ELEMENTS(dirs); d++) {
    g_autofree char *path = g_strconcat(TCC_TOP "/", dirs[d], NULL);
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    ck_assert(dir);
    for (const char *n; (n = g_dir_read_name(dir));)
      if (g_str_has_suffix(n, ".asm") && (d == 0 || g_str_has_prefix(n, "run_")))
        g_ptr_array_add(files, g_strconcat(dirs[d], "/", n, NULL));
  }
  ck_assert_uint_ge(files->len, 20);
  for (guint i = 0; i < files->len; i++) time_once_check_each(g_ptr_array_index(files, i));
}
END_TEST

/* The figures a seed's check adds are its own: the data, hence the errors,
 * differ from seed to seed. */
START_TEST(test_time_once_per_seed) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_load(TOP_PATH("tests/asm/tiny_p1.asm"), &err);
  ck_assert(p);
  SimOptions o;
  sim_options_default(&o);
  g_autoptr(SimTiming) t = sim_time(p, &o);
  SimResult r[2];
  /* with the reference computed beforehand, or by sim_check */
  WlRef *ref = wl_reference(&p->prob, &p->abi, 7);
  ck_assert(sim_check(t, 7, ref, &r[0], NULL) && sim_check(t, 13, NULL, &r[1], NULL));
  wl_reference_free(ref);
  ck_assert(r[0].check.pass && r[1].check.pass);
  ck_assert(r[0].check.max_abs_err != r[1].check.max_abs_err);
  ck_assert_int_eq(r[0].cycles, r[1].cycles);
  sim_result_clear(&r[0]);
  sim_result_clear(&r[1]);
}
END_TEST

/* The fast path of plain HBM loads and stores (dma.c, sim_dma_fast_path)
 * gives the general path's timing, power and energy to the last bit: every
 * program of tests/asm and tests/golden, and a stress program of many loads
 * and stores at odd addresses from and to regions that span partitions,
 * long enough that the power array grows inside a descriptor, run both
 * ways. */
static void timing_both_ways(const char *what, const Program *p) {
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  SimResult r[2];
  for (int k = 0; k < 2; k++) {
    g_autoptr(GError) err = NULL;
    sim_dma_fast_path = k == 0;
    gboolean ok = sim_run(p, &o, &r[k], &err);
    sim_dma_fast_path = TRUE;
    ck_assert_msg(ok, "%s: %s", what, err ? err->message : "");
  }
  r[0].checked = r[1].checked = TRUE; /* timing only: nothing to compare in the check */
  same_result(what, 0, &r[0], &r[1]);
  sim_result_clear(&r[0]);
  sim_result_clear(&r[1]);
}

START_TEST(test_dma_fast_path) {
  const char *dirs[] = {"tests/asm", "tests/golden"};
  int n = 0;
  for (unsigned d = 0; d < G_N_ELEMENTS(dirs); d++) {
    g_autofree char *path = g_strconcat(TCC_TOP "/", dirs[d], NULL);
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    ck_assert(dir);
    for (const char *name; (name = g_dir_read_name(dir));) {
      if (!g_str_has_suffix(name, ".asm")) continue;
      g_autofree char *file = g_strconcat(path, "/", name, NULL);
      g_autoptr(GError) err = NULL;
      g_autoptr(Program) p = sim_asm_load(file, &err);
      ck_assert_msg(p, "%s", err ? err->message : "");
      timing_both_ways(name, p);
      n++;
    }
  }
  ck_assert_int_ge(n, 20);
  g_autoptr(GString) g = g_string_new(t_machine(""));
  g_string_append(g, "\n.problem p1\n");
  for (int w = 0; w < 8; w++) {
    g_string_append_printf(g, ".wg %d\n.rf big p0 64x96\n.rf odd p8+20 7x33\n", w);
    for (int i = 0; i < 12; i++) {
      g_string_append_printf(g, " LD big, hbm[x_in + %d], stride 256\n LD odd, hbm[x_in + %d], stride %d\n",
                             4 * ((w * 37 + i * 11) % 64), 4 * (w + 3 * i), 40 + i);
      g_string_append_printf(g, " ST hbm[scratch + %d], odd, stride %d\n", 4 * (w * 997 + i * 5), 35 + i);
    }
    g_string_append(g, " END\n");
  }
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_parse("stress.asm", g->str, g->len, &err);
  ck_assert_msg(p, "%s", err ? err->message : "");
  timing_both_ways("stress.asm", p);
}
END_TEST

/* The engine's shortcuts (sim.h: sim_hazard_cache, ...) against their
 * general paths, one switched off at a time: the same timing, power,
 * energy, per-unit figures and hottest-window instructions to the last bit,
 * or the same run-time error, on every program of tests/asm and
 * tests/golden and on tests/bad's run-time errors (races, deadlocks, RED
 * rounds), with --profile's records on. */
static gboolean *const engine_flags[] = {&sim_hazard_cache};

static void engine_both_ways(const char *what, const Program *p) {
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  o.profile = TRUE;
  for (unsigned f = 0; f < G_N_ELEMENTS(engine_flags); f++) {
    SimResult r[2];
    g_autoptr(GError) e0 = NULL;
    g_autoptr(GError) e1 = NULL;
    gboolean ok0 = sim_run(p, &o, &r[0], &e0);
    *engine_flags[f] = FALSE;
    gboolean ok1 = sim_run(p, &o, &r[1], &e1);
    *engine_flags[f] = TRUE;
    ck_assert_msg(ok0 == ok1, "%s, flag %u: %s vs %s", what, f, ok0 ? "ok" : e0->message,
                  ok1 ? "ok" : e1->message);
    if (!ok0) {
      ck_assert_str_eq(e0->message, e1->message);
      continue;
    }
    r[0].checked = r[1].checked = TRUE; /* timing only: nothing to compare in the check */
    same_result(what, f, &r[0], &r[1]);
    ck_assert_int_eq(r[0].nhot, r[1].nhot);
    for (int i = 0; i < r[0].nhot; i++)
      ck_assert_msg(r[0].hot[i].wg == r[1].hot[i].wg && r[0].hot[i].pc == r[1].hot[i].pc &&
                        r[0].hot[i].energy == r[1].hot[i].energy,
                    "%s, flag %u: hottest-window instruction %d differs", what, f, i);
    sim_result_clear(&r[0]);
    sim_result_clear(&r[1]);
  }
}

START_TEST(test_engine_fast_paths) {
  const char *dirs[] = {"tests/asm", "tests/golden", "tests/bad"};
  int n = 0, failing = 0;
  for (unsigned d = 0; d < G_N_ELEMENTS(dirs); d++) {
    g_autofree char *path = g_strconcat(TCC_TOP "/", dirs[d], NULL);
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    ck_assert(dir);
    for (const char *name; (name = g_dir_read_name(dir));) {
      if (!g_str_has_suffix(name, ".asm") || (d == 2 && !g_str_has_prefix(name, "run_"))) continue;
      g_autofree char *file = g_strconcat(path, "/", name, NULL);
      g_autoptr(GError) err = NULL;
      g_autoptr(Program) p = sim_asm_load(file, &err);
      if (!p) continue; /* tests/bad: an assembler error, nothing runs */
      engine_both_ways(name, p);
      n++;
      failing += d == 2;
    }
  }
  ck_assert_int_ge(n, 40);
  ck_assert_int_ge(failing, 5);
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
  tcase_add_test(tc, test_time_once);
  tcase_add_test(tc, test_time_once_per_seed);
  tcase_add_test(tc, test_dma_fast_path);
  tcase_add_test(tc, test_engine_fast_paths);
  suite_add_tcase(s, tc);
  return s;
}
