/* test_record.c - experiment records (src/tools/record.c; docs/tools.md
 * "Experiment records"): a run's line parses back with its fields, each
 * class comes out of the verdicts and the earlier records, appending keeps
 * one line per run, a malformed line is one diagnostic at its line, and
 * the plan text a record keeps comes back byte for byte (older lines
 * without it still read). */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "record.h"
#include "tests.h"

static const uint64_t seeds[] = {7, 13, 11, 23};

/* A legal run of the tiny problems with the given cycles. */
static RecRun run_of(int64_t p1, int64_t d1) {
  RecRun r = {.time = "2026-12-01T00:00:00Z", .plan = "a.yaml", .plan_sha256 = "ab", .grader = "g",
              .simulator = "s", .spec = 2, .seeds = seeds, .nseeds = 4, .graded = TRUE};
  static char prob[2][32] = {"p1 d_model=32 rows=64", "d1 d_model=32 history=0"};
  for (int i = 0; i < 2; i++) {
    RecProblem *p = &r.prob[i];
    p->name = i ? "d1" : "p1";
    p->problem = prob[i];
    p->program_sha256 = "cd";
    p->hardware_sha256 = "ef";
    p->cycles = i ? d1 : p1;
    p->area_mm2 = 22.5;
    p->peak_w = 18.25;
    p->peak_start = 100;
    for (int s = 0; s < 4; s++) p->max_abs_err[s] = 1e-6, p->numerics_ok[s] = TRUE;
    p->area_ok = p->power_ok = TRUE;
    p->bound = 400;
    p->binding = "power";
  }
  return r;
}

static JsonObject *parse(const char *line) {
  g_autoptr(JsonParser) p = json_parser_new();
  ck_assert_msg(json_parser_load_from_data(p, line, -1, NULL), "%s", line);
  ck_assert(strchr(line, '\n') == NULL);
  return json_object_ref(json_node_get_object(json_parser_get_root(p)));
}

/* The fields of a line, as written. */
START_TEST(test_record_fields) {
  RecRun r = run_of(1000, 500);
  r.note = "why \"this\"\nrun";
  r.has_score = TRUE;
  r.score = 1234.5;
  r.prob[1].numerics_ok[2] = FALSE;
  r.prob[1].max_abs_err[2] = 1.0 / 0.0; /* no JSON for inf: null */
  r.prob[0].power_ok = FALSE;
  r.prob[0].peak_w = 20.123449999; /* to 4 decimals, as the reports print it */
  g_autofree char *line = rec_json(&r, REC_NUMERICS, NULL);
  g_autoptr(JsonObject) o = parse(line);
  ck_assert_int_eq(json_object_get_int_member(o, "schema_version"), 1);
  ck_assert_str_eq(json_object_get_string_member(o, "tool"), "g");
  ck_assert_msg(strstr(line, "\"peak_w\":20.1234,") != NULL, "%s", line);
  ck_assert_str_eq(json_object_get_string_member(o, "time"), "2026-12-01T00:00:00Z");
  ck_assert_str_eq(json_object_get_string_member(o, "plan"), "a.yaml");
  ck_assert_str_eq(json_object_get_string_member(o, "note"), "why \"this\"\nrun");
  ck_assert_str_eq(json_object_get_string_member(o, "status"), "numerics");
  ck_assert_int_eq(json_object_get_int_member(o, "spec"), 2);
  JsonArray *sd = json_object_get_array_member(o, "seeds");
  ck_assert_int_eq(json_array_get_length(sd), 4);
  ck_assert_int_eq(json_array_get_int_element(sd, 3), 23);
  JsonArray *f = json_object_get_array_member(o, "failures");
  ck_assert_int_eq(json_array_get_length(f), 2);
  ck_assert_str_eq(json_array_get_string_element(f, 0), "numerics");
  ck_assert_str_eq(json_array_get_string_element(f, 1), "power");
  ck_assert(json_object_get_double_member(o, "score") == 1234.5);
  JsonObject *d1 = json_object_get_object_member(json_object_get_object_member(o, "problems"), "d1");
  ck_assert_int_eq(json_object_get_int_member(d1, "cycles"), 500);
  ck_assert_str_eq(json_object_get_string_member(d1, "program_sha256"), "cd");
  ck_assert_str_eq(json_object_get_string_member(d1, "hardware_sha256"), "ef");
  ck_assert_str_eq(json_object_get_string_member(d1, "status"), "numerics");
  ck_assert_str_eq(json_array_get_string_element(json_object_get_array_member(d1, "failures"), 0), "numerics");
  JsonObject *p1 = json_object_get_object_member(json_object_get_object_member(o, "problems"), "p1");
  ck_assert_str_eq(json_object_get_string_member(p1, "status"), "power");
  JsonObject *s11 = json_array_get_object_element(json_object_get_array_member(d1, "seeds"), 2);
  ck_assert_int_eq(json_object_get_int_member(s11, "seed"), 11);
  ck_assert_str_eq(json_object_get_string_member(s11, "status"), "numerics");
  ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(s11, "max_abs_err")));
  JsonArray *win = json_object_get_array_member(d1, "window");
  ck_assert_int_eq(json_array_get_int_element(win, 1), 1100);
  JsonObject *bd = json_object_get_object_member(d1, "bound");
  ck_assert_int_eq(json_object_get_int_member(bd, "cycles"), 400);
  ck_assert(json_object_get_double_member(bd, "ratio") == 1.25);
  JsonObject *pr = json_object_get_object_member(d1, "problem");
  ck_assert_str_eq(json_object_get_string_member(pr, "kind"), "d1");
  ck_assert_int_eq(json_object_get_int_member(pr, "history"), 0);
  /* a tool error: the diagnostic, no problems, null score */
  RecRun t = {.time = "2026-12-01T00:00:00Z", .plan = "b.yaml", .seeds = seeds, .nseeds = 4,
              .error = "b.yaml:1:1: error: x"};
  g_autofree char *tl = rec_json(&t, REC_REFUSED, NULL);
  g_autoptr(JsonObject) to = parse(tl);
  ck_assert_str_eq(json_object_get_string_member(to, "status"), "refused");
  ck_assert_int_eq(json_array_get_length(json_object_get_array_member(to, "failures")), 0);
  ck_assert_str_eq(json_object_get_string_member(to, "error"), "b.yaml:1:1: error: x");
  ck_assert(!json_object_has_member(to, "problems"));
  ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(to, "score")));
  ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(to, "plan_sha256")));
}
END_TEST

/* Classes: the first failing constraint; slower only against the best
 * earlier legal run of the same problems. */
START_TEST(test_record_classify) {
  g_autoptr(GPtrArray) earlier = g_ptr_array_new_with_free_func((GDestroyNotify)json_object_unref);
  JsonObject *best;
  RecRun r = run_of(1000, 500);
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_PASS);
  ck_assert(best == NULL);
  r.graded = FALSE;
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_ERROR);
  r.refused = TRUE;
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_REFUSED);
  r = run_of(1000, 500);
  r.prob[1].power_ok = FALSE;
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_POWER);
  r.prob[0].area_ok = FALSE;
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_AREA);
  r.prob[1].numerics_ok[3] = FALSE;
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_NUMERICS);
  /* history: a legal run 1000 x 500, a faster one that failed power */
  RecRun a = run_of(1000, 500), f = run_of(10, 10);
  f.prob[0].power_ok = FALSE;
  g_autofree char *la = rec_json(&a, REC_PASS, NULL), *lf = rec_json(&f, REC_POWER, NULL);
  g_ptr_array_add(earlier, parse(la));
  g_ptr_array_add(earlier, parse(lf));
  r = run_of(1000, 501);
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_SLOWER);
  ck_assert(best == g_ptr_array_index(earlier, 0));
  r = run_of(1000, 500); /* a tie is not slower */
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_PASS);
  r = run_of(999, 501); /* 500499 < 500000? no: slower */
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_SLOWER);
  r = run_of(500, 999); /* 499500: faster */
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_PASS);
  /* other problems: nothing to compare with */
  r = run_of(5000, 5000);
  r.prob[0].problem = "p1 d_model=64 rows=64";
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_PASS);
  ck_assert(best == NULL);
  /* the best_before of a slower run names the record it lost to */
  r = run_of(2000, 500);
  ck_assert_int_eq(rec_classify(&r, earlier, &best), REC_SLOWER);
  g_autofree char *ls = rec_json(&r, REC_SLOWER, best);
  g_autoptr(JsonObject) so = parse(ls);
  JsonObject *bb = json_object_get_object_member(so, "best_before");
  ck_assert_int_eq(json_object_get_int_member(bb, "p1_cycles"), 1000);
  ck_assert_int_eq(json_object_get_int_member(bb, "d1_cycles"), 500);
}
END_TEST

/* A record written before the result schema ("class", "tool-error", a
 * problem as its line) is still read, listed and compared with. */
START_TEST(test_record_legacy) {
  g_autofree char *dir = g_dir_make_tmp("tcc-record-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  const char *old =
      "{\"time\":\"2026-12-01T07:27:53Z\",\"plan\":\"old.yaml\",\"class\":\"pass\",\"score\":1000.0,"
      "\"problems\":{\"p1\":{\"problem\":\"p1 d_model=32 rows=64\",\"cycles\":1000,\"peak_w\":18.5},"
      "\"d1\":{\"problem\":\"d1 d_model=32 history=0\",\"cycles\":500,\"peak_w\":17.25}}}\n"
      "{\"time\":\"2026-12-01T07:27:58Z\",\"plan\":\"bad.yaml\",\"class\":\"tool-error\",\"score\":null}\n";
  ck_assert(g_file_set_contents(file, old, -1, NULL));
  RecRun r = run_of(1000, 501);
  RecClass c;
  int line;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(rec_append(dir, &r, &c, &line, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(c, REC_SLOWER); /* against the old legal record of the same problems */
  ck_assert_int_eq(line, 3);
  g_autofree char *log = rec_log(dir, NULL, &err);
  ck_assert_msg(log && strstr(log, "  1000  500  18.50  17.25  1000.00  pass\n") &&
                    strstr(log, "   -    -      -      -        -  error\n"),
                "%s", log);
  /* and a new record of the same problems compares with the new one */
  r = run_of(1000, 502);
  ck_assert(rec_append(dir, &r, &c, &line, &err));
  ck_assert_int_eq(c, REC_SLOWER);
  g_remove(file);
  g_rmdir(dir);
}
END_TEST

static char *tmp_dir(void) {
  char *d = g_dir_make_tmp("tcc-record-XXXXXX", NULL);
  ck_assert(d != NULL);
  return d;
}

/* Appending: the directory made, one line per run, line numbers, the
 * class against what is already there; --log's table. */
START_TEST(test_record_append) {
  g_autofree char *top = tmp_dir();
  g_autofree char *dir = g_build_filename(top, "a", "b", NULL);
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  RecRun r = run_of(1000, 500);
  RecClass c;
  int line;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(rec_append(dir, &r, &c, &line, &err), "%s", err ? err->message : "");
  ck_assert(c == REC_PASS && line == 1);
  r = run_of(1001, 500);
  r.note = "slower";
  ck_assert(rec_append(dir, &r, &c, &line, &err));
  ck_assert(c == REC_SLOWER && line == 2);
  g_autoptr(GPtrArray) recs = NULL;
  ck_assert(rec_load(dir, FALSE, &recs, NULL, &err));
  ck_assert_int_eq(recs->len, 2);
  g_autofree char *log = rec_log(dir, NULL, &err);
  ck_assert(log != NULL);
  g_auto(GStrv) rows = g_strsplit(log, "\n", -1);
  ck_assert_int_eq(g_strv_length(rows), 4); /* header, two rows, "" */
  ck_assert(g_str_has_prefix(rows[0], "time                  plan    note   "));
  ck_assert(g_str_has_suffix(rows[0], "  P1   D1   P1 W   D1 W  score  status"));
  ck_assert(g_str_has_suffix(rows[1], "  pass") && g_str_has_suffix(rows[2], "  slower"));
  ck_assert_msg(strstr(rows[2], "  slower  1001  500  18.25  18.25      -  slower") != NULL, "%s", rows[2]);
  ck_assert_int_eq(strlen(rows[0]) - strlen("status"), strlen(rows[2]) - strlen("slower"));
  g_remove(file);
  g_rmdir(dir);
  g_autofree char *mid = g_build_filename(top, "a", NULL);
  g_rmdir(mid);
  g_rmdir(top);
}
END_TEST

/* A bad line, whatever is wrong (malformed, a NUL byte, not UTF-8, a torn
 * last line): FILE:LINE:1: warning: REASON, skipped; the other records
 * load and list, --record appends after it, --plan at it is the error.
 * A plan name that is not UTF-8 makes a line that reads back. */
START_TEST(test_record_malformed) {
  static const struct {
    const char *line, *reason;
  } bad[] = {
      {"not json", "malformed JSON: "},
      {"[1, 2]", "expected one JSON object on the line"},
      {"", "expected one JSON object on the line"},
      {"{\"plan\": \"a\", \"class\": \"pass\"}", "no \"time\" string"},
      {"{\"time\": \"t\", \"plan\": \"a\", \"status\": \"great\"}", "no \"status\" among pass"},
      {"{\"time\": \"t\", \"plan\": \"a\", \"class\": \"refused\"}", "no \"status\" among pass"},
      {"{\"time\": \"t\", \"plan\": \"a\", \"class\": \"pass\"}", "no \"problems\" object with \"p1\""},
      {"{\"time\": \"t\", \"plan\": \"a\", \"class\": \"tool-error\", \"score\": \"x\"}", "\"score\" is not a number"},
      {"{\"time\": \"t\", \"plan\": \"a\", \"class\": \"pass\", \"problems\": {\"p1\": {\"cycles\": 1, \"peak_w\": 1, "
       "\"problem\": \"p\"}, \"d1\": {\"cycles\": 1.5, \"peak_w\": 1, \"problem\": \"p\"}}}",
       "\"d1\" lacks \"cycles\", \"peak_w\" or \"problem\""},
      {"{\"time\": \"t\", \"plan\": \"a\", \"status\": \"pass\", \"problems\": {\"p1\": {\"cycles\": 1, \"peak_w\": 1, "
       "\"problem\": {\"kind\": \"p1\", \"rows\": \"x\"}}, \"d1\": {\"cycles\": 1, \"peak_w\": 1, \"problem\": \"p\"}}}",
       "\"p1\" lacks \"cycles\", \"peak_w\" or \"problem\""},
  };
  g_autofree char *dir = tmp_dir();
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  RecRun r = run_of(1000, 500);
  g_autofree char *good = rec_json(&r, REC_PASS, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *text = g_strdup_printf("%s\n%s\n%s\n", good, good, bad[i].line);
    ck_assert(g_file_set_contents(file, text, -1, NULL));
    g_autoptr(GPtrArray) recs = NULL;
    g_autoptr(GError) err = NULL;
    g_autoptr(GString) warn = g_string_new(NULL);
    ck_assert(rec_load(dir, FALSE, &recs, warn, &err));
    ck_assert_msg(recs->len == 2, "%s: %u records", bad[i].line, recs->len); /* the bad line skipped */
    g_autofree char *want = g_strdup_printf("%s:3:1: warning: %s", file, bad[i].reason);
    ck_assert_msg(g_str_has_prefix(warn->str, want), "%s: got %s", bad[i].line, warn->str);
    ck_assert(strchr(warn->str, '\n') == warn->str + warn->len - 1); /* one line */
    g_string_truncate(warn, 0);
    g_autofree char *log = rec_log(dir, warn, &err);
    ck_assert(log != NULL && g_str_has_prefix(warn->str, want));
    g_auto(GStrv) rows = g_strsplit(log, "\n", -1);
    ck_assert_int_eq(g_strv_length(rows), 4); /* header, two rows, "" */
    /* --plan 3 names the bad line; --record appends after it, at line 4 */
    ck_assert(rec_plan_text(dir, 3, &err) == NULL);
    g_autofree char *want3 = g_strdup_printf("%s:3:1: error: %s", file, bad[i].reason);
    ck_assert_msg(g_str_has_prefix(err->message, want3), "%s", err->message);
    g_clear_error(&err);
    RecClass c;
    int line;
    ck_assert(rec_append(dir, &r, &c, &line, &err) && line == 4);
    g_clear_pointer(&recs, g_ptr_array_unref);
    ck_assert(rec_load(dir, FALSE, &recs, NULL, &err) && recs->len == 3);
  }
  g_autoptr(GError) err = NULL;
  /* a NUL byte inside line 2 of 3: lines 1 and 3 load, line 2 is named */
  {
    g_autofree char *two = g_strdup_printf("%s\n", good);
    GString *t = g_string_new(two);
    g_string_append_len(t, "{\"time\"\0garbage}\n", 17);
    g_string_append(t, two);
    ck_assert(g_file_set_contents(file, t->str, (gssize)t->len, NULL));
    g_string_free(t, TRUE);
    g_autoptr(GPtrArray) recs = NULL;
    g_autoptr(GString) warn = g_string_new(NULL);
    ck_assert(rec_load(dir, FALSE, &recs, warn, &err) && recs->len == 2);
    g_autofree char *want = g_strdup_printf("%s:2:1: warning: a NUL byte in the line; line skipped\n", file);
    ck_assert_str_eq(warn->str, want);
  }
  /* not UTF-8 (a byte 0xff in a string): a bad line, not a failure */
  {
    g_autofree char *text = g_strdup_printf("{\"time\": \"\xff\"}\n%s\n", good);
    ck_assert(g_file_set_contents(file, text, -1, NULL));
    g_autoptr(GPtrArray) recs = NULL;
    g_autoptr(GString) warn = g_string_new(NULL);
    ck_assert(rec_load(dir, FALSE, &recs, warn, &err) && recs->len == 1);
    ck_assert(g_str_has_suffix(warn->str, ":1:1: warning: the line is not UTF-8 text; line skipped\n"));
  }
  /* a torn last line (no newline): the next record gets a line of its own */
  {
    g_autofree char *text = g_strdup_printf("%s\n{\"time\": \"t", good);
    ck_assert(g_file_set_contents(file, text, -1, NULL));
    RecClass c;
    int line;
    ck_assert(rec_append(dir, &r, &c, &line, &err) && line == 3);
    g_autoptr(GPtrArray) recs = NULL;
    ck_assert(rec_load(dir, FALSE, &recs, NULL, &err) && recs->len == 2);
  }
  /* a plan name and a note that are not UTF-8: U+FFFD in a line that reads back */
  {
    RecRun u = run_of(1000, 500);
    u.plan = "p\xff.yaml";
    u.note = "n\xfe";
    g_autofree char *json = rec_json(&u, REC_PASS, NULL);
    ck_assert(g_utf8_validate(json, -1, NULL));
    g_autofree char *text = g_strdup_printf("%s\n%s\n", json, json);
    ck_assert(g_file_set_contents(file, text, -1, NULL));
    g_autoptr(GPtrArray) recs = NULL;
    g_autoptr(GString) warn = g_string_new(NULL);
    ck_assert(rec_load(dir, FALSE, &recs, warn, &err) && recs->len == 2 && warn->len == 0);
    ck_assert_str_eq(json_object_get_string_member(g_ptr_array_index(recs, 0), "plan"), "p\xef\xbf\xbd.yaml");
  }
  /* no file: --log fails, --record starts one */
  g_remove(file);
  ck_assert(rec_log(dir, NULL, &err) == NULL);
  g_autofree char *want = g_strdup_printf("%s: error: cannot read: No such file or directory", file);
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  ck_assert(rec_prepare(dir, NULL, &err));
  g_rmdir(dir);
}
END_TEST

/* The plan's text: kept in the line (rec_file_text), back byte for byte
 * from rec_plan_text; a line written before the text was kept (no
 * "plan_text") still loads, lists and classifies, and asking for its
 * text is one diagnostic at its line; so is a record that is not there. */
START_TEST(test_record_plan_text) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  g_autofree char *plan = g_build_filename(dir, "p.yaml", NULL);
  /* quotes, backslashes, a tab, non-ASCII, no final newline */
  static const char text[] = "version: 1\n# \"q\" \\ back\tslash \xc3\xa9t\xc3\xa9 <b>\np1:\n  sms_used: 8";
  ck_assert(g_file_set_contents(plan, text, -1, NULL));
  /* an old line first: no plan_text member at all */
  RecRun old = run_of(1000, 500);
  g_autofree char *oldline = rec_json(&old, REC_PASS, NULL);
  ck_assert(strstr(oldline, "\"plan_text\":null") != NULL);
  g_autofree char *stripped = g_strdup(oldline);
  char *at = strstr(stripped, "\"plan_text\":null,");
  memmove(at, at + strlen("\"plan_text\":null,"), strlen(at + strlen("\"plan_text\":null,")) + 1);
  ck_assert(strstr(stripped, "plan_text") == NULL);
  g_autofree char *first = g_strconcat(stripped, "\n", NULL);
  ck_assert(g_file_set_contents(file, first, -1, NULL));
  RecRun r = run_of(999, 500);
  r.plan = plan;
  r.plan_text = rec_file_text(plan);
  ck_assert(r.plan_text != NULL);
  ck_assert_str_eq(r.plan_text, text);
  RecClass c;
  int line;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(rec_append(dir, &r, &c, &line, &err), "%s", err ? err->message : "");
  ck_assert(line == 2 && c == REC_PASS);
  g_free(r.plan_text);
  g_autofree char *back = rec_plan_text(dir, 2, &err);
  ck_assert_msg(back != NULL, "%s", err ? err->message : "");
  ck_assert_str_eq(back, text);
  g_autofree char *log = rec_log(dir, NULL, &err);
  ck_assert(log != NULL && strstr(log, "a.yaml") != NULL);
  ck_assert(rec_plan_text(dir, 1, &err) == NULL);
  g_autofree char *want1 = g_strdup_printf("%s:1:1: error: the record keeps no plan text", file);
  ck_assert_msg(g_str_has_prefix(err->message, want1), "%s", err->message);
  g_clear_error(&err);
  ck_assert(rec_plan_text(dir, 3, &err) == NULL);
  g_autofree char *want3 = g_strdup_printf("%s: error: no record 3: it holds 2", file);
  ck_assert_str_eq(err->message, want3);
  g_clear_error(&err);
  /* not UTF-8, or unreadable: not kept */
  ck_assert(g_file_set_contents(plan, "a: \xff\n", -1, NULL));
  ck_assert(rec_file_text(plan) == NULL);
  g_autofree char *none = g_build_filename(dir, "none.yaml", NULL);
  ck_assert(rec_file_text(none) == NULL);
  g_remove(plan);
  g_remove(file);
  g_rmdir(dir);
}
END_TEST

Suite *suite_record(void) {
  Suite *s = suite_create("record");
  TCase *tc = tcase_create("record");
  tcase_add_test(tc, test_record_fields);
  tcase_add_test(tc, test_record_classify);
  tcase_add_test(tc, test_record_append);
  tcase_add_test(tc, test_record_legacy);
  tcase_add_test(tc, test_record_malformed);
  tcase_add_test(tc, test_record_plan_text);
  suite_add_tcase(s, tc);
  return s;
}
