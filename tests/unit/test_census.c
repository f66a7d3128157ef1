/* test_census.c - tcc-census's space files and table (census_space.h,
 * census.h): the points of a space in their documented order, same_as,
 * defaults for unwritten keys; the diagnostics of bad spaces (one line,
 * file:line:col, did-you-mean); the area filter against sim_machine_area;
 * each row's RF budget as tcc-gen --explain computes it (the seeds' 8 SMs:
 * 0.25 MiB short) and its bounds as sim_bounds; the sort; and
 * plans/census-seeds.yaml's 7,776 points. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "census.h"
#include "tests.h"

static CensusSpace *space(const char *text, GError **err) {
  return census_space_parse("space.yaml", text, strlen(text), err);
}

static CensusSpace *space_ok(const char *text) {
  g_autoptr(GError) err = NULL;
  CensusSpace *s = space(text, &err);
  ck_assert_msg(s, "%s", err ? err->message : "?");
  return s;
}

/* The space must fail with exactly this message. */
static void space_bad(const char *text, const char *want) {
  g_autoptr(GError) err = NULL;
  g_autoptr(CensusSpace) s = space(text, &err);
  ck_assert_msg(!s, "accepted:\n%s", text);
  ck_assert_str_eq(err->message, want);
}

START_TEST(test_points_order) {
  g_autoptr(CensusSpace) s = space_ok("version: 1\nhardware:\n  sms: [8, 12]\n"
                                      "  rf_kib: {from: 16, to: 64, factor: 2}\n"
                                      "  sh_kib: {from: 0, to: 128, step: 64}\n"
                                      "  sfu: {same_as: vl}\n  vl: {values: [8, 16]}\n"
                                      "  dma: {depth: [1, 2]}\n  multicast: [false, true]\n");
  ck_assert_uint_eq(s->points, 2 * 3 * 2 * 3 * 2 * 2);
  /* point 0: every key's first value; the last key (multicast) fastest */
  Machine m;
  ck_assert(census_space_point(s, 0, &m, NULL));
  ck_assert_int_eq(m.sms, 8);
  ck_assert_int_eq(m.rf_kib, 16);
  ck_assert_int_eq(m.vl, 8);
  ck_assert_int_eq(m.sfu, 8);
  ck_assert_int_eq(m.sh_kib, 0);
  ck_assert_int_eq(m.dma_depth, 1);
  ck_assert_int_eq(m.multicast, 0);
  ck_assert_int_eq(m.wgs_per_sm, 4); /* not written: the default machine's */
  ck_assert_int_eq(m.dma_engines, 2);
  ck_assert(census_space_point(s, 1, &m, NULL));
  ck_assert_int_eq(m.multicast, 1);
  ck_assert_int_eq(m.dma_depth, 1);
  ck_assert(census_space_point(s, 2, &m, NULL));
  ck_assert_int_eq(m.multicast, 0);
  ck_assert_int_eq(m.dma_depth, 2);
  /* the last point: every key's last value; sfu follows vl */
  ck_assert(census_space_point(s, s->points - 1, &m, NULL));
  ck_assert_int_eq(m.sms, 12);
  ck_assert_int_eq(m.rf_kib, 64);
  ck_assert_int_eq(m.vl, 16);
  ck_assert_int_eq(m.sfu, 16);
  ck_assert_int_eq(m.sh_kib, 128);
  ck_assert(census_space_varies(s, 0));
  ck_assert(!census_space_varies(s, 1));
}
END_TEST

START_TEST(test_bad_spaces) {
  space_bad("version: 1\nhardware:\n  smss: [8]\n",
            "space.yaml:3:3: error: unknown key 'smss' in hardware; did you mean 'sms'?");
  space_bad("version: 1\nhardware:\n  dma: {engins: 2}\n",
            "space.yaml:3:9: error: unknown key 'engins' in hardware.dma; did you mean 'engines'?");
  space_bad("version: 1\nhardwar: {}\n",
            "space.yaml:2:1: error: unknown key 'hardwar' at top level; did you mean 'hardware'?");
  space_bad("version: 1\nhardware:\n  rf_kib: {from: 16, too: 64}\n",
            "space.yaml:3:22: error: unknown key 'too' in hardware.rf_kib; did you mean 'to'?");
  space_bad("version: 1\nhardware:\n  sms: [8, 65]\n",
            "space.yaml:3:12: error: hardware.sms: sms=65 out of range 1..64 (streaming multiprocessors)");
  space_bad("version: 1\nhardware:\n  rf_kib: {from: 16, to: 64, step: 16}\n",
            "space.yaml:3:18: error: hardware.rf_kib: rf_kib=48 must be a power of two (register file per WG, KiB)");
  space_bad("version: 1\nhardware:\n  sms: [1234567890123456789]\n",
            "space.yaml:3:9: error: hardware.sms: 1234567890123456789 is out of range");
  space_bad("version: 1\nhardware:\n  sms: {from: 8, to: 99, factor: 999999999999999999}\n  vl: 3\n",
            "space.yaml:4:7: error: hardware.vl: vl=3 out of range 4..32 (vector lanes per WG (RF partitions))");
  space_bad("version: 1\nhardware:\n  sms: [8, 8]\n",
            "space.yaml:3:12: error: hardware.sms: value 8 is listed twice");
  space_bad("version: 1\nhardware:\n  sms: [8, x]\n",
            "space.yaml:3:12: error: 'sms' values must be decimal integers, got 'x'");
  space_bad("version: 1\nhardware:\n  multicast: [0]\n",
            "space.yaml:3:15: error: 'multicast' values must be true or false, got '0'");
  space_bad("version: 1\nhardware:\n  sms: {from: 9, to: 8}\n",
            "space.yaml:3:22: error: hardware.sms: to 8 is below from 9");
  space_bad("version: 1\nhardware:\n  sms: {from: 8}\n",
            "space.yaml:3:8: error: hardware.sms: a range needs from and to (or values, or same_as)");
  space_bad("version: 1\nhardware:\n  sms: []\n", "space.yaml:3:8: error: hardware.sms: an empty list");
  space_bad("version: 1\nhardware:\n  sfu: {same_as: vll}\n",
            "space.yaml:3:18: error: unknown key 'vll' for same_as; did you mean 'vl'?");
  space_bad("version: 1\nhardware:\n  vl: [8]\n  sfu: {same_as: vl}\n  vl: [16]\n",
            "space.yaml:5:3: error: duplicate key 'vl' (first at line 3)");
  space_bad("version: 2\nhardware: {}\n",
            "space.yaml:1:10: error: unsupported census version '2' (this tcc-census reads version 1)");
  space_bad("hardware: {}\n", "space.yaml:1:1: error: missing required key 'version'");
  space_bad("version: 1\n", "space.yaml:1:1: error: missing required key 'hardware'");
  space_bad("version: 1\nhardware: [1]\n", "space.yaml:2:11: error: 'hardware' must be a mapping, got a sequence");
  space_bad("version: 1\nhardware:\n  sms: {from: 1, to: 64}\n  sfu: {from: 1, to: 64}\n"
            "  sh_kib: {from: 0, to: 1024}\n  hbm_channels: {from: 1, to: 32}\n",
            "space.yaml:2:1: error: the space has more than 10000000 points");
  space_bad("version: 1\nhardware:\n  sms: [8\n", "space.yaml:4:1: error: did not find expected ',' or ']' "
                                                  "(while parsing a flow sequence at line 3)");
}
END_TEST

static const char *small =
    "version: 1\nhardware:\n  sms: [4, 8, 16, 24, 32]\n  mma_arrays: [1, 2]\n  rf_kib: [32, 64]\n";

/* A factor or step far past `to` ends the range (no overflow). */
START_TEST(test_range_ends) {
  g_autoptr(CensusSpace) s = space_ok("version: 1\nhardware:\n  sms: {from: 8, to: 64, factor: 999999999999999999}\n"
                                      "  sfu: {from: 1, to: 64, step: 999999999999999999}\n"
                                      "  noc_bits: {from: 64, to: 2048, factor: 4}\n");
  ck_assert_uint_eq(s->values[0]->len, 1);
  ck_assert_uint_eq(s->values[5]->len, 1);
  ck_assert_uint_eq(s->values[10]->len, 3); /* 64, 256, 1024 */
  ck_assert_int_eq(g_array_index(s->values[10], int, 2), 1024);
  ck_assert_uint_eq(s->points, 3);
}
END_TEST

START_TEST(test_area_and_rows) {
  g_autoptr(CensusSpace) s = space_ok(small);
  g_autoptr(Census) c = census_run(s, NULL, NULL);
  ck_assert_uint_eq(c->points, 20);
  /* the legal count, point by point */
  guint64 legal = 0;
  for (guint64 i = 0; i < s->points; i++) {
    Machine m;
    ck_assert(census_space_point(s, i, &m, NULL));
    legal += sim_machine_area(&m) <= AREA_LIMIT_MM2;
  }
  ck_assert_uint_eq(c->legal, legal);
  ck_assert_uint_eq(c->kept->len, legal);
  ck_assert(legal > 0 && legal < 20);
  Problem p1, d1;
  wl_problem_default(&p1, PROB_P1);
  wl_problem_default(&d1, PROB_D1);
  CensusRow prev = {0};
  for (guint r = 0; r < c->legal; r++) {
    CensusRow row;
    census_row(c, r, &row);
    const CensusRow *x = &row;
    ck_assert(x->area_mm2 <= AREA_LIMIT_MM2);
    ck_assert(x->area_mm2 == sim_machine_area(&x->hw));
    Bounds b1, b2;
    sim_bounds(&x->hw, &p1, &b1);
    sim_bounds(&x->hw, &d1, &b2);
    ck_assert_int_eq(x->p1.bound, b1.bound);
    ck_assert_int_eq(x->d1.bound, b2.bound);
    ck_assert_int_eq(x->p1.binding, b1.binding);
    if (r > 0) { /* sorted: product of the bounds, then index */
      const CensusRow *w = &prev;
      int64_t pw = w->p1.bound * w->d1.bound, px = x->p1.bound * x->d1.bound;
      ck_assert(pw < px || (pw == px && w->index < x->index));
      ck_assert(w->geo_bound <= x->geo_bound);
    }
    prev = row;
  }
}
END_TEST

/* The seeds' capacity arithmetic (seed-facts.md), as --explain gives it:
 * D1 on 8 SMs x 4 WGs x 64 KiB leaves 1.25 MiB for 1.5 MiB of weights; 12
 * SMs leave 2 MiB. */
START_TEST(test_rf_budget) {
  g_autoptr(CensusSpace) s = space_ok("version: 1\nhardware:\n  sms: [8, 12]\n");
  g_autoptr(Census) c = census_run(s, NULL, NULL);
  ck_assert_uint_eq(c->legal, 2);
  for (guint r = 0; r < 2; r++) {
    CensusRow row;
    census_row(c, r, &row);
    const CensusRow *x = &row;
    ck_assert_int_eq(x->rf.weights, 3 << 19);
    if (x->hw.sms == 8) {
      ck_assert_int_eq(x->rf.left, 5 << 18);
      ck_assert_int_eq(x->rf.short_bytes, 1 << 18);
      ck_assert(!x->rf.fits);
    } else {
      ck_assert_int_eq(x->rf.left, 2 << 20);
      ck_assert_int_eq(x->rf.short_bytes, 0);
      ck_assert(x->rf.fits);
    }
  }
  g_autofree char *csv = census_csv(c);
  ck_assert_msg(strstr(csv, ",1572864,1310720,false,262144,"), "%s", csv);
  ck_assert_msg(strstr(csv, ",1572864,2097152,true,0,"), "%s", csv);
}
END_TEST

/* The CSV's header and row count; the JSON parses and carries the counts
 * and the same rows in the same order. */
START_TEST(test_formats) {
  g_autoptr(CensusSpace) s = space_ok(small);
  g_autoptr(Census) c = census_run(s, NULL, NULL);
  g_autofree char *csv = census_csv(c);
  ck_assert(g_str_has_prefix(csv, "sms,wgs_per_sm,rf_kib,vl,mma_arrays,sfu,sh_kib,dma_engines,dma_depth,"
                                  "hbm_channels,noc_bits,multicast,reduce_units,area_mm2,static_w,"
                                  "d1_weights_bytes,d1_rf_left_bytes,d1_weights_fit,d1_short_bytes,"
                                  "p1_bound,p1_binding,d1_bound,d1_binding,geo_bound,index\n"));
  int lines = 0;
  for (const char *p = csv; *p; p++) lines += *p == '\n';
  ck_assert_int_eq(lines, (int)c->legal + 1);
  g_autofree char *json = census_json(c);
  g_autoptr(JsonParser) jp = json_parser_new();
  ck_assert(json_parser_load_from_data(jp, json, -1, NULL));
  JsonObject *o = json_node_get_object(json_parser_get_root(jp));
  ck_assert_int_eq(json_object_get_int_member(o, "points"), 20);
  ck_assert_int_eq(json_object_get_int_member(o, "area_legal"), (gint64)c->legal);
  JsonArray *rows = json_object_get_array_member(o, "rows");
  ck_assert_uint_eq(json_array_get_length(rows), c->legal);
  for (guint r = 0; r < c->legal; r++) {
    JsonObject *row = json_array_get_object_element(rows, r);
    CensusRow xr;
    census_row(c, r, &xr);
    const CensusRow *x = &xr;
    ck_assert_int_eq(json_object_get_int_member(row, "index"), (gint64)x->index);
    JsonObject *d1 = json_object_get_object_member(row, "d1");
    ck_assert_int_eq(json_object_get_int_member(d1, "bound"), x->d1.bound);
    ck_assert_str_eq(json_object_get_string_member(d1, "binding"), sim_bound_name[x->d1.binding]);
  }
}
END_TEST

/* The table streamed: pieces of about 1 MiB (never the whole text of a
 * large table at once) whose concatenation is the one-string table. */
static gboolean collect_piece(const char *text, gsize len, gpointer data) {
  GPtrArray *pieces = data;
  ck_assert_uint_eq(strlen(text), len); /* NUL-terminated pieces */
  ck_assert_uint_le(len, (1u << 20) + 4096);
  g_ptr_array_add(pieces, g_strndup(text, len));
  return TRUE;
}

static gboolean refuse_piece(const char *text, gsize len, gpointer data) {
  (void)text;
  (void)len;
  ++*(int *)data;
  return FALSE;
}

START_TEST(test_streamed) {
  g_autoptr(GError) err = NULL;
  g_autoptr(CensusSpace) s = census_space_load(TOP_PATH("plans/census-seeds.yaml"), &err);
  ck_assert_msg(s, "%s", err ? err->message : "?");
  g_autoptr(Census) c = census_run(s, NULL, NULL);
  ck_assert_uint_eq(c->kept->len, 1786);
  for (int json = 0; json < 2; json++) {
    g_autoptr(GPtrArray) pieces = g_ptr_array_new_with_free_func(g_free);
    ck_assert(census_write(c, json, collect_piece, pieces));
    ck_assert_uint_ge(pieces->len, json ? 2 : 1); /* the JSON's 1.8 MB in pieces */
    g_autoptr(GString) all = g_string_new(NULL);
    for (guint i = 0; i < pieces->len; i++) g_string_append(all, g_ptr_array_index(pieces, i));
    g_autofree char *whole = json ? census_json(c) : census_csv(c);
    ck_assert_str_eq(all->str, whole);
    int calls = 0;
    ck_assert(!census_write(c, json, refuse_piece, &calls)); /* a failed write stops it */
    ck_assert_int_eq(calls, 1);
  }
}
END_TEST

/* plans/census-seeds.yaml: the seeds' 7,776 points; our area model keeps
 * 1,786 of them (docs/tools.md explains the difference from the seeds'
 * 2,480). */
START_TEST(test_seeds_space) {
  g_autoptr(GError) err = NULL;
  g_autoptr(CensusSpace) s = census_space_load(TOP_PATH("plans/census-seeds.yaml"), &err);
  ck_assert_msg(s, "%s", err ? err->message : "?");
  ck_assert_uint_eq(s->points, 7776);
  g_autoptr(Census) c = census_run(s, NULL, NULL);
  ck_assert_uint_eq(c->invalid, 0);
  ck_assert_uint_eq(c->legal, 1786);
}
END_TEST

Suite *suite_census(void) {
  Suite *s = suite_create("census");
  TCase *t = tcase_create("census");
  tcase_add_test(t, test_points_order);
  tcase_add_test(t, test_bad_spaces);
  tcase_add_test(t, test_range_ends);
  tcase_add_test(t, test_area_and_rows);
  tcase_add_test(t, test_streamed);
  tcase_add_test(t, test_rf_budget);
  tcase_add_test(t, test_formats);
  tcase_add_test(t, test_seeds_space);
  suite_add_tcase(s, t);
  return s;
}
