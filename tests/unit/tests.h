/* tests.h - the Check suites of the unit-test runner (tests/unit/main.c) and
 * small helpers they share. */
#ifndef TCC_TESTS_H
#define TCC_TESTS_H

#include <check.h>

#include "program.h"

Suite *suite_machine(void);
Suite *suite_asm(void);
Suite *suite_workload(void);
Suite *suite_exec(void);
Suite *suite_timing(void);
Suite *suite_power(void);
Suite *suite_calendar(void);
Suite *suite_evq(void);
Suite *suite_energy(void);
Suite *suite_phenomena(void);
Suite *suite_e2e(void);
Suite *suite_ir(void);
Suite *suite_plan(void);
Suite *suite_gen(void);
Suite *suite_parse(void);
Suite *suite_explain(void);
Suite *suite_bounds(void);
Suite *suite_trace(void);
Suite *suite_diff(void);
Suite *suite_census(void);
Suite *suite_sweep(void);
Suite *suite_tune(void);
Suite *suite_plot(void);
Suite *suite_record(void);
Suite *suite_html(void);
Suite *suite_multicast(void);
Suite *suite_shaping(void);
Suite *suite_fit(void);
Suite *suite_prov(void);
Suite *suite_outfile(void);

#include "sim.h"

/* Assemble `text` as "test.asm" and run it; on an assembler or run-time error
 * returns FALSE with *err set.  (util.c) */
gboolean t_run(const char *text, const SimOptions *opt, SimResult *res, GError **err);
/* t_run with default options that must succeed; fails the test otherwise. */
void t_run_ok(const char *text, SimResult *res);
/* Cycles of a program that must run (timing only). */
int64_t t_cycles(const char *text);
/* The default machine's `.machine` line with the keys of `extra` replaced,
 * e.g. t_machine("dma=2x2 sh_kib=64").  Returns a static buffer. */
const char *t_machine(const char *extra);

/* Path of a file in the source tree (TCC_TOP is set by the Makefile). */
#define TOP_PATH(rel) (TCC_TOP "/" rel)

#endif
