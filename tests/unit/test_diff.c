/* test_diff.c - tcc-diff's library (src/diff): the line-diff counts on
 * known inputs and against a brute-force LCS, the work limit's lower
 * bound, the knob list on effective values, and the per-task and per-WG
 * code summary of two small programs. */
#include <string.h>

#include <json-glib/json-glib.h>

#include "codediff.h"
#include "unified.h"
#include "diffreport.h"
#include "knobdiff.h"
#include "linediff.h"
#include "tests.h"

/* ---- line diff ---- */

/* Lines given as one string of single-character lines ("abc" = a, b, c). */
static DiffCount diff_chars(const char *a, const char *b) {
  gsize na = strlen(a), nb = strlen(b);
  g_autofree char *buf = g_malloc(2 * (na + nb) + 2);
  g_autofree const char **la = g_new(const char *, na + 1), **lb = g_new(const char *, nb + 1);
  char *p = buf;
  for (gsize i = 0; i < na; i++, p += 2) p[0] = a[i], p[1] = 0, la[i] = p;
  for (gsize i = 0; i < nb; i++, p += 2) p[0] = b[i], p[1] = 0, lb[i] = p;
  return diff_lines(la, na, lb, nb);
}

static const struct {
  const char *a, *b;
  gint64 added, removed;
} line_cases[] = {
    {"", "", 0, 0},
    {"abc", "abc", 0, 0},
    {"", "abc", 3, 0},
    {"abc", "", 0, 3},
    {"abc", "axbc", 1, 0},      /* one line inserted */
    {"abc", "ac", 0, 1},        /* one removed */
    {"abc", "axc", 1, 1},       /* one changed */
    {"ab", "ba", 1, 1},         /* a swap keeps one line */
    {"abcabba", "cbabac", 2, 3},/* Myers' paper: D = 5, LCS = 4 */
    {"aaa", "aa", 0, 1},        /* repeated lines */
    {"xabc", "cbay", 3, 3},     /* reversed, unique ends: LCS 1 */
    {"abcdef", "abXdeYf", 2, 1},
    {"aaaabbbb", "bbbbaaaa", 4, 4},
};

START_TEST(test_diff_lines_known) {
  for (guint i = 0; i < G_N_ELEMENTS(line_cases); i++) {
    DiffCount d = diff_chars(line_cases[i].a, line_cases[i].b);
    ck_assert_msg(d.exact && d.added == line_cases[i].added && d.removed == line_cases[i].removed,
                  "'%s' -> '%s': +%" G_GINT64_FORMAT " -%" G_GINT64_FORMAT ", want +%" G_GINT64_FORMAT
                  " -%" G_GINT64_FORMAT,
                  line_cases[i].a, line_cases[i].b, d.added, d.removed, line_cases[i].added,
                  line_cases[i].removed);
  }
}
END_TEST

/* The LCS length by dynamic programming, O(N M). */
static gsize lcs_dp(const guint *a, gsize na, const guint *b, gsize nb) {
  g_autofree gsize *row = g_new0(gsize, nb + 1);
  for (gsize i = 1; i <= na; i++) {
    gsize diag = 0;
    for (gsize j = 1; j <= nb; j++) {
      gsize up = row[j];
      row[j] = a[i - 1] == b[j - 1] ? diag + 1 : MAX(row[j], row[j - 1]);
      diag = up;
    }
  }
  return row[nb];
}

/* Random sequences over small alphabets (many repeats, some lines unique
 * to one side): the counts are na - LCS and nb - LCS. */
START_TEST(test_diff_ids_random) {
  GRand *r = g_rand_new_with_seed(12345);
  for (int t = 0; t < 500; t++) {
    gsize na = (gsize)g_rand_int_range(r, 0, 60), nb = (gsize)g_rand_int_range(r, 0, 60);
    guint alpha = (guint)g_rand_int_range(r, 1, 12);
    g_autofree guint *a = g_new(guint, na + 1), *b = g_new(guint, nb + 1);
    for (gsize i = 0; i < na; i++) a[i] = (guint)g_rand_int_range(r, 0, (gint32)alpha);
    for (gsize i = 0; i < nb; i++) b[i] = (guint)g_rand_int_range(r, 0, (gint32)alpha) + (t % 3 == 0 ? 5 : 0);
    gsize lcs = lcs_dp(a, na, b, nb);
    DiffCount d = diff_ids(a, na, b, nb, 0);
    ck_assert_msg(d.exact && d.removed == (gint64)(na - lcs) && d.added == (gint64)(nb - lcs),
                  "case %d (na %zu nb %zu alphabet %u): +%" G_GINT64_FORMAT " -%" G_GINT64_FORMAT
                  ", LCS %zu", t, na, nb, alpha, d.added, d.removed, lcs);
  }
  g_rand_free(r);
}
END_TEST

/* The edit script is a shortest one: replayed on a it gives b, and its
 * edits are the LCS's complement; past max_d, NULL. */
START_TEST(test_diff_edit_script) {
  GRand *r = g_rand_new_with_seed(777);
  for (int t = 0; t < 500; t++) {
    int na = g_rand_int_range(r, 0, 60), nb = g_rand_int_range(r, 0, 60);
    guint alpha = (guint)g_rand_int_range(r, 1, 12);
    g_autofree guint *a = g_new(guint, na + 1), *b = g_new(guint, nb + 1);
    for (int i = 0; i < na; i++) a[i] = (guint)g_rand_int_range(r, 0, (gint32)alpha);
    for (int i = 0; i < nb; i++) b[i] = (guint)g_rand_int_range(r, 0, (gint32)alpha);
    gsize lcs = lcs_dp(a, (gsize)na, b, (gsize)nb);
    GArray *ed = diff_edit_script(a, na, b, nb, 1000);
    ck_assert(ed);
    int xa = 0, xb = 0, edits = 0;
    for (guint s = 0; s < ed->len; s++) {
      guchar e = g_array_index(ed, guchar, s);
      if (e == 0) {
        ck_assert_msg(xa < na && xb < nb && a[xa] == b[xb], "case %d: a kept line differs", t);
        xa++, xb++;
      } else if (e == 1) {
        xa++, edits++;
      } else {
        xb++, edits++;
      }
    }
    ck_assert_msg(xa == na && xb == nb, "case %d: the script does not cover both sides", t);
    ck_assert_msg(edits == na + nb - 2 * (int)lcs, "case %d: %d edits, shortest %d", t, edits,
                  na + nb - 2 * (int)lcs);
    g_array_free(ed, TRUE);
    if (na + nb - 2 * (int)lcs > 1) ck_assert(diff_edit_script(a, na, b, nb, na + nb - 2 * (int)lcs - 1) == NULL);
  }
  g_rand_free(r);
}
END_TEST

/* Past the work limit: flagged, and the multisets' difference (here the
 * same lines in another order: nothing added or removed by multiset). */
START_TEST(test_diff_ids_limit) {
  const guint a[] = {1, 2, 3, 4, 5, 6, 7, 8}, b[] = {8, 7, 6, 5, 4, 3, 2, 1, 9};
  DiffCount d = diff_ids(a, 8, b, 9, 2);
  ck_assert(!d.exact);
  ck_assert_int_eq(d.added, 1); /* 9: absent from a, counted before the search */
  ck_assert_int_eq(d.removed, 0);
  DiffCount e = diff_ids(a, 8, b, 9, 0);
  ck_assert(e.exact);
  ck_assert_int_eq(e.added, 8); /* LCS 1 */
  ck_assert_int_eq(e.removed, 7);
}
END_TEST

START_TEST(test_diff_interner) {
  g_autoptr(DiffInterner) in = diff_interner_new();
  guint x = diff_intern(in, "LD x"), y = diff_intern(in, "LD y");
  ck_assert_uint_ne(x, y);
  ck_assert_uint_eq(diff_intern(in, "LD x"), x);
  ck_assert_uint_ne(x, 0);
}
END_TEST

/* ---- knobs ---- */

static Plan *parse(const char *name, const char *text) {
  g_autoptr(GError) err = NULL;
  Plan *p = plan_parse(name, text, strlen(text), &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  return p;
}

START_TEST(test_diff_knobs) {
  /* b writes sms_used and store_spacing at their defaults (no difference),
   * changes two hardware keys (listed in the schema's order, not the
   * file's), a knob, and a panel whose change moves the default k_chunk
   * (which depends on the panel) */
  g_autoptr(Plan) a = parse("a.yaml", "version: 1\nd1:\n  panels: {w1: 32}\n");
  g_autoptr(Plan) b = parse("b.yaml", "version: 1\nhardware: {multicast: false, dma: {depth: 2}}\n"
                                      "d1:\n  sms_used: 16\n  store_spacing: 0\n  panels: {w1: 128}\n"
                                      "  attention: {slices: 2}\n");
  gboolean on[2] = {[PROB_D1] = TRUE, [PROB_P1] = TRUE};
  g_autoptr(GArray) k = diff_knobs(a, b, on);
  static const char *const want[][3] = {{"hardware.dma.depth", "1", "2"},
                                        {"hardware.multicast", "true", "false"},
                                        {"d1.panels.w1", "32", "128"},
                                        {"d1.k_chunk.w1", "128", "64"},
                                        {"d1.attention.slices", "1", "2"}};
  ck_assert_uint_eq(k->len, G_N_ELEMENTS(want));
  for (guint i = 0; i < k->len; i++) {
    const KnobDiff *d = &g_array_index(k, KnobDiff, i);
    ck_assert_str_eq(d->path, want[i][0]);
    ck_assert_str_eq(d->a, want[i][1]);
    ck_assert_str_eq(d->b, want[i][2]);
  }
  const KnobDiff *d = &g_array_index(k, KnobDiff, 0);
  ck_assert_int_eq(d->a_loc.line, 0); /* a: the default */
  ck_assert_int_eq(d->b_loc.line, 2);
  g_autofree char *sa = diff_knob_side(d->a, d->a_loc), *sb = diff_knob_side(d->b, d->b_loc);
  ck_assert_str_eq(sa, "1 (default)");
  ck_assert_str_eq(sb, "2 (line 2)");
  /* p1 alone: the hardware keys only */
  gboolean p1[2] = {[PROB_P1] = TRUE};
  g_autoptr(GArray) kp = diff_knobs(a, b, p1);
  ck_assert_uint_eq(kp->len, 2);
  /* a plan against itself: nothing */
  g_autoptr(GArray) k0 = diff_knobs(b, b, on);
  ck_assert_uint_eq(k0->len, 0);
}
END_TEST

/* ---- code ---- */

#define HEAD \
  ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0\n" \
  ".problem d1 d_model=32 heads=1 d_ff=64 layers=1 history=32 steps=2\n"

/* a: t.a and t.b on wg0, t.c on wg1.  b: t.a's VEC.mul became a VEC.sub,
 * t.b cites another plan line (no difference), t.c moved to wg2, a new
 * task t.d on wg0, and y moved to partition 1 (an RF change). */
static const char prog_a[] = HEAD
    ".wg 0\n"
    ".rf x p0 1x32\n"
    ".rf y p0+128 1x32\n"
    "    LD        x, hbm[x_in]     ; d1.k:1 t.a\n"
    "    VEC.add   x, x, y          ; d1.k:1 t.a\n"
    "    VEC.mul   x, x, y          ; d1.k:1 t.a\n"
    "    SIG       ev.e, 1          ; d1.k:2 t.b\n"
    "    END\n"
    ".wg 1\n"
    ".rf z p0 1x32\n"
    "    WAIT      ev.e, 1          ; t.c\n"
    "    VEC.copy  z, z             ; t.c\n"
    "    END\n";
static const char prog_b[] = HEAD
    ".wg 0\n"
    ".rf x p0 1x32\n"
    ".rf y p1 1x32\n"
    "    LD        x, hbm[x_in]     ; d1.k:1 t.a\n"
    "    VEC.add   x, x, y          ; d1.k:1 t.a\n"
    "    VEC.sub   x, x, y          ; d1.k:1 t.a\n"
    "    SIG       ev.e, 1          ; d1.k:9 t.b\n"
    "    SFU.exp   y, y             ; t.d\n"
    "    END\n"
    ".wg 2\n"
    ".rf z p0 1x32\n"
    "    WAIT      ev.e, 1          ; t.c\n"
    "    VEC.copy  z, z             ; t.c\n"
    "    END\n";

static Program *assemble(const char *name, const char *text) {
  g_autoptr(GError) err = NULL;
  Program *p = sim_asm_parse(name, text, strlen(text), &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  return p;
}

static const CodeUnit *unit(const GArray *units, guint i) { return &g_array_index(units, CodeUnit, i); }

/* The unified diff of prog_a and prog_b: only the WGs that differ, each
 * hunk at its .asm lines with the task of its first change, the lines
 * whole; nothing for a program against itself. */
START_TEST(test_diff_unified) {
  g_autoptr(Program) a = assemble("a.asm", prog_a), b = assemble("b.asm", prog_b);
  int shown = -1;
  g_autofree char *u = diff_unified(a, b, "A", "B", 3, 100, &shown);
  ck_assert_int_gt(shown, 0);
  ck_assert_msg(strstr(u, "--- A wg 0\n+++ B wg 0\n@@ -"), "%s", u);
  g_auto(GStrv) lines = g_strsplit(u, "\n", -1);
  int minus = 0, plus = 0;
  for (char **l = lines; *l; l++) {
    minus += **l == '-' && strncmp(*l, "--- ", 4) != 0;
    plus += **l == '+' && strncmp(*l, "+++ ", 4) != 0;
  }
  g_autoptr(CodeDiff) d = diff_code(a, b);
  ck_assert_int_eq(minus, (int)d->lines.removed);
  ck_assert_int_eq(plus, (int)d->lines.added);
  int differ = 0; /* the WGs whose instructions differ (an RF change alone is no code) */
  for (guint w = 0; w < d->wgs->len; w++) {
    const CodeUnit *u = &g_array_index(d->wgs, CodeUnit, w);
    differ += u->lines.added + u->lines.removed > 0;
  }
  ck_assert_int_eq(shown, differ);
  g_autofree char *same = diff_unified(a, a, "A", "A", 3, 100, &shown);
  ck_assert_str_eq(same, "");
  ck_assert_int_eq(shown, 0);
  /* too many edits for the limit: the WG whole, said in its hunk header */
  g_autofree char *whole = diff_unified(a, b, "A", "B", 3, 0, &shown);
  ck_assert_msg(strstr(whole, "more than 0 edits: the WG whole, removed and added"), "%s", whole);
}
END_TEST

START_TEST(test_diff_code) {
  g_autoptr(Program) a = assemble("a.asm", prog_a), b = assemble("b.asm", prog_b);
  g_autoptr(CodeDiff) d = diff_code(a, b);
  ck_assert_uint_eq(d->tasks->len, 4);
  const CodeUnit *ta = unit(d->tasks, 0), *tb = unit(d->tasks, 1), *tc = unit(d->tasks, 2),
                 *td = unit(d->tasks, 3);
  ck_assert_str_eq(ta->name, "t.a");
  ck_assert_str_eq(tb->name, "t.b");
  ck_assert_str_eq(tc->name, "t.c");
  ck_assert_str_eq(td->name, "t.d"); /* b's new task last */
  ck_assert(ta->changed && ta->lines.added == 1 && ta->lines.removed == 1);
  ck_assert_int_eq(ta->count_a[IC_VEC], 2);
  ck_assert_int_eq(ta->count_b[IC_VEC], 2);
  ck_assert_int_eq(ta->count_a[IC_LD], 1);
  ck_assert(!tb->changed && tb->lines.added == 0 && tb->lines.removed == 0);
  ck_assert(tc->changed && tc->lines.added == 0 && tc->lines.removed == 0);
  ck_assert_int_eq(tc->wg_a, 1);
  ck_assert_int_eq(tc->wg_b, 2);
  ck_assert_int_eq(td->wg_a, -1);
  ck_assert_int_eq(td->wg_b, 0);
  ck_assert(td->lines.added == 1 && td->lines.removed == 0 && td->count_b[IC_SFU] == 1);
  ck_assert_int_eq(d->tasks_changed, 3);

  ck_assert_uint_eq(d->wgs->len, 64);
  const CodeUnit *w0 = unit(d->wgs, 0), *w1 = unit(d->wgs, 1), *w2 = unit(d->wgs, 2);
  ck_assert_int_eq(w0->lines_a, 5);
  ck_assert_int_eq(w0->lines_b, 6);
  ck_assert(w0->lines.added == 2 && w0->lines.removed == 1);
  ck_assert(w0->rf.added == 1 && w0->rf.removed == 1 && w0->rf_a == 2);
  ck_assert_int_eq(w0->count_a[IC_SYNC], 2); /* SIG, END */
  ck_assert(w1->lines.added == 0 && w1->lines.removed == 3 && w1->rf.removed == 1);
  ck_assert(w2->lines.added == 3 && w2->lines.removed == 0 && w2->rf.added == 1);
  ck_assert(!unit(d->wgs, 3)->changed);
  ck_assert_int_eq(d->wgs_changed, 3);
  ck_assert_int_eq(d->lines_a, 8);
  ck_assert_int_eq(d->lines_b, 9);
  ck_assert(d->lines.exact && d->lines.added == 5 && d->lines.removed == 4);

  /* a program against itself: nothing changed */
  g_autoptr(CodeDiff) same = diff_code(a, a);
  ck_assert_int_eq(same->tasks_changed, 0);
  ck_assert_int_eq(same->wgs_changed, 0);
  ck_assert(same->lines.added == 0 && same->lines.removed == 0);
}
END_TEST

START_TEST(test_diff_classes) {
  ck_assert_int_eq(diff_insn_class(OP_LD), IC_LD);
  ck_assert_int_eq(diff_insn_class(OP_ST), IC_ST);
  ck_assert_int_eq(diff_insn_class(OP_MMA), IC_MMA);
  ck_assert_int_eq(diff_insn_class(OP_VFMA), IC_VEC);
  ck_assert_int_eq(diff_insn_class(OP_SRECIP), IC_SFU);
  ck_assert_int_eq(diff_insn_class(OP_RED), IC_RED);
  ck_assert_int_eq(diff_insn_class(OP_WAITT), IC_SYNC);
  ck_assert_int_eq(diff_insn_class(OP_END), IC_SYNC);
}
END_TEST

/* ---- reports ---- */

/* A report of the two small programs with made-up runs: b is slower, over
 * the power budget, and its numerics fail. */
static void fake_report(DiffReport *r, Program *a, Program *b, GArray *knobs) {
  *r = (DiffReport){.file = {"a.yaml", "b.yaml"}, .seed = 13, .knobs = knobs, .limit = 0};
  ProblemDiff *p = &r->prob[PROB_D1];
  p->on = TRUE;
  p->code = diff_code(a, b);
  for (int s = 0; s < 2; s++) {
    SimResult *x = &p->res[s];
    x->cycles = s ? 1500 : 1000;
    x->area_mm2 = 22.7192;
    x->peak_w = s ? 21.5 : 19.25;
    x->peak_start = s ? 300 : 200;
    x->hbm_lines = 640;
    x->unit_busy[UC_MMA] = s ? 0.25 : 0.5;
    x->checked = TRUE;
    x->check.max_abs_err = s ? 0.5 : 1e-6;
    x->check.pass = !s;
  }
}

static JsonObject *member(JsonObject *o, const char *name) {
  ck_assert_msg(json_object_has_member(o, name), "no member %s", name);
  return json_object_get_object_member(o, name);
}

START_TEST(test_diff_json) {
  g_autoptr(Program) a = assemble("a.asm", prog_a), b = assemble("b.asm", prog_b);
  g_autoptr(GArray) knobs = g_array_new(FALSE, TRUE, sizeof(KnobDiff));
  KnobDiff k = {.path = "d1.store_spacing", .a = "0", .b = "32", .b_loc = {7, 3, "d1.store_spacing"}};
  g_array_append_val(knobs, k);
  DiffReport r;
  fake_report(&r, a, b, knobs);
  g_autofree char *text = diff_report_json(&r);
  g_autoptr(JsonParser) jp = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(jp, text, -1, &err), "%s", err ? err->message : "?");
  JsonObject *root = json_node_get_object(json_parser_get_root(jp));
  ck_assert_str_eq(json_object_get_string_member(root, "tool"), TCC_DIFF_VERSION);
  ck_assert_int_eq(json_object_get_int_member(root, "schema_version"), 1);
  ck_assert_str_eq(json_object_get_string_member(root, "b"), "b.yaml");
  ck_assert_int_eq(json_object_get_int_member(root, "seed"), 13);
  JsonObject *k0 = json_array_get_object_element(json_object_get_array_member(root, "knobs"), 0);
  ck_assert_str_eq(json_object_get_string_member(k0, "path"), "d1.store_spacing");
  ck_assert(json_object_get_null_member(k0, "a_line"));
  ck_assert_int_eq(json_object_get_int_member(k0, "b_line"), 7);
  /* a number of the plan is a JSON number */
  JsonNode *kb = json_object_get_member(k0, "b");
  ck_assert(kb && JSON_NODE_HOLDS_VALUE(kb) && json_node_get_value_type(kb) == G_TYPE_INT64);
  JsonArray *probs = json_object_get_array_member(root, "problems");
  ck_assert_uint_eq(json_array_get_length(probs), 1);
  JsonObject *p = json_array_get_object_element(probs, 0);
  ck_assert_str_eq(json_object_get_string_member(p, "problem"), "d1");
  JsonObject *code = member(p, "code"), *tasks = member(code, "tasks");
  ck_assert_int_eq(json_object_get_int_member(member(code, "lines"), "added"), 5);
  ck_assert_int_eq(json_object_get_int_member(tasks, "unchanged"), 1);
  JsonArray *changed = json_object_get_array_member(tasks, "changed");
  ck_assert_uint_eq(json_array_get_length(changed), 3);
  JsonObject *td = json_array_get_object_element(changed, 2);
  ck_assert_str_eq(json_object_get_string_member(td, "task"), "t.d");
  ck_assert(json_object_get_null_member(td, "wg_a"));
  ck_assert_int_eq(json_object_get_int_member(member(member(td, "counts"), "sfu"), "delta"), 1);
  JsonArray *wgs = json_object_get_array_member(member(code, "wgs"), "changed");
  ck_assert_int_eq(json_object_get_int_member(member(json_array_get_object_element(wgs, 0), "rf"), "added"), 1);
  JsonObject *m = member(p, "metrics"), *cyc = member(m, "cycles");
  ck_assert_int_eq(json_object_get_int_member(cyc, "delta"), 500);
  ck_assert(json_object_get_double_member(cyc, "ratio") == 1.5);
  ck_assert(json_object_get_double_member(member(m, "peak_w"), "delta") == 2.25);
  ck_assert(json_object_get_double_member(member(member(m, "busy_pct"), "MMA"), "b") == 25.0);
  ck_assert(json_object_get_null_member(member(member(m, "busy_pct"), "REDUCE"), "ratio"));
  ck_assert_int_eq(json_object_get_int_member(member(m, "window"), "delta"), 100);
  ck_assert_str_eq(json_object_get_string_member(member(m, "status"), "a"), "pass");
  ck_assert_str_eq(json_object_get_string_member(member(m, "status"), "b"), "numerics");
  ck_assert(json_object_get_double_member(member(m, "max_abs_err"), "b") == 0.5);

  g_autofree char *t = diff_report_text(&r);
  ck_assert_msg(strstr(t, "\n  d1.store_spacing: 0 (default) -> 32 (line 7)\n"), "%s", t);
  ck_assert_msg(strstr(t, "\nd1 code: 3 of 4 tasks changed, 3 of 64 WGs changed; instructions 8 -> 9 (+5 -4)\n"), "%s", t);
  ck_assert_msg(strstr(t, "\nd1 metrics (seed 13) "), "%s", t);
  ck_assert_msg(strstr(t, "  1 task unchanged (1 instruction)\n"), "%s", t);
  diff_code_free(r.prob[PROB_D1].code);
}
END_TEST

Suite *suite_diff(void) {
  Suite *s = suite_create("diff");
  TCase *tc = tcase_create("diff");
  tcase_add_test(tc, test_diff_lines_known);
  tcase_add_test(tc, test_diff_ids_random);
  tcase_add_test(tc, test_diff_ids_limit);
  tcase_add_test(tc, test_diff_edit_script);
  tcase_add_test(tc, test_diff_unified);
  tcase_add_test(tc, test_diff_interner);
  tcase_add_test(tc, test_diff_knobs);
  tcase_add_test(tc, test_diff_code);
  tcase_add_test(tc, test_diff_classes);
  tcase_add_test(tc, test_diff_json);
  suite_add_tcase(s, tc);
  return s;
}
