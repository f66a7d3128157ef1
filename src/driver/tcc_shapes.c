/* tcc_shapes.c - the tcc-shapes command: compile and run plans on every
 * shape of a shape suite (shape_suite.h) and tabulate what came out
 * (shapes.h); docs/tools.md, "tcc-shapes".
 *
 * Exit codes: 0 = every program passed or was refused only by the program
 * size limit, 1 = a program failed numerics, area or power, or a plan was
 * refused otherwise, 2 = bad input (options, the suite, a plan file). */
#include <stdio.h>
#include <string.h>

#include "shapes.h"
#include "stdout_check.h"

#define TCC_SHAPES_VERSION "tcc-shapes 0.1.0"

int main(int argc, char **argv) {
  stdout_check_at_exit("tcc-shapes", 2); /* a report that was not written is an error */
  gboolean version = FALSE, quick = FALSE, refusals_ok = FALSE;
  int jobs = 0;
  GOptionEntry entries[] = {
      {"quick", 0, 0, G_OPTION_ARG_NONE, &quick, "only the shapes marked quick: true", NULL},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "runs at once (default: the processors)", "N"},
      {"refusals-ok", 0, 0, G_OPTION_ARG_NONE, &refusals_ok,
       "exit 0 when plans are refused: only a failing program fails the run", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("SUITE.yaml PLAN.yaml... - run plans on a shape suite");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(
      ctx, "Compiles each PLAN for each shape of SUITE.yaml (its problem dims set as\n"
           "`problem:`) as tcc-gen does, power fitting included, runs each program on\n"
           "seed 7 with its numerics checked, and prints a table: status, cycles,\n"
           "peak W, the shape's lower bound, cycles/bound and the fitting's runs; then\n"
           "per plan the counts and the geometric mean of cycles/bound over its\n"
           "passing shapes (docs/tools.md, \"tcc-shapes\").\n"
           "Exit: 0 all passed (or refused only at the program size limit), 1 a\n"
           "program failed or a plan was refused, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-shapes: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("%s (suite v%d, spec v%d)\n", TCC_SHAPES_VERSION, SHAPE_SUITE_VERSION, TCC_SPEC_VERSION);
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "tcc-shapes: error: expected a shape suite and at least one plan (see --help)\n");
    return 2;
  }
  if (jobs < 0 || jobs > 256) {
    fprintf(stderr, "tcc-shapes: error: --jobs %d: expected 1..256\n", jobs);
    return 2;
  }
  if (jobs == 0) jobs = (int)MIN(g_get_num_processors(), 256u);
  g_autoptr(ShapeSuite) suite = shape_suite_load(argv[1], &err);
  if (!suite) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  guint n = 0, bad = 0;
  ShapeRun *runs = shapes_run(suite, argv + 2, argc - 2, quick, jobs, &n, &err);
  if (!runs) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  guint failed = 0;
  g_autofree char *table = shapes_table(suite, argv + 2, argc - 2, runs, n, &bad, &failed);
  stdout_put(table);
  shapes_free(runs, n);
  return (refusals_ok ? failed : bad) ? 1 : 0;
}
