/* test_shaping.c - power shaping tied to the plan (issue 9, item 8):
 *
 *   spacing     store_spacing per stage (src/lower/spacing.c): the scalar
 *               form gives every stage its value, the mapping form's
 *               `default` the same, a stage key its own; the WAITT before a
 *               stage's output stores has the stage's value and cites the
 *               knob that set it; `ln` does not apply to D1; tcc-diff
 *               lists a stage knob only when a plan writes it;
 *   hot groups  tcc-sim --profile groups the hottest window's energy by
 *               the comment's knob, the task's stage and the task
 *               (src/sim/hot_groups.c): on a program whose hottest
 *               instructions are known, the top group of each, their
 *               shares, and the same through --json parsed back. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "knobdiff.h"
#include "spacing.h"
#include "pipeline.h"
#include "tests.h"

#define P1_DIMS "{d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}"

static Plan *parse(const char *text, GError **err) {
  return plan_parse("s.yaml", text, strlen(text), err);
}

static Plan *p1_plan(const char *spacing) {
  g_autofree char *text =
      g_strdup_printf("version: 1\np1:\n  problem: %s\n  sms_used: 4\n  store_spacing: %s\n", P1_DIMS, spacing);
  g_autoptr(GError) err = NULL;
  Plan *p = parse(text, &err);
  ck_assert_msg(p, "%s: %s", spacing, err ? err->message : "?");
  return p;
}

/* The plan forms: scalar, mapping with default, a stage alone. */
START_TEST(test_spacing_forms) {
  g_autoptr(Plan) a = p1_plan("24");
  for (int st = 0; st < SPACE__COUNT; st++) ck_assert_int_eq(a->p1.stage_spacing[st], 24);
  g_autoptr(Plan) b = p1_plan("{default: 24, w1: 8, ln: 0}");
  ck_assert_int_eq(b->p1.store_spacing, 24);
  ck_assert_int_eq(b->p1.stage_spacing[SPACE_W1], 8);
  ck_assert_int_eq(b->p1.stage_spacing[SPACE_LN], 0);
  ck_assert_int_eq(b->p1.stage_spacing[SPACE_QKV], 24);
  ck_assert_int_eq(b->p1.stage_spacing[SPACE_W2], 24);
  g_autoptr(Plan) c = p1_plan("{qkv: 4}");
  ck_assert_int_eq(c->p1.store_spacing, 0);
  ck_assert_int_eq(c->p1.stage_spacing[SPACE_QKV], 4);
  ck_assert_int_eq(c->p1.stage_spacing[SPACE_ATT], 0);
  /* errors: one line at the key or value */
  const char *bad[][2] = {
      {"version: 1\nd1:\n  store_spacing: {ln: 3}\n", "s.yaml:3:19: error: 'store_spacing.ln' does not apply to d1"},
      {"version: 1\np1:\n  store_spacing: {qvk: 3}\n",
       "s.yaml:3:19: error: unknown key 'qvk' in p1.store_spacing; did you mean 'qkv'?"},
      {"version: 1\np1:\n  store_spacing: {w2: 100001}\n",
       "s.yaml:3:23: error: store_spacing.w2=100001 out of range 0..100000"},
      {"version: 1\np1:\n  store_spacing: {default: [1]}\n", NULL},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(Plan) p = parse(bad[i][0], &err);
    ck_assert_msg(!p && err, "accepted: %s", bad[i][0]);
    if (bad[i][1]) ck_assert_str_eq(err->message, bad[i][1]);
    ck_assert_msg(g_str_has_prefix(err->message, "s.yaml:3:") && !strchr(err->message, '\n'), "%s", err->message);
  }
}
END_TEST

/* Every WAITT of a stage's tasks has the stage's spacing and cites its
 * knob: W1's 5 (p1.store_spacing.w1), the others 16 (p1.store_spacing). */
START_TEST(test_spacing_stages) {
  g_autoptr(Plan) plan = p1_plan("{default: 16, w1: 5}");
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  int per[SPACE__COUNT] = {0};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    int st = ir_role_space(t->role.kind);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      if (op->kind != IR_WAITT) continue;
      ck_assert_msg(st >= 0, "a WAITT in %s, a task of no stage", t->name);
      per[st]++;
      ck_assert_int_eq(op->n, st == SPACE_W1 ? 5 : 16);
      ck_assert_str_eq(op->prov.knob, st == SPACE_W1 ? "p1.store_spacing.w1" : "p1.store_spacing");
      ck_assert_int_eq(op->prov.line, 5);
    }
  }
  for (int st = 0; st < SPACE__COUNT; st++) ck_assert_msg(per[st] > 0, "stage %s has no WAITT", sched_space_name[st]);
  /* lw_spacing_of: a role of no stage takes store_spacing */
  IrProv prov;
  ck_assert_int_eq(lw_spacing_of(ir, ROLE_W1, &prov), 5);
  ck_assert_int_eq(lw_spacing_of(ir, ROLE_LN2, NULL), 16);
  ck_assert_int_eq(lw_spacing_of(ir, ROLE_RELAY, &prov), 16);
  ck_assert_str_eq(prov.knob, "p1.store_spacing");
  /* a stage at 0: no WAITT at all in it */
  g_autoptr(Plan) zero = p1_plan("{default: 16, att: 0}");
  g_autoptr(Ir) ir0 = pass_pipeline(zero, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert(ir0);
  for (guint k = 0; k < ir0->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir0, (int)k);
    for (guint i = 0; i < t->ops->len && t->role.kind == ROLE_ATT; i++)
      ck_assert(g_array_index(t->ops, IrOp, i).kind != IR_WAITT);
  }
}
END_TEST

/* tcc-diff's knob list: a stage knob written in neither plan follows
 * store_spacing and is not listed; written in one, it is. */
START_TEST(test_spacing_diff) {
  g_autoptr(Plan) a = p1_plan("16");
  g_autoptr(Plan) b = p1_plan("32");
  g_autoptr(Plan) c = p1_plan("{default: 32, w1: 8}");
  const gboolean p1[2] = {[PROB_P1] = TRUE};
  g_autoptr(GArray) ab = diff_knobs(a, b, p1);
  ck_assert_int_eq(ab->len, 1);
  ck_assert_str_eq(g_array_index(ab, KnobDiff, 0).path, "p1.store_spacing");
  g_autoptr(GArray) bc = diff_knobs(b, c, p1);
  ck_assert_int_eq(bc->len, 1);
  ck_assert_str_eq(g_array_index(bc, KnobDiff, 0).path, "p1.store_spacing.w1");
  ck_assert_str_eq(g_array_index(bc, KnobDiff, 0).a, "32");
  ck_assert_str_eq(g_array_index(bc, KnobDiff, 0).b, "8");
  ck_assert_str_eq(plan_knob_follows("p1.store_spacing.qkv"), "store_spacing");
  ck_assert(plan_knob_follows("store_spacing") == NULL);
}
END_TEST

START_TEST(test_hot_key) {
  const char *cases[][4] = {
      /* text, knob, stage, task */
      {"LD.mc a, hbm[x] ; p1.multicast.w1:39 l0.w1.k0.mc0", "p1.multicast.w1:39", "l0.w1", "l0.w1.k0.mc0"},
      {"MMA acc, a, w ; d1.panels.wo:9 t3.l1.wo.p2", "d1.panels.wo:9", "t3.l1.wo", "t3.l1.wo.p2"},
      {"ST hbm[out], x ; p1.row_tile l0.ln1.r3 extra words", "p1.row_tile", "l0.ln1", "l0.ln1.r3"},
      {"LD w, hbm[w1.l0] ; d1.weights:7 preload.l0.wg3", "d1.weights:7", "preload", "preload.l0.wg3"},
      {"VEC.add x, x, y ;  l0.att.s0.h1.g0", "(none)", "l0.att", "l0.att.s0.h1.g0"},
      {"END", "(none)", "(none)", "(none)"},
      {"END ;   ", "(none)", "(none)", "(none)"},
      {"END ; l0.t3", "(none)", "l0.t3", "l0.t3"},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++)
    for (int by = 0; by < HOT_BY__COUNT; by++) {
      g_autofree char *k = sim_hot_key(cases[i][0], (HotBy)by);
      ck_assert_msg(strcmp(k, cases[i][1 + by]) == 0, "%s by %s: got '%s', want '%s'", cases[i][0],
                    sim_hot_by_name[by], k, cases[i][1 + by]);
    }
}
END_TEST

/* wg0: 16 MMAs (W1's knob and task); wg4: a few VEC ops and loads of
 * LayerNorm, one with a one-word comment: the window holds the whole run,
 * MMA energy on top. */
static char *hot_program(void) {
  GString *g = g_string_new(t_machine(NULL));
  g_string_append(g, "\n.problem p1\n.wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n.rf c p2 32x32\n");
  g_string_append(g, "    LD a, hbm[x_in] ; p1.k_chunk.w1:12 l0.w1.k0.p0\n");
  g_string_append(g, "    LD b, hbm[x_in + 4096] ; p1.k_chunk.w1:12 l0.w1.k0.p0\n");
  g_string_append(g, "    VEC.fill c, 0.0 ; p1.panels.w1:11 l0.w1.k0.p0\n");
  for (int i = 0; i < 16; i++) g_string_append(g, "    MMA c, a, b ; p1.multicast.w1:39 l0.w1.k0.p0\n");
  g_string_append(g, "    END\n.wg 4\n.rf x p0 32x32\n.rf y p1 32x32\n");
  g_string_append(g, "    LD x, hbm[x_in + 8192] ; l0.ln1.r0\n");
  for (int i = 0; i < 4; i++) g_string_append(g, "    VEC.add y, x, x ; p1.row_tile l0.ln1.r0\n");
  g_string_append(g, "    END\n");
  return g_string_free(g, FALSE);
}

static JsonObject *member_obj(JsonObject *o, const char *m) {
  ck_assert_msg(json_object_has_member(o, m), "no member %s", m);
  return json_object_get_object_member(o, m);
}

START_TEST(test_hot_groups) {
  g_autofree char *text = hot_program();
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_parse("hot.asm", text, strlen(text), &err);
  ck_assert_msg(p, "%s", err ? err->message : "?");
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = o.profile = TRUE;
  SimResult r;
  ck_assert_msg(sim_run(p, &o, &r, &err), "%s", err ? err->message : "?");
  ck_assert(r.cycles < 1000); /* the window holds the whole run */
  const char *top[HOT_BY__COUNT] = {"p1.multicast.w1:39", "l0.w1", "l0.w1.k0.p0"};
  const int ngroups[HOT_BY__COUNT] = {5, 2, 2};
  double win = r.peak_w * 1.0, sum[HOT_BY__COUNT] = {0};
  for (int by = 0; by < HOT_BY__COUNT; by++) {
    g_autoptr(GArray) gr = sim_hot_groups(p, &r, (HotBy)by);
    ck_assert_int_eq(gr->len, ngroups[by]);
    ck_assert_str_eq(g_array_index(gr, HotGroup, 0).name, top[by]);
    for (guint i = 0; i < gr->len; i++) {
      const HotGroup *h = &g_array_index(gr, HotGroup, i);
      ck_assert(h->energy > 0 && h->insns > 0);
      if (i) ck_assert(h->energy <= g_array_index(gr, HotGroup, i - 1).energy);
      sum[by] += sim_e_uj(h->energy);
    }
    /* every instruction's energy in exactly one group: the run's dynamic energy */
    ck_assert_double_eq_tol(sum[by], win - r.static_w, 1e-3 * win);
  }
  g_autoptr(GArray) knobs = sim_hot_groups(p, &r, HOT_BY_KNOB);
  ck_assert_int_eq(g_array_index(knobs, HotGroup, 0).insns, 16);
  gboolean none = FALSE;
  for (guint i = 0; i < knobs->len; i++) none |= !strcmp(g_array_index(knobs, HotGroup, i).name, "(none)");
  ck_assert_msg(none, "the one-word comment has no knob: '(none)'");
  /* the same through --json --profile, parsed back */
  ReportOptions ro = {.json = TRUE, .profile = TRUE, .seed = 7};
  g_autofree char *json = sim_report(p, &r, &ro, NULL);
  g_autoptr(JsonParser) jp = json_parser_new();
  ck_assert_msg(json_parser_load_from_data(jp, json, -1, &err), "%s", err ? err->message : "?");
  JsonObject *hg = member_obj(json_node_get_object(json_parser_get_root(jp)), "hot_groups");
  ck_assert_double_eq_tol(json_object_get_double_member(hg, "window_energy_uj"), win, 1e-5);
  for (int by = 0; by < HOT_BY__COUNT; by++) {
    JsonObject *o2 = member_obj(hg, sim_hot_by_name[by]);
    ck_assert_int_eq(json_object_get_int_member(o2, "groups"), ngroups[by]);
    JsonArray *t = json_object_get_array_member(o2, "top");
    ck_assert_int_eq(json_array_get_length(t), ngroups[by]);
    JsonObject *first = json_array_get_object_element(t, 0);
    ck_assert_str_eq(json_object_get_string_member(first, "name"), top[by]);
    double share = json_object_get_double_member(first, "share");
    ck_assert_double_eq_tol(share, json_object_get_double_member(first, "energy_uj") / win, 1e-5);
    ck_assert(share > 0.0 && share < 1.0);
  }
  /* and the text report's lines */
  ro.json = FALSE;
  g_autofree char *txt = sim_report(p, &r, &ro, NULL);
  ck_assert_msg(strstr(txt, "by what made its instructions:\n  by knob:\n") != NULL, "%s", txt);
  ck_assert_msg(strstr(txt, "%  p1.multicast.w1:39 ") != NULL, "%s", txt);
  sim_result_clear(&r);
}
END_TEST

Suite *suite_shaping(void) {
  Suite *s = suite_create("shaping");
  TCase *tc = tcase_create("shaping");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_spacing_forms);
  tcase_add_test(tc, test_spacing_stages);
  tcase_add_test(tc, test_spacing_diff);
  tcase_add_test(tc, test_hot_key);
  tcase_add_test(tc, test_hot_groups);
  suite_add_tcase(s, tc);
  return s;
}
