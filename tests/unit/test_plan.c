/* test_plan.c - the plan frontend (src/frontend): defaults, the baseline and
 * valid plans, every error class with its exact message (the golden pairs
 * tests/plans/bad_NAME.yaml + bad_NAME.err), the YAML limits, knob locations,
 * and robustness against mutated input. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "plan_internal.h"
#include "tests.h"

/* Parse `text` as "test.yaml". */
static Plan *parse(const char *text, GError **err) {
  return plan_parse("test.yaml", text, strlen(text), err);
}

/* Parse a tests/plans file, naming it by its path relative to the top; a
 * file with a line "# strict" is parsed as tcc-gen --strict does. */
static Plan *parse_file(const char *rel, GError **err) {
  g_autofree char *path = g_build_filename(TCC_TOP, rel, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
  return plan_parse_strict(rel, text, len, strstr(text, "\n# strict\n") || g_str_has_prefix(text, "# strict\n"), err);
}

static void expect_error(const char *text, PlanErrorCode code, const char *msg) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = parse(text, &err);
  ck_assert_msg(p == NULL, "accepted:\n%.200s", text);
  ck_assert_msg(g_error_matches(err, PLAN_ERROR, code), "code %d for:\n%.200s\n%.300s", err->code,
                text, err->message);
  ck_assert_msg(strcmp(err->message, msg) == 0, "\n got  %.300s\n want %.300s", err->message, msg);
}

/* Every non-dim knob of two problems holds the same value. */
static void assert_same_knobs(const PlanProblem *a, const PlanProblem *b) {
  ck_assert_mem_eq(&a->dims, &b->dims, sizeof a->dims);
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    ck_assert_msg(plan_knob_get(a, k) == plan_knob_get(b, k), "%s: %d != %d", k->path,
                  plan_knob_get(a, k), plan_knob_get(b, k));
  }
}

START_TEST(test_plan_defaults) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = parse("version: 1\n", &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  Machine m;
  sim_machine_default(&m);
  ck_assert_mem_eq(&p->hw, &m, sizeof m);
  ck_assert_str_eq(p->file, "test.yaml");
  ck_assert_int_eq(p->version, 1);
  for (int kind = PROB_D1; kind <= PROB_P1; kind++) {
    const PlanProblem *pp = plan_problem(p, (ProblemKind)kind);
    Problem dims;
    wl_problem_default(&dims, (ProblemKind)kind);
    ck_assert(!pp->present);
    ck_assert_int_eq(pp->where.line, 0);
    ck_assert_mem_eq(&pp->dims, &dims, sizeof dims);
    ck_assert_int_eq(pp->sms_used, 16);
    for (int j = 0; j < PROJ__COUNT; j++) {
      ck_assert_int_eq(pp->panel[j], 32);
      ck_assert_int_eq(pp->k_chunk[j], 128);
      ck_assert_int_eq(pp->k_split[j], 1);
      ck_assert(!pp->multicast[j]);
    }
    ck_assert_int_eq(pp->layout, LAYOUT_ROW);
    ck_assert_int_eq(pp->weights, WEIGHTS_STREAMED);
    ck_assert_int_eq(pp->kv_writeback, KV_DIRECT);
    ck_assert_int_eq(pp->store_spacing, 0);
    ck_assert_int_eq(pp->attn_slices, 1);
    ck_assert_int_eq(pp->pacing_wg, -1);
    ck_assert_int_eq(pp->solver, SOLVER_CONSTRUCTIVE);
    ck_assert_int_eq(pp->solver_time_limit_s, 10);
    ck_assert(!pp->ffn_fused);
  }
  ck_assert_int_eq(p->p1.row_tile, 32);
  /* the k_chunk default follows K: the largest of 128, 96, 64, 32 dividing it */
  g_autoptr(Plan) q = parse("version: 1\nd1: {problem: {d_model: 96, heads: 3, d_ff: 160}}\n",
                            NULL);
  ck_assert(q != NULL);
  ck_assert_int_eq(q->d1.k_chunk[PROJ_QKV], 96);
  ck_assert_int_eq(q->d1.k_chunk[PROJ_W2], 32);
  /* sms_used follows hardware.sms, wherever the hardware section is */
  g_autoptr(Plan) r = parse("version: 1\nd1: {}\nhardware: {sms: 8}\n", NULL);
  ck_assert(r != NULL);
  ck_assert_int_eq(r->d1.sms_used, 8);
  ck_assert(r->d1.present);
}
END_TEST

START_TEST(test_plan_baseline) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = plan_load(TOP_PATH("plans/baseline.yaml"), &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  ck_assert(p->p1.present && p->d1.present);
  g_autoptr(Plan) def = parse("version: 1\n", NULL);
  ck_assert_mem_eq(&p->hw, &def->hw, sizeof p->hw);
  /* every knob at its default but P1's sms_used (kept under 20 W) */
  ck_assert_int_eq(p->p1.sms_used, 6);
  def->p1.sms_used = 6;
  assert_same_knobs(&p->p1, &def->p1);
  assert_same_knobs(&p->d1, &def->d1);
  ck_assert_int_gt(plan_knob_loc(&p->d1, "panels.w1").line, 0);
  ck_assert_int_gt(plan_hw_loc(p, "dma.engines").line, 0);
}
END_TEST

START_TEST(test_plan_valid_files) {
  g_autoptr(Plan) def = parse("version: 1\n", NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) full = parse_file("tests/plans/valid_full.yaml", &err);
  ck_assert_msg(full != NULL, "%s", err ? err->message : "?");
  ck_assert_mem_eq(&full->hw, &def->hw, sizeof full->hw);
  assert_same_knobs(&full->p1, &def->p1);
  assert_same_knobs(&full->d1, &def->d1);
  g_autoptr(Plan) min = parse_file("tests/plans/valid_minimal.yaml", NULL);
  ck_assert(min != NULL && !min->p1.present && !min->d1.present);
}
END_TEST

/* An unwritten k_chunk fits the panel it loads and the RF: the default
 * machine keeps 128 rows for 32-wide panels, a 16 KiB RF halves it, and a
 * 128-wide panel takes 64 rows (32 KiB, half of 64 KiB); a written one is
 * kept. */
START_TEST(test_k_chunk_defaults) {
  const struct {
    const char *text;
    int chunk[PROJ__COUNT];
  } c[] = {{"version: 1\nd1: {}\n", {128, 128, 128, 128}},
           {"version: 1\nhardware: {rf_kib: 16}\nd1: {}\n", {64, 64, 64, 64}},
           {"version: 1\nd1: {panels: {w1: 128}}\n", {128, 128, 64, 128}},
           {"version: 1\nd1: {panels: {w1: 128}, k_chunk: {w1: 128}}\n", {128, 128, 128, 128}}};
  for (unsigned i = 0; i < G_N_ELEMENTS(c); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(Plan) p = parse(c[i].text, &err);
    ck_assert_msg(p, "%s", err ? err->message : "?");
    for (int j = 0; j < PROJ__COUNT; j++)
      ck_assert_msg(p->d1.k_chunk[j] == c[i].chunk[j], "%s: k_chunk.%s = %d, want %d", c[i].text,
                    sched_proj_name[j], p->d1.k_chunk[j], c[i].chunk[j]);
  }
}
END_TEST

START_TEST(test_plan_custom) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = parse_file("tests/plans/valid_custom.yaml", &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  ck_assert_int_eq(p->hw.sms, 12);
  ck_assert_int_eq(p->hw.sh_kib, 64);
  ck_assert_int_eq(p->hw.dma_engines, 4);
  ck_assert_int_eq(p->hw.dma_depth, 2);
  ck_assert_int_eq(p->hw.multicast, 0);
  ck_assert_int_eq(p->hw.reduce_units, 2);
  ck_assert_int_eq(p->hw.hbm_channels, 8);
  const PlanProblem *d = &p->d1, *q = &p->p1;
  ck_assert_int_eq(d->dims.kind, PROB_D1);
  ck_assert_int_eq(d->dims.d_model, 96);
  ck_assert_int_eq(d->dims.history, 64);
  ck_assert_int_eq(d->dims.steps, 4);
  ck_assert_int_eq(d->dims.layers, 2);
  ck_assert_int_eq(d->sms_used, 8);
  /* default chunks: the largest of 128, 96, 64, 32 dividing K = 96 whose
   * chunk is at most half the 64 KiB RF: qkv's 96-wide panel makes a 96-row
   * chunk 36 KiB, so 32 */
  int panels[] = {96, 48, 40, 16}, chunks[] = {32, 96, 96, 32};
  for (int j = 0; j < PROJ__COUNT; j++) {
    ck_assert_int_eq(d->panel[j], panels[j]);
    ck_assert_int_eq(d->k_chunk[j], chunks[j]);
  }
  ck_assert_int_eq(d->kv_writeback, KV_TEMP);
  ck_assert_int_eq(d->store_spacing, 16);
  ck_assert_int_eq(q->dims.kind, PROB_P1);
  ck_assert_int_eq(q->dims.rows, 128);
  ck_assert_int_eq(q->dims.seqs, 1);
  ck_assert_int_eq(q->sms_used, 12);
  ck_assert_int_eq(q->row_tile, 64);
  ck_assert_int_eq(q->panel[PROJ_W1], 128);
  ck_assert_int_eq(q->panel[PROJ_QKV], 32);
  ck_assert_int_eq(q->k_chunk[PROJ_QKV], 64);
  ck_assert_int_eq(q->k_chunk[PROJ_W2], 256);
  ck_assert_int_eq(q->store_spacing, 48);
  ck_assert_int_eq(q->kv_writeback, KV_DIRECT);
}
END_TEST

/* Every tests/plans/bad_NAME.yaml fails with exactly bad_NAME.err. */
START_TEST(test_plan_bad_files) {
  g_autoptr(GDir) dir = g_dir_open(TOP_PATH("tests/plans"), 0, NULL);
  ck_assert(dir != NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(dir));)
    if (g_str_has_prefix(n, "bad_") && g_str_has_suffix(n, ".yaml"))
      g_ptr_array_add(names, g_strndup(n, strlen(n) - 5));
  ck_assert_int_ge(names->len, 70);
  for (guint i = 0; i < names->len; i++) {
    const char *n = g_ptr_array_index(names, i);
    g_autofree char *rel = g_strdup_printf("tests/plans/%s.yaml", n);
    g_autofree char *errpath = g_strdup_printf("%s/tests/plans/%s.err", TCC_TOP, n);
    g_autofree char *want = NULL;
    ck_assert_msg(g_file_get_contents(errpath, &want, NULL, NULL), "missing %s", errpath);
    g_strchomp(want);
    g_autoptr(GError) err = NULL;
    g_autoptr(Plan) p = parse_file(rel, &err);
    ck_assert_msg(p == NULL, "%s was accepted", rel);
    ck_assert(err->domain == PLAN_ERROR);
    ck_assert_msg(strcmp(err->message, want) == 0, "%s:\n got  %s\n want %s", rel,
                  err->message, want);
  }
}
END_TEST

/* One inline case per error class, checking the GError code too. */
START_TEST(test_plan_error_codes) {
  struct { const char *text; PlanErrorCode code; const char *msg; } cases[] = {
      {"version: [1\n", PLAN_ERROR_SYNTAX,
       "test.yaml:2:1: error: did not find expected ',' or ']' (while parsing a flow sequence "
       "at line 1)"},
      {"version: &v 1\n", PLAN_ERROR_LIMIT,
       "test.yaml:1:10: error: anchors and aliases are not allowed in plans"},
      {"version: 1\nd1: 3\n", PLAN_ERROR_TYPE,
       "test.yaml:2:5: error: 'd1' must be a mapping, got '3'"},
      {"[1]\n", PLAN_ERROR_STRUCTURE, "test.yaml:1:1: error: a plan must be a mapping, got a sequence"},
      {"version: 1\nd1: {sms_usde: 3}\n", PLAN_ERROR_UNKNOWN_KEY,
       "test.yaml:2:6: error: unknown key 'sms_usde' in d1; did you mean 'sms_used'?"},
      {"version: 1\nd1: {}\nd1: {}\n", PLAN_ERROR_DUPLICATE,
       "test.yaml:3:1: error: duplicate key 'd1' (first at line 2)"},
      {"d1: {}\n", PLAN_ERROR_MISSING, "test.yaml:1:1: error: missing required key 'version'"},
      {"version: 1\np1: {sms_used: 0}\n", PLAN_ERROR_RANGE,
       "test.yaml:2:16: error: sms_used=0 out of range 1..16 (hardware.sms)"},
      {"version: 1\np1: {row_tile: 40}\n", PLAN_ERROR_DIVIDE,
       "test.yaml:2:16: error: row_tile=40 must be a multiple of 32"},
      {"version: 1\np1: {ffn: {fused: false}}\n", PLAN_ERROR_NOT_APPLICABLE,
       "test.yaml:2:6: error: 'ffn' does not apply to p1"},
      {"version: 1\nd1: {placement: {k_divisor: 8}}\n", PLAN_ERROR_CONFLICT,
       "test.yaml:2:18: error: 'placement.k_divisor' has no effect unless placement.solver is "
       "ilp"},
      {"version: 1\np1: {power: {preload_waves: 3}}\n", PLAN_ERROR_PLANNED,
       "test.yaml:2:29: error: 'power.preload_waves: 3' is not supported yet for p1 (planned; "
       "docs/plan.md's status column)"},
      {"version: 1\nd1: {power: {preload_waves: 3}}\n", PLAN_ERROR_CONFLICT,
       "test.yaml:2:14: error: 'power.preload_waves' has no effect unless weights is resident"},
      {"version: 1\nd1: {power: {bucket_bytes: 4096}}\n", PLAN_ERROR_CONFLICT,
       "test.yaml:2:14: error: 'power.bucket_bytes' has no effect unless power.event_interval > 0"},
      {"version: 1\nd1: {power: {bucket_bytes: 4096, event_interval: 10, in_flight: 2}}\n",
       PLAN_ERROR_CONFLICT,
       "test.yaml:2:54: error: 'power.in_flight' has no effect unless power.pacing_wg >= 0"},
      {"version: 0\n", PLAN_ERROR_VERSION,
       "test.yaml:1:10: error: unsupported plan version 0 (this tcc-gen reads version 1)"},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++)
    expect_error(cases[i].text, cases[i].code, cases[i].msg);
}
END_TEST

/* Integers: decimal, '-' allowed, overflow rejected at the long boundary. */
START_TEST(test_plan_integers) {
  g_autoptr(Plan) p = parse("version: 1\nd1: {power: {pacing_wg: -1}, store_spacing: 100000}\n",
                            NULL);
  ck_assert(p != NULL);
  ck_assert_int_eq(p->d1.store_spacing, 100000);
  expect_error("version: 1\nd1: {store_spacing: 9223372036854775807}\n", PLAN_ERROR_RANGE,
               "test.yaml:2:21: error: store_spacing=9223372036854775807 out of range 0..100000");
  expect_error("version: 1\nd1: {store_spacing: 9223372036854775808}\n", PLAN_ERROR_RANGE,
               "test.yaml:2:21: error: 'store_spacing' value 9223372036854775808 overflows");
  expect_error("version: 1\nd1: {store_spacing: -9223372036854775808}\n", PLAN_ERROR_RANGE,
               "test.yaml:2:21: error: store_spacing=-9223372036854775808 out of range "
               "0..100000");
  expect_error("version: 1\nd1: {store_spacing: -9223372036854775809}\n", PLAN_ERROR_RANGE,
               "test.yaml:2:21: error: 'store_spacing' value -9223372036854775809 overflows");
  const char *bad[] = {"+5", "1e3", "1_000", "1.0", "-", "--1", "0b1", "00", ".5"};
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *text = g_strdup_printf("version: 1\nd1: {store_spacing: %s}\n", bad[i]);
    g_autofree char *msg = g_strdup_printf(
        "test.yaml:2:21: error: 'store_spacing' must be a decimal integer, got '%s'", bad[i]);
    expect_error(text, PLAN_ERROR_TYPE, msg);
  }
  expect_error("version: 1\nd1: {store_spacing: null}\n", PLAN_ERROR_TYPE,
               "test.yaml:2:21: error: 'store_spacing' must be an integer, got 'null'");
  expect_error("version: 1\nd1: {rf_temp_kib: {a: 1}}\n", PLAN_ERROR_TYPE,
               "test.yaml:2:19: error: 'rf_temp_kib' must be an integer, got a mapping");
  /* store_spacing also takes a mapping of stages (docs/plan.md) */
  expect_error("version: 1\nd1: {store_spacing: {a: 1}}\n", PLAN_ERROR_UNKNOWN_KEY,
               "test.yaml:2:22: error: unknown key 'a' in d1.store_spacing; did you mean 'att'?");
}
END_TEST

static char *repeat(const char *s, int n) {
  GString *g = g_string_new(NULL);
  for (int i = 0; i < n; i++) g_string_append(g, s);
  return g_string_free(g, FALSE);
}

/* The limits right at and just over their bounds. */
START_TEST(test_plan_limits) {
  /* size: 1 MiB of comments is fine, one byte more is not */
  g_autofree char *big = g_malloc(PLAN_MAX_BYTES + 2);
  memset(big, '#', PLAN_MAX_BYTES + 1);
  memcpy(big, "version: 1\n", 11);
  big[PLAN_MAX_BYTES - 1] = '\n';
  g_autoptr(Plan) ok = plan_parse("big.yaml", big, PLAN_MAX_BYTES, NULL);
  ck_assert(ok != NULL);
  g_autoptr(GError) err = NULL;
  ck_assert(plan_parse("big.yaml", big, PLAN_MAX_BYTES + 1, &err) == NULL);
  ck_assert_str_eq(err->message,
                   "big.yaml:1:1: error: plan is larger than the limit of 1048576 bytes");
  /* nodes: root, version, 1, d1, its mapping, x, the sequence: 7 + n items */
  g_autofree char *items = repeat("1,", PLAN_MAX_NODES - 7 - 1);
  g_autofree char *at = g_strdup_printf("version: 1\nd1: {x: [%s1]}\n", items);
  expect_error(at, PLAN_ERROR_UNKNOWN_KEY, "test.yaml:2:6: error: unknown key 'x' in d1");
  g_autofree char *over = g_strdup_printf("version: 1\nd1: {x: [%s1, 2]}\n", items);
  g_autofree char *over_msg = g_strdup_printf(
      "test.yaml:2:%d: error: more than 10000 YAML nodes in a plan", (int)strlen(items) + 13);
  expect_error(over, PLAN_ERROR_LIMIT, over_msg);
  /* depth: 8 levels parse (and fail later on the unknown key) */
  expect_error("version: 1\nd1: {a: {b: {c: {d: {e: {f: {g: 1}}}}}}}\n",
               PLAN_ERROR_UNKNOWN_KEY, "test.yaml:2:6: error: unknown key 'a' in d1");
  expect_error("[[[[[[[[[1]]]]]]]]]\n", PLAN_ERROR_LIMIT,
               "test.yaml:1:9: error: nesting deeper than 8 levels");
  /* scalars: 256 bytes is fine */
  g_autofree char *k256 = repeat("k", 256), *k257 = repeat("k", 257);
  g_autofree char *t256 = g_strdup_printf("version: 1\n%s: 1\n", k256);
  g_autofree char *m256 = g_strdup_printf(
      "test.yaml:2:1: error: unknown key '%.64s...' at top level", k256);
  expect_error(t256, PLAN_ERROR_UNKNOWN_KEY, m256);
  g_autofree char *t257 = g_strdup_printf("version: 1\n%s: 1\n", k257);
  expect_error(t257, PLAN_ERROR_LIMIT,
               "test.yaml:2:1: error: scalar of 257 bytes is longer than the limit of 256");
}
END_TEST

START_TEST(test_plan_load_io) {
  g_autoptr(GError) err = NULL;
  ck_assert(plan_load("tests/plans/does-not-exist.yaml", &err) == NULL);
  ck_assert(g_error_matches(err, PLAN_ERROR, PLAN_ERROR_IO));
  ck_assert_str_eq(err->message, "tests/plans/does-not-exist.yaml:1:1: error: cannot read plan: "
                                 "No such file or directory");
  g_clear_error(&err);
  ck_assert(plan_load(TOP_PATH("tests/plans"), &err) == NULL);
  ck_assert(g_error_matches(err, PLAN_ERROR, PLAN_ERROR_IO));
  g_clear_error(&err);
  /* a file over the limit is not read whole */
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("tcc-plan-XXXXXX.yaml", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  g_autofree char *big = g_malloc0(PLAN_MAX_BYTES + 100);
  memset(big, '#', PLAN_MAX_BYTES + 99);
  ck_assert(g_file_set_contents(path, big, PLAN_MAX_BYTES + 99, NULL));
  ck_assert(plan_load(path, &err) == NULL);
  ck_assert(g_error_matches(err, PLAN_ERROR, PLAN_ERROR_LIMIT));
  g_unlink(path);
}
END_TEST

START_TEST(test_plan_knob_loc) {
  const char *text = "version: 1\n"
                     "hardware:\n"
                     "  dma: {engines: 3}\n"
                     "d1:\n"
                     "  panels:\n"
                     "    w1: 64\n"
                     "  problem: {d_ff: 256}\n";
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = parse(text, &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  PlanLoc l = plan_knob_loc(&p->d1, "panels.w1");
  ck_assert_int_eq(l.line, 6);
  ck_assert_int_eq(l.col, 5);
  ck_assert_str_eq(l.path, "d1.panels.w1");
  l = plan_knob_loc(&p->d1, "d1.problem.d_ff");
  ck_assert_int_eq(l.line, 7);
  ck_assert_int_eq(l.col, 13);
  ck_assert_str_eq(l.path, "d1.problem.d_ff");
  l = plan_knob_loc(&p->d1, "panels.w2"); /* a default */
  ck_assert_int_eq(l.line, 0);
  ck_assert_str_eq(l.path, "d1.panels.w2");
  ck_assert(plan_knob_loc(&p->d1, "row_tile").path == NULL);   /* P1 only */
  ck_assert(plan_knob_loc(&p->d1, "p1.panels.w1").path == NULL); /* other section */
  ck_assert(plan_knob_loc(&p->d1, "panels").path == NULL);
  ck_assert(plan_knob_loc(&p->d1, NULL).path == NULL);
  ck_assert_str_eq(plan_knob_loc(&p->p1, "row_tile").path, "p1.row_tile");
  l = plan_hw_loc(p, "dma.engines");
  ck_assert_int_eq(l.line, 3);
  ck_assert_int_eq(l.col, 9);
  ck_assert_str_eq(l.path, "hardware.dma.engines");
  l = plan_hw_loc(p, "hardware.sms");
  ck_assert_int_eq(l.line, 0);
  ck_assert_str_eq(l.path, "hardware.sms");
  ck_assert(plan_hw_loc(p, "hbm").path == NULL);
  g_autofree char *d1 = plan_knob_describe(&p->d1, "panels.w1");
  ck_assert_str_eq(d1, "d1.panels.w1=64 (line 6)");
  g_autofree char *d2 = plan_knob_describe(&p->d1, "weights");
  ck_assert_str_eq(d2, "d1.weights=streamed (default)");
  g_autofree char *d3 = plan_knob_describe(&p->p1, "multicast.wo");
  ck_assert_str_eq(d3, "p1.multicast.wo=false (default)");
  ck_assert(plan_knob_describe(&p->d1, "rf_grid.rows") == NULL);
  ck_assert_int_eq(sched_proj_n(&p->d1.dims, PROJ_QKV), 384);
  ck_assert_int_eq(sched_proj_k(&p->d1.dims, PROJ_W2), 256);
}
END_TEST

/* The knob table is complete, consistent and documented in docs/plan.md. */
START_TEST(test_plan_schema_table) {
  g_autofree char *doc = NULL;
  ck_assert(g_file_get_contents(TOP_PATH("docs/plan.md"), &doc, NULL, NULL));
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    ck_assert_msg(k->path && k->full[PROB_D1] && k->full[PROB_P1], "knob %d empty", i);
    ck_assert_int_eq(plan_knob_index(k->path), i);
    ck_assert(k->applies != 0);
    g_autofree char *ticked = g_strdup_printf("`%s`", k->path);
    ck_assert_msg(strstr(doc, ticked) != NULL, "docs/plan.md does not document %s", ticked);
  }
  const char *hw[] = {"sms", "wgs_per_sm", "rf_kib", "vl", "mma_arrays", "sfu", "sh_kib",
                      "dma.engines", "dma.depth", "hbm_channels", "noc_bits", "multicast",
                      "reduce_units"};
  for (unsigned i = 0; i < G_N_ELEMENTS(hw); i++) {
    g_autofree char *ticked = g_strdup_printf("`%s`", hw[i]);
    ck_assert_msg(strstr(doc, ticked) != NULL, "docs/plan.md does not document %s", ticked);
  }
  /* the annotated example of section 7 loads */
  const char *sec = strstr(doc, "## 7. An annotated example");
  ck_assert(sec != NULL);
  const char *start = strstr(sec, "```yaml\n");
  ck_assert(start != NULL);
  start += strlen("```yaml\n");
  const char *end = strstr(start, "```");
  ck_assert(end != NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = plan_parse("plan.md", start, (size_t)(end - start), &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "?");
  ck_assert_int_eq(p->d1.panel[PROJ_W1], 16);
}
END_TEST

/* Truncations and byte flips of the baseline: never a crash (ASan/UBSan
 * build), always either a Plan or one line "file:line:col: error: ...". */
START_TEST(test_plan_mutations) {
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents(TOP_PATH("plans/baseline.yaml"), &text, &len, NULL));
  g_autofree char *buf = g_malloc(len + 1);
  guint32 rng = 12345;
  for (gsize i = 0; i <= len + 1500; i++) {
    gsize n = i <= len ? i : len;
    memcpy(buf, text, len);
    if (i > len) { /* flip 1..3 bytes to values YAML cares about */
      static const char pool[] = ":{}[],-#&*!|>'\"\n \t?%@`\\0x\x80\xff";
      for (int f = 0; f < 1 + (int)(i % 3); f++) {
        rng = rng * 1103515245u + 12345u;
        gsize at = (rng >> 8) % len;
        rng = rng * 1103515245u + 12345u;
        buf[at] = pool[(rng >> 8) % (sizeof pool - 1)];
      }
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(Plan) p = plan_parse("m.yaml", buf, n, &err);
    if (p) continue;
    ck_assert(err != NULL && err->domain == PLAN_ERROR);
    ck_assert_msg(g_str_has_prefix(err->message, "m.yaml:"), "%s", err->message);
    ck_assert_msg(strchr(err->message, '\n') == NULL, "multi-line: %s", err->message);
    ck_assert_msg(strstr(err->message, ": error: ") != NULL, "%s", err->message);
  }
}
END_TEST

/* Shape-relative knobs: a written value that does not fit the shape falls
 * back to the nearest legal one, marked and warned about; one that fits no
 * shape is refused; --strict refuses both; `auto` takes what an unwritten
 * knob would; a knob whose prerequisite fell back goes to its default. */
START_TEST(test_plan_fallback) {
  const char *text = "version: 1\np1:\n  problem: {d_model: 96, heads: 3, d_ff: 384, layers: 1, seqs: 3, rows: 96}\n"
                     "  k_chunk: {qkv: 128, wo: auto}\n  attention: {query_tiles: 4, kv: shared}\n";
  g_autoptr(GError) err = NULL;
  g_autoptr(Plan) p = parse(text, &err);
  ck_assert_msg(p, "%s", err ? err->message : "?");
  const PlanProblem *pp = &p->p1;
  int kq = plan_knob_index("k_chunk.qkv"), kw = plan_knob_index("k_chunk.wo"), qt = plan_knob_index("attention.query_tiles");
  ck_assert_int_eq(pp->k_chunk[PROJ_QKV], 96); /* 128 does not divide 96: the nearest that does */
  ck_assert_int_eq(pp->chosen[kq], SCHED_FALLBACK);
  ck_assert_int_eq(pp->k_chunk[PROJ_WO], 96); /* auto: the default rule's choice for K = 96 */
  ck_assert_int_eq(pp->chosen[kw], SCHED_AUTO);
  ck_assert_int_eq(pp->attn_query_tiles, 3); /* 3 row tiles a sequence */
  ck_assert_int_eq(pp->chosen[qt], SCHED_FALLBACK);
  ck_assert_int_eq(pp->loc[kq].line, 4); /* the place stays the plan's */
  ck_assert_uint_eq(p->warnings[PROB_P1]->len, 2);
  ck_assert_str_eq(g_ptr_array_index(p->warnings[PROB_P1], 0),
                   "test.yaml:4:18: warning: k_chunk.qkv=128 does not divide d_model=96; using 96, the nearest value "
                   "that fits (--strict refuses)");
  ck_assert_uint_eq(p->warnings[PROB_D1]->len, 0);
  /* the record says which values were chosen */
  g_autoptr(GString) rec = g_string_new(NULL);
  sched_print(rec, pp);
  ck_assert_msg(strstr(rec->str, "p1.k_chunk.qkv = 96  ; fallback line 4:13\n") &&
                strstr(rec->str, "p1.k_chunk.wo = 96  ; auto line 4:23\n"), "%s", rec->str);
  /* --strict: the refusal of old */
  g_autoptr(GError) e2 = NULL;
  g_autoptr(Plan) s = plan_parse_strict("test.yaml", text, strlen(text), TRUE, &e2);
  ck_assert(!s && g_error_matches(e2, PLAN_ERROR, PLAN_ERROR_DIVIDE));
  ck_assert_str_eq(e2->message, "test.yaml:4:18: error: k_chunk.qkv=128 does not divide d_model=96");
  /* a value no shape takes is still refused */
  expect_error("version: 1\np1:\n  k_chunk: {qkv: 100}\n", PLAN_ERROR_DIVIDE,
               "test.yaml:3:18: error: k_chunk.qkv=100 must be a multiple of 32");
  /* attention.query_tiles falls to 1 on one row tile a sequence: attention.kv, which needs
   * query_tiles > 1, goes back to its default with a warning */
  g_autoptr(GError) e3 = NULL;
  g_autoptr(Plan) one = parse("version: 1\np1:\n  problem: {rows: 32}\n  attention: {query_tiles: 4, kv: shared}\n", &e3);
  ck_assert_msg(one, "%s", e3 ? e3->message : "?");
  ck_assert_int_eq(one->p1.attn_query_tiles, 1);
  ck_assert_int_eq(one->p1.attn_kv, ATTKV_STREAMED);
  ck_assert_int_eq(one->p1.chosen[plan_knob_index("attention.kv")], SCHED_FALLBACK);
  ck_assert_uint_eq(one->warnings[PROB_P1]->len, 2);
  /* attention.slices on no history: 1 */
  g_autoptr(Plan) h0 = parse("version: 1\nd1:\n  problem: {history: 0}\n  weights: resident\n  attention: {slices: 4}\n", &e3);
  ck_assert_msg(h0, "%s", e3 ? e3->message : "?");
  ck_assert_int_eq(h0->d1.attn_slices, 1);
}
END_TEST

Suite *suite_plan(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_plan_defaults);
  tcase_add_test(tc, test_plan_baseline);
  tcase_add_test(tc, test_plan_valid_files);
  tcase_add_test(tc, test_plan_custom);
  tcase_add_test(tc, test_k_chunk_defaults);
  tcase_add_test(tc, test_plan_bad_files);
  tcase_add_test(tc, test_plan_error_codes);
  tcase_add_test(tc, test_plan_integers);
  tcase_add_test(tc, test_plan_limits);
  tcase_add_test(tc, test_plan_load_io);
  tcase_add_test(tc, test_plan_knob_loc);
  tcase_add_test(tc, test_plan_schema_table);
  tcase_add_test(tc, test_plan_mutations);
  tcase_add_test(tc, test_plan_fallback);
  suite_add_tcase(s, tc);
  return s;
}
