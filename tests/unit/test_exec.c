/* test_exec.c - the FP32 semantics of every instruction (docs/machine.md §3),
 * bit for bit: each program computes on blocks of P1's x_in, stores the
 * result to `scratch`, and the test recomputes it in C with the same order. */
#include <math.h>
#include <string.h>

#include "tests.h"

enum { XC = 256 }; /* P1 x_in is 512 x 256 */

static float *hbm0;  /* the initial HBM image for seed 7 */
static Abi abi;
static Problem prob;

static void setup(void) {
  wl_problem_default(&prob, PROB_P1);
  wl_abi_build(&prob, &abi);
  hbm0 = g_new(float, abi.hbm_bytes / 4);
  wl_init_hbm(&prob, &abi, 7, hbm0);
}

static void teardown(void) {
  g_free(hbm0);
  wl_abi_clear(&abi);
}

static float X(int r, int c) { return hbm0[wl_abi_lookup(&abi, "x_in")->addr / 4 + (size_t)r * XC + c]; }
static float A(int i, int j) { return X(i, j); }        /* rows 0..31  */
static float B(int i, int j) { return X(32 + i, j); }   /* rows 32..63 */
static float V(int j) { return X(64, j); }              /* 1x32 row    */
static float K(int i) { return X(i, 32); }              /* 32x1 column */

/* Run `ops` after loading a, b (32x32), v (1x32) and k (32x1); the program
 * stores region r (rows x cols) to scratch.  Returns the stored floats. */
static float *run_ops(const char *hw, const char *ops, int rows, int cols) {
  g_autofree char *text = g_strdup_printf(
      "%s\n.problem p1\n.wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n.rf v p2+0 1x32\n"
      ".rf k p2+128 32x1\n.rf r p3 %dx%d\n"
      " LD a, hbm[x_in], stride 256\n LD b, hbm[x_in + %d], stride 256\n"
      " LD v, hbm[x_in + %d]\n LD k, hbm[x_in + 128], stride 256\n%s\n ST hbm[scratch], r\n END\n",
      t_machine(hw), rows, cols, 32 * XC * 4, 64 * XC * 4, ops);
  SimOptions o;
  sim_options_default(&o);
  o.keep_hbm = TRUE;
  SimResult res;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(text, &o, &res, &err), "%s\n%s", err ? err->message : "", text);
  float *out = g_new(float, (size_t)rows * cols);
  memcpy(out, res.hbm + wl_abi_lookup(&abi, "scratch")->addr / 4, sizeof(float) * (size_t)rows * cols);
  sim_result_clear(&res);
  return out;
}

typedef float (*Ref)(int i, int j);
static void expect(const char *ops, int rows, int cols, Ref ref) {
  g_autofree float *got = run_ops("", ops, rows, cols);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      float e = ref(i, j), g = got[i * cols + j];
      ck_assert_msg(memcmp(&e, &g, sizeof e) == 0, "%s: [%d][%d] got %.9g expected %.9g", ops, i, j, g, e);
    }
}

static float r_add(int i, int j) { return A(i, j) + B(i, j); }
static float r_sub(int i, int j) { return A(i, j) - B(i, j); }
static float r_mul(int i, int j) { return A(i, j) * B(i, j); }
static float r_max(int i, int j) { return A(i, j) > B(i, j) ? A(i, j) : B(i, j); }
static float r_min(int i, int j) { return A(i, j) < B(i, j) ? A(i, j) : B(i, j); }
static float r_rowb(int i, int j) { return A(i, j) + V(j); }
static float r_colb(int i, int j) { return A(i, j) * K(i); }
static float r_scal(int i, int j) { return A(i, j) - K(0); }
static float r_fma(int i, int j) { float p = A(i, j) * B(i, j); return p + V(j); }
static float r_muli(int i, int j) { return A(i, j) * 0.125f; }
static float r_addi(int i, int j) { return A(i, j) + -1.5f; }
static float r_copy(int i, int j) { return B(i, j); }
static float r_fill(int i, int j) { (void)i, (void)j; return 3.25f; }
static float r_rsum(int i, int j) {
  (void)j;
  float s = A(i, 0);
  for (int c = 1; c < 32; c++) s = s + A(i, c);
  return s;
}
static float r_rmax(int i, int j) {
  (void)j;
  float s = A(i, 0);
  for (int c = 1; c < 32; c++) s = A(i, c) > s ? A(i, c) : s;
  return s;
}
static float r_exp(int i, int j) { return (float)exp((double)A(i, j)); }
static float r_tanh(int i, int j) { return (float)tanh((double)A(i, j)); }
static float r_rsqrt(int i, int j) { float x = A(i, j) * A(i, j); x = x + 1.0f; return (float)(1.0 / sqrt((double)x)); }
static float r_recip(int i, int j) { return (float)(1.0 / (double)A(i, j)); }
static float mm(int i, int j, float acc, gboolean t) {
  for (int k = 0; k < 32; k++) acc = acc + A(i, k) * (t ? B(j, k) : B(k, j));
  return acc;
}
static float r_mmz(int i, int j) { return mm(i, j, 0.0f, FALSE); }
static float r_mmacc(int i, int j) { return mm(i, j, A(i, j), FALSE); }
static float r_mmt(int i, int j) { return mm(i, j, 0.0f, TRUE); }
static float r_mmv(int i, int j) {
  (void)i;
  float acc = 0.0f;
  for (int k = 0; k < 32; k++) acc = acc + V(k) * B(k, j);
  return acc;
}
/* MMA.t accumulating over a window: 8 x 24 (the kernel's tail columns),
 * K = 20, a dot product per element in k order */
static float r_mmt_win(int i, int j) {
  float acc = A(i, j);
  for (int k = 0; k < 20; k++) acc = acc + A(i, k) * B(j, k);
  return acc;
}
/* MMA into its own operand a (computed into a temporary), and into a
 * window narrower than its region (rows written in place, 32 apart) */
static float r_mm_alias(int i, int j) { return mm(i, j, A(i, j), FALSE); }
static float r_mm_strided(int i, int j) {
  if (i >= 8 || j < 4 || j >= 28) return 3.25f;
  float acc = 0.0f;
  for (int k = 0; k < 32; k++) acc = acc + A(i, k) * B(k, j - 4);
  return acc;
}
static float r_inplace(int i, int j) { float x = A(i, j) + B(i, j); return x * 2.0f; }

START_TEST(test_vec_binary) {
  expect(" VEC.add r, a, b", 32, 32, r_add);
  expect(" VEC.sub r, a, b", 32, 32, r_sub);
  expect(" VEC.mul r, a, b", 32, 32, r_mul);
  expect(" VEC.max r, a, b", 32, 32, r_max);
  expect(" VEC.min r, a, b", 32, 32, r_min);
}
END_TEST

START_TEST(test_vec_broadcast) {
  expect(" VEC.add r, a, v", 32, 32, r_rowb);
  expect(" VEC.mul r, a, k", 32, 32, r_colb);
  expect(" VEC.sub r, a, k[0:1, :]", 32, 32, r_scal);
  expect(" VEC.fma r, a, b, v", 32, 32, r_fma);
}
END_TEST

START_TEST(test_vec_misc) {
  expect(" VEC.muli r, a, 0.125", 32, 32, r_muli);
  expect(" VEC.addi r, a, -1.5", 32, 32, r_addi);
  expect(" VEC.copy r, b", 32, 32, r_copy);
  expect(" VEC.fill r, 3.25", 32, 32, r_fill);
  expect(" VEC.rsum r, a", 32, 1, r_rsum);
  expect(" VEC.rmax r, a", 32, 1, r_rmax);
  /* in place: d aliases a source */
  expect(" VEC.add a, a, b\n VEC.muli r, a, 2.0", 32, 32, r_inplace);
}
END_TEST

START_TEST(test_sfu) {
  expect(" SFU.exp r, a", 32, 32, r_exp);
  expect(" SFU.tanh r, a", 32, 32, r_tanh);
  expect(" VEC.mul r, a, a\n VEC.addi r, r, 1.0\n SFU.rsqrt r, r", 32, 32, r_rsqrt);
  expect(" SFU.recip r, a", 32, 32, r_recip);
}
END_TEST

START_TEST(test_mma) {
  expect(" MMA.z r, a, b", 32, 32, r_mmz);
  expect(" VEC.copy r, a\n MMA r, a, b", 32, 32, r_mmacc);
  expect(" MMA.z.t r, a, b", 32, 32, r_mmt);
  expect(" VEC.copy r, a[0:8, 0:24]\n MMA.t r, a[0:8, 0:20], b[0:24, 0:20]", 8, 24, r_mmt_win);
  expect(" MMA.z r, v, b", 1, 32, r_mmv);
  expect(" MMA a, a, b\n VEC.copy r, a", 32, 32, r_mm_alias);
  expect(" VEC.fill r, 3.25\n MMA.z r[0:8, 4:28], a[0:8, :], b[:, 0:24]", 32, 32, r_mm_strided);
}
END_TEST

/* Transfers: SH round trip, RF->RF to another SM, multicast to two WGs, and
 * an all-reduce whose sum is added in ascending WG order. */
START_TEST(test_transfers) {
  g_autofree char *text = g_strdup_printf(
      "%s\n.problem p1\n"
      ".wg 0\n.rf a p0 32x32\n.rf r p1 32x32\n.rf m p2 32x32\n.rf v p3+0 1x32\n.rf d p3+128 1x32\n"
      " LD a, hbm[x_in], stride 256\n LD v, hbm[x_in + %d]\n"
      " ST sh[256], a\n LD r, sh[256]\n ST hbm[scratch], r\n"
      " ST wg4.rr, a\n SIG ev.s, 1\n"
      " LD.mc m, hbm[x_in + %d], stride 256, {5, 0}\n SIG ev.mc, 1\n ST hbm[scratch + 4096], m\n"
      " RED d, v, ev.g, 2\n ST hbm[scratch + 8192], d\n END\n"
      ".wg 4\n.rf rr p5 32x32\n.rf v p0+0 1x32\n.rf d p0+128 1x32\n"
      " LD v, hbm[x_in + %d]\n RED d, v, ev.g, 2\n ST hbm[scratch + 8320], d\n"
      " WAIT ev.s, 1\n ST hbm[scratch + 12288], rr\n END\n"
      ".wg 5\n.rf m p7 32x32\n WAIT ev.mc, 1\n ST hbm[scratch + 20480], m\n END\n",
      t_machine("sh_kib=64 reduce=1"), 64 * XC * 4, 32 * XC * 4, 65 * XC * 4);
  SimOptions o;
  sim_options_default(&o);
  o.keep_hbm = TRUE;
  SimResult res;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(text, &o, &res, &err), "%s", err ? err->message : "");
  const float *sc = res.hbm + wl_abi_lookup(&abi, "scratch")->addr / 4;
  for (int i = 0; i < 32; i++)
    for (int j = 0; j < 32; j++) {
      ck_assert_float_eq(sc[i * 32 + j], A(i, j));           /* SH round trip */
      ck_assert_float_eq(sc[1024 + i * 32 + j], B(i, j));    /* LD.mc, wg0 */
      ck_assert_float_eq(sc[3072 + i * 32 + j], A(i, j));    /* RF -> RF */
      ck_assert_float_eq(sc[5120 + i * 32 + j], B(i, j));    /* LD.mc, wg5 */
    }
  for (int j = 0; j < 32; j++) {
    float sum = 0.0f;
    sum = sum + X(64, j);
    sum = sum + X(65, j);
    ck_assert_float_eq(sc[2048 + j], sum); /* RED result in wg0 */
    ck_assert_float_eq(sc[2080 + j], sum); /* and in wg4 */
  }
  sim_result_clear(&res);
}
END_TEST

/* `ST wg0.x, a` issued by wg0 writes its own RF: it waits for the LD into x
 * in flight (it used to issue at once, land first and be overwritten). */
START_TEST(test_st_self_ordered) {
  g_autofree char *text = g_strdup_printf(
      "%s\n.problem p1\n.wg 0\n.rf x p0 32x32\n.rf a p1 32x32\n VEC.fill a, 5.0\n"
      " LD x, hbm[x_in], stride 256\n ST wg0.x, a\n SIG ev.f, 1\n WAIT ev.f, 1\n"
      " ST hbm[scratch], x\n END\n", t_machine(""));
  SimOptions o;
  sim_options_default(&o);
  o.keep_hbm = TRUE;
  SimResult res;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(text, &o, &res, &err), "%s", err ? err->message : "");
  const float *sc = res.hbm + wl_abi_lookup(&abi, "scratch")->addr / 4;
  for (int i = 0; i < 32 * 32; i++) ck_assert_float_eq(sc[i], 5.0f);
  sim_result_clear(&res);
}
END_TEST

/* ---- counts and times at the limits (docs/machine.md §3, §4) ---------- */

/* The run-time error of `text` (which must assemble), or NULL if it runs. */
static char *run_error(const char *text, const SimOptions *o) {
  SimResult res;
  g_autoptr(GError) err = NULL;
  if (t_run(text, o, &res, &err)) {
    sim_result_clear(&res);
    return NULL;
  }
  return g_strdup(err->message);
}

/* Ten SIGs of 10^18 pass INT64_MAX: the counter saturates (it used to wrap
 * to a negative count, and the WAIT deadlocked). */
START_TEST(test_event_counter_saturates) {
  GString *g = g_string_new(NULL);
  g_string_append_printf(g, "%s\n.problem p1\n.wg 0\n", t_machine(""));
  for (int i = 0; i < 10; i++) g_string_append(g, " SIG ev.a, 1000000000000000000\n");
  g_string_append(g, " WAITT 100\n WAIT ev.a, 1000000000000000000\n WAIT ev.a, 1\n END\n");
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  g_autofree char *e = run_error(g->str, &o);
  ck_assert_msg(e == NULL, "%s", e);
  g_string_free(g, TRUE);
}
END_TEST

/* The largest WAITT at the largest cycle limit: the clock stays exact; a
 * limit past 10^18 given to sim_run is taken as 10^18. */
START_TEST(test_waitt_at_limit) {
  g_autofree char *text = g_strdup_printf(
      "%s\n.problem p1\n.wg 0\n WAITT 1000000000000000000\n WAITT 1000000000000000000\n END\n",
      t_machine(""));
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  const int64_t limits[] = {TCC_MAX_COUNT, INT64_MAX};
  for (unsigned i = 0; i < G_N_ELEMENTS(limits); i++) {
    o.max_cycles = limits[i];
    g_autofree char *e = run_error(text, &o);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e, "test.asm:6:2: error: wg0: cycle limit of 1000000000000000000 cycles "
                        "exceeded (this instruction would issue at cycle 2000000000000000000; "
                        "see --max-cycles)");
  }
  /* one WAITT of 10^18 ends exactly at the limit: a valid run */
  g_autofree char *one = g_strdup_printf(
      "%s\n.problem p1\n.wg 0\n WAITT 999999999999999999\n END\n", t_machine(""));
  o.max_cycles = TCC_MAX_COUNT;
  SimResult res;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(one, &o, &res, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(res.cycles, TCC_MAX_COUNT);
  sim_result_clear(&res);
}
END_TEST

/* ---- the power trace as runs (docs/machine.md §5) --------------------- */

/* sim_peak_window_runs gives what sim_peak_window gives on the expanded
 * trace, window energy and start: random runs (short and long, values from
 * a small set so that equal values recur, or spread over magnitudes up to
 * the largest machine's power), every kind of length (under one window,
 * multiples of it, past the last run). */
START_TEST(test_peak_window_runs) {
  GRand *rnd = g_rand_new_with_seed(4242);
  static const SimEnergy vals[] = {0, 30, 30, 44000, 1, 409600 / 32, 145};
  for (int k = 0; k < 300; k++) {
    int nr = g_rand_int_range(rnd, 1, 60);
    int64_t *t0 = g_new(int64_t, nr);
    SimEnergy *v = g_new(SimEnergy, nr);
    int64_t t = 0;
    for (int i = 0; i < nr; i++) {
      t0[i] = t;
      int shape = g_rand_int_range(rnd, 0, 4);
      t += shape == 0 ? 1 : shape == 1 ? g_rand_int_range(rnd, 1, 40)
         : shape == 2 ? g_rand_int_range(rnd, 900, 2100) : g_rand_int_range(rnd, 1, 30000);
      v[i] = k % 2 ? vals[g_rand_int_range(rnd, 0, G_N_ELEMENTS(vals))]
                   : (SimEnergy)g_rand_int_range(rnd, 0, 60000) * (g_rand_boolean(rnd) ? 1 : 1000);
    }
    int64_t ns[] = {t, t + g_rand_int_range(rnd, 0, 3000), g_rand_int_range(rnd, 0, 1000),
                    (t / 1000) * 1000, 1000, 0};
    for (unsigned j = 0; j < G_N_ELEMENTS(ns); j++) {
      int64_t n = ns[j];
      SimEnergy *e = g_new(SimEnergy, n + 1);
      for (int64_t c = 0, i = 0; c < n; c++) {
        while (i + 1 < nr && t0[i + 1] <= c) i++;
        e[c] = v[i];
      }
      int64_t s1 = -1, s2 = -2;
      SimEnergy a = sim_peak_window(e, n, 1000, &s1);
      SimEnergy b = sim_peak_window_runs(t0, v, (size_t)nr, n, 1000, &s2);
      ck_assert_msg(a == b && s1 == s2,
                    "case %d n %" G_GINT64_FORMAT ": dense %" G_GINT64_FORMAT " at %" G_GINT64_FORMAT
                    ", runs %" G_GINT64_FORMAT " at %" G_GINT64_FORMAT, k, n, a, s1, b, s2);
      g_free(e);
    }
    g_free(t0);
    g_free(v);
  }
  g_rand_free(rnd);
}
END_TEST

START_TEST(test_power_idle_program) {
  g_autofree char *text = g_strdup_printf(
      "%s\n.problem p1\n.wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n WAITT 999999999990000\n"
      " VEC.fill a, 2.0\n END\n", t_machine(""));
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  o.max_cycles = TCC_MAX_COUNT;
  SimResult r;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(text, &o, &r, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(r.cycles, 999999999990065);
  ck_assert_int_eq(r.peak_start, 0); /* the first window wins the tie (strict >) */
  /* one VEC.fill: 64 cycles of 2 pJ * 1024 elements + 4 KiB of RF writes,
   * exactly, in units of 1/20 pJ */
  ck_assert_int_eq(r.peak_e, 20 * (2 * 1024 + 4096 / 4));
  ck_assert_double_eq_tol(r.peak_w, (2.0 * 1024 + 0.25 * 4096) / 1000 * 1e-3 + r.static_w, 1e-12);
  sim_result_clear(&r);
}
END_TEST

Suite *suite_exec(void) {
  Suite *s = suite_create("exec");
  TCase *tc = tcase_create("exec");
  tcase_add_unchecked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_vec_binary);
  tcase_add_test(tc, test_vec_broadcast);
  tcase_add_test(tc, test_vec_misc);
  tcase_add_test(tc, test_sfu);
  tcase_add_test(tc, test_mma);
  tcase_add_test(tc, test_transfers);
  tcase_add_test(tc, test_st_self_ordered);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_event_counter_saturates);
  tcase_add_test(tc, test_waitt_at_limit);
  suite_add_tcase(s, tc);
  tc = tcase_create("power");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_peak_window_runs);
  tcase_add_test(tc, test_power_idle_program);
  suite_add_tcase(s, tc);
  return s;
}
