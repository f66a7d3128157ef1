/* bench_json.c - the report of `make bench` (bench/run.sh): reads one figure
 * per line on stdin, tab-separated,
 *
 *   NAME  WHAT  UNIT  BETTER  TARGET  RUNS  VALUE...
 *
 * (BETTER is "lower" or "higher"; TARGET "-" when there is none; RUNS
 * values follow, one per run), prints each figure's median, its spread
 * (min..max) and PASS/MISS against its target, with the previous run's
 * median beside it when PREV.json holds the figure, and writes every figure
 * to OUT.json (json-glib) for the next run to compare.
 * Usage: bench_json OUT.json [PREV.json] < figures.tsv;  exits 0 unless the
 * input is malformed (a missed target is a figure, not a failure). */
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The previous run's median of figure `name`, or NAN. */
static double previous(JsonObject *prev, const char *name) {
  if (!prev || !json_object_has_member(prev, "figures")) return NAN;
  JsonArray *a = json_object_get_array_member(prev, "figures");
  for (guint i = 0; a && i < json_array_get_length(a); i++) {
    JsonObject *f = json_array_get_object_element(a, i);
    if (f && g_strcmp0(json_object_get_string_member_with_default(f, "name", ""), name) == 0)
      return json_object_get_double_member_with_default(f, "median", NAN);
  }
  return NAN;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: bench_json OUT.json [PREV.json] < figures.tsv\n");
    return 2;
  }
  g_autoptr(JsonParser) pp = json_parser_new();
  JsonObject *prev = NULL;
  if (argc == 3 && g_file_test(argv[2], G_FILE_TEST_EXISTS) && json_parser_load_from_file(pp, argv[2], NULL) &&
      JSON_NODE_HOLDS_OBJECT(json_parser_get_root(pp)))
    prev = json_node_get_object(json_parser_get_root(pp));
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "format");
  json_builder_add_string_value(b, "tcc-bench 1");
  json_builder_set_member_name(b, "figures");
  json_builder_begin_array(b);
  char line[4096];
  int misses = 0;
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (!*line) continue;
    g_auto(GStrv) f = g_strsplit(line, "\t", -1);
    guint nf = g_strv_length(f);
    int runs = nf >= 6 ? atoi(f[5]) : 0;
    if (nf < 7 || runs < 1 || nf != 6u + (guint)runs) {
      fprintf(stderr, "bench_json: bad line '%s'\n", line);
      return 2;
    }
    gboolean lower = strcmp(f[3], "lower") == 0, has_target = strcmp(f[4], "-") != 0;
    double target = has_target ? g_ascii_strtod(f[4], NULL) : NAN;
    double *v = g_new(double, runs);
    for (int i = 0; i < runs; i++) v[i] = g_ascii_strtod(f[6 + i], NULL);
    qsort(v, (size_t)runs, sizeof *v, cmp_double);
    double med = runs % 2 ? v[runs / 2] : (v[runs / 2 - 1] + v[runs / 2]) / 2;
    gboolean pass = !has_target || (lower ? med <= target : med >= target);
    misses += !pass;
    g_autofree char *tgt = has_target ? g_strdup_printf("%s %g", lower ? "<=" : ">=", target) : g_strdup("");
    double was = previous(prev, f[0]);
    g_autofree char *then = isnan(was) ? g_strdup("") : g_strdup_printf("  (last run %.4g)", was);
    printf("%-44s %10.4g %-8s [%.4g .. %.4g]  %-10s %s%s\n", f[1], med, f[2], v[0], v[runs - 1], tgt,
           has_target ? (pass ? "PASS" : "MISS") : "-", then);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, f[0]);
    json_builder_set_member_name(b, "what");
    json_builder_add_string_value(b, f[1]);
    json_builder_set_member_name(b, "unit");
    json_builder_add_string_value(b, f[2]);
    json_builder_set_member_name(b, "median");
    json_builder_add_double_value(b, med);
    json_builder_set_member_name(b, "min");
    json_builder_add_double_value(b, v[0]);
    json_builder_set_member_name(b, "max");
    json_builder_add_double_value(b, v[runs - 1]);
    json_builder_set_member_name(b, "runs");
    json_builder_add_int_value(b, runs);
    if (has_target) {
      json_builder_set_member_name(b, "target");
      json_builder_add_double_value(b, target);
      json_builder_set_member_name(b, "better");
      json_builder_add_string_value(b, f[3]);
      json_builder_set_member_name(b, "pass");
      json_builder_add_boolean_value(b, pass);
    }
    json_builder_end_object(b);
    g_free(v);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autoptr(GError) err = NULL;
  if (!json_generator_to_file(gen, argv[1], &err)) {
    fprintf(stderr, "bench_json: %s\n", err->message);
    return 2;
  }
  printf("bench: %d target%s missed; figures in %s\n", misses, misses == 1 ? "" : "s", argv[1]);
  return 0;
}
