/* test_sweep.c - tcc-sweep's library (sweep.h) without grading: --set
 * parsing; the expansion (the product in order, the first key slowest;
 * values set in place and keys added through the YAML document API; every
 * variant a valid plan; names stable and readable; the manifest read back);
 * and --collect on result files written here (statuses, a missing result,
 * CSV quoting of an error with commas and quotes, JSON types). */
#include <json-glib/json-glib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "jobs.h"
#include "plan.h"
#include "sweep.h"
#include "text_escape.h"
#include "tests.h"

static GPtrArray *sets_of(const char *const *args) {
  GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify)sweep_set_free);
  for (int i = 0; args[i]; i++) {
    g_autoptr(GError) err = NULL;
    SweepSet *s = sweep_set_parse(args[i], &err);
    ck_assert_msg(s, "%s", err ? err->message : "?");
    g_ptr_array_add(a, s);
  }
  return a;
}

START_TEST(test_set_parse) {
  g_autoptr(GError) err = NULL;
  g_autoptr(SweepSet) s = sweep_set_parse("d1.panels.w1=16, 32,64", &err);
  ck_assert(s);
  ck_assert_str_eq(s->path, "d1.panels.w1");
  ck_assert_uint_eq(s->values->len, 3);
  ck_assert_str_eq(g_ptr_array_index(s->values, 1), "32");
  static const char *const bad[][2] = {
      {"d1.sms_used", "--set d1.sms_used: expected KEY.PATH=V1,V2,..."},
      {"d1..x=1", "--set d1..x=1: 'd1..x' is not a plan path (keys of letters, digits and _, joined by dots: d1.panels.w1)"},
      {"d1.x=1,,2", "--set d1.x=1,,2: value 2 ('') is not a plain YAML scalar"},
      {"d1.x={a: 1}", "--set d1.x={a: 1}: value 1 ('{a: 1}') is not a plain YAML scalar"},
      {"d1.x=1,1", "--set d1.x=1,1: value '1' is given twice"},
      /* no values: not a sweep of 0 variants */
      {"d1.x=", "--set d1.x=: no values after '=' (expected V1,V2,...)"},
      {"d1.x= ", "--set d1.x= : no values after '=' (expected V1,V2,...)"},
      /* control characters echoed escaped: the message stays one line */
      {"d1.x=1,a\nb", "--set d1.x=1,a\\nb: value 2 ('a\\nb') is not a plain YAML scalar"},
      {"d1.\tx=1", "--set d1.\\tx=1: 'd1.\\tx' is not a plan path (keys of letters, digits and _, joined by dots: d1.panels.w1)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) e = NULL;
    g_autoptr(SweepSet) b = sweep_set_parse(bad[i][0], &e);
    ck_assert_msg(!b, "accepted %s", bad[i][0]);
    ck_assert_str_eq(e->message, bad[i][1]);
  }
}
END_TEST

static char *tmpdir(void) {
  g_autoptr(GError) err = NULL;
  char *d = g_dir_make_tmp("tcc-sweep-XXXXXX", &err);
  ck_assert_msg(d, "%s", err ? err->message : "?");
  return d;
}

static void rm_tree(const char *dir) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* A Slurm array of 0 jobs would be --array=0-4294967295: refused, and
 * nothing made. */
START_TEST(test_slurm_no_jobs) {
  g_autofree char *dir = g_dir_make_tmp("tcc-slurm-XXXXXX", NULL);
  ck_assert(dir);
  g_autofree char *jobs = g_build_filename(dir, "jobs.txt", NULL);
  g_autofree char *logs = g_build_filename(dir, "slurm", NULL);
  g_autoptr(GError) err = NULL;
  g_autofree char *none = jobs_slurm_script("tcc-sweep", dir, jobs, 0, &err);
  ck_assert(!none);
  ck_assert_str_eq(err->message, "no jobs: a Slurm array needs at least one");
  ck_assert(!g_file_test(logs, G_FILE_TEST_EXISTS));
  g_autofree char *one = jobs_slurm_script("tcc-sweep", dir, jobs, 1, NULL);
  ck_assert(one && strstr(one, "#SBATCH --array=0-0\n"));
  g_rmdir(logs);
  g_rmdir(dir);
}
END_TEST

/* The job names and the Slurm log path: a control character is refused (it
 * would split a job line); sbatch's quoting of an odd directory; one line
 * for every reader from text_escape (line breaks of YAML included). */
START_TEST(test_job_names) {
  g_autoptr(GError) err = NULL;
  ck_assert(jobs_name_ok("-o", "/a b/'c'/$(d)/#%/\\", NULL));
  ck_assert(!jobs_name_ok("-o", "/a\nb", &err));
  ck_assert_str_eq(err->message, "-o '/a\\nb': a name with a control character cannot go on a job line (rename it)");
  g_clear_error(&err);
  ck_assert(!jobs_name_ok("--grade", "x\ty\x7f", &err));
  ck_assert_str_eq(err->message, "--grade 'x\\ty\\x7f': a name with a control character cannot go on a job line (rename it)");
  g_clear_error(&err);
  ck_assert(!jobs_slurm_dir_ok("-o", "/a\\b", &err));
  g_clear_error(&err);
  g_autofree char *dir = g_dir_make_tmp("tcc-slurm-XXXXXX", NULL);
  g_autofree char *odd = g_build_filename(dir, "o d'd \"#%A", NULL);
  g_autofree char *jobs = g_build_filename(odd, "jobs.txt", NULL);
  g_autofree char *script = jobs_slurm_script("tcc-sweep", odd, jobs, 2, NULL);
  g_autofree char *want = g_strdup_printf("\n#SBATCH --output=\"%s/o d\\'d \\\"\\#%%%%A/slurm/%%A_%%a.out\"\n", dir);
  ck_assert_msg(script && strstr(script, want), "%s", script);
  g_autofree char *nl = g_build_filename(dir, "a\nb", NULL);
  ck_assert(!jobs_slurm_script("tcc-sweep", nl, jobs, 2, NULL));
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  g_autofree char *e1 = text_escape("a\nb\xc2\x85" "c\xe2\x80\xa8" "d\xe2\x80\xa9" "e\xff\xc3(\xef\xbf\xbe" "f\xc3\xa9");
  ck_assert_str_eq(e1, "a\\nb\\u0085c\\u2028d\\u2029e\\xff\\xc3(\\ufffef\xc3\xa9");
  g_autofree char *e2 = text_escape("\xed\xa0\x80\xc0\xaf"); /* a surrogate, an overlong '/' */
  ck_assert_str_eq(e2, "\\xed\\xa0\\x80\\xc0\\xaf");
}
END_TEST

START_TEST(test_expand) {
  g_autofree char *dir = tmpdir();
  g_autofree char *out = g_build_filename(dir, "s", NULL);
  /* baseline.yaml: d1.sms_used replaced in place; hardware.sh_kib in place;
   * d1.attention.slices added (the template has no such mapping) */
  static const char *const args[] = {"hardware.sh_kib=0,64", "d1.sms_used=8,16,4", "d1.attention.slices=2", NULL};
  g_autoptr(GPtrArray) sets = sets_of(args);
  g_autoptr(GError) err = NULL;
  g_autoptr(Sweep) s = sweep_expand(TOP_PATH("plans/baseline.yaml"), sets, out, "tcc-sweep", NULL, NULL, &err);
  ck_assert_msg(s, "%s", err ? err->message : "?");
  ck_assert_uint_eq(s->variants->len, 6);
  const SweepVariant *v1 = g_ptr_array_index(s->variants, 1), *v3 = g_ptr_array_index(s->variants, 3);
  ck_assert_str_eq(g_ptr_array_index(v1->values, 0), "0"); /* the first key slowest */
  ck_assert_str_eq(g_ptr_array_index(v1->values, 1), "16");
  ck_assert_str_eq(g_ptr_array_index(v3->values, 0), "64");
  ck_assert_str_eq(g_ptr_array_index(v3->values, 1), "8");
  ck_assert(g_str_has_prefix(v3->name, "sh_kib-64_sms_used-8_slices-2-"));
  ck_assert_uint_eq(strlen(v3->name), strlen("sh_kib-64_sms_used-8_slices-2-") + 8);
  /* the variant loads as a plan with its settings; the rest is the template's */
  g_autofree char *f = g_strconcat(out, "/jobs/", v3->name, ".yaml", NULL);
  g_autoptr(Plan) p = plan_load(f, &err);
  ck_assert_msg(p, "%s", err ? err->message : "?");
  ck_assert_int_eq(p->hw.sh_kib, 64);
  ck_assert_int_eq(p->d1.sms_used, 8);
  ck_assert_int_eq(p->d1.attn_slices, 2);
  ck_assert_int_eq(p->p1.sms_used, 6);
  ck_assert_int_eq(p->hw.dma_engines, 2);
  /* the manifest reads back; a second expansion gives the same names, the
   * template's path spelt another way */
  g_autoptr(Sweep) l = sweep_load(out, &err);
  ck_assert_msg(l, "%s", err ? err->message : "?");
  ck_assert_uint_eq(l->variants->len, 6);
  ck_assert_str_eq(((SweepVariant *)g_ptr_array_index(l->variants, 3))->name, v3->name);
  ck_assert_str_eq(g_ptr_array_index(l->keys, 2), "d1.attention.slices");
  g_autofree char *out2 = g_build_filename(dir, "t", NULL);
  g_autoptr(Sweep) s2 = sweep_expand(TOP_PATH("plans/../plans/baseline.yaml"), sets, out2, "tcc-sweep", NULL, NULL, &err);
  ck_assert(s2);
  for (guint i = 0; i < 6; i++)
    ck_assert_str_eq(((SweepVariant *)g_ptr_array_index(s2->variants, i))->name,
                     ((SweepVariant *)g_ptr_array_index(s->variants, i))->name);
  /* jobs.txt: one line per job */
  g_autofree char *jobs = NULL;
  g_autofree char *jf = g_build_filename(out, "jobs.txt", NULL);
  ck_assert(g_file_get_contents(jf, &jobs, NULL, NULL));
  g_autofree char *line = g_strdup_printf("tcc-sweep --run-job '%s' '%s'\n", v3->name, s->dir);
  ck_assert_msg(strstr(jobs, line), "%s", jobs);
  rm_tree(dir);
}
END_TEST

/* A result file as sweep_run_job writes one. */
static void result(const Sweep *s, int v, const char *status, const char *error, gint64 p1, gint64 d1,
                   double score) {
  const SweepVariant *x = g_ptr_array_index(s->variants, v);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "status");
  json_builder_add_string_value(b, status);
  json_builder_set_member_name(b, "error");
  if (error)
    json_builder_add_string_value(b, error);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "grade");
  if (error) {
    json_builder_add_null_value(b);
  } else {
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "score");
    if (score > 0)
      json_builder_add_double_value(b, score);
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "problems");
    json_builder_begin_object(b);
    for (int k = 0; k < 2; k++) {
      json_builder_set_member_name(b, k ? "d1" : "p1");
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "status");
      json_builder_add_string_value(b, k ? "pass" : status);
      json_builder_set_member_name(b, "cycles");
      json_builder_add_int_value(b, k ? d1 : p1);
      json_builder_set_member_name(b, "peak_w");
      json_builder_add_double_value(b, k ? 19.5 : strcmp(status, "pass") ? 20.5 : 19.5);
      json_builder_set_member_name(b, "area_mm2");
      json_builder_add_double_value(b, 22.7192);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
  }
  json_builder_end_object(b);
  g_autoptr(JsonGenerator) g = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(g, root);
  g_autofree char *f = g_strconcat(s->dir, "/results/", x->name, ".json", NULL);
  ck_assert(json_generator_to_file(g, f, NULL));
}

START_TEST(test_collect) {
  g_autofree char *dir = tmpdir();
  static const char *const args[] = {"d1.store_spacing=0,16,32,48", NULL};
  g_autoptr(GPtrArray) sets = sets_of(args);
  g_autoptr(GError) err = NULL;
  g_autoptr(Sweep) s = sweep_expand(TOP_PATH("plans/baseline.yaml"), sets, dir, "tcc-sweep", NULL, NULL, &err);
  ck_assert_msg(s, "%s", err ? err->message : "?");
  result(s, 0, "pass", NULL, 802528, 124192, 1000.0);
  result(s, 1, "power", NULL, 700000, 120000, 0);
  result(s, 2, "refused", "x.yaml:1:2: error: a \"quoted\", comma", 0, 0, 0);
  guint bad = 0;
  g_autofree char *csv = sweep_collect(s, FALSE, &bad, &err);
  ck_assert_uint_eq(bad, 3);
  g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
  ck_assert_str_eq(lines[0], "d1.store_spacing,name,status,p1_status,p1_cycles,p1_peak_w,d1_status,d1_cycles,"
                             "d1_peak_w,area_mm2,score,error");
  const SweepVariant *x0 = g_ptr_array_index(s->variants, 0), *x2 = g_ptr_array_index(s->variants, 2);
  g_autofree char *row0 =
      g_strdup_printf("0,%s,pass,pass,802528,19.5000,pass,124192,19.5000,22.7192,1000.00,", x0->name);
  ck_assert_str_eq(lines[1], row0);
  ck_assert_msg(strstr(lines[2], ",power,power,700000,20.5000,pass,120000,19.5000,22.7192,,"), "%s", lines[2]);
  g_autofree char *row2 =
      g_strdup_printf("32,%s,refused,,,,,,,,,\"x.yaml:1:2: error: a \"\"quoted\"\", comma\"", x2->name);
  ck_assert_str_eq(lines[3], row2);
  ck_assert(g_str_has_prefix(lines[4], "48,") && g_str_has_suffix(lines[4], ",missing,,,,,,,,,no result yet"));
  ck_assert_str_eq(lines[5], "");
  g_autofree char *json = sweep_collect(s, TRUE, &bad, &err);
  g_autoptr(JsonParser) jp = json_parser_new();
  ck_assert(json_parser_load_from_data(jp, json, -1, NULL));
  JsonArray *rows = json_object_get_array_member(json_node_get_object(json_parser_get_root(jp)), "rows");
  ck_assert_uint_eq(json_array_get_length(rows), 4);
  JsonObject *r0 = json_array_get_object_element(rows, 0);
  ck_assert_int_eq(json_object_get_int_member(r0, "p1_cycles"), 802528);
  ck_assert(json_object_get_double_member(r0, "score") == 1000.0);
  ck_assert_int_eq(json_object_get_int_member(r0, "d1.store_spacing"), 0); /* a number, as the plan has it */
  ck_assert_int_eq(json_object_get_int_member(json_node_get_object(json_parser_get_root(jp)), "schema_version"), 1);
  ck_assert(json_object_get_null_member(json_array_get_object_element(rows, 3), "p1_cycles"));
  rm_tree(dir);
}
END_TEST

Suite *suite_sweep(void) {
  Suite *s = suite_create("sweep");
  TCase *t = tcase_create("sweep");
  tcase_add_test(t, test_set_parse);
  tcase_add_test(t, test_slurm_no_jobs);
  tcase_add_test(t, test_job_names);
  tcase_add_test(t, test_expand);
  tcase_add_test(t, test_collect);
  suite_add_tcase(s, t);
  return s;
}
