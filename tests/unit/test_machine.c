/* test_machine.c - parameter table, validation, area and canonical form. */
#include <math.h>

#include "tests.h"

START_TEST(test_default_area) {
  Machine m;
  sim_machine_default(&m);
  /* docs/machine.md §6: the default machine is 22.7192 mm^2 */
  ck_assert_double_eq_tol(sim_machine_area(&m), 22.7192, 1e-9);
  ck_assert(sim_machine_area(&m) <= AREA_LIMIT_MM2);
  ck_assert_double_eq_tol(sim_machine_static_w(&m), 0.15 * 22.7192, 1e-9);
}
END_TEST

START_TEST(test_area_limits) {
  Machine m;
  sim_machine_default(&m);
  m.sms = 24; /* the seeds' 24-SM machine must not be legal */
  ck_assert(sim_machine_area(&m) > AREA_LIMIT_MM2);
  m.sms = 12;
  ck_assert(sim_machine_area(&m) < AREA_LIMIT_MM2);
  /* every component has a cost */
  sim_machine_default(&m);
  double base = sim_machine_area(&m);
  const char *keys[] = {"sms", "wgs_per_sm", "rf_kib", "vl", "mma_arrays", "sfu", "sh_kib",
                        "dma_engines", "dma_depth", "hbm", "noc", "reduce"};
  long vals[] = {17, 5, 128, 32, 2, 16, 64, 3, 2, 9, 1024, 1};
  for (unsigned i = 0; i < G_N_ELEMENTS(keys); i++) {
    Machine n = m;
    ck_assert(sim_machine_set(&n, keys[i], vals[i], NULL));
    ck_assert_msg(sim_machine_area(&n) > base, "%s=%ld does not add area", keys[i], vals[i]);
  }
  Machine n = m;
  n.multicast = 0;
  ck_assert(sim_machine_area(&n) < base);
}
END_TEST

START_TEST(test_set_errors) {
  Machine m;
  sim_machine_default(&m);
  struct { const char *key; long v; const char *msg; } cases[] = {
      {"sms", 0, "sms=0 out of range 1..64 (streaming multiprocessors)"},
      {"vl", 12, "vl=12 must be a power of two (vector lanes per WG (RF partitions))"},
      {"vl", 64, "vl=64 out of range 4..32 (vector lanes per WG (RF partitions))"},
      {"warp", 1, "unknown machine parameter 'warp'"},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) err = NULL;
    ck_assert(!sim_machine_set(&m, cases[i].key, cases[i].v, &err));
    ck_assert_str_eq(err->message, cases[i].msg);
  }
  ck_assert(sim_machine_set(&m, "vl", 32, NULL));
  ck_assert_int_eq(m.vl, 32);
  ck_assert_int_eq(sim_machine_part_bytes(&m), 2048);
}
END_TEST

START_TEST(test_canonical) {
  Machine m;
  sim_machine_default(&m);
  g_autofree char *c = sim_machine_canonical(&m);
  ck_assert_str_eq(c, ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 "
                      "dma=2x1 hbm=8 noc=512 multicast=1 reduce=0");
  ck_assert_int_eq(sim_machine_wgs(&m), 64);
  ck_assert_int_eq(sim_machine_part_bytes(&m), 4096);
}
END_TEST

Suite *suite_machine(void) {
  Suite *s = suite_create("machine");
  TCase *tc = tcase_create("machine");
  tcase_add_test(tc, test_default_area);
  tcase_add_test(tc, test_area_limits);
  tcase_add_test(tc, test_set_errors);
  tcase_add_test(tc, test_canonical);
  suite_add_tcase(s, tc);
  return s;
}
