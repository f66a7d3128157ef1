/* test_explain.c - the capacity report (tcc-gen --explain) reproduces the
 * seeds' capacity arithmetic (seed-facts.md): D1's weights 0.75 MiB per
 * layer and 1.5 MiB for two; on 8 SMs 1.25 MiB left for weights, 0.25 MiB
 * short; on 12 SMs 2 MiB left; a 16-column W1 panel 8 KiB = 2 partitions
 * and a W2 panel 32 KiB = 8; a 32-column W2 panel 64 KiB fits in no WG (48
 * KiB after temp); placement loads 72 (W1) and 288 (W2).  The JSON says the
 * same; rf_temp_kib moves the budget. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "explain.h"
#include "jdoc.h"
#include "json_num.h"
#include "json_text.h"
#include "pipeline.h"
#include "tests.h"

/* The report of a D1 plan on `sms` SMs with these panels (and extra knobs). */
static char *report(int sms, int w1, int w2, const char *extra, gboolean json) {
  g_autofree char *text = g_strdup_printf(
      "version: 1\nhardware: {sms: %d}\nd1:\n  panels: {w1: %d, w2: %d}\n%s%s\n", sms, w1, w2,
      extra ? "  " : "", extra ? extra : "");
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) plan = plan_parse("seeds.yaml", text, strlen(text), &err);
  ck_assert_msg(plan, "%s", err ? err->message : "?");
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_D1, NULL, NULL, FALSE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  if (!json) return explain_text(&plan->hw, &plan->d1, plan->file, ir, NULL);
  char *j = explain_json(&plan->hw, &plan->d1, plan->file, ir, NULL, &err);
  ck_assert_msg(j, "%s", err ? err->message : "?");
  return j;
}

#define HAS(text, s) ck_assert_msg(strstr(text, s), "no '%s' in:\n%s", s, text)

START_TEST(test_seeds_8_sms) {
  g_autofree char *r = report(8, 16, 16, NULL, FALSE);
  HAS(r, "machine: 8 SMs used x 4 WGs x 64 KiB RF (16 partitions of 4 KiB)");
  HAS(r, "  per layer 0.75 MiB; 2 layers 1.5 MiB\n");
  HAS(r, "  32 WGs x 64 KiB = 2 MiB\n");
  HAS(r, "  temp 16 KiB per WG (d1.rf_temp_kib) = 0.5 MiB\n");
  HAS(r, "= 0.25 MiB\n"); /* history K/V */
  HAS(r, "  left for weights 1.25 MiB: 0.25 MiB short of 1.5 MiB\n");
  HAS(r, "w1    16 columns: 128 x 16 = 8 KiB = 2 partitions, 32 panels per layer, load 128/4 + 20 x 2 = 72\n");
  HAS(r, "w2    16 columns: 512 x 16 = 32 KiB = 8 partitions, 8 panels per layer, load 512/4 + 20 x 8 = 288\n");
  HAS(r, "  wg31  (sm7)");  /* the allocation: every WG of the 8 SMs */
  ck_assert(!strstr(r, "wg32 "));
}
END_TEST

START_TEST(test_seeds_12_sms) {
  g_autofree char *r = report(12, 16, 32, NULL, FALSE);
  HAS(r, "  48 WGs x 64 KiB = 3 MiB\n");
  HAS(r, "= 0.75 MiB\n"); /* temp */
  HAS(r, "  left for weights 2 MiB: 1.5 MiB of weights fit in total, 0.5 MiB spare");
  HAS(r, "w2    32 columns: 512 x 32 = 64 KiB = 16 partitions, 4 panels per layer, "
         "fits in no WG (48 KiB after temp)\n");
}
END_TEST

/* The JSON carries the same numbers (json-glib reads it back). */
START_TEST(test_json) {
  g_autofree char *r = report(8, 16, 16, NULL, TRUE);
  g_autoptr(JsonParser) p = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(p, r, -1, &err), "%s", err ? err->message : "?");
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  ck_assert_int_eq(json_object_get_int_member(o, "weights_per_layer_bytes"), 786432);
  ck_assert_int_eq(json_object_get_int_member(o, "weights_bytes"), 1572864);
  ck_assert_int_eq(json_object_get_int_member(o, "left_for_weights_bytes"), 1310720);
  ck_assert_int_eq(json_object_get_int_member(o, "short_bytes"), 262144);
  JsonArray *pr = json_object_get_array_member(o, "projections");
  JsonObject *w1 = json_array_get_object_element(pr, 2), *w2 = json_array_get_object_element(pr, 3);
  ck_assert_str_eq(json_object_get_string_member(w1, "name"), "w1");
  ck_assert_int_eq(json_object_get_int_member(w1, "load"), 72);
  ck_assert_int_eq(json_object_get_int_member(w2, "load"), 288);
  ck_assert_int_eq(json_object_get_int_member(w2, "panel_partitions"), 8);
  ck_assert_int_eq(json_array_get_length(json_object_get_array_member(o, "allocation")), 32);
}
END_TEST

/* rf_temp_kib is the temp space: 8 KiB per WG leaves 1.5 MiB on 8 SMs. */
START_TEST(test_temp_knob) {
  g_autofree char *r = report(8, 16, 16, "rf_temp_kib: 8", FALSE);
  HAS(r, "  temp 8 KiB per WG (d1.rf_temp_kib) = 0.25 MiB\n");
  HAS(r, "  left for weights 1.5 MiB: 1.5 MiB of weights fit in total, 0 MiB spare");
  HAS(r, "a WG has 56 KiB after temp");
}
END_TEST

/* With resident weights the allocation lists the panels each WG keeps:
 * every panel of both layers exactly once (the JSON's "keeps"). */
START_TEST(test_resident_keeps) {
  g_autofree char *r = report(16, 16, 16, "weights: resident", TRUE);
  g_autoptr(JsonParser) p = json_parser_new();
  ck_assert(json_parser_load_from_data(p, r, -1, NULL));
  JsonArray *wgs = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "allocation");
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < json_array_get_length(wgs); i++) {
    JsonArray *k = json_object_get_array_member(json_array_get_object_element(wgs, i), "keeps");
    for (guint j = 0; j < json_array_get_length(k); j++)
      ck_assert(g_hash_table_add(seen, g_strdup(json_array_get_string_element(k, j))));
  }
  /* per layer 12 qkv + 4 wo + 32 w1 + 8 w2 panels */
  ck_assert_int_eq(g_hash_table_size(seen), 2 * (12 + 4 + 32 + 8));
  ck_assert(g_hash_table_contains(seen, "l1.w2.p7"));
  g_autofree char *t = report(16, 16, 16, "weights: resident", FALSE);
  HAS(t, "; keeps l");
}
END_TEST

/* Temp and history over the RF: the space left for weights is negative,
 * and the text's "short" is what the JSON's short_bytes says, the weights
 * plus the overdraft (both said the weights alone before). */
START_TEST(test_short_when_overdrawn) {
  const char *text = "version: 1\nhardware: {sms: 1}\nd1:\n  rf_temp_kib: 64\n";
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) plan = plan_parse("over.yaml", text, strlen(text), &err);
  ck_assert_msg(plan, "%s", err ? err->message : "?");
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_D1, NULL, NULL, FALSE, &err);
  const char *why = ir ? NULL : err->message;
  g_autofree char *t = explain_text(&plan->hw, &plan->d1, plan->file, ir, why);
  g_autoptr(GError) jerr = NULL;
  g_autofree char *j = explain_json(&plan->hw, &plan->d1, plan->file, ir, why, &jerr);
  ck_assert_msg(j, "%s", jerr ? jerr->message : "?");
  g_autoptr(JsonParser) p = json_parser_new();
  ck_assert(json_parser_load_from_data(p, j, -1, NULL));
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  gint64 left = json_object_get_int_member(o, "left_for_weights_bytes");
  gint64 weights = json_object_get_int_member(o, "weights_bytes");
  ck_assert_int_lt(left, 0);
  ck_assert_int_eq(json_object_get_int_member(o, "short_bytes"), weights - left);
  /* 1 SM: 4 WGs x 64 KiB, all temp; the history K/V 0.25 MiB more */
  HAS(t, "  left for weights -0.25 MiB: 1.75 MiB short of 1.5 MiB\n");
}
END_TEST

/* A plan that does not compile still gets the arithmetic, and the error. */
/* placement.solver: ilp: the report says what GLPK proved (D1's default
 * machine: optimal at the pigeonhole bound, which the constructive
 * placement meets too, so it is kept), per stage, and the JSON the same. */
START_TEST(test_ilp_report) {
  g_autofree char *r = report(16, 32, 16, "weights: resident\n  placement: {solver: ilp}", FALSE);
  HAS(r, "\nplacement (ilp, GLPK; the solver proposes, the simulator decides: run tcc-sim):\n"
         "  status optimal; objective 1248, best bound 1248, gap 0.00%\n"
         "  model: 80 units in 8 stages on 64 WGs, 520 columns, 391 rows; active_weight 0\n"
         "  the constructive placement scores 1248 by the same formula: as good, so it is kept (ties go to it)\n"
         "  stage    busiest SM load (ilp / constructive)\n"
         "  l0.qkv      112 / 112\n");
  HAS(r, "  l1.w2       288 / 288\n");
  g_autofree char *c = report(16, 32, 16, "weights: resident", FALSE);
  ck_assert(!strstr(c, "placement (ilp"));
  g_autofree char *js = report(16, 32, 16, "weights: resident\n  placement: {solver: ilp}", TRUE);
  g_autoptr(JsonParser) p = json_parser_new();
  ck_assert(json_parser_load_from_data(p, js, -1, NULL));
  JsonObject *pl = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "placement");
  ck_assert_str_eq(json_object_get_string_member(pl, "status"), "optimal");
  ck_assert_int_eq(json_object_get_int_member(pl, "objective"), 1248);
  ck_assert_int_eq(json_object_get_int_member(pl, "bound"), 1248);
  ck_assert_int_eq(json_object_get_int_member(pl, "constructive_objective"), 1248);
  ck_assert_int_eq(json_array_get_length(json_object_get_array_member(pl, "stages")), 8);
}
END_TEST

START_TEST(test_failure) {
  g_autoptr(Plan) plan = plan_parse("x.yaml", "version: 1\nhardware: {rf_kib: 16}\nd1:\n  panels: {w1: 128}\n",
                                    strlen("version: 1\nhardware: {rf_kib: 16}\nd1:\n  panels: {w1: 128}\n"), NULL);
  ck_assert(plan);
  g_autofree char *r = explain_text(&plan->hw, &plan->d1, plan->file, NULL, "x.yaml:4:12: error: rf_alloc: ...");
  HAS(r, "allocation (rf_alloc, the plan's strategy):\n  none: x.yaml:4:12: error: rf_alloc: ...\n");
  HAS(r, "w1   128 columns: 128 x 128 = 64 KiB = 64 partitions");
}
END_TEST

/* A recorded document (jdoc.h) prints exactly as the same calls on
 * json-glib's builder (json_pretty_text): every kind of value, nesting, a
 * string needing escapes, a NULL string as null, extreme integers. */
START_TEST(test_jdoc_same_as_builder) {
  g_autoptr(JDoc) d = jdoc_new();
  g_autoptr(JsonBuilder) b = json_builder_new();
  jdoc_begin_object(d), json_builder_begin_object(b);
  jdoc_member(d, "name"), json_builder_set_member_name(b, "name");
  jdoc_string(d, "q\"uote\n\ttab"), json_builder_add_string_value(b, "q\"uote\n\ttab");
  jdoc_member(d, "none"), json_builder_set_member_name(b, "none");
  jdoc_string(d, NULL), json_builder_add_null_value(b);
  jdoc_member(d, "list"), json_builder_set_member_name(b, "list");
  jdoc_begin_array(d), json_builder_begin_array(b);
  jdoc_int(d, INT64_MIN), json_builder_add_int_value(b, INT64_MIN);
  jdoc_int(d, INT64_MAX), json_builder_add_int_value(b, INT64_MAX);
  jdoc_double(d, 0.1), json_builder_add_double_value(b, 0.1);
  jdoc_bool(d, TRUE), json_builder_add_boolean_value(b, TRUE);
  jdoc_bool(d, FALSE), json_builder_add_boolean_value(b, FALSE);
  jdoc_null(d), json_builder_add_null_value(b);
  jdoc_begin_object(d), json_builder_begin_object(b);
  jdoc_end_object(d), json_builder_end_object(b);
  jdoc_end_array(d), json_builder_end_array(b);
  jdoc_end_object(d), json_builder_end_object(b);
  g_autoptr(GError) err = NULL;
  g_autofree char *got = jdoc_pretty_text(d, &err);
  ck_assert_msg(got, "%s", err ? err->message : "?");
  g_autofree char *want = json_pretty_text(b);
  ck_assert_str_eq(got, want);
  ck_assert_msg(strstr(got, "-9223372036854775808") && strstr(got, "\\\"uote"), "%s", got);
}
END_TEST

/* JSON numbers are spelled shortest (json_num.h): the value read back is
 * the same double, strings and integers are untouched, exponents stay. */
START_TEST(test_json_shortest_numbers) {
  static const char *const cases[][2] = {
      {"{\"w\" : 17.733599999999999}", "{\"w\" : 17.7336}"},
      {"[1000.0, 0.10000000000000001, -2.5, 12]", "[1000.0, 0.1, -2.5, 12]"},
      {"[2.2889366309009063e-06, 1e+300]", "[2.2889366309009063e-06, 1e+300]"},
      {"[1.0000000000000000e-05]", "[1e-05]"},
      {"{\"17.733599999999999\" : \"a\\\"1.50\"}", "{\"17.733599999999999\" : \"a\\\"1.50\"}"},
      {"[18.72407279999985]", "[18.72407279999985]"},
      {"", ""},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    g_autofree char *got = json_shortest_numbers(cases[k][0]);
    ck_assert_str_eq(got, cases[k][1]);
  }
  /* every double of a sweep reads back as itself */
  for (int k = 0; k < 2000; k++) {
    double d = (k - 1000) * 0.0137 + k * 1e-9;
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_array(b);
    json_builder_add_double_value(b, d);
    json_builder_end_array(b);
    g_autofree char *text = json_pretty_text(b);
    g_autoptr(JsonParser) p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, text, -1, NULL));
    ck_assert(json_array_get_double_element(json_node_get_array(json_parser_get_root(p)), 0) == d);
  }
}
END_TEST

Suite *suite_explain(void) {
  Suite *s = suite_create("explain");
  TCase *tc = tcase_create("capacity");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_seeds_8_sms);
  tcase_add_test(tc, test_seeds_12_sms);
  tcase_add_test(tc, test_json);
  tcase_add_test(tc, test_temp_knob);
  tcase_add_test(tc, test_short_when_overdrawn);
  tcase_add_test(tc, test_failure);
  tcase_add_test(tc, test_ilp_report);
  tcase_add_test(tc, test_resident_keeps);
  tcase_add_test(tc, test_jdoc_same_as_builder);
  tcase_add_test(tc, test_json_shortest_numbers);
  suite_add_tcase(s, tc);
  return s;
}
