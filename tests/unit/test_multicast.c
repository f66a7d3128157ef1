/* test_multicast.c - the multicast pass (src/passes/multicast.c) on small
 * hand-built IRs: three tasks on three WGs each load the same two chunks
 * of scratch into their buffer `buf` (candidates, IR_MOD_CAND) and multiply
 * them; the pass must merge each chunk into one LD.mc and make the events
 * that order it (free before the write, full before the reads).
 *
 *   members    multicast.issuers 0: the members issue in turn (chunk 0 by
 *              the first, chunk 1 by the second), the others SIG buf_free
 *              where they are done with the buffer and WAIT buf_full where
 *              their load was; the account (groups, loads, lines saved);
 *   issuers    multicast.issuers 1: one issuer task, on a WG with no task of
 *              the stage, right after the members in program order, that
 *              WAITs for every member's free, LD.mc, SIG full; the members'
 *              tensors still belong to their tasks after the renumbering;
 *   apart      loads of different windows, or members sharing a WG, stay
 *              plain loads (and lose the candidate mark);
 *   none       no candidates: the IR is left as it is, no account;
 *   explain    a small P1 plan with multicast.pass through the pipeline:
 *              LD.mc in the program and the account in tcc-gen --explain's
 *              text and JSON (without the knob: no LD.mc, no section). */
#include <string.h>

#include "explain.h"
#include "ir.h"
#include "pipeline.h"
#include "tests.h"

enum { NM = 3 };

typedef struct Mc {
  Ir *ir;
  int task[NM + 1], buf[NM + 1], src[2];
} Mc;

static Ir *mc_ir(void) {
  Machine hw;
  Problem prob;
  sim_machine_default(&hw);
  wl_problem_default(&prob, PROB_P1);
  prob.d_model = 32, prob.heads = 1, prob.d_ff = 32, prob.layers = 1, prob.seqs = 1, prob.rows = 64;
  Ir *ir = ir_new(&hw, &prob, "mc.yaml");
  ir->sms_used = 2; /* WGs 0..7 */
  ir->sched.pacing_wg = -1;
  return ir;
}

static IrOp *ld(Ir *ir, int task, int d, int src, gboolean cand) {
  IrOp *op = ir_emit(ir, task, IR_LD);
  op->d = ir_all(ir, d), op->mem = ir_all(ir, src), op->mods = cand ? IR_MOD_CAND : 0;
  return op;
}

/* Member k on WG wg[k]: LD buf <- src0; MMA acc = buf w; LD buf <- src1
 * (src1 of member `other` is another window); MMA acc += buf w. */
static void build(Mc *M, const int *wg, int other) {
  Ir *ir = M->ir = mc_ir();
  M->src[0] = ir_tensor_hbm(ir, "scratch[0]", "scratch", 0, 32, 32, 32);
  M->src[1] = ir_tensor_hbm(ir, "scratch[1]", "scratch", 4096, 32, 32, 32);
  int alt = ir_tensor_hbm(ir, "scratch[2]", "scratch", 8192, 32, 32, 32);
  int before = ir_task(ir, "prev", 0, (IrProv){"p1.sms_used", 0, 0});
  ir_task_at(ir, before)->wg = 5;
  for (int k = 0; k < NM; k++) {
    char name[8];
    g_snprintf(name, sizeof name, "m%d", k);
    int t = M->task[k] = ir_task(ir, name, 1, (IrProv){"p1.weights", 3, 0});
    ir_task_at(ir, t)->wg = wg[k];
    g_autofree char *wn = g_strdup_printf("w%d", k), *an = g_strdup_printf("acc%d", k);
    int w = ir_tensor_rf(ir, t, wn, 32, 32), acc = ir_tensor_rf(ir, t, an, 32, 32);
    M->buf[k] = ir_tensor_rf(ir, t, "buf", 32, 32);
    IrOp *op = ld(ir, t, w, M->src[0], FALSE);
    ld(ir, t, M->buf[k], M->src[0], TRUE);
    op = ir_emit(ir, t, IR_MMA);
    op->mods = IR_MOD_Z, op->d = ir_all(ir, acc), op->a = ir_all(ir, M->buf[k]), op->b = ir_all(ir, w);
    ld(ir, t, M->buf[k], k == other ? alt : M->src[1], TRUE);
    op = ir_emit(ir, t, IR_MMA);
    op->d = ir_all(ir, acc), op->a = ir_all(ir, M->buf[k]), op->b = ir_all(ir, w);
  }
  int after = ir_task(ir, "next", 2, (IrProv){"p1.sms_used", 0, 0});
  ir_task_at(ir, after)->wg = 6;
}

/* The task's ops as "KIND event n" lines ("LD.mc 3" with its target count,
 * "LD", "MMA"). */
static char *ops_text(const Ir *ir, int task) {
  GString *s = g_string_new(NULL);
  const GArray *ops = ir_task_at(ir, task)->ops;
  for (guint i = 0; i < ops->len; i++) {
    const IrOp *op = &g_array_index(ops, IrOp, i);
    ck_assert_msg(!(op->mods & IR_MOD_CAND), "op %u of task %d keeps its candidate mark", i, task);
    if (op->kind == IR_SIG || op->kind == IR_WAIT)
      g_string_append_printf(s, "%s %s %" G_GINT64_FORMAT "; ", op->kind == IR_SIG ? "SIG" : "WAIT",
                             (const char *)g_ptr_array_index(ir->events, op->event), op->n);
    else if (op->mods & IR_MOD_MC)
      g_string_append_printf(s, "LD.mc %d; ", op->ntargets);
    else
      g_string_append_printf(s, "%s; ", op->kind == IR_LD ? "LD" : op->kind == IR_MMA ? "MMA" : "?");
  }
  return g_string_free(s, FALSE);
}

static void verify(const Ir *ir) {
  g_autoptr(GError) err = NULL;
  ck_assert_msg(ir_verify(ir, FALSE, &err), "%s", err ? err->message : "?");
}

static void run(Ir *ir) {
  g_autoptr(GError) err = NULL;
  verify(ir);
  ck_assert_msg(pass_multicast(ir, &err), "%s", err ? err->message : "?");
  verify(ir);
}

START_TEST(test_mc_members) {
  Mc M;
  const int wg[NM] = {0, 1, 2};
  build(&M, wg, -1);
  g_autoptr(Ir) ir = M.ir;
  ir->sched.multicast_issuers = 0;
  run(ir);
  /* chunk 0 by m0 (at its start), chunk 1 by m1 once m0 and m2 are done with chunk 0 */
  const char *want[NM] = {
      "LD; WAIT buf_free 2; LD.mc 3; SIG buf_full 1; MMA; SIG buf_free 1; WAIT buf_full 2; MMA; ",
      "LD; SIG buf_free 1; WAIT buf_full 1; MMA; WAIT buf_free 4; LD.mc 3; SIG buf_full 1; MMA; ",
      "LD; SIG buf_free 1; WAIT buf_full 1; MMA; SIG buf_free 1; WAIT buf_full 2; MMA; ",
  };
  for (int k = 0; k < NM; k++) {
    g_autofree char *got = ops_text(ir, M.task[k]);
    ck_assert_str_eq(got, want[k]);
  }
  /* the LD.mc targets are every member's buf, each of its own task */
  const IrOp *mc = &g_array_index(ir_task_at(ir, M.task[0])->ops, IrOp, 2);
  for (int k = 0; k < NM; k++) ck_assert_int_eq(mc->targets[k], M.buf[k]);
  ck_assert_ptr_nonnull(ir->mc);
  ck_assert_int_eq(ir->mc->groups, 2);
  ck_assert_int_eq(ir->mc->loads, 6);
  ck_assert_int_eq(ir->mc->unmerged, 0);
  /* a 32 x 32 chunk of rows of 128 B: 64 lines, read twice less per group */
  ck_assert_int_eq(ir->mc->lines_saved, 2 * 2 * 64);
  ck_assert_int_eq(ir->mc->stages->len, 1);
}
END_TEST

START_TEST(test_mc_issuers) {
  Mc M;
  const int wg[NM] = {0, 1, 2};
  build(&M, wg, -1);
  g_autoptr(Ir) ir = M.ir;
  ir->sched.multicast_issuers = 1;
  guint ntasks = ir->tasks->len;
  run(ir);
  ck_assert_uint_eq(ir->tasks->len, ntasks + 1);
  /* right after the last member: m0 m1 m2 are tasks 1..3 */
  int is = 4;
  const IrTask *t = ir_task_at(ir, is);
  ck_assert_str_eq(t->name, "m0.mc0");
  ck_assert_str_eq(ir_task_at(ir, is + 1)->name, "next");
  /* on a WG with no task of stage 1, the one whose next task is latest:
   * not 0..2 (members), not 6 (`next` follows); 3 (nothing after) */
  ck_assert_int_eq(t->wg, 3);
  g_autofree char *iss = ops_text(ir, is);
  ck_assert_str_eq(iss, "WAIT buf_free 3; LD.mc 3; SIG buf_full 1; WAIT buf_free 6; LD.mc 3; SIG buf_full 1; ");
  for (int k = 0; k < NM; k++) {
    g_autofree char *got = ops_text(ir, M.task[k]);
    ck_assert_str_eq(got, "LD; SIG buf_free 1; WAIT buf_full 1; MMA; SIG buf_free 1; WAIT buf_full 2; MMA; ");
    ck_assert_int_eq(ir_tensor(ir, M.buf[k])->task, M.task[k]); /* tasks before the issuer keep their index */
  }
}
END_TEST

START_TEST(test_mc_apart) {
  /* m2's second chunk is another window: chunk 0 of all three and chunk 1
   * of m0 and m1 merge, m2's second load stays its own */
  Mc M;
  const int wg[NM] = {0, 1, 2};
  build(&M, wg, 2);
  Ir *ir = M.ir;
  ir->sched.multicast_issuers = 0;
  run(ir);
  ck_assert_int_eq(ir->mc->groups, 2);
  ck_assert_int_eq(ir->mc->loads, 5);
  ck_assert_int_eq(ir->mc->unmerged, 1);
  g_autofree char *m2 = ops_text(ir, M.task[2]);
  ck_assert_str_eq(m2, "LD; SIG buf_free 1; WAIT buf_full 1; MMA; LD; MMA; ");
  ir_free(ir);
  /* m0 and m1 on one WG: a group needs its members on different WGs */
  const int same[NM] = {0, 0, 2};
  build(&M, same, -1);
  ir = M.ir;
  g_autoptr(GError) err = NULL; /* an invalid IR (two regions 'buf' on wg0): the pass must still not merge */
  ck_assert(pass_multicast(ir, &err));
  ck_assert_int_eq(ir->mc->groups, 0);
  ck_assert_int_eq(ir->mc->unmerged, 6);
  for (int k = 0; k < NM; k++) {
    g_autofree char *got = ops_text(ir, M.task[k]);
    ck_assert_str_eq(got, "LD; LD; MMA; LD; MMA; ");
  }
  ir_free(ir);
}
END_TEST

START_TEST(test_mc_none) {
  Ir *ir = mc_ir();
  int t = ir_task(ir, "t", 0, (IrProv){"p1.sms_used", 0, 0});
  int src = ir_tensor_hbm(ir, "scratch[0]", "scratch", 0, 32, 32, 32);
  ld(ir, t, ir_tensor_rf(ir, t, "x", 32, 32), src, FALSE);
  run(ir);
  ck_assert_ptr_null(ir->mc);
  ck_assert_uint_eq(ir_task_at(ir, t)->ops->len, 1);
  ir_free(ir);
}
END_TEST

/* The small resident P1 of tests/golden/p1_multicast_pass.yaml. */
static Ir *small_p1(gboolean pass, Plan **plan) {
  g_autofree char *text = g_strdup_printf(
      "version: 1\nhardware: {sms: 4}\np1:\n"
      "  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 1, rows: 64}\n"
      "  weights: resident\n  panels: {qkv: 32, wo: 32, w1: 32, w2: 32}\n"
      "  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n  k_split: {w2: 2}\n"
      "  multicast: {qkv: true, wo: true, w1: true, w2: true, pass: %s}\n",
      pass ? "true" : "false");
  g_autoptr(GError) err = NULL;
  *plan = plan_parse("mc.yaml", text, strlen(text), &err);
  ck_assert_msg(*plan, "%s", err ? err->message : "?");
  Ir *ir = pass_pipeline(*plan, PROB_P1, NULL, NULL, TRUE, &err);
  ck_assert_msg(ir, "%s", err ? err->message : "?");
  return ir;
}

static int count_mc(const Ir *ir) {
  int n = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const GArray *ops = ir_task_at(ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++) n += (g_array_index(ops, IrOp, i).mods & IR_MOD_MC) != 0;
  }
  return n;
}

START_TEST(test_mc_explain) {
  Plan *plan = NULL;
  g_autoptr(Ir) ir = small_p1(TRUE, &plan);
  /* 4 stages, each 2 row tiles x 2 chunks of K=64 (w2: 2 shards of 64 rows each) */
  ck_assert_ptr_nonnull(ir->mc);
  ck_assert_int_eq(count_mc(ir), ir->mc->groups);
  ck_assert_int_eq(ir->mc->groups, 4 + 4 + 4 + 2 * 4);
  ck_assert_int_eq(ir->mc->unmerged, 0);
  ck_assert_int_eq(ir->mc->stages->len, 4);
  g_autofree char *t = explain_text(&plan->hw, &plan->p1, plan->file, ir, NULL);
  ck_assert_msg(strstr(t, "\nmulticast (pass") && strstr(t, "  l0.qkv ") && strstr(t, "  total "), "%.300s", strstr(t, "multicast") ? strstr(t, "multicast") : t);
  g_autoptr(GError) jerr = NULL;
  g_autofree char *j = explain_json(&plan->hw, &plan->p1, plan->file, ir, NULL, &jerr);
  ck_assert_msg(j, "%s", jerr ? jerr->message : "?");
  g_autofree char *groups = g_strdup_printf("\"groups\" : %d", ir->mc->groups);
  ck_assert_msg(strstr(j, "\"multicast\"") && strstr(j, groups) && strstr(j, "\"hbm_lines_saved\""), "%.300s", strstr(j, "multicast") ? strstr(j, "multicast") : j);
  plan_free(plan);
  /* the lowering's issuers: LD.mc too, but no candidates and no section */
  g_autoptr(Ir) hand = small_p1(FALSE, &plan);
  ck_assert_ptr_null(hand->mc);
  ck_assert_int_gt(count_mc(hand), 0);
  g_autofree char *t2 = explain_text(&plan->hw, &plan->p1, plan->file, hand, NULL);
  ck_assert_ptr_null(strstr(t2, "multicast (pass"));
  plan_free(plan);
}
END_TEST

Suite *suite_multicast(void) {
  Suite *s = suite_create("multicast");
  TCase *tc = tcase_create("pass_multicast");
  tcase_add_test(tc, test_mc_members);
  tcase_add_test(tc, test_mc_issuers);
  tcase_add_test(tc, test_mc_apart);
  tcase_add_test(tc, test_mc_none);
  tcase_add_test(tc, test_mc_explain);
  suite_add_tcase(s, tc);
  return s;
}
