/* test_html.c - the page of tcc-grade --html (src/tools/html.c;
 * docs/tools.md "HTML report"): escaping (markup, quotes, bytes that are
 * not UTF-8, control characters), each knob's source, a page built from
 * hostile strings carries none of them as markup, the plots' ids are
 * kept apart, the same data give the same bytes, and the output file's
 * rules (not the plan itself; a temporary file renamed; a FIFO or device
 * written directly). */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "outfile.h"
#include "tests.h"

START_TEST(test_html_escape) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"", ""},
      {"plain text 1.5", "plain text 1.5"},
      {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
      {"a & b", "a &amp; b"},
      {"\"x\" 'y'", "&quot;x&quot; &#39;y&#39;"},
      {"&amp;", "&amp;amp;"},
      {"tab\tand\nnewline", "tab\tand\nnewline"},
      {"bell\a esc\x1b del\x7f", "bell\xef\xbf\xbd esc\xef\xbf\xbd del\xef\xbf\xbd"},
      {"caf\xc3\xa9", "caf\xc3\xa9"},                /* UTF-8 kept */
      {"bad \xff\xfe<", "bad \xef\xbf\xbd\xef\xbf\xbd&lt;"}, /* not UTF-8: U+FFFD */
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *got = html_escape(cases[i].in);
    ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %u: '%s' -> '%s', want '%s'", i, cases[i].in, got,
                  cases[i].out);
    ck_assert(g_utf8_validate(got, -1, NULL));
  }
  GString *g = g_string_new("x");
  html_escape_append(g, NULL); /* nothing */
  html_escape_append(g, "<");
  ck_assert_str_eq(g->str, "x&lt;");
  g_string_free(g, TRUE);
}
END_TEST

/* A plan with hostile knob values is impossible (the loader checks them),
 * so the knob table is checked on a real plan: each source. */
static Plan *load_text(const char *name, const char *text) {
  g_autoptr(GError) err = NULL;
  Plan *p = plan_parse(name, text, strlen(text), &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "");
  return p;
}

static int knob(const Schedule *s, const char *path) {
  for (int i = 0; i < SCHED_NKNOBS; i++)
    if (s->loc[i].path && strcmp(s->loc[i].path, path) == 0) return i;
  ck_abort_msg("no knob %s", path);
  return -1;
}

START_TEST(test_html_knob_source) {
  g_autoptr(Plan) plan = load_text("k.yaml", "version: 1\np1:\n  sms_used: 8\n  store_spacing: 5\n");
  Schedule s = plan->p1;
  HtmlKnobSource kind;
  int used = knob(&s, "p1.sms_used"), sp = knob(&s, "p1.store_spacing"), rt = knob(&s, "p1.row_tile");
  g_autofree char *a = html_knob_source(&s, used, &kind);
  ck_assert_str_eq(a, "plan line 3:3");
  ck_assert_int_eq(kind, HTML_KNOB_PLAN);
  g_autofree char *b = html_knob_source(&s, rt, &kind);
  ck_assert_str_eq(b, "default");
  ck_assert_int_eq(kind, HTML_KNOB_DEFAULT);
  s.fitted[sp] = 1;
  g_autofree char *c = html_knob_source(&s, sp, &kind);
  ck_assert_str_eq(c, "power.fit");
  ck_assert_int_eq(kind, HTML_KNOB_FIT);
  s.chosen[used] = SCHED_FALLBACK;
  g_autofree char *d = html_knob_source(&s, used, &kind);
  ck_assert_str_eq(d, "fallback (written at line 3:3)");
  ck_assert_int_eq(kind, HTML_KNOB_FALLBACK);
  s.chosen[used] = SCHED_AUTO;
  g_autofree char *e = html_knob_source(&s, used, &kind);
  ck_assert_str_eq(e, "auto (line 3:3)");
  ck_assert_int_eq(kind, HTML_KNOB_AUTO);
  s.chosen[rt] = SCHED_FALLBACK; /* a capacity repair of a knob the plan left */
  g_autofree char *f = html_knob_source(&s, rt, &kind);
  ck_assert_str_eq(f, "fallback (capacity repair)");
}
END_TEST

/* A page whose every free string is hostile: none of them is markup. */
static const char *const evil = "<script>alert('x')</script>\"&";
static const char svg[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                          "xmlns:xlink=\"http://www.w3.org/1999/xlink\" viewBox=\"0 0 10 10\"><defs><symbol "
                          "id=\"glyph0-1\"><path d=\"M0 0\"/></symbol><clipPath id=\"clip1\"><rect width=\"1\" "
                          "height=\"1\"/></clipPath></defs><g id=\"surface1\" clip-path=\"url(#clip1)\"><use "
                          "xlink:href=\"#glyph0-1\" x=\"1\" y=\"1\"/></g></svg>\n";

static void fill_page(HtmlPage *pg, const Plan *plan, HtmlStage *st) {
  static const uint64_t seeds[] = {7, 13, 11, 23};
  *pg = (HtmlPage){.plan = evil, .plan_sha256 = "ab", .grader = "tcc-grade 0", .simulator = "tcc-sim 0",
                   .loaded = plan, .seeds = seeds, .nseeds = 4, .has_score = FALSE, .score_note = evil, .nprob = 2};
  *st = (HtmlStage){evil, 0, 50, 4, 10, 2, 3, 1.5};
  for (int i = 0; i < 2; i++) {
    HtmlProblem *p = &pg->prob[i];
    p->name = i ? "d1" : "p1";
    p->problem = evil;
    p->machine = evil;
    p->pass = i == 0;
    p->failures = i ? "power" : "";
    p->hint = i ? evil : NULL;
    p->cycles = 100, p->peak_start = 3, p->peak_w = 19.5, p->area_mm2 = 20, p->static_w = 5, p->energy_uj = 2;
    for (int s = 0; s < 4; s++) p->max_abs_err[s] = 1e-6, p->numerics_ok[s] = TRUE;
    p->nbounds = 2;
    p->bound_name[0] = "mma", p->bound_name[1] = "power";
    p->bound_cycles[0] = 40, p->bound_cycles[1] = 50;
    p->binding = 1;
    p->min_dynamic_uj = 1, p->dynamic_budget_w = 15;
    p->nunits = 2;
    p->units[0] = (HtmlUnit){"MMA", 1.5, 1.0};
    p->units[1] = (HtmlUnit){"VEC", 0.5, NAN};
    p->nstages = 1;
    p->stages = st;
    p->svg = svg;
    p->planned = &plan->p1;
    p->sched = &plan->p1;
    static const char *const warnings[1] = {"<script>alert('x')</script>\"&"};
    p->warnings = warnings;
    p->nwarnings = 1;
    p->fit_note = evil;
    p->program_sha256 = evil;
    p->hardware_sha256 = "ef";
  }
}

START_TEST(test_html_page) {
  g_autoptr(Plan) plan = load_text("k.yaml", "version: 1\nhardware: {sms: 8}\np1:\n  sms_used: 8\n");
  HtmlPage pg;
  HtmlStage st;
  fill_page(&pg, plan, &st);
  g_autofree char *page = html_page(&pg);
  ck_assert(g_str_has_prefix(page, "<!DOCTYPE html>\n"));
  ck_assert(g_str_has_suffix(page, "</html>\n"));
  ck_assert(g_utf8_validate(page, -1, NULL));
  ck_assert_msg(strstr(page, "<script") == NULL && strstr(page, "alert('x')") == NULL, "hostile text as markup");
  ck_assert(strstr(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;") != NULL);
  /* nothing fetched: no external reference of any kind */
  ck_assert(strstr(page, "src=") == NULL && strstr(page, "url(http") == NULL);
  for (const char *h = strstr(page, "http"); h; h = strstr(h + 1, "http"))
    ck_assert_msg(g_str_has_prefix(h, "http://www.w3.org/"), "a reference: %.40s", h);
  ck_assert(strstr(page, "<link") == NULL && strstr(page, "@import") == NULL);
  /* the sections */
  static const char *const want[] = {"<table class=\"verdicts\">", "<table class=\"bounds\">",
                                     "<table class=\"stages\">", "<table class=\"units\">", "<table class=\"knobs\">",
                                     "program_sha256", "hardware_sha256", "p1.json", "d1.json",
                                     "<td class=\"src-plan\">plan line 4:3</td>", "knobs at their defaults"};
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) ck_assert_msg(strstr(page, want[i]) != NULL, "no %s", want[i]);
  /* two plots, no XML declaration, each one's ids its own */
  ck_assert(strstr(page, "<?xml") == NULL);
  ck_assert(strstr(page, "id=\"p1-glyph0-1\"") && strstr(page, "xlink:href=\"#p1-glyph0-1\""));
  ck_assert(strstr(page, "id=\"d1-glyph0-1\"") && strstr(page, "xlink:href=\"#d1-glyph0-1\""));
  ck_assert(strstr(page, "url(#d1-clip1)") && strstr(page, "id=\"p1-surface1\""));
  ck_assert(strstr(page, "id=\"glyph") == NULL && strstr(page, "\"#glyph") == NULL);
  /* the same data, the same bytes */
  g_autofree char *again = html_page(&pg);
  ck_assert_str_eq(page, again);
}
END_TEST

static char *tmp_dir(void) {
  char *d = g_dir_make_tmp("tcc-html-XXXXXX", NULL);
  ck_assert(d != NULL);
  return d;
}

static int entries(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d)) n++;
  return n;
}

START_TEST(test_html_out) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *plan = g_build_filename(dir, "plan.yaml", NULL);
  g_autofree char *hard = g_build_filename(dir, "link.html", NULL);
  g_autofree char *page = g_build_filename(dir, "page.html", NULL);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  ck_assert(g_file_set_contents(plan, "version: 1\n", -1, NULL));
  ck_assert(link(plan, hard) == 0);
  HtmlOut o;
  g_autoptr(GError) err = NULL;
  /* the plan itself, by its name or another: refused, untouched */
  ck_assert(!html_out_open(&o, plan, plan, &err));
  g_autofree char *w1 = g_strdup_printf("tcc-grade: error: --html %s is the plan itself", plan);
  ck_assert_str_eq(err->message, w1);
  g_clear_error(&err);
  ck_assert(!html_out_open(&o, hard, plan, &err));
  g_clear_error(&err);
  g_autofree char *kept = NULL;
  ck_assert(g_file_get_contents(plan, &kept, NULL, NULL) && strcmp(kept, "version: 1\n") == 0);
  ck_assert_int_eq(entries(dir), 2);
  /* a new file: a temporary one beside it until the commit, none after */
  ck_assert(html_out_open(&o, page, plan, &err));
  ck_assert(outfile_temp_path(o.out) != NULL && !g_file_test(page, G_FILE_TEST_EXISTS) && entries(dir) == 3);
  ck_assert(html_out_commit(&o, "<p>1</p>\n", 9, &err));
  g_autofree char *got = NULL;
  ck_assert(g_file_get_contents(page, &got, NULL, NULL) && strcmp(got, "<p>1</p>\n") == 0);
  ck_assert_int_eq(entries(dir), 3);
  /* an old page stays whole until the new one replaces it; an aborted run
   * leaves it and no temporary file */
  ck_assert(html_out_open(&o, page, plan, &err));
  html_out_abort(&o);
  g_autofree char *still = NULL;
  ck_assert(g_file_get_contents(page, &still, NULL, NULL) && strcmp(still, "<p>1</p>\n") == 0);
  ck_assert_int_eq(entries(dir), 3);
  /* a missing directory and a directory: one diagnostic each */
  g_autofree char *miss = g_build_filename(dir, "no", "p.html", NULL);
  ck_assert(!html_out_open(&o, miss, plan, &err));
  g_autofree char *w2 = g_strdup_printf("%s: error: cannot write: No such file or directory", miss);
  ck_assert_str_eq(err->message, w2);
  g_clear_error(&err);
  ck_assert(!html_out_open(&o, dir, plan, &err));
  g_autofree char *w3 = g_strdup_printf("%s: error: cannot write: Is a directory", dir);
  ck_assert_str_eq(err->message, w3);
  g_clear_error(&err);
  /* a device is written directly, never replaced */
  ck_assert(html_out_open(&o, "/dev/null", plan, &err));
  ck_assert(outfile_temp_path(o.out) == NULL);
  ck_assert(html_out_commit(&o, "x", 1, &err));
  ck_assert(g_file_test("/dev/null", G_FILE_TEST_EXISTS));
  /* a FIFO too: a reader gets the text */
  ck_assert(mkfifo(fifo, 0600) == 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert(rd >= 0);
  ck_assert(html_out_open(&o, fifo, plan, &err));
  ck_assert(outfile_temp_path(o.out) == NULL);
  ck_assert(html_out_commit(&o, "fifo", 4, &err));
  char buf[8] = {0};
  ck_assert_int_eq(read(rd, buf, sizeof buf), 4);
  ck_assert_str_eq(buf, "fifo");
  close(rd);
  GStatBuf sb;
  ck_assert(g_stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
  g_remove(fifo);
  g_remove(page);
  g_remove(hard);
  g_remove(plan);
  ck_assert_int_eq(entries(dir), 0);
  g_rmdir(dir);
}
END_TEST

Suite *suite_html(void) {
  Suite *s = suite_create("html");
  TCase *tc = tcase_create("html");
  tcase_add_test(tc, test_html_escape);
  tcase_add_test(tc, test_html_knob_source);
  tcase_add_test(tc, test_html_page);
  tcase_add_test(tc, test_html_out);
  suite_add_tcase(s, tc);
  return s;
}
