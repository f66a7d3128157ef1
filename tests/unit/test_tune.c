/* test_tune.c - tcc-tune's library (tune.h): --knob parsing (ranges, lists,
 * every usage error); tune_new on a template written here (the start read
 * from the template, written or default, integers compared as integers,
 * every error); the search with a synthetic evaluator that reads the knobs
 * back out of each point's plan text (no compile), measuring in prepare or
 * on the worker threads: it improves to the known optimum, its best points
 * improve strictly under the ranking (pass, then over a limit, then error),
 * it is deterministic for a seed and whatever the number of threads, it
 * never measures a point twice, its candidates move 1 to 3 knobs within the
 * step around the best they were drawn from, it stops early on an exhausted
 * space and fails on a start that does not compile; the CSV log (quoting)
 * and the best plan; and one small run of the real evaluator (compile and
 * simulate) on a tiny template.  A range whose width overflows int64 is
 * refused (it was accepted with a garbage count before). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "plan.h"
#include "plan_edit.h"
#include "tests.h"
#include "tune.h"

/* Both problems at tiny dims (tests/sweep/tiny.yaml), with the knobs the
 * tests search written out; the comment must not reach the best plan. */
static const char TEMPLATE[] =
    "# test_tune.c's template: a comment the edited plans do not keep\n"
    "version: 1\n"
    "hardware:\n"
    "  sms: 16\n"
    "p1:\n"
    "  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}\n"
    "  layout: row\n"
    "  store_spacing: {default: 8, wo: 100, qkv: 4, w2: 0}\n"
    "d1:\n"
    "  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, history: 32, steps: 2}\n"
    "  store_spacing: 0\n";

static char *tmpdir(void) {
  g_autoptr(GError) err = NULL;
  char *d = g_dir_make_tmp("tcc-tune-XXXXXX", &err);
  ck_assert_msg(d, "%s", err ? err->message : "?");
  return d;
}

static void rm_tree(const char *dir) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* `text` written to DIR/name; the path. */
static char *write_plan(const char *dir, const char *name, const char *text) {
  char *f = g_build_filename(dir, name, NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(g_file_set_contents(f, text, -1, &err), "%s", err ? err->message : "?");
  return f;
}

static GPtrArray *knobs_of(const char *const *args) {
  GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify)tune_knob_free);
  for (int i = 0; args[i]; i++) {
    g_autoptr(GError) err = NULL;
    TuneKnob *k = tune_knob_parse(args[i], &err);
    ck_assert_msg(k, "%s: %s", args[i], err ? err->message : "?");
    g_ptr_array_add(a, k);
  }
  return a;
}

static const TuneKnob *knob(const Tune *t, guint i) { return g_ptr_array_index(t->knobs, i); }
static const TunePoint *point(const Tune *t, guint i) { return g_ptr_array_index(t->points, i); }

/* ---- tune_knob_parse ---------------------------------------------------- */

START_TEST(test_knob_parse) {
  g_autoptr(GError) err = NULL;
  g_autoptr(TuneKnob) r = tune_knob_parse("p1.store_spacing.wo=60..160", &err);
  ck_assert_msg(r, "%s", err ? err->message : "?");
  ck_assert_str_eq(r->path, "p1.store_spacing.wo");
  ck_assert(r->range);
  ck_assert_int_eq(r->lo, 60);
  ck_assert_int_eq(r->hi, 160);
  ck_assert_uint_eq(tune_knob_count(r), 101);
  g_autofree char *r0 = tune_knob_value(r, 0), *r1 = tune_knob_value(r, 1), *rl = tune_knob_value(r, 100);
  ck_assert_str_eq(r0, "60");
  ck_assert_str_eq(r1, "61");
  ck_assert_str_eq(rl, "160");

  g_autoptr(TuneKnob) l = tune_knob_parse("p1.layout=row,packed_x", &err);
  ck_assert_msg(l, "%s", err ? err->message : "?");
  ck_assert_str_eq(l->path, "p1.layout");
  ck_assert(!l->range);
  ck_assert_uint_eq(tune_knob_count(l), 2);
  g_autofree char *l0 = tune_knob_value(l, 0), *l1 = tune_knob_value(l, 1);
  ck_assert_str_eq(l0, "row");
  ck_assert_str_eq(l1, "packed_x");

  /* negative bounds; the largest range; list values trimmed, in order; a
   * list value may hold ".." (only a value without a comma is a range) */
  g_autoptr(TuneKnob) n = tune_knob_parse("d1.store_spacing=-5..5", &err);
  ck_assert_msg(n, "%s", err ? err->message : "?");
  ck_assert_uint_eq(tune_knob_count(n), 11);
  g_autofree char *n0 = tune_knob_value(n, 0), *n5 = tune_knob_value(n, 5);
  ck_assert_str_eq(n0, "-5");
  ck_assert_str_eq(n5, "0");
  g_autoptr(TuneKnob) big = tune_knob_parse("a.b=0..999999", &err);
  ck_assert_msg(big, "%s", err ? err->message : "?");
  ck_assert_uint_eq(tune_knob_count(big), TUNE_MAX_VALUES);
  g_autoptr(TuneKnob) t = tune_knob_parse("a.b_2.c= 32 ,16,1..2", &err);
  ck_assert_msg(t, "%s", err ? err->message : "?");
  ck_assert(!t->range);
  ck_assert_uint_eq(tune_knob_count(t), 3);
  g_autofree char *t0 = tune_knob_value(t, 0), *t1 = tune_knob_value(t, 1), *t2 = tune_knob_value(t, 2);
  ck_assert_str_eq(t0, "32");
  ck_assert_str_eq(t1, "16");
  ck_assert_str_eq(t2, "1..2");

  static const char *const bad[][2] = {
      {"p1.store_spacing", "--knob p1.store_spacing: expected KEY.PATH=LO..HI or KEY.PATH=V1,V2,..."},
      {"d1..x=1", "--knob d1..x=1: 'd1..x' is not a plan path (keys of letters, digits and _, joined by dots: "
                  "p1.store_spacing.wo)"},
      {"=1..2", "--knob =1..2: '' is not a plan path (keys of letters, digits and _, joined by dots: "
                "p1.store_spacing.wo)"},
      {"a.b=5..3", "--knob a.b=5..3: a range needs LO < HI and at most 1000000 values"},
      {"a.b=3..3", "--knob a.b=3..3: a range needs LO < HI and at most 1000000 values"},
      {"a.b=0..1000000", "--knob a.b=0..1000000: a range needs LO < HI and at most 1000000 values"},
      {"a.b=x..3", "--knob a.b=x..3: a range is two integers, LO..HI"},
      {"a.b=1..", "--knob a.b=1..: a range is two integers, LO..HI"},
      {"a.b=1..2..3", "--knob a.b=1..2..3: a range is two integers, LO..HI"},
      {"a.b=1..99999999999999999999", "--knob a.b=1..99999999999999999999: a range is two integers, LO..HI"},
      {"a.b=7", "--knob a.b=7: a knob needs at least two values"},
      {"a.b=1,,2", "--knob a.b=1,,2: value 2 ('') is not a plain YAML scalar"},
      {"a.b=", "--knob a.b=: no values after '=' (expected V1,V2,...)"},
      {"a.b=1,1", "--knob a.b=1,1: value '1' is given twice"},
      {"a.b=1, 2,2 ", "--knob a.b=1, 2,2 : value '2' is given twice"},
      {"a.b={x}", "--knob a.b={x}: value 1 ('{x}') is not a plain YAML scalar"},
      {"a.b=1,x: y", "--knob a.b=1,x: y: value 2 ('x: y') is not a plain YAML scalar"},
      {"a.b=1,'2'", "--knob a.b=1,'2': value 2 (''2'') is not a plain YAML scalar"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) e = NULL;
    g_autoptr(TuneKnob) b = tune_knob_parse(bad[i][0], &e);
    ck_assert_msg(!b, "accepted %s", bad[i][0]);
    ck_assert_msg(e && e->domain == TUNE_ERROR && e->code == TUNE_ERROR_USAGE, "%s: wrong error", bad[i][0]);
    ck_assert_str_eq(e->message, bad[i][1]);
  }
}
END_TEST

/* A range whose width overflows int64: rejected, like any range over
 * TUNE_MAX_VALUES, without computing HI - LO in signed arithmetic. */
START_TEST(test_knob_parse_wide_range) {
  static const char *const wide[] = {"a.b=-9000000000000000000..9000000000000000000",
                                     "a.b=-9223372036854775808..9223372036854775807"};
  for (size_t i = 0; i < G_N_ELEMENTS(wide); i++) {
    g_autoptr(GError) e = NULL;
    g_autoptr(TuneKnob) k = tune_knob_parse(wide[i], &e);
    ck_assert_msg(!k, "accepted %s", wide[i]);
    g_autofree char *want = g_strdup_printf("--knob %s: a range needs LO < HI and at most 1000000 values", wide[i]);
    ck_assert_str_eq(e->message, want);
  }
  /* spaces around a range's bounds, as around a list's values */
  g_autoptr(GError) e = NULL;
  g_autoptr(TuneKnob) k = tune_knob_parse("a.b= -2 .. 5 ", &e);
  ck_assert_msg(k, "%s", e ? e->message : "?");
  ck_assert(k->range && k->lo == -2 && k->hi == 5);
  ck_assert_uint_eq(tune_knob_count(k), 8);
}
END_TEST

/* ---- tune_new ------------------------------------------------------------ */

/* tune_new on `knob_args` (it takes them); NULL with *err. */
static Tune *new_tune(const char *tmpl, const char *const *knob_args, GError **err) {
  TuneOptions o;
  tune_options_default(&o);
  return tune_new(tmpl, knobs_of(knob_args), &o, err);
}

/* tune_new must fail with this message (a usage error unless `code`). */
static void new_fails(const char *tmpl, const char *const *knob_args, int code, const char *msg) {
  g_autoptr(GError) e = NULL;
  g_autoptr(Tune) t = new_tune(tmpl, knob_args, &e);
  ck_assert_msg(!t, "accepted %s", knob_args[0] ? knob_args[0] : "no knob");
  ck_assert(e);
  ck_assert_msg(e->domain == TUNE_ERROR && e->code == code, "%s: domain %s code %d", e->message,
                g_quark_to_string(e->domain), e->code);
  ck_assert_str_eq(e->message, msg);
}

START_TEST(test_new) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  g_autoptr(GError) err = NULL;
  /* the start: each knob's index of the template's value */
  static const char *const args[] = {"p1.store_spacing.wo=60..160", "p1.store_spacing.default=16,8,0",
                                     "d1.store_spacing=-3..5", "hardware.sms=8..20", "p1.layout=packed,row", NULL};
  g_autoptr(Tune) t = new_tune(tmpl, args, &err);
  ck_assert_msg(t, "%s", err ? err->message : "?");
  ck_assert_str_eq(t->template_path, tmpl);
  ck_assert_uint_eq(t->len, strlen(TEMPLATE));
  ck_assert_str_eq(t->text, TEMPLATE);
  ck_assert_uint_eq(t->knobs->len, 5);
  ck_assert_uint_eq(t->points->len, 1);
  ck_assert_int_eq(t->rounds_run, 0);
  const TunePoint *s = point(t, 0);
  ck_assert_int_eq(s->round, 0);
  ck_assert_int_eq(s->candidate, 0);
  static const guint want[] = {40, 1, 3, 8, 1};
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) ck_assert_uint_eq(s->idx[i], want[i]);
  g_autofree char *v0 = tune_knob_value(knob(t, 0), s->idx[0]), *v3 = tune_knob_value(knob(t, 3), s->idx[3]);
  ck_assert_str_eq(v0, "100");
  ck_assert_str_eq(v3, "16");

  /* a range compares integers ("-0" is 0), a list compares text */
  g_autofree char *neg = g_strdup(TEMPLATE);
  char *z = strstr(neg, "  store_spacing: 0\n");
  ck_assert(z);
  g_autofree char *neg_text = g_strdup_printf("%.*s  store_spacing: -0\n", (int)(z - neg), neg);
  g_autofree char *tmpl0 = write_plan(dir, "neg.yaml", neg_text);
  {
    g_autoptr(Plan) p = plan_load(tmpl0, &err);
    ck_assert_msg(p, "%s", err ? err->message : "?"); /* the plan loader takes -0 */
  }
  static const char *const zr[] = {"d1.store_spacing=0..4", NULL}, *const zl[] = {"d1.store_spacing=0,1", NULL};
  g_autoptr(Tune) t0 = new_tune(tmpl0, zr, &err);
  ck_assert_msg(t0, "%s", err ? err->message : "?");
  ck_assert_uint_eq(point(t0, 0)->idx[0], 0);
  new_fails(tmpl0, zl, TUNE_ERROR_USAGE,
            "--knob d1.store_spacing: the template sets it to '-0'; the search starts from the template's value, "
            "one of the knob's (0, ..., 1)");

  /* a knob the template does not write starts at its default (what the
   * plan loader makes of the template); it must be one of the knob's values */
  {
    g_autoptr(Plan) p = plan_load(tmpl, &err);
    ck_assert_msg(p, "%s", err ? err->message : "?");
    ck_assert_int_eq(p->p1.stage_spacing[SPACE_W1], 8); /* store_spacing.default */
    static const char *const dflt[] = {"p1.store_spacing.w1=0..20", "d1.attention.slices=1..8",
                                       "hardware.dma.engines=1..8", NULL};
    g_autoptr(Tune) td = new_tune(tmpl, dflt, &err);
    ck_assert_msg(td, "%s", err ? err->message : "?");
    ck_assert_uint_eq(point(td, 0)->idx[0], 8);
    ck_assert_uint_eq(point(td, 0)->idx[1], (guint)(p->d1.attn_slices - 1));
    ck_assert_uint_eq(point(td, 0)->idx[2], (guint)(p->hw.dma_engines - 1));
    g_autofree char *unset_msg =
        g_strdup_printf("--knob d1.attention.slices: the template leaves it at its default, '%d'; the search starts "
                        "from the template's value, one of the knob's (%d..12)", p->d1.attn_slices,
                        p->d1.attn_slices + 1);
    g_autofree char *unset_arg = g_strdup_printf("d1.attention.slices=%d..12", p->d1.attn_slices + 1);
    const char *const unset[] = {unset_arg, NULL};
    new_fails(tmpl, unset, TUNE_ERROR_USAGE, unset_msg);
  }
  /* errors */
  static const char *const unset2[] = {"p1.store_spacing.w1=10..20", NULL};
  new_fails(tmpl, unset2, TUNE_ERROR_USAGE,
            "--knob p1.store_spacing.w1: the template leaves it at its default, '8'; the search starts from the "
            "template's value, one of the knob's (10..20)");
  static const char *const nokey[] = {"d1.no_such_knob=0..4", NULL};
  new_fails(tmpl, nokey, TUNE_ERROR_USAGE,
            "--knob d1.no_such_knob: not a key of a plan (docs/plan.md lists the knobs, hardware keys under "
            "hardware.)");
  static const char *const outside[] = {"p1.store_spacing.wo=0..10", "d1.store_spacing=5..10", NULL};
  new_fails(tmpl, outside, TUNE_ERROR_USAGE,
            "--knob p1.store_spacing.wo: the template sets it to '100'; the search starts from the template's "
            "value, one of the knob's (0..10)");
  static const char *const outside2[] = {"d1.store_spacing=5..10", NULL};
  new_fails(tmpl, outside2, TUNE_ERROR_USAGE,
            "--knob d1.store_spacing: the template sets it to '0'; the search starts from the template's value, "
            "one of the knob's (5..10)");
  static const char *const outside3[] = {"p1.store_spacing.default=0,16,32", NULL};
  new_fails(tmpl, outside3, TUNE_ERROR_USAGE,
            "--knob p1.store_spacing.default: the template sets it to '8'; the search starts from the template's "
            "value, one of the knob's (0, ..., 32)");
  static const char *const twice[] = {"d1.store_spacing=0..4", "p1.store_spacing.wo=0..100", "d1.store_spacing=0,1",
                                      NULL};
  new_fails(tmpl, twice, TUNE_ERROR_USAGE, "--knob d1.store_spacing: the knob is given twice");
  /* no knob: the schema's space (tune_new derives it; test_derived) */
  const char *many[TUNE_MAX_KNOBS + 2];
  g_autoptr(GPtrArray) many_text = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i <= TUNE_MAX_KNOBS; i++) {
    g_ptr_array_add(many_text, g_strdup_printf("a.k%d=0..1", i));
    many[i] = g_ptr_array_index(many_text, i);
  }
  many[TUNE_MAX_KNOBS + 1] = NULL;
  new_fails(tmpl, many, TUNE_ERROR_USAGE, "give at most 1024 --knob options");
  /* a path through a value, a path to a mapping (plan_edit's messages) */
  static const char *const through[] = {"d1.store_spacing.wo=0..4", NULL};
  new_fails(tmpl, through, TUNE_ERROR_USAGE, "--knob d1.store_spacing.wo: 'd1.store_spacing' is not a mapping in "
                                             "the template");
  static const char *const mapping[] = {"p1.store_spacing=0..4", NULL};
  new_fails(tmpl, mapping, TUNE_ERROR_USAGE,
            "--knob p1.store_spacing: the template has a mapping there, not a value (set its keys)");
  /* no template; a template that is not a plan (the loader's message) */
  g_autofree char *missing = g_build_filename(dir, "missing.yaml", NULL);
  static const char *const one[] = {"d1.store_spacing=0..4", NULL};
  {
    g_autoptr(GError) e = NULL;
    g_autoptr(Tune) m = new_tune(missing, one, &e);
    ck_assert(!m);
    ck_assert(e->domain == TUNE_ERROR && e->code == TUNE_ERROR_PLACED);
    g_autofree char *prefix = g_strdup_printf("%s:1:1: error: cannot read plan: ", missing);
    ck_assert_msg(g_str_has_prefix(e->message, prefix), "%s", e->message);
  }
  g_autofree char *notplan = write_plan(dir, "bad.yaml", "version: 1\nd1:\n  store_spacing: 0\n  no_such_knob: 3\n");
  {
    g_autoptr(GError) e = NULL;
    g_autoptr(Tune) m = new_tune(notplan, one, &e);
    ck_assert(!m);
    g_autofree char *prefix = g_strdup_printf("%s:4:3: error: ", notplan);
    ck_assert_msg(e && g_str_has_prefix(e->message, prefix), "%s", e ? e->message : "no error");
  }
  rm_tree(dir);
}
END_TEST

/* ---- a synthetic evaluator ---------------------------------------------- */

#define SYN_MAX 8
typedef void (*Model)(const int64_t *v, TuneMeasure *m);

/* It reads the knobs' values back out of each point's plan text (so the
 * text must carry them) and measures them with `model`: in prepare, or,
 * `threaded`, in finish on a worker thread. */
typedef struct Synth {
  const char *const *paths; /* the knobs' paths, NULL-terminated      */
  guint n;
  Model model;
  gboolean threaded;
  GThread *caller;
  TuneTarget target;        /* as prepare was given it                */
  int prepared, prepared_off_caller;
  char *first_file;         /* prepare's first `file`                 */
  GArray *seen;             /* int64_t values, n per prepare, in order */
  gint finished, finished_on_caller; /* atomic                         */
} Synth;

typedef struct SynthWork {
  Synth *s;
  int64_t v[SYN_MAX];
} SynthWork;

static void synth_init(Synth *s, const char *const *paths, Model model, gboolean threaded) {
  memset(s, 0, sizeof *s);
  s->paths = paths;
  while (paths[s->n]) s->n++;
  ck_assert_uint_le(s->n, SYN_MAX);
  s->model = model;
  s->threaded = threaded;
  s->caller = g_thread_self();
  s->target = (TuneTarget)-1;
  s->seen = g_array_new(FALSE, FALSE, sizeof(int64_t));
}

static void synth_clear(Synth *s) {
  g_free(s->first_file);
  g_array_unref(s->seen);
}

static gpointer synth_prepare(const char *file, const char *text, TuneTarget target, double cap, gpointer data,
                              TuneMeasure *m) {
  (void)cap; /* the synthetic objectives are measured whole */
  Synth *s = data;
  if (g_thread_self() != s->caller) s->prepared_off_caller++;
  if (s->prepared++ == 0) s->first_file = g_strdup(file);
  s->target = target;
  SynthWork *w = g_new0(SynthWork, 1);
  w->s = s;
  for (guint i = 0; i < s->n; i++) {
    gboolean found;
    g_autoptr(GError) e = NULL;
    g_autofree char *v = plan_edit_get(file, text, strlen(text), "--knob", s->paths[i], &found, &e);
    ck_assert_msg(v, "%s: %s", s->paths[i], e ? e->message : "not in the point's text");
    char *end;
    w->v[i] = g_ascii_strtoll(v, &end, 10);
    ck_assert_msg(*v && !*end, "%s: '%s'", s->paths[i], v);
    g_array_append_val(s->seen, w->v[i]);
  }
  if (s->threaded) return w;
  s->model(w->v, m);
  g_free(w);
  return NULL;
}

static void synth_finish(gpointer work, TuneMeasure *m) {
  SynthWork *w = work;
  if (g_thread_self() == w->s->caller) g_atomic_int_inc(&w->s->finished_on_caller);
  g_atomic_int_inc(&w->s->finished);
  w->s->model(w->v, m);
  g_free(w);
}

/* A bowl over five knobs (the paths of BOWL), 1000 cycles at its bottom
 * (37, 11, 16, 9, 3); over the power limit for a > 80 (the further over,
 * the worse), an error (with a comma and quotes) for c = 32. */
static const char *const BOWL[] = {"p1.store_spacing.wo=0..100", "d1.store_spacing=0..40",
                                   "p1.store_spacing.default=0,8,16,32", "p1.store_spacing.qkv=0..20",
                                   "p1.store_spacing.w2=0..20", NULL};
static const char *const BOWL_PATHS[] = {"p1.store_spacing.wo", "d1.store_spacing", "p1.store_spacing.default",
                                         "p1.store_spacing.qkv", "p1.store_spacing.w2", NULL};
#define BOWL_BEST 1000

static void model_bowl(const int64_t *v, TuneMeasure *m) {
  int64_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4];
  if (c == 32) {
    m->status = TUNE_ERROR_POINT;
    m->error = g_strdup_printf("bowl.yaml:9:3: error: default %" G_GINT64_FORMAT ", \"over 16\"", c);
    return;
  }
  m->cycles = BOWL_BEST + (a - 37) * (a - 37) + (b - 11) * (b - 11) + 5 * llabs((long long)(c - 16)) +
              (d - 9) * (d - 9) + 2 * llabs((long long)(e - 3));
  m->area_mm2 = 20.0;
  if (a > 80) {
    m->status = TUNE_POWER;
    m->peak_w = POWER_LIMIT_W + (double)(a - 80) * 0.25;
  } else {
    m->status = TUNE_PASS;
    m->peak_w = 10.0 + (double)a * 0.01;
  }
}

static void opts(TuneOptions *o, Synth *s, int rounds, int candidates, guint32 seed, int jobs) {
  tune_options_default(o);
  o->rounds = rounds;
  o->candidates = candidates;
  o->seed = seed;
  o->jobs = jobs;
  o->eval = (TuneEval){synth_prepare, synth_finish, s};
}

typedef struct Progress {
  GThread *caller;
  int calls, bad_round, off_caller;
} Progress;

static gboolean on_progress(const Tune *t, int round, gpointer data) {
  Progress *p = data;
  if (round != p->calls || t->rounds_run != round) p->bad_round++;
  if (g_thread_self() != p->caller) p->off_caller++;
  p->calls++;
  return TRUE;
}

/* A search that must succeed. */
static Tune *run(const char *tmpl, const char *const *knob_args, const TuneOptions *o) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Tune) t = tune_new(tmpl, knobs_of(knob_args), o, &err);
  ck_assert_msg(t, "%s", err ? err->message : "?");
  Progress pr = {g_thread_self(), 0, 0, 0};
  ck_assert_msg(tune_run(t, on_progress, &pr, &err), "%s", err ? err->message : "?");
  ck_assert_int_eq(pr.calls, t->rounds_run + 1); /* round 0 (the start), then each round run */
  ck_assert_int_eq(pr.bad_round, 0);
  ck_assert_int_eq(pr.off_caller, 0);
  return g_steal_pointer(&t);
}

/* The ranking (tune.h, tune.c): pass beats over a limit (power or area)
 * beats an error or a refusal; passing points by cycles; points over a limit by how far over
 * (relative to the limits, summed), then cycles; errors tie. */
static int rank(const TuneMeasure *m) {
  return m->status == TUNE_PASS ? 0 : m->status == TUNE_POWER || m->status == TUNE_AREA ? 1 : 2;
}
static double over(const TuneMeasure *m) {
  return MAX(m->peak_w - POWER_LIMIT_W, 0.0) / POWER_LIMIT_W + MAX(m->area_mm2 - AREA_LIMIT_MM2, 0.0) / AREA_LIMIT_MM2;
}
static gboolean beats(const TuneMeasure *a, const TuneMeasure *b) {
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  if (rank(a) == 2) return FALSE;
  if (rank(a) == 1 && over(a) != over(b)) return over(a) < over(b);
  return a->cycles < b->cycles;
}

static guint differ(const Tune *t, const TunePoint *a, const TunePoint *b) {
  guint n = 0;
  for (guint k = 0; k < t->knobs->len; k++) n += a->idx[k] != b->idx[k];
  return n;
}

/* Everything a finished search must satisfy (tune.h), whatever the seed. */
static void check_search(const Tune *t) {
  guint n = t->knobs->len, np = t->points->len;
  ck_assert_uint_ge(np, 1);
  ck_assert_int_le(t->rounds_run, t->opt.rounds);
  const TunePoint *s = point(t, 0);
  ck_assert(s->round == 0 && s->candidate == 0 && s->best);
  g_autoptr(GHashTable) keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int best = 0;       /* the best so far (after the rounds before)     */
  int round_best = 0; /* the best the current round's points are drawn around */
  int round = 0, last_cand = 0, halvings = 0;
  gboolean improved = FALSE;
  for (guint i = 0; i < np; i++) {
    const TunePoint *p = point(t, i);
    GString *key = g_string_new(NULL);
    for (guint k = 0; k < n; k++) {
      ck_assert_msg(p->idx[k] < tune_knob_count(knob(t, k)), "point %u knob %u: index %u", i, k, p->idx[k]);
      g_string_append_printf(key, "%u,", p->idx[k]);
    }
    ck_assert_msg(!g_hash_table_contains(keys, key->str), "point %u measured twice (%s)", i, key->str);
    g_hash_table_add(keys, g_string_free(key, FALSE));
    ck_assert(p->m.status <= TUNE_ERROR_POINT);
    ck_assert(p->m.status == TUNE_ERROR_POINT ? p->m.error != NULL : p->m.error == NULL);
    if (i == 0) continue;
    if (p->round != round) { /* a new round: drawn around the best so far */
      ck_assert_int_eq(p->round, round + 1);
      if (round > 0 && !improved) halvings++;
      round = p->round;
      round_best = best;
      last_cand = 0;
      improved = FALSE;
    }
    ck_assert_int_gt(p->candidate, last_cand);
    ck_assert_int_le(p->candidate, t->opt.candidates);
    last_cand = p->candidate;
    const TunePoint *from = point(t, (guint)round_best);
    guint moved = differ(t, p, from);
    ck_assert_msg(moved >= 1 && moved <= 3, "point %u moves %u knobs", i, moved);
    for (guint k = 0; k < n; k++) { /* by at most the step, halved per round without a better point */
      double step = MAX(1.0, tune_knob_count(knob(t, k)) * t->opt.step / (double)(1u << MIN(halvings, 30)));
      double delta = fabs((double)p->idx[k] - (double)from->idx[k]);
      ck_assert_msg(delta <= step, "point %u knob %u moves %g, step %g", i, k, delta, step);
    }
    if (p->best) {
      ck_assert_msg(!improved, "two best points in round %d", round);
      ck_assert_msg(beats(&p->m, &point(t, (guint)best)->m), "point %u is not better than the best so far", i);
      best = (int)i;
      improved = TRUE;
    }
  }
  ck_assert_int_eq(round, t->rounds_run);
  ck_assert_int_eq(t->best, best);
  /* after each round the best is the best of every point measured so far:
   * the best of its round when the round improved, else the one before */
  g_autofree int *best_after = g_new(int, (gsize)t->rounds_run + 1);
  best_after[0] = 0;
  for (int r = 1; r <= t->rounds_run; r++) best_after[r] = best_after[r - 1];
  for (guint i = 1; i < np; i++)
    if (point(t, i)->best) best_after[point(t, i)->round] = (int)i;
  for (int r = 1; r <= t->rounds_run; r++) best_after[r] = MAX(best_after[r], best_after[r - 1]);
  for (guint i = 0; i < np; i++)
    for (int r = point(t, i)->round; r <= t->rounds_run; r++)
      ck_assert_msg(!beats(&point(t, i)->m, &point(t, (guint)best_after[r])->m),
                    "point %u beats the best after round %d (point %d)", i, r, best_after[r]);
}

/* Two texts equal, or not (Check cannot report texts of many KB). */
static gsize first_diff(const char *a, const char *b) {
  gsize i = 0;
  while (a[i] && a[i] == b[i]) i++;
  return i;
}
#define assert_same(a, b)                                                                                      \
  ck_assert_msg(strcmp((a), (b)) == 0, "%s and %s differ at byte %zu", #a, #b, first_diff((a), (b)))
#define assert_differ(a, b) ck_assert_msg(strcmp((a), (b)) != 0, "%s and %s are the same", #a, #b)

static guint count_lines(const char *s) {
  guint n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* ---- the search ------------------------------------------------------------ */

START_TEST(test_search_improves) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  Synth s;
  synth_init(&s, BOWL_PATHS, model_bowl, FALSE);
  TuneOptions o;
  opts(&o, &s, 100, 8, 1, 2);
  g_autoptr(Tune) t = run(tmpl, BOWL, &o);
  check_search(t);
  /* the start is the template: over the power limit at (100, 0, 8, 4, 0) */
  const TunePoint *st = point(t, 0);
  ck_assert_int_eq(st->m.status, TUNE_POWER);
  ck_assert_int_eq(st->m.cycles, BOWL_BEST + 63 * 63 + 11 * 11 + 5 * 8 + 5 * 5 + 2 * 3);
  ck_assert_str_eq(s.first_file, tmpl);
  ck_assert_int_eq(s.target, TUNE_TARGET_P1);
  /* it improves to the bottom of the bowl */
  const TunePoint *b = point(t, (guint)t->best);
  ck_assert_int_gt(t->best, 0);
  ck_assert_int_eq(b->m.status, TUNE_PASS);
  ck_assert_int_eq(b->m.cycles, BOWL_BEST);
  static const char *const want[] = {"37", "11", "16", "9", "3"};
  for (guint k = 0; k < 5; k++) {
    g_autofree char *v = tune_knob_value(knob(t, k), b->idx[k]);
    ck_assert_str_eq(v, want[k]);
  }
  /* the search went through the power region and met the error region */
  gboolean power = FALSE, error = FALSE;
  guint bests = 0;
  for (guint i = 0; i < t->points->len; i++) {
    power |= point(t, i)->m.status == TUNE_POWER && i > 0;
    error |= point(t, i)->m.status == TUNE_ERROR_POINT;
    bests += point(t, i)->best;
    ck_assert(point(t, i)->m.status != TUNE_ERROR_POINT || !point(t, i)->best);
  }
  ck_assert(power && error);
  ck_assert_uint_ge(bests, 3);
  /* prepare ran on the calling thread, once per point, in order, on a text
   * carrying the point's values; finish never ran (prepare measured) */
  ck_assert_int_eq(s.prepared, (int)t->points->len);
  ck_assert_int_eq(s.prepared_off_caller, 0);
  ck_assert_int_eq(g_atomic_int_get(&s.finished), 0);
  ck_assert_uint_eq(s.seen->len, t->points->len * 5);
  for (guint i = 0; i < t->points->len; i++)
    for (guint k = 0; k < 5; k++) {
      g_autofree char *v = tune_knob_value(knob(t, k), point(t, i)->idx[k]);
      ck_assert_int_eq(g_array_index(s.seen, int64_t, i * 5 + k), g_ascii_strtoll(v, NULL, 10));
    }
  synth_clear(&s);
  rm_tree(dir);
}
END_TEST

/* The same search through the thread pool (finish measures), with 1 and 4
 * jobs, and measured in prepare: the same points, log and best plan. */
START_TEST(test_search_threads) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  char *logs[3] = {NULL}, *bests[3] = {NULL}; /* freed at the end (g_autofree frees one pointer) */
  static const int jobs[] = {1, 4, 4};
  for (int r = 0; r < 3; r++) {
    Synth s;
    synth_init(&s, BOWL_PATHS, model_bowl, r < 2);
    TuneOptions o;
    opts(&o, &s, 30, 8, 5, jobs[r]);
    g_autoptr(Tune) t = run(tmpl, BOWL, &o);
    check_search(t);
    ck_assert_uint_gt(t->points->len, 30);
    g_autoptr(GError) err = NULL;
    logs[r] = tune_log_csv(t);
    bests[r] = tune_best_text(t, &err);
    ck_assert_msg(bests[r], "%s", err ? err->message : "?");
    ck_assert_int_eq(s.prepared, (int)t->points->len);
    ck_assert_int_eq(s.prepared_off_caller, 0);
    if (r < 2) { /* every point finished on a worker */
      ck_assert_int_eq(g_atomic_int_get(&s.finished), (int)t->points->len);
      ck_assert_int_eq(g_atomic_int_get(&s.finished_on_caller), 0);
    } else {
      ck_assert_int_eq(g_atomic_int_get(&s.finished), 0);
    }
    synth_clear(&s);
  }
  assert_same(logs[0], logs[1]);
  assert_same(logs[0], logs[2]);
  assert_same(bests[0], bests[1]);
  assert_same(bests[0], bests[2]);
  for (int r = 0; r < 3; r++) {
    g_free(logs[r]);
    g_free(bests[r]);
  }
  rm_tree(dir);
}
END_TEST

START_TEST(test_search_seed) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  static const guint32 seeds[] = {7, 7, 8, 0};
  char *logs[4] = {NULL}, *bests[4] = {NULL};
  for (int r = 0; r < 4; r++) {
    Synth s;
    synth_init(&s, BOWL_PATHS, model_bowl, TRUE);
    TuneOptions o;
    opts(&o, &s, 20, 6, seeds[r], 3);
    g_autoptr(Tune) t = run(tmpl, BOWL, &o);
    check_search(t);
    logs[r] = tune_log_csv(t);
    bests[r] = tune_best_text(t, NULL);
    ck_assert(bests[r]);
    g_autofree char *seed = g_strdup_printf("(seed %" G_GUINT32_FORMAT "):", seeds[r]);
    ck_assert_msg(strstr(bests[r], seed), "%s", bests[r]);
    synth_clear(&s);
  }
  assert_same(logs[0], logs[1]);
  assert_same(bests[0], bests[1]);
  assert_differ(logs[0], logs[2]);
  assert_differ(logs[0], logs[3]);
  assert_differ(logs[2], logs[3]);
  for (int r = 0; r < 4; r++) {
    g_free(logs[r]);
    g_free(bests[r]);
  }
  rm_tree(dir);
}
END_TEST

START_TEST(test_rounds_zero) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  Synth s;
  synth_init(&s, BOWL_PATHS, model_bowl, TRUE);
  TuneOptions o;
  opts(&o, &s, 0, 8, 1, 2);
  g_autoptr(Tune) t = run(tmpl, BOWL, &o);
  check_search(t);
  ck_assert_uint_eq(t->points->len, 1);
  ck_assert_int_eq(t->rounds_run, 0);
  ck_assert_int_eq(t->best, 0);
  ck_assert_int_eq(s.prepared, 1);
  ck_assert_int_eq(g_atomic_int_get(&s.finished), 1);
  g_autofree char *csv = tune_log_csv(t);
  ck_assert_uint_eq(count_lines(csv), 2);
  g_autofree char *best = tune_best_text(t, NULL);
  g_autofree char *head = g_strdup_printf("# tcc-tune: the best of 1 point for p1 from %s (seed 1): "
                                          "p1.store_spacing.wo=100, d1.store_spacing=0, p1.store_spacing.default=8, "
                                          "p1.store_spacing.qkv=4, p1.store_spacing.w2=0\n", tmpl);
  ck_assert_msg(best && g_str_has_prefix(best, head), "%s", best ? best : "NULL");
  synth_clear(&s);
  rm_tree(dir);
}
END_TEST

/* Two knobs of two values: (wo, d1 spacing); the start (100, 0) passes in
 * 500 cycles, (99, 0) is over the power limit in fewer, (100, 1) an error
 * whose message has quotes and a comma, (99, 1) passes in 450. */
static const char *const TINY[] = {"p1.store_spacing.wo=99..100", "d1.store_spacing=0,1", NULL};
static const char *const TINY_PATHS[] = {"p1.store_spacing.wo", "d1.store_spacing", NULL};
#define TINY_ERROR "t.yaml:1:2: error: a \"quoted\", comma"

static void model_tiny(const int64_t *v, TuneMeasure *m) {
  m->area_mm2 = 20.25;
  if (v[0] == 100 && v[1] == 1) {
    m->status = TUNE_ERROR_POINT;
    m->error = g_strdup(TINY_ERROR);
  } else if (v[0] == 99 && v[1] == 0) {
    m->status = TUNE_POWER;
    m->cycles = 400;
    m->peak_w = 21.0;
  } else {
    m->status = TUNE_PASS;
    m->cycles = v[1] ? 450 : 500;
    m->peak_w = v[1] ? 6.125 : 5.5;
  }
}

START_TEST(test_tiny_space) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  for (int threaded = 0; threaded < 2; threaded++)
    for (guint32 seed = 1; seed <= 3; seed++) {
      Synth s;
      synth_init(&s, TINY_PATHS, model_tiny, threaded);
      TuneOptions o;
      opts(&o, &s, 10, 8, seed, 2);
      g_autoptr(Tune) t = run(tmpl, TINY, &o);
      check_search(t);
      /* every point measured in round 1; round 2 finds none: it stops */
      ck_assert_uint_le(t->points->len, 4);
      ck_assert_uint_eq(t->points->len, 4);
      ck_assert_int_lt(t->rounds_run, o.rounds);
      ck_assert_int_eq(t->rounds_run, 1);
      /* (99, 1) passes in fewer cycles than the start; the point over the
       * power limit, in fewer still, does not win */
      const TunePoint *b = point(t, (guint)t->best);
      ck_assert_uint_eq(b->idx[0], 0);
      ck_assert_uint_eq(b->idx[1], 1);
      ck_assert_int_eq(b->m.cycles, 450);
      /* the log: the header, then a line per point; the error quoted */
      g_autofree char *csv = tune_log_csv(t);
      g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
      ck_assert_uint_eq(g_strv_length(lines), 6);
      ck_assert_str_eq(lines[0], "round,candidate,p1.store_spacing.wo,d1.store_spacing,status,p1_status,p1_cycles,"
                                 "p1_peak_w,d1_status,d1_cycles,d1_peak_w,area_mm2,score,error,best,repairs");
      ck_assert_str_eq(lines[1], "0,0,100,0,pass,pass,500,5.5000,,,,20.2500,,,1,0");
      ck_assert_str_eq(lines[5], "");
      for (guint i = 1; i < 4; i++) {
        const TunePoint *p = point(t, i);
        static const char error_line[] = "100,1,error,,,,,,,,,\"t.yaml:1:2: error: a \"\"quoted\"\", comma\",0,0";
        const char *rest = p->idx[0] == 0 && p->idx[1] == 0   ? "99,0,power,power,400,21.0000,,,,20.2500,,,0,0"
                           : p->idx[0] == 0 && p->idx[1] == 1 ? "99,1,pass,pass,450,6.1250,,,,20.2500,,,1,0"
                                                              : error_line;
        g_autofree char *want = g_strdup_printf("1,%d,%s", p->candidate, rest);
        ck_assert_str_eq(lines[i + 1], want);
        if (p->m.status == TUNE_ERROR_POINT) ck_assert_str_eq(p->m.error, TINY_ERROR);
      }
      synth_clear(&s);
    }
  rm_tree(dir);
}
END_TEST

/* One knob of six values where the ranking, not the cycles, decides: the
 * start over the power limit by 10 %, then 5 % over it in more cycles, over
 * the area limit by 1/24 (and under the power limit), two passing points
 * with more cycles than all of those, and an error. */
static void model_rank(const int64_t *v, TuneMeasure *m) {
  m->peak_w = 10.0;
  m->area_mm2 = 20.0;
  switch (v[0]) {
  case 0: m->status = TUNE_POWER, m->peak_w = 22.0, m->cycles = 100; break;
  case 1: m->status = TUNE_POWER, m->peak_w = 21.0, m->cycles = 300; break;
  case 2: m->status = TUNE_AREA, m->area_mm2 = 25.0, m->cycles = 900; break;
  case 3: m->status = TUNE_PASS, m->cycles = 5000; break;
  case 4: m->status = TUNE_PASS, m->cycles = 4000; break;
  default: m->status = TUNE_ERROR_POINT, m->error = g_strdup("x.yaml:1:1: error: no"); break;
  }
}

START_TEST(test_ranking) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  static const char *const args[] = {"d1.store_spacing=0..5", NULL}, *const paths[] = {"d1.store_spacing", NULL};
  guint first_best[6] = {0};
  for (guint32 seed = 1; seed <= 12; seed++) {
    Synth s;
    synth_init(&s, paths, model_rank, seed % 2);
    TuneOptions o;
    opts(&o, &s, 20, 1, seed, 2); /* one candidate a round: the points meet the best one by one */
    o.step = 1.0;
    g_autoptr(Tune) t = run(tmpl, args, &o);
    check_search(t);
    ck_assert_uint_le(t->points->len, 6);
    ck_assert_int_lt(t->rounds_run, 20); /* it stops when the steps reach nothing new */
    gboolean met[6] = {FALSE};
    for (guint i = 0; i < t->points->len; i++) met[point(t, i)->idx[0]] = TRUE;
    const TunePoint *b = point(t, (guint)t->best);
    guint want = met[4] ? 4 : met[3] ? 3 : met[2] ? 2 : met[1] ? 1 : 0; /* the best value measured */
    ck_assert_uint_eq(b->idx[0], want);
    for (guint i = 1; i < t->points->len; i++) first_best[point(t, i)->idx[0]] += point(t, i)->best;
    synth_clear(&s);
  }
  /* over the seeds, every point but the error was once the best when met */
  for (guint v = 1; v < 5; v++) ck_assert_msg(first_best[v] > 0, "value %u never became the best", v);
  ck_assert_uint_eq(first_best[5], 0);
  rm_tree(dir);
}
END_TEST

/* tune_better with both problems: by P1 x D1 (the score), not by either
 * problem's cycles; the ranking by status first, as with one problem. */
START_TEST(test_better_both) {
  TuneMeasure a = {.status = TUNE_PASS, .cycles = 100, .d1_cycles = 10};  /* 1000 */
  TuneMeasure b = {.status = TUNE_PASS, .cycles = 50, .d1_cycles = 30};   /* 1500 */
  TuneMeasure c = {.status = TUNE_PASS, .cycles = 200, .d1_cycles = 5};   /* 1000: a tie */
  ck_assert(tune_better(&a, &b) && !tune_better(&b, &a));
  ck_assert(!tune_better(&a, &c) && !tune_better(&c, &a));
  ck_assert(wl_score(a.cycles, a.d1_cycles) > wl_score(b.cycles, b.d1_cycles));
  TuneMeasure p = {.status = TUNE_POWER, .cycles = 1, .d1_cycles = 1, .peak_w = 20.5, .area_mm2 = 20};
  ck_assert(tune_better(&b, &p) && !tune_better(&p, &b));
  /* products beyond 2^53 still compare (in double) */
  TuneMeasure x = {.status = TUNE_PASS, .cycles = 4000000000ll, .d1_cycles = 4000000000ll};
  TuneMeasure y = {.status = TUNE_PASS, .cycles = 4000000000ll, .d1_cycles = 4100000000ll};
  ck_assert(tune_better(&x, &y) && !tune_better(&y, &x));
  /* one problem: by its cycles */
  TuneMeasure s1 = {.status = TUNE_PASS, .cycles = 7}, s2 = {.status = TUNE_PASS, .cycles = 8};
  ck_assert(tune_better(&s1, &s2) && !tune_better(&s2, &s1));
}
END_TEST

/* A progress callback that returns FALSE ends the search after that round:
 * tune_run succeeds with what it measured. */
static gboolean stop_after_2(const Tune *t, int round, gpointer data) {
  (void)t;
  (*(int *)data)++;
  return round < 2;
}

START_TEST(test_progress_stop) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  Synth s;
  synth_init(&s, BOWL_PATHS, model_bowl, TRUE);
  TuneOptions o;
  opts(&o, &s, 10, 4, 1, 2);
  g_autoptr(GError) err = NULL;
  g_autoptr(Tune) t = tune_new(tmpl, knobs_of(BOWL), &o, &err);
  ck_assert_msg(t, "%s", err ? err->message : "?");
  int calls = 0;
  ck_assert(tune_run(t, stop_after_2, &calls, &err));
  ck_assert_int_eq(calls, 3); /* rounds 0, 1, 2 */
  ck_assert_int_eq(t->rounds_run, 2);
  ck_assert_uint_le(t->points->len, 1 + 2 * 4);
  ck_assert_int_eq(s.prepared, (int)t->points->len);
  synth_clear(&s);
  rm_tree(dir);
}
END_TEST

static void model_start_error(const int64_t *v, TuneMeasure *m) {
  if (v[0] == 100) {
    m->status = TUNE_ERROR_POINT;
    m->error = g_strdup("t.yaml:8:3: error: 100% \"wrong\", here");
  } else {
    m->status = TUNE_PASS;
    m->cycles = 10;
  }
}

START_TEST(test_start_error) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  for (int threaded = 0; threaded < 2; threaded++) {
    Synth s;
    synth_init(&s, TINY_PATHS, model_start_error, threaded);
    TuneOptions o;
    opts(&o, &s, 5, 4, 1, 2);
    g_autoptr(GError) err = NULL;
    g_autoptr(Tune) t = tune_new(tmpl, knobs_of(TINY), &o, &err);
    ck_assert_msg(t, "%s", err ? err->message : "?");
    Progress pr = {g_thread_self(), 0, 0, 0};
    ck_assert(!tune_run(t, on_progress, &pr, &err));
    ck_assert(err && err->domain == TUNE_ERROR && err->code == TUNE_ERROR_PLACED);
    ck_assert_str_eq(err->message, "t.yaml:8:3: error: 100% \"wrong\", here");
    ck_assert_uint_eq(t->points->len, 1); /* nothing drawn */
    ck_assert_int_eq(t->rounds_run, 0);
    ck_assert_int_eq(pr.calls, 0);
    ck_assert_int_eq(s.prepared, 1);
    g_clear_error(&err);
    ck_assert(!tune_best_text(t, &err)); /* no best point: an error, not a read out of bounds */
    ck_assert(err && err->domain == TUNE_ERROR);
    synth_clear(&s);
  }
  rm_tree(dir);
}
END_TEST

START_TEST(test_log_and_best) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  Synth s;
  synth_init(&s, BOWL_PATHS, model_bowl, TRUE);
  TuneOptions o;
  opts(&o, &s, 12, 5, 3, 2);
  g_autoptr(Tune) t = run(tmpl, BOWL, &o);
  check_search(t);
  ck_assert_int_gt(t->best, 0);
  /* the log */
  g_autofree char *csv = tune_log_csv(t);
  g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
  ck_assert_uint_eq(g_strv_length(lines), t->points->len + 2);
  ck_assert_str_eq(lines[0], "round,candidate,p1.store_spacing.wo,d1.store_spacing,p1.store_spacing.default,"
                             "p1.store_spacing.qkv,p1.store_spacing.w2,status,p1_status,p1_cycles,p1_peak_w,d1_status,"
                             "d1_cycles,d1_peak_w,area_mm2,score,error,best,repairs");
  ck_assert_str_eq(lines[1], "0,0,100,0,8,4,0,power,power,5161,25.0000,,,,20.0000,,,1,0");
  ck_assert_str_eq(lines[t->points->len + 1], "");
  guint errors = 0;
  for (guint i = 0; i < t->points->len; i++) {
    const TunePoint *p = point(t, i);
    g_autofree char *head = g_strdup_printf("%d,%d,", p->round, p->candidate);
    ck_assert_msg(g_str_has_prefix(lines[i + 1], head), "%s", lines[i + 1]);
    g_autofree char *tail = NULL;
    if (p->m.status == TUNE_ERROR_POINT) { /* bowl.yaml:9:3: error: default 32, "over 16" */
      g_autofree char *cv = tune_knob_value(knob(t, 2), p->idx[2]);
      ck_assert_str_eq(cv, "32");
      errors++;
      tail = g_strdup_printf(",32,%u,%u,error,,,,,,,,,\"bowl.yaml:9:3: error: default 32, \"\"over 16\"\"\",0,0",
                             (unsigned)p->idx[3], (unsigned)p->idx[4]);
    } else {
      const char *ps = p->m.area_mm2 > 24 ? "area" : p->m.peak_w > 20 ? "power" : "pass";
      tail = g_strdup_printf(",%s,%s,%" G_GINT64_FORMAT ",%.4f,,,,%.4f,,,%d,%d", tune_status_name[p->m.status], ps,
                             p->m.cycles, p->m.peak_w, p->m.area_mm2, p->best, p->repairs);
    }
    ck_assert_msg(g_str_has_suffix(lines[i + 1], tail), "%s does not end with %s", lines[i + 1], tail);
  }
  ck_assert_uint_gt(errors, 0); /* an error message with a comma and quotes was quoted */
  /* the best plan: the header, then a plan with the best point's values */
  g_autoptr(GError) err = NULL;
  g_autofree char *best = tune_best_text(t, &err);
  ck_assert_msg(best, "%s", err ? err->message : "?");
  ck_assert(g_str_has_prefix(best, "# tcc-tune: "));
  g_autofree char *head = g_strdup_printf("# tcc-tune: the best of %u points for p1 from %s (seed 3):", t->points->len,
                                          tmpl);
  ck_assert_msg(g_str_has_prefix(best, head), "%s", best);
  const TunePoint *b = point(t, (guint)t->best);
  const char *body = best;
  while (*body == '#') {
    const char *nl = strchr(body, '\n');
    ck_assert(nl);
    body = nl + 1;
  }
  ck_assert_ptr_ne(body, best);
  g_autofree char *header = g_strndup(best, (gsize)(body - best));
  ck_assert(!strstr(body, "test_tune.c's template")); /* comments are not kept */
  g_autofree char *pt = tune_point_text(t, b, &err);
  ck_assert_msg(pt, "%s", err ? err->message : "?");
  ck_assert_str_eq(body, pt);
  g_autoptr(Plan) plan = plan_parse("best.yaml", body, strlen(body), &err);
  ck_assert_msg(plan, "%s\n%s", err ? err->message : "?", body);
  int64_t v[5];
  for (guint k = 0; k < 5; k++) {
    g_autofree char *want = tune_knob_value(knob(t, k), b->idx[k]);
    g_autofree char *pair = g_strdup_printf(" %s=%s", BOWL_PATHS[k], want);
    ck_assert_msg(strstr(header, pair), "%s lacks %s", header, pair);
    gboolean found;
    g_autofree char *got = plan_edit_get("best.yaml", body, strlen(body), "--knob", BOWL_PATHS[k], &found, &err);
    ck_assert_msg(got, "%s", err ? err->message : "not found");
    ck_assert_str_eq(got, want);
    v[k] = g_ascii_strtoll(want, NULL, 10);
  }
  ck_assert_int_eq(plan->p1.stage_spacing[SPACE_WO], v[0]);
  ck_assert_int_eq(plan->d1.store_spacing, v[1]);
  ck_assert_int_eq(plan->p1.store_spacing, v[2]);
  ck_assert_int_eq(plan->p1.stage_spacing[SPACE_QKV], v[3]);
  ck_assert_int_eq(plan->p1.stage_spacing[SPACE_W2], v[4]);
  ck_assert_int_eq(plan->hw.sms, 16); /* the rest is the template's */
  ck_assert_int_eq(plan->p1.dims.d_model, 32);
  /* the best is not the start: the plan differs from the template's values */
  ck_assert(b->idx[0] != point(t, 0)->idx[0] || b->idx[1] != point(t, 0)->idx[1]);
  synth_clear(&s);
  rm_tree(dir);
}
END_TEST

/* The real evaluator: compile, assemble, simulate the timing. */
START_TEST(test_compile_eval) {
  TuneOptions d;
  tune_options_default(&d);
  ck_assert_int_eq(d.target, TUNE_TARGET_P1);
  ck_assert_int_eq(d.rounds, 20);
  ck_assert_int_eq(d.candidates, 8);
  ck_assert_uint_eq(d.seed, 1);
  ck_assert_int_eq(d.jobs, 2);
  ck_assert(d.step == 0.125);
  ck_assert(d.eval.prepare == tune_eval_compile.prepare && d.eval.finish == tune_eval_compile.finish);

  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  static const char *const args[] = {"d1.store_spacing=0..64", NULL};
  char *logs[2] = {NULL};
  for (int r = 0; r < 2; r++) {
    TuneOptions o;
    tune_options_default(&o);
    o.target = TUNE_TARGET_D1;
    o.rounds = 1;
    o.candidates = 2;
    o.jobs = r ? 1 : 2;
    g_autoptr(Tune) t = run(tmpl, args, &o);
    check_search(t);
    ck_assert_uint_ge(t->points->len, 2);
    ck_assert_int_eq(t->rounds_run, 1);
    for (guint i = 0; i < t->points->len; i++) {
      const TunePoint *p = point(t, i);
      ck_assert_msg(p->m.status == TUNE_PASS, "point %u: %s %s", i, tune_status_name[p->m.status],
                    p->m.error ? p->m.error : "");
      ck_assert_int_gt(p->m.cycles, 0);
      ck_assert(p->m.peak_w > 0 && p->m.peak_w <= POWER_LIMIT_W);
      ck_assert(p->m.area_mm2 > 0 && p->m.area_mm2 <= AREA_LIMIT_MM2);
    }
    logs[r] = tune_log_csv(t);
  }
  assert_same(logs[0], logs[1]);
  g_free(logs[0]);
  g_free(logs[1]);

  /* a point that does not load is refused with the loader's message,
   * placed in the point's text; one that does compile passes */
  static const char *const layout[] = {"p1.k_chunk.qkv=32,100", NULL};
  TuneOptions o;
  tune_options_default(&o);
  o.target = TUNE_TARGET_P1;
  o.rounds = 1;
  o.candidates = 2;
  g_autoptr(Tune) t = run(tmpl, layout, &o);
  ck_assert_uint_eq(t->points->len, 2); /* one knob of two values: one candidate */
  ck_assert_int_eq(point(t, 0)->m.status, TUNE_PASS);
  ck_assert_int_gt(point(t, 0)->m.cycles, 0);
  const TunePoint *p = point(t, 1);
  ck_assert_int_eq(p->m.status, TUNE_REFUSED);
  ck_assert_msg(g_str_has_prefix(p->m.error, tmpl) && strstr(p->m.error, ": error: k_chunk.qkv=100 must be"), "%s",
                p->m.error);
  ck_assert_int_eq(t->best, 0);

  /* both problems: each point has P1's and D1's cycles, the log the score */
  static const char *const both[] = {"d1.store_spacing=0..64", NULL};
  TuneOptions ob;
  tune_options_default(&ob);
  ob.target = TUNE_TARGET_BOTH;
  ob.rounds = 1;
  ob.candidates = 2;
  g_autoptr(Tune) tb = run(tmpl, both, &ob);
  for (guint i = 0; i < tb->points->len; i++) {
    const TunePoint *q = point(tb, i);
    ck_assert_int_eq(q->m.status, TUNE_PASS);
    ck_assert_int_gt(q->m.cycles, 0);
    ck_assert_int_gt(q->m.d1_cycles, 0);
    /* d1.store_spacing moves D1 only: P1's cycles are the start's */
    ck_assert_int_eq(q->m.cycles, point(tb, 0)->m.cycles);
  }
  g_autofree char *csv = tune_log_csv(tb);
  ck_assert(g_str_has_prefix(csv, "round,candidate,d1.store_spacing,status,p1_status,p1_cycles,p1_peak_w,d1_status,"
                                  "d1_cycles,d1_peak_w,area_mm2,score,error,best,repairs\n"));
  const TuneMeasure *m0 = &point(tb, 0)->m;
  g_autofree char *row =
      g_strdup_printf("0,0,0,pass,pass,%" G_GINT64_FORMAT ",%.4f,pass,%" G_GINT64_FORMAT ",%.4f,%.4f,%.2f,,1,0\n",
                      m0->cycles, m0->w[0], m0->d1_cycles, m0->w[1], m0->area_mm2, wl_score(m0->cycles, m0->d1_cycles));
  ck_assert(m0->w[0] > 0 && m0->w[1] > 0 && m0->peak_w == MAX(m0->w[0], m0->w[1]));
  ck_assert_msg(strstr(csv, row), "%s", csv);
  g_autofree char *best = tune_best_text(tb, NULL);
  ck_assert(best && strstr(best, "for p1 and d1 from"));
  rm_tree(dir);
}
END_TEST


/* No --knob: the space is the schema's for the target (hardware only for
 * both), without the fitting's own knobs; a search of it makes technique
 * moves: no point is refused for a knob without effect, a point that hands
 * off RF to RF with streamed weights compiles, and a point that switched
 * weights to resident runs on every SM.  An
 * evaluation budget ends it, and the best point's numerics are checked. */
START_TEST(test_derived) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "t.yaml", TEMPLATE);
  static const char *const none[] = {NULL};
  TuneOptions o;
  tune_options_default(&o);
  o.target = TUNE_TARGET_BOTH;
  g_autoptr(GError) err = NULL;
  g_autoptr(Tune) both = tune_new(tmpl, knobs_of(none), &o, &err);
  ck_assert_msg(both, "%s", err ? err->message : "?");
  ck_assert(both->derived);
  gboolean hw = FALSE, p1 = FALSE, d1 = FALSE;
  for (guint k = 0; k < both->knobs->len; k++) {
    const char *path = knob(both, k)->path;
    hw |= g_str_has_prefix(path, "hardware.");
    p1 |= g_str_has_prefix(path, "p1.");
    d1 |= g_str_has_prefix(path, "d1.");
    ck_assert_msg(!strstr(path, "power.fit") && !strstr(path, "bucket_bytes") && !strstr(path, "pacing_wg"), "%s", path);
    ck_assert_uint_ge(tune_knob_count(knob(both, k)), 2);
  }
  ck_assert(hw && p1 && d1);

  o.target = TUNE_TARGET_D1;
  o.max_evals = 24;
  o.rounds = 10000;
  o.candidates = 6;
  o.seed = 5;
  g_autoptr(Tune) t = run(tmpl, none, &o);
  ck_assert_uint_eq(t->points->len, 24);
  ck_assert_str_eq(t->stopped, "its evaluation budget");
  int weights = -1, handoff = -1, sms = -1;
  for (guint k = 0; k < t->knobs->len; k++) {
    const char *path = knob(t, k)->path;
    ck_assert_msg(g_str_has_prefix(path, "d1."), "%s", path);
    if (strcmp(path, "d1.weights") == 0) weights = (int)k;
    if (strcmp(path, "d1.handoff") == 0) handoff = (int)k;
    if (strcmp(path, "d1.sms_used") == 0) sms = (int)k;
  }
  ck_assert(weights >= 0 && handoff >= 0 && sms >= 0);
  int repaired = 0, resident = 0;
  for (guint i = 0; i < t->points->len; i++) {
    const TunePoint *p = point(t, i);
    ck_assert_msg(!p->m.error || !strstr(p->m.error, "has no effect unless"), "%s", p->m.error);
    g_autofree char *w = tune_knob_value(knob(t, weights), p->idx[weights]);
    g_autofree char *h = tune_knob_value(knob(t, handoff), p->idx[handoff]);
    g_autofree char *u = tune_knob_value(knob(t, sms), p->idx[sms]);
    /* D1's handoff: rf needs no resident weights (streamed K shards hand
     * their partial sums RF to RF too): such a point must compile */
    ck_assert_msg(strcmp(h, "rf") != 0 || strcmp(w, "resident") == 0 || !p->m.error, "point %u: handoff rf, weights %s: %s",
                  i, w, p->m.error);
    if (strcmp(w, "resident") == 0) {
      resident++;
      ck_assert_str_eq(u, "16");
    }
    repaired += p->repairs > 0;
  }
  ck_assert_int_gt(repaired, 0);
  ck_assert_int_gt(resident, 0);
  ck_assert_msg(tune_verify_best(t, 3, &err), "%s", err ? err->message : "?");
  ck_assert(t->verified && point(t, (guint)t->best)->m.status == TUNE_PASS);
  g_autofree char *best = tune_best_text(t, &err);
  ck_assert(best && strstr(best, "knobs of the plan schema searched; moved from the template:") &&
            strstr(best, "# its numerics pass on the grade seeds 7, 13, 11, 23"));
  rm_tree(dir);
}
END_TEST

/* P1 at the default shape on the default machine (plans/baseline.yaml's),
 * for the technique companions. */
static const char BUNDLE_TEMPLATE[] =
    "version: 1\n"
    "hardware: {}\n"
    "p1:\n"
    "  problem: {d_model: 256, heads: 8, d_ff: 1024, layers: 2, seqs: 2, rows: 256}\n"
    "  sms_used: 6\n"
    "  k_chunk: {qkv: 128, wo: 128, w1: 128, w2: 128}\n"
    "d1:\n"
    "  problem: {d_model: 128, heads: 4, d_ff: 512, layers: 2, history: 128, steps: 8}\n";

static long companion(const Plan *plan, const char *tech, const char *target) {
  for (int n = 0;; n++) {
    g_autofree char *c = NULL;
    long min, v;
    if (!plan_space_companion(plan, tech, n, &min, &c, &v)) return -999;
    if (strcmp(c, target) == 0) return v;
  }
}

/* The schema's companions are derived from the shape and the machine:
 * residency takes every SM, K shards whose panel takes at most half a WG's
 * RF and give every SM an owner (W2: 1024 x 32 = 128 KiB -> 4 shards; wo:
 * 8 panels -> 2 shards), A chunks of which 4 buffers fit, multicast only on
 * a machine with LD.mc; D1's relays only when the DMA slots are few. */
START_TEST(test_companions) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) plan = plan_parse("b.yaml", BUNDLE_TEMPLATE, strlen(BUNDLE_TEMPLATE), &err);
  ck_assert_msg(plan, "%s", err ? err->message : "?");
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.sms_used"), 16);
  ck_assert_int_eq(companion(plan, "d1.weights", "d1.sms_used"), 16);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.k_split.w2"), 4);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.k_split.wo"), 2);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.k_split.qkv"), 1);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.k_chunk.w2"), 32);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.k_chunk.qkv"), 32);
  ck_assert_int_eq(companion(plan, "p1.weights", "p1.multicast.w1"), 1);
  ck_assert_int_eq(companion(plan, "d1.weights", "d1.multicast.w1"), -999); /* P1's only */
  ck_assert_int_eq(companion(plan, "p1.k_split.w2", "p1.k_split_last.w2"), 1);
  ck_assert_int_eq(companion(plan, "p1.attention.query_tiles", "p1.attention.kv"), 1); /* shared */
  ck_assert_int_eq(companion(plan, "d1.handoff", "d1.handoff_relays"), 4); /* 17 stores on 2 slots */
  ck_assert_int_eq(companion(plan, "p1.attention.handoff", "p1.k_chunk.wo"), 32); /* 256 / 8 heads */
  ck_assert_int_eq(companion(plan, "p1.layout", "p1.sms_used"), -999);

  /* a bigger RF: W2's panel fits in 2 shards; no multicast: no LD.mc */
  g_auto(GStrv) parts = g_strsplit(BUNDLE_TEMPLATE, "hardware: {}", 2);
  g_autofree char *text = g_strjoinv("hardware: {rf_kib: 128, multicast: false, dma: {depth: 8}}", parts);
  g_autoptr(Plan) p2 = plan_parse("b2.yaml", text, strlen(text), &err);
  ck_assert_msg(p2, "%s", err ? err->message : "?");
  ck_assert_int_eq(companion(p2, "p1.weights", "p1.k_split.w2"), 2);
  ck_assert_int_eq(companion(p2, "p1.weights", "p1.multicast.w1"), -999);
  ck_assert_int_eq(companion(p2, "d1.handoff", "d1.handoff_relays"), 0); /* 16 slots take 17 stores in 2 rounds */
}
END_TEST

/* A synthetic P1 from the point's plan, loaded (a point whose knob has no
 * effect would be refused here): residency pays only with its companions
 * (all SMs, 32-row A chunks for W2, W2 in 4 shards), as the compiler's
 * fallback to streamed makes it; packed layouts, query tiles sharing K/V
 * and GELU factored pay on their own. */
static gpointer bundle_prepare(const char *file, const char *text, TuneTarget target, double cap, gpointer data,
                               TuneMeasure *m) {
  (void)target, (void)cap, (void)data;
  g_autoptr(GError) e = NULL;
  g_autoptr(Plan) plan = plan_parse(file, text, strlen(text), &e);
  ck_assert_msg(plan, "%s", e ? e->message : "?");
  const PlanProblem *pp = plan_problem(plan, PROB_P1);
  long w, sms, kc, ks, layout, qt, kv, gelu;
  ck_assert(plan_knob_number(pp, "weights", &w) && plan_knob_number(pp, "sms_used", &sms) &&
            plan_knob_number(pp, "k_chunk.w2", &kc) && plan_knob_number(pp, "k_split.w2", &ks) &&
            plan_knob_number(pp, "layout", &layout) && plan_knob_number(pp, "attention.query_tiles", &qt) &&
            plan_knob_number(pp, "attention.kv", &kv) && plan_knob_number(pp, "refinements.gelu_factor", &gelu));
  gboolean bundle = w == 1 && sms == 16 && kc == 32 && ks == 4;
  m->cycles = bundle ? 50000 : w == 1 ? 120000 : 100000;
  if (layout > 0) m->cycles -= 5000;
  if (qt > 1 && kv == 1) m->cycles -= 3000;
  if (gelu) m->cycles -= 1000;
  m->status = TUNE_PASS;
  m->peak_w = 19.0;
  m->area_mm2 = 22.0;
  return NULL;
}

/* Technique bundles: the screening round switches residency on with its
 * companions (no point refused for a knob without effect, none for a
 * companion missing), the rounds after it combine the screen's winners
 * one at a time onto the best (residency, a packed layout, shared K/V and
 * GELU factored together: moves that a draw of 1 to 3 knobs among some 75
 * hardly makes), and the search is the same for a seed whatever the
 * threads. */
START_TEST(test_bundles) {
  g_autofree char *dir = tmpdir();
  g_autofree char *tmpl = write_plan(dir, "b.yaml", BUNDLE_TEMPLATE);
  static const char *const none[] = {NULL};
  TuneOptions o;
  tune_options_default(&o);
  o.target = TUNE_TARGET_P1;
  o.rounds = 3;
  o.screen = TRUE;
  o.jobs = 1;
  o.eval = (TuneEval){bundle_prepare, NULL, NULL};
  g_autoptr(Tune) t = run(tmpl, none, &o);
  const char *want[][2] = {{"p1.weights", "resident"},     {"p1.sms_used", "16"},       {"p1.k_split.w2", "4"},
                           {"p1.k_split.wo", "2"},         {"p1.k_chunk.w2", "32"},     {"p1.multicast.w2", "true"},
                           {"p1.k_split_last.w2", "true"}, {"p1.multicast.qkv", "true"}};
  /* the first point of the screen: residency, the first bundle */
  const TunePoint *p = point(t, 1);
  ck_assert_int_eq(p->round, 1);
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
    int k = -1;
    for (guint j = 0; j < t->knobs->len; j++)
      if (strcmp(knob(t, j)->path, want[i][0]) == 0) k = (int)j;
    ck_assert_msg(k >= 0, "%s", want[i][0]);
    g_autofree char *v = tune_knob_value(knob(t, (guint)k), p->idx[k]);
    ck_assert_msg(strcmp(v, want[i][1]) == 0, "%s=%s, not %s", want[i][0], v, want[i][1]);
  }
  ck_assert_int_ge(p->repairs, (int)G_N_ELEMENTS(want) - 1);
  ck_assert_int_eq(p->m.cycles, 50000);
  /* attention's tiles RF to RF into wo: its A chunk a head wide, over
   * residency's 64 (a later companion over an earlier one) */
  int ah = -1, kw = -1;
  for (guint j = 0; j < t->knobs->len; j++) {
    if (strcmp(knob(t, j)->path, "p1.attention.handoff") == 0) ah = (int)j;
    if (strcmp(knob(t, j)->path, "p1.k_chunk.wo") == 0) kw = (int)j;
  }
  ck_assert(ah >= 0 && kw >= 0);
  g_autofree char *kw1 = tune_knob_value(knob(t, (guint)kw), p->idx[kw]);
  ck_assert_str_eq(kw1, "64");
  int relays = 0;
  for (guint i = 1; i < t->points->len; i++) {
    const TunePoint *q = point(t, i);
    g_autofree char *h = tune_knob_value(knob(t, (guint)ah), q->idx[ah]);
    if (q->round != 1 || strcmp(h, "relay") != 0) continue;
    g_autofree char *c = tune_knob_value(knob(t, (guint)kw), q->idx[kw]);
    ck_assert_str_eq(c, "32");
    relays++;
  }
  ck_assert_int_eq(relays, 1);
  /* rounds 2 and 3 combine, one point each, onto the best so far: the
   * screen's best (a packed layout, residency) with shared K/V, then GELU */
  int per_round[4] = {0, 0, 0, 0};
  for (guint i = 1; i < t->points->len; i++) {
    const TunePoint *q = point(t, i);
    ck_assert_msg(q->m.status == TUNE_PASS, "point %u: %s", i, q->m.error ? q->m.error : "?");
    ck_assert_int_le(q->round, 3);
    per_round[q->round]++;
    if (q->round == 2) ck_assert_int_eq(q->m.cycles, 50000 - 5000 - 3000);
    if (q->round == 3) ck_assert_int_eq(q->m.cycles, 50000 - 5000 - 3000 - 1000);
  }
  ck_assert(per_round[1] > 20 && per_round[2] == 1 && per_round[3] == 1);
  ck_assert_int_eq(point(t, (guint)t->best)->m.cycles, 41000);

  /* the same points, log and best for the seed, with 2 threads */
  g_autofree char *log1 = tune_log_csv(t);
  o.jobs = 2;
  g_autoptr(Tune) t2 = run(tmpl, none, &o);
  g_autofree char *log2 = tune_log_csv(t2);
  ck_assert_str_eq(log1, log2);
  rm_tree(dir);
}
END_TEST

Suite *suite_tune(void) {
  Suite *s = suite_create("tune");
  TCase *t = tcase_create("tune");
  tcase_add_test(t, test_knob_parse);
  tcase_add_test(t, test_new);
  tcase_add_test(t, test_search_improves);
  tcase_add_test(t, test_search_threads);
  tcase_add_test(t, test_search_seed);
  tcase_add_test(t, test_rounds_zero);
  tcase_add_test(t, test_tiny_space);
  tcase_add_test(t, test_ranking);
  tcase_add_test(t, test_start_error);
  tcase_add_test(t, test_log_and_best);
  tcase_add_test(t, test_compile_eval);
  tcase_add_test(t, test_knob_parse_wide_range);
  tcase_add_test(t, test_better_both);
  tcase_add_test(t, test_progress_stop);
  tcase_add_test(t, test_derived);
  tcase_add_test(t, test_companions);
  tcase_add_test(t, test_bundles);
  tcase_set_timeout(t, 60);
  suite_add_tcase(s, t);
  return s;
}
