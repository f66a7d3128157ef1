/* main.c - the unit-test runner: one Check suite per module. */
#include <stdlib.h>

#include "tests.h"

int main(void) {
  SRunner *sr = srunner_create(suite_machine());
  srunner_add_suite(sr, suite_asm());
  srunner_add_suite(sr, suite_workload());
  srunner_add_suite(sr, suite_exec());
  srunner_add_suite(sr, suite_timing());
  srunner_add_suite(sr, suite_power());
  srunner_add_suite(sr, suite_calendar());
  srunner_add_suite(sr, suite_evq());
  srunner_add_suite(sr, suite_energy());
  srunner_add_suite(sr, suite_phenomena());
  srunner_add_suite(sr, suite_e2e());
  srunner_add_suite(sr, suite_ir());
  srunner_add_suite(sr, suite_plan());
  srunner_add_suite(sr, suite_gen());
  srunner_add_suite(sr, suite_parse());
  srunner_add_suite(sr, suite_explain());
  srunner_add_suite(sr, suite_bounds());
  srunner_add_suite(sr, suite_trace());
  srunner_add_suite(sr, suite_diff());
  srunner_add_suite(sr, suite_census());
  srunner_add_suite(sr, suite_sweep());
  srunner_add_suite(sr, suite_tune());
  srunner_add_suite(sr, suite_plot());
  srunner_add_suite(sr, suite_record());
  srunner_add_suite(sr, suite_html());
  srunner_add_suite(sr, suite_multicast());
  srunner_add_suite(sr, suite_shaping());
  srunner_add_suite(sr, suite_fit());
  srunner_add_suite(sr, suite_prov());
  srunner_add_suite(sr, suite_outfile());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
