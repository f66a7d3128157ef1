/* test_ir.c - the IR's printer and verifier, the rf_alloc pass and the
 * backend, on small IRs built by hand with the ir.c builders; the emitted
 * assembly of a tiny complete IR assembles and runs in the simulator. */
#include <math.h>
#include <string.h>

#include "ir.h"
#include "tests.h"

/* ------------------------------------------------------------ fixtures */

/* A P1 problem small enough to check by hand. */
static Ir *tiny_ir(const char *key, long value) {
  Machine hw;
  Problem prob;
  sim_machine_default(&hw);
  if (key) ck_assert(sim_machine_set(&hw, key, value, NULL));
  wl_problem_default(&prob, PROB_P1);
  prob.d_model = 32;
  prob.heads = 1;
  prob.d_ff = 32;
  prob.layers = 1;
  prob.seqs = 1;
  prob.rows = 32;
  return ir_new(&hw, &prob, "tiny.yaml");
}

/* Indices of the good IR's parts. */
typedef struct Good {
  int s0, s1;                 /* tasks                          */
  int x, g, mean, h, y;       /* RF tensors (y belongs to s1)   */
  int xin, gin, out, scr;     /* HBM tensors                    */
} Good;

static IrOp *emit(Ir *ir, int task, IrOpKind k, IrView d, IrView a, IrView b) {
  IrOp *op = ir_emit(ir, task, k);
  op->d = d;
  op->a = a;
  op->b = b;
  return op;
}

static IrView none(void) { return ir_win(-1, 0, 0, 0, 0); }

static void sync_op(Ir *ir, int task, IrOpKind k, const char *ev, int64_t n) {
  IrOp *op = ir_emit(ir, task, k);
  op->event = ev ? ir_event(ir, ev) : -1;
  op->n = n;
}

/* s0 (wg0): h = (x - mean(x)) * g + 1e-5, stored to `out`; with `peer`,
 * also sent to s1's y, and s1 (wg5) doubles y into scratch after the event. */
static Ir *build(Good *G, gboolean peer) {
  Ir *ir = tiny_ir(NULL, 0);
  G->s0 = ir_task(ir, "s0.blk", 0, (IrProv){"p1.row_tile", 7, 0});
  G->s1 = peer ? ir_task(ir, "s1.tail", 1, (IrProv){"p1.sms", 0, 0}) : -1;
  G->x = ir_tensor_rf(ir, G->s0, "x", 32, 32);
  G->g = ir_tensor_rf(ir, G->s0, "l0.g", 1, 32);
  G->mean = ir_tensor_rf(ir, G->s0, "mean", 32, 1);
  G->h = ir_tensor_rf(ir, G->s0, "h", 32, 32);
  G->y = peer ? ir_tensor_rf(ir, G->s1, "y", 32, 32) : -1;
  G->xin = ir_tensor_hbm(ir, "x_in[0,0]", "x_in", 0, 32, 32, 32);
  G->gin = ir_tensor_hbm(ir, "ln1_g.l0[0,0]", "ln1_g.l0", 0, 1, 32, 32);
  G->out = ir_tensor_hbm(ir, "out[0,0]", "out", 0, 32, 32, 32);
  G->scr = ir_tensor_hbm(ir, "scratch[0,64]", "scratch", 256, 32, 32, 128);
  IrOp *op = emit(ir, G->s0, IR_LD, ir_all(ir, G->x), none(), none());
  op->mem = ir_all(ir, G->xin);
  op = emit(ir, G->s0, IR_LD, ir_all(ir, G->g), none(), none());
  op->mem = ir_all(ir, G->gin);
  emit(ir, G->s0, IR_VRSUM, ir_all(ir, G->mean), ir_all(ir, G->x), none());
  emit(ir, G->s0, IR_VMULI, ir_all(ir, G->mean), ir_all(ir, G->mean), none())->imm = 0.03125f;
  emit(ir, G->s0, IR_VSUB, ir_all(ir, G->h), ir_all(ir, G->x), ir_all(ir, G->mean));
  op = emit(ir, G->s0, IR_VMUL, ir_all(ir, G->h), ir_all(ir, G->h), ir_all(ir, G->g));
  op->prov = (IrProv){"p1.ln", 9, 0};
  emit(ir, G->s0, IR_VADDI, ir_all(ir, G->h), ir_all(ir, G->h), none())->imm = 1e-5f;
  op = emit(ir, G->s0, IR_ST, none(), ir_all(ir, G->h), none());
  op->mem = ir_all(ir, G->out);
  ir_task_at(ir, G->s0)->wg = 0;
  if (!peer) return ir;
  op = emit(ir, G->s0, IR_ST, none(), ir_all(ir, G->h), none());
  op->mem = ir_all(ir, G->y);
  op = ir_emit(ir, G->s0, IR_SIG);
  op->event = ir_event(ir, "h");
  op->n = 1;
  op = ir_emit(ir, G->s1, IR_WAIT);
  op->event = ir_event(ir, "h");
  op->n = 1;
  emit(ir, G->s1, IR_VMULI, ir_all(ir, G->y), ir_all(ir, G->y), none())->imm = 2.0f;
  op = emit(ir, G->s1, IR_ST, none(), ir_all(ir, G->y), none());
  op->mem = ir_all(ir, G->scr);
  ir_task_at(ir, G->s1)->wg = 5;
  return ir;
}

static Ir *good_ir(Good *G) { return build(G, TRUE); }

static IrOp *op_at(Ir *ir, int task, int i) {
  return &g_array_index(ir_task_at(ir, task)->ops, IrOp, i);
}

static void verify_ok(const Ir *ir, gboolean allocated) {
  g_autoptr(GError) err = NULL;
  ck_assert_msg(ir_verify(ir, allocated, &err), "%s", err ? err->message : "");
}

/* ------------------------------------------------------------ verifier */

START_TEST(test_verify_good) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  verify_ok(ir, FALSE);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  verify_ok(ir, TRUE);
}
END_TEST

/* One broken instance per invariant: a mutation of the good IR and the
 * exact message.  `alloc`: run rf_alloc first and verify with allocated. */
typedef struct Broken {
  const char *what;
  void (*mutate)(Ir *ir, const Good *G);
  gboolean alloc;
  const char *msg;
} Broken;

#define MUT(name, body) \
  static void name(Ir *ir, const Good *G) { (void)ir; (void)G; body; }

MUT(m_dup_task, g_free(ir_task_at(ir, G->s1)->name); ir_task_at(ir, G->s1)->name = g_strdup("s0.blk"))
MUT(m_wg_range, ir_task_at(ir, G->s0)->wg = 64)
MUT(m_unplaced, ir_task_at(ir, G->s1)->wg = -1)
MUT(m_part_rule, ir_tensor(ir, G->x)->rows = 40)
MUT(m_rf_size, ir_tensor(ir, G->x)->rows = 544)
MUT(m_region_name, g_free(ir_tensor(ir, G->x)->name); ir_tensor(ir, G->x)->name = g_strdup("0x"))
MUT(m_abi_sym, g_free(ir_tensor(ir, G->xin)->sym); ir_tensor(ir, G->xin)->sym = g_strdup("nope"))
MUT(m_hbm_outside, ir_tensor(ir, G->xin)->offset = 4096)
MUT(m_hbm_stride, ir_tensor(ir, G->xin)->stride = 16)
MUT(m_event_name, g_ptr_array_add(ir->events, g_strdup("a.b")))
MUT(m_event_dup, g_ptr_array_add(ir->events, g_strdup("h")))
MUT(m_tensor_index, op_at(ir, G->s0, 0)->d.t = 999)
MUT(m_window, op_at(ir, G->s0, 2)->a = ir_win(G->x, 16, 32, 0, 32))
MUT(m_missing, op_at(ir, G->s0, 4)->b.t = -1)
MUT(m_extra, op_at(ir, G->s0, 2)->b = ir_all(ir, G->x))
MUT(m_mods, op_at(ir, G->s0, 3)->mods = IR_MOD_Z)
MUT(m_ld_rf, op_at(ir, G->s0, 0)->mem = ir_all(ir, G->h))
MUT(m_d_hbm, op_at(ir, G->s0, 2)->d = ir_win(G->xin, 0, 32, 0, 1))
MUT(m_owner, op_at(ir, G->s0, 4)->a = ir_all(ir, G->y))
MUT(m_st_own, op_at(ir, G->s0, 8)->mem = ir_all(ir, G->x))
MUT(m_mma, op_at(ir, G->s0, 5)->kind = IR_MMA; op_at(ir, G->s0, 5)->mods = IR_MOD_Z)
MUT(m_mma_t, op_at(ir, G->s0, 5)->kind = IR_MMA; op_at(ir, G->s0, 5)->mods = IR_MOD_Z | IR_MOD_T)
MUT(m_bcast, op_at(ir, G->s0, 4)->b = ir_win(G->mean, 0, 16, 0, 1))
MUT(m_rsum, op_at(ir, G->s0, 2)->d = ir_all(ir, G->h))
MUT(m_unary, op_at(ir, G->s0, 6)->d = ir_win(G->h, 0, 16, 0, 32))
MUT(m_ld_shape, op_at(ir, G->s0, 1)->mem = ir_win(G->xin, 0, 1, 0, 16))
MUT(m_st_remote_shape, op_at(ir, G->s0, 8)->a = ir_win(G->h, 0, 16, 0, 32))
MUT(m_weights, op_at(ir, G->s0, 7)->mem = ir_all(ir, ir_tensor_hbm(ir, "wq", "wqkv.l0", 0, 32, 32, 96)))
MUT(m_event_index, op_at(ir, G->s0, 9)->event = 99)
MUT(m_sig_in, op_at(ir, G->s0, 9)->event = 0)
MUT(m_sig_n, op_at(ir, G->s0, 9)->n = 0)
MUT(m_imm, op_at(ir, G->s0, 3)->imm = INFINITY)
MUT(m_red, op_at(ir, G->s0, 6)->kind = IR_RED; op_at(ir, G->s0, 6)->event = 1; op_at(ir, G->s0, 6)->n = 1)
MUT(m_same_region, g_free(ir_tensor(ir, G->x)->name); ir_tensor(ir, G->x)->name = g_strdup("a.b");
    g_free(ir_tensor(ir, G->h)->name); ir_tensor(ir, G->h)->name = g_strdup("a_b"))
MUT(m_same_region_wg, ir_task_at(ir, G->s1)->wg = 0; g_free(ir_tensor(ir, G->y)->name);
    ir_tensor(ir, G->y)->name = g_strdup("h"))
MUT(m_unwritten, op_at(ir, G->s0, 0)->d = ir_win(G->x, 0, 16, 0, 32);
    op_at(ir, G->s0, 0)->mem = ir_win(G->xin, 0, 16, 0, 32))
MUT(m_mc_name, IrOp *op = op_at(ir, G->s0, 1); op->mods = IR_MOD_MC; op->ntargets = 2;
    op->targets = g_new(int, 2); op->targets[0] = G->g;
    op->targets[1] = ir_tensor_rf(ir, G->s1, "l0.g2", 1, 32))
MUT(m_mc_no_d, IrOp *op = op_at(ir, G->s0, 1); op->mods = IR_MOD_MC; op->ntargets = 1;
    op->targets = g_new(int, 1); op->targets[0] = ir_tensor_rf(ir, G->s1, "l0.g", 1, 32))
MUT(m_end, op_at(ir, G->s0, 4)->kind = IR_END)
MUT(m_unallocated, ir_tensor(ir, G->x)->part = -1)
MUT(m_bad_place, ir_tensor(ir, G->x)->part_off = 64)
MUT(m_parts_off, IrTensor *x = ir_tensor(ir, G->x); x->rows = 64; x->part = 12; x->nparts = 2; x->part_off = 64)
MUT(m_live_short, ir_tensor(ir, G->x)->last_op = 1)
MUT(m_remote_late, ir_tensor(ir, G->y)->first_op = 1)
MUT(m_overlap, ir_tensor(ir, G->h)->part = ir_tensor(ir, G->x)->part)
MUT(m_prelude_range, ir_task_at(ir, G->s0)->prelude = 99)
MUT(m_prelude_op, ir_task_at(ir, G->s0)->prelude = 3)

static const char *const W0 = "ir: task 's0.blk' op ";

static const Broken broken[] = {
    {"task names", m_dup_task, FALSE, "ir: task 's0.blk' (index 1): name already used by task 0"},
    {"wg range", m_wg_range, FALSE, "ir: task 's0.blk': wg 64 out of range 0..63"},
    {"placed", m_unplaced, TRUE, "ir: task 's1.tail': not placed (wg -1)"},
    {"partition rule", m_part_rule, FALSE,
     "ir: tensor 'x' (task 's0.blk'): 40x32 is 5120 bytes: neither inside one partition "
     "(4096 bytes) nor a whole number of partitions"},
    {"RF size", m_rf_size, TRUE,
     "ir: tensor 'x' (task 's0.blk'): 544x32 is 69632 bytes, more than the RF (65536 bytes)"},
    {"region name", m_region_name, FALSE,
     "ir: tensor '0x' (task 's0.blk'): not a valid region name (letters, digits, '_' and '.'; "
     "not starting with a digit; not hbm or sh)"},
    {"ABI symbol", m_abi_sym, FALSE, "ir: tensor 'x_in[0,0]': unknown ABI symbol 'nope'"},
    {"HBM extent", m_hbm_outside, FALSE,
     "ir: tensor 'x_in[0,0]': bytes 4096..8191 of 'x_in' are outside it (4096 bytes)"},
    {"HBM stride", m_hbm_stride, FALSE, "ir: tensor 'x_in[0,0]': stride 16 is smaller than its 32 cols"},
    {"event name", m_event_name, FALSE,
     "ir: event 2 'a.b': not a valid event name ([A-Za-z_][A-Za-z0-9_]*)"},
    {"event unique", m_event_dup, FALSE, "ir: event 2 'h': name already used by event 1"},
    {"tensor index", m_tensor_index, FALSE, "0 (LD): operand d: tensor index 999 out of range 0..8"},
    {"window", m_window, FALSE,
     "2 (VEC.rsum): operand a: window [16:48, 0:32] is empty or outside 'x' (32x32)"},
    {"missing operand", m_missing, FALSE, "4 (VEC.sub): missing operand b"},
    {"END in a task", m_end, FALSE, "4 (END): END in a task (the backend ends each WG's program)"},
    {"extra operand", m_extra, FALSE, "2 (VEC.rsum): unexpected operand b"},
    {"modifier", m_mods, FALSE, "3 (VEC.muli.z): modifier not allowed on VEC.muli"},
    {"LD source", m_ld_rf, FALSE, "0 (LD): operand mem: 'h' is an RF tensor; LD reads HBM"},
    {"RF operand", m_d_hbm, FALSE, "2 (VEC.rsum): operand d: 'x_in[0,0]' is an HBM tensor, not RF"},
    {"owner", m_owner, FALSE,
     "4 (VEC.sub): operand a: tensor 'y' belongs to task 's1.tail', not to this task"},
    {"ST own", m_st_own, FALSE, "8 (ST): ST into 'x' of its own task (use VEC.copy)"},
    {"MMA", m_mma, FALSE,
     "5 (MMA.z): shape mismatch: b 'l0.g' is 1x32 but a 'h' is 32x32 (b must have as many rows "
     "as a has cols)"},
    {"MMA.t", m_mma_t, FALSE,
     "5 (MMA.z.t): shape mismatch: d 'h' is 32x32 but b 'l0.g' is 1x32 (with .t, d must have as "
     "many cols as b has rows)"},
    {"broadcast", m_bcast, FALSE,
     "4 (VEC.sub): shape mismatch: b 'mean[0:16, :]' is 16x1 but a 'x' is 32x32 (b must be 32x32, "
     "1x32, 32x1 or 1x1)"},
    {"rsum", m_rsum, FALSE,
     "2 (VEC.rsum): shape mismatch: d 'h' is 32x32 but a 'x' is 32x32 (d must be 32x1)"},
    {"same shape", m_unary, FALSE,
     "6 (VEC.addi): shape mismatch: d 'h[0:16, :]' is 16x32 but a 'h' is 32x32 (d must have the "
     "shape of a)"},
    {"LD shape", m_ld_shape, FALSE,
     "1 (LD): shape mismatch: mem 'hbm[x_in stride 32]' is 1x16 but d 'l0.g' is 1x32 (the memory "
     "side must have the shape of d)"},
    {"remote ST shape", m_st_remote_shape, FALSE,
     "8 (ST): shape mismatch: mem 'y@s1.tail' is 32x32 but a 'h[0:16, :]' is 16x32 (the "
     "destination must have the shape of a)"},
    {"weights", m_weights, FALSE, "7 (ST): ST into read-only weights 'wqkv.l0' (tensor 'wq')"},
    {"event index", m_event_index, FALSE, "9 (SIG): event index 99 out of range 0..1"},
    {"ev.in", m_sig_in, FALSE, "9 (SIG): ev.in belongs to the host and is never signalled"},
    {"SIG count", m_sig_n, FALSE, "9 (SIG): SIG count must be >= 1, got 0"},
    {"immediate", m_imm, FALSE, "3 (VEC.muli): immediate is not finite"},
    {"RED hardware", m_red, FALSE, "6 (RED): RED needs reduce units (reduce=0)"},
    {"region per task", m_same_region, FALSE,
     "ir: wg 0: tensors 'a.b' (task 's0.blk') and 'a_b' (task 's0.blk') are both region 'a_b'"},
    {"region per WG", m_same_region_wg, FALSE,
     "ir: wg 0: tensors 'h' (task 's0.blk') and 'h' (task 's1.tail') are both region 'h'"},
    {"write before read", m_unwritten, FALSE,
     "2 (VEC.rsum): operand a 'x' reads element [16, 0] of 'x' before the task writes it"},
    {"LD.mc names", m_mc_name, FALSE,
     "1 (LD.mc): target 1: tensor 'l0.g2' of task 's1.tail' is not named like d's 'l0.g'"},
    {"LD.mc d", m_mc_no_d, FALSE, "1 (LD.mc): d's tensor 'l0.g' is not one of the targets"},
    {"allocated", m_unallocated, TRUE, "ir: tensor 'x' (task 's0.blk'): used but not allocated"},
    {"placement", m_bad_place, TRUE,
     "ir: tensor 'x' (task 's0.blk'): placement p0+64 (1 part) is illegal for 32x32 (4096 bytes; "
     "partitions of 4096 bytes, p0..p15)"},
    /* a tensor of whole partitions starts at a partition's start: at
     * p12+64 x would reach 64 bytes into p14, which no partition rule gives
     * it (rf_alloc never places one so) */
    {"placement of parts", m_parts_off, TRUE,
     "ir: tensor 'x' (task 's0.blk'): placement p12+64 (2 parts) is illegal for 64x32 (8192 bytes; "
     "partitions of 4096 bytes, p0..p15)"},
    {"live range", m_live_short, TRUE,
     "ir: tensor 'x' (task 's0.blk'): used at wg0 ops 0..4, outside its live range 0..1"},
    {"remote live", m_remote_late, TRUE,
     "ir: tensor 'y' (task 's1.tail'): written by another WG from wg5's op 0 on (the first op its "
     "writer is not ordered after), but live only from op 1"},
    {"prelude range", m_prelude_range, FALSE, "ir: task 's0.blk': a prelude of 99 ops in 10"},
    {"prelude ops", m_prelude_op, FALSE, "ir: task 's0.blk': op 2 of its prelude is not a load of what no task stores"},
    {"overlap", m_overlap, TRUE,
     "ir: wg 0: tensors 'x' (task 's0.blk', bytes 0..4095, live 0..4) and 'h' (task 's0.blk', "
     "bytes 0..4095, live 4..8) overlap"},
};

START_TEST(test_verify_broken) {
  const Broken *b = &broken[_i];
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_autoptr(GError) err = NULL;
  if (b->alloc) ck_assert(pass_rf_alloc(ir, &err));
  b->mutate(ir, &G);
  ck_assert_msg(!ir_verify(ir, b->alloc, &err), "%s: accepted", b->what);
  g_autofree char *want = g_str_has_prefix(b->msg, "ir: ") ? g_strdup(b->msg)
                                                            : g_strconcat(W0, b->msg, NULL);
  ck_assert_msg(strcmp(err->message, want) == 0, "%s:\n got: %s\nwant: %s", b->what, err->message,
                want);
}
END_TEST


/* ------------------------------------------------------------ rf_alloc */

static void expect_place(const Ir *ir, int t, int part, int off, int nparts, int first, int last) {
  const IrTensor *x = ir_tensor(ir, t);
  ck_assert_msg(x->part == part && x->part_off == off && x->nparts == nparts &&
                    x->first_op == first && x->last_op == last,
                "'%s': got p%d+%d (%d parts) live %d..%d, want p%d+%d (%d parts) live %d..%d",
                x->name, x->part, x->part_off, x->nparts, x->first_op, x->last_op, part, off,
                nparts, first, last);
}

START_TEST(test_alloc_good) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  /* wg0: x, g, mean and h are all live at op 4, so h gets p2.  wg5: y is
   * written by wg0, so it is live from op 0. */
  expect_place(ir, G.x, 0, 0, 1, 0, 4);
  expect_place(ir, G.g, 1, 0, 1, 1, 5);
  expect_place(ir, G.mean, 1, 128, 1, 2, 4);
  expect_place(ir, G.h, 2, 0, 1, 4, 8);
  expect_place(ir, G.y, 0, 0, 1, 0, 2);
  ck_assert_int_eq(ir_tensor(ir, G.xin)->part, -1);
}
END_TEST

/* A remote write may land from the first task of the receiving WG that the
 * writer's groups do not order before it (ir_order.c).  wg1 runs `a` (one
 * tensor filling the whole RF) then `c`, which owns `y`; `p` on wg0 stores
 * into `y`.  When `p` waits for the group `a` signals, `a` has completed
 * before the store, so `y` may share a's partitions (live from c's first
 * op); without that wait `y` is live from op 0 and cannot fit. */
static Ir *remote_ir(gboolean ordered, int *y) {
  Ir *ir = tiny_ir(NULL, 0);
  int a = ir_task(ir, "a", 0, (IrProv){0}), p = ir_task(ir, "p", 1, (IrProv){0});
  int c = ir_task(ir, "c", 2, (IrProv){0});
  int big = ir_tensor_rf(ir, a, "big", 512, 32); /* 64 KiB: every partition */
  int src = ir_tensor_rf(ir, p, "src", 1, 32);
  *y = ir_tensor_rf(ir, c, "y", 1, 32);
  emit(ir, a, IR_VFILL, ir_all(ir, big), none(), none())->imm = 1.0f;
  emit(ir, a, IR_VADDI, ir_all(ir, big), ir_all(ir, big), none())->imm = 2.0f;
  emit(ir, p, IR_VFILL, ir_all(ir, src), none(), none())->imm = 1.0f;
  emit(ir, p, IR_ST, none(), ir_all(ir, src), none())->mem = ir_all(ir, *y);
  emit(ir, c, IR_VADDI, ir_all(ir, *y), ir_all(ir, *y), none())->imm = 1.0f;
  int ga = ir_group(ir, "ga"), gp = ir_group(ir, "gp");
  ir_task_signals(ir, a, ga);
  if (ordered) ir_task_waits(ir, p, ga);
  ir_task_signals(ir, p, gp);
  ir_task_waits(ir, c, gp);
  ir_task_at(ir, a)->wg = 1, ir_task_at(ir, p)->wg = 0, ir_task_at(ir, c)->wg = 1;
  return ir;
}

START_TEST(test_alloc_remote_ordered) {
  int y;
  g_autoptr(Ir) ir = remote_ir(TRUE, &y);
  g_autofree int *arrive = ir_remote_first_op(ir);
  ck_assert_int_eq(arrive[y], 2); /* c's first op: after a's two */
  g_autoptr(GError) err = NULL;
  ck_assert_msg(pass_rf_alloc(ir, &err), "%s", err ? err->message : "");
  expect_place(ir, y, 0, 0, 1, 2, 2);
  verify_ok(ir, TRUE);
  /* the verifier refuses a live range that starts after the first op
   * the write may land at */
  g_autoptr(Ir) un = remote_ir(FALSE, &y);
  g_autofree int *arrive2 = ir_remote_first_op(un);
  ck_assert_int_eq(arrive2[y], 0);
  g_autoptr(GError) e2 = NULL;
  ck_assert(!pass_rf_alloc(un, &e2));
  ck_assert_msg(strstr(e2->message, "no room for 'y'"), "%s", e2->message);
}
END_TEST

/* A tensor that only another WG writes is live over its whole WG program
 * (the remote write may come at any time); the verifier accepts it. */
START_TEST(test_alloc_remote_only) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_array_set_size(ir_task_at(ir, G.s1)->ops, 1); /* s1 only waits */
  sync_op(ir, G.s1, IR_WAITT, NULL, 5);
  g_autoptr(GError) err = NULL;
  verify_ok(ir, FALSE);
  ck_assert(pass_rf_alloc(ir, &err));
  expect_place(ir, G.y, 0, 0, 1, 0, 1);
  verify_ok(ir, TRUE);
}
END_TEST

/* A task on wg1 whose tensors die and are reused: */
typedef struct Reuse {
  int t, a, b, c, s1, s2, big, u1, u2, unused;
} Reuse;

static void st_scratch(Ir *ir, int task, IrView a, uint64_t off) {
  int m = ir_tensor_hbm(ir, "scratch", "scratch", off, a.rows, a.cols, a.cols);
  IrOp *op = emit(ir, task, IR_ST, none(), a, none());
  op->mem = ir_all(ir, m);
}

static void ld_x(Ir *ir, int task, int t) {
  const IrTensor *x = ir_tensor(ir, t);
  IrOp *op = emit(ir, task, IR_LD, ir_all(ir, t), none(), none());
  op->mem = ir_all(ir, ir_tensor_hbm(ir, "x_in", "x_in", 0, x->rows, x->cols, x->cols));
}

/* ops: 0 LD a; 1 b = a; 2 c = b; 3 s1 = rsum c; 4 s2 = rsum c; 5 s1 += s2;
 * 6 LD big; 7 ST s1; 8 ST big; 9 fill u1; 10 fill u2; 11 u1 += u2; 12 ST u1 */
static Ir *reuse_ir(Reuse *R) {
  Ir *ir = tiny_ir(NULL, 0);
  R->t = ir_task(ir, "t0", 0, (IrProv){"p1.x", 1, 0});
  R->a = ir_tensor_rf(ir, R->t, "a", 32, 32);
  R->unused = ir_tensor_rf(ir, R->t, "unused", 32, 32);
  R->b = ir_tensor_rf(ir, R->t, "b", 32, 32);
  R->c = ir_tensor_rf(ir, R->t, "c", 32, 32);
  R->s1 = ir_tensor_rf(ir, R->t, "s1", 32, 1);
  R->s2 = ir_tensor_rf(ir, R->t, "s2", 32, 1);
  R->big = ir_tensor_rf(ir, R->t, "big", 64, 32);
  R->u1 = ir_tensor_rf(ir, R->t, "u1", 1, 1);
  R->u2 = ir_tensor_rf(ir, R->t, "u2", 1, 1);
  ld_x(ir, R->t, R->a);
  emit(ir, R->t, IR_VCOPY, ir_all(ir, R->b), ir_all(ir, R->a), none());
  emit(ir, R->t, IR_VCOPY, ir_all(ir, R->c), ir_all(ir, R->b), none());
  emit(ir, R->t, IR_VRSUM, ir_all(ir, R->s1), ir_all(ir, R->c), none());
  emit(ir, R->t, IR_VRSUM, ir_all(ir, R->s2), ir_all(ir, R->c), none());
  emit(ir, R->t, IR_VADD, ir_all(ir, R->s1), ir_all(ir, R->s1), ir_all(ir, R->s2));
  IrOp *op = emit(ir, R->t, IR_LD, ir_all(ir, R->big), none(), none());
  op->mem = ir_all(ir, ir_tensor_hbm(ir, "scratch", "scratch", 0, 64, 32, 32));
  st_scratch(ir, R->t, ir_all(ir, R->s1), 16384);
  st_scratch(ir, R->t, ir_all(ir, R->big), 0);
  emit(ir, R->t, IR_VFILL, ir_all(ir, R->u1), none(), none())->imm = 1.5f;
  emit(ir, R->t, IR_VFILL, ir_all(ir, R->u2), none(), none())->imm = -2.0f;
  emit(ir, R->t, IR_VADD, ir_all(ir, R->u1), ir_all(ir, R->u1), ir_all(ir, R->u2));
  st_scratch(ir, R->t, ir_all(ir, R->u1), 20480);
  ir_task_at(ir, R->t)->wg = 1;
  return ir;
}

/* First fit in first_op order: a dead tensor's partition is reused (c in
 * a's p0), small tensors pack at 64-byte offsets (s2, u2), a 2-partition
 * tensor takes the lowest free run (big in p2-p3 while s1 holds p1), and an
 * unused tensor gets nothing. */
START_TEST(test_alloc_reuse) {
  Reuse R;
  g_autoptr(Ir) ir = reuse_ir(&R);
  g_autoptr(GError) err = NULL;
  verify_ok(ir, FALSE);
  ck_assert_msg(pass_rf_alloc(ir, &err), "%s", err ? err->message : "");
  expect_place(ir, R.a, 0, 0, 1, 0, 1);
  expect_place(ir, R.b, 1, 0, 1, 1, 2);
  expect_place(ir, R.c, 0, 0, 1, 2, 4);
  expect_place(ir, R.s1, 1, 0, 1, 3, 7);
  expect_place(ir, R.s2, 1, 128, 1, 4, 5);
  expect_place(ir, R.big, 2, 0, 2, 6, 8);
  expect_place(ir, R.u1, 0, 0, 1, 9, 12);
  expect_place(ir, R.u2, 0, 64, 1, 10, 11);
  expect_place(ir, R.unused, -1, 0, 0, -1, -1);
  verify_ok(ir, TRUE);
  /* Idempotent: a second run gives the same placement. */
  ck_assert(pass_rf_alloc(ir, &err));
  expect_place(ir, R.big, 2, 0, 2, 6, 8);
}
END_TEST

/* On a 4-partition RF (rf_kib=16, vl=4): a..d fill it, then a and c die;
 * `e` (2 partitions) finds p0 and p2 free but no run of two. */
static Ir *full_ir(int *e, int dcols, int ecols, int erows) {
  Ir *ir = tiny_ir("rf_kib", 16);
  Machine hw = ir->hw;
  ck_assert(sim_machine_set(&hw, "vl", 4, NULL));
  ir->hw = hw;
  int t = ir_task(ir, "t0", 0, (IrProv){"p1.x", 1, 0}), v[4];
  for (int i = 0; i < 4; i++) {
    char n[2] = {(char)('a' + i), 0};
    v[i] = ir_tensor_rf(ir, t, n, i == 3 ? dcols : 32, 32);
    ld_x(ir, t, v[i]);
  }
  *e = ir_tensor_rf(ir, t, "e", erows, ecols);
  st_scratch(ir, t, ir_all(ir, v[0]), 0);
  st_scratch(ir, t, ir_all(ir, v[2]), 0);
  emit(ir, t, IR_VFILL, ir_all(ir, *e), none(), none());
  st_scratch(ir, t, ir_all(ir, v[1]), 0);
  st_scratch(ir, t, ir_all(ir, v[3]), 0);
  st_scratch(ir, t, ir_all(ir, *e), 0);
  ir_task_at(ir, t)->wg = 0;
  return ir;
}

START_TEST(test_alloc_no_run) {
  int e;
  g_autoptr(Ir) ir = full_ir(&e, 32, 32, 64);
  g_autoptr(GError) err = NULL;
  verify_ok(ir, FALSE);
  ck_assert(!pass_rf_alloc(ir, &err));
  ck_assert_str_eq(err->message,
                   "tiny.yaml:1:1: error: rf_alloc: wg0 has no room for 'e' (8192 bytes = 2 partitions, live at ops "
                   "6..9): 2 partitions free, the largest free run is 1 partition");
}
END_TEST

/* d is 31x32 (3968 bytes), so p3 keeps a 128-byte gap; e (32x2, 256 bytes)
 * born while all four live does not fit.  (Here a and c die after e.) */
START_TEST(test_alloc_no_gap) {
  g_autoptr(Ir) ir = tiny_ir("rf_kib", 16);
  ck_assert(sim_machine_set(&ir->hw, "vl", 4, NULL));
  int t = ir_task(ir, "t0", 0, (IrProv){"p1.x", 1, 0}), v[4];
  for (int i = 0; i < 4; i++) {
    char n[2] = {(char)('a' + i), 0};
    v[i] = ir_tensor_rf(ir, t, n, i == 3 ? 31 : 32, 32);
    ld_x(ir, t, v[i]);
  }
  int e = ir_tensor_rf(ir, t, "e", 32, 2);
  emit(ir, t, IR_VFILL, ir_all(ir, e), none(), none());
  for (int i = 0; i < 4; i++) st_scratch(ir, t, ir_all(ir, v[i]), 0);
  st_scratch(ir, t, ir_all(ir, e), 0);
  ir_task_at(ir, t)->wg = 0;
  g_autoptr(GError) err = NULL;
  verify_ok(ir, FALSE);
  ck_assert(!pass_rf_alloc(ir, &err));
  ck_assert_str_eq(err->message,
                   "tiny.yaml:1:1: error: rf_alloc: wg0 has no room for 'e' (256 bytes, live at ops 4..9): the largest "
                   "free gap in a partition is 128 bytes");
}
END_TEST

/* ir_error: one line at the knob's line and column; a knob at its default
 * (line 0) points at the problem section, and with no section at 1:1. */
START_TEST(test_ir_error_location) {
  g_autoptr(Ir) ir = tiny_ir(NULL, 0);
  g_autoptr(GError) err = NULL;
  ir_error(ir, &err, (IrProv){"p1.panels.w1", 7, 13}, "x=%d", 3);
  ck_assert_str_eq(err->message, "tiny.yaml:7:13: error: x=3");
  g_clear_error(&err);
  ir_error(ir, &err, (IrProv){"p1.panels.w1", 0, 0}, "default");
  ck_assert_str_eq(err->message, "tiny.yaml:1:1: error: default");
  g_clear_error(&err);
  ir->section = (IrProv){"p1", 4, 1};
  ir_error(ir, &err, (IrProv){"p1.panels.w1", 0, 0}, "default");
  ck_assert_str_eq(err->message, "tiny.yaml:4:1: error: default");
}
END_TEST

START_TEST(test_alloc_errors) {
  Reuse R;
  g_autoptr(Ir) ir = reuse_ir(&R);
  g_autoptr(GError) err = NULL;
  ir_tensor(ir, R.big)->rows = 40;
  ck_assert(!pass_rf_alloc(ir, &err));
  ck_assert_str_eq(err->message, "tiny.yaml:1:1: error: rf_alloc: wg1: 'big' is 40x32 = 5120 bytes: "
                                 "neither inside one "
                                 "partition (4096 bytes) nor a whole number of partitions");
  g_clear_error(&err);
  ir_task_at(ir, R.t)->wg = -1;
  ck_assert(!pass_rf_alloc(ir, &err));
  ck_assert_str_eq(err->message, "tiny.yaml:1:1: error: rf_alloc: task 't0' is not placed (wg -1)");
}
END_TEST

/* ------------------------------------------------------- printer, backend */

static const char *const good_print =
    "; tcc-gen IR of tiny.yaml\n"
    ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0\n"
    ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n"
    "sms_used 16\n"
    "\n"
    "event in\n"
    "event h\n"
    "\n"
    "task s0.blk wg 0 stage 0  ; p1.row_tile:7\n"
    "  rf x 32x32 p0 live 0..4\n"
    "  rf l0.g 1x32 p1 live 1..5\n"
    "  rf mean 32x1 p1+128 live 2..4\n"
    "  rf h 32x32 p2 live 4..8\n"
    "    0  LD x, hbm[x_in]\n"
    "    1  LD l0.g, hbm[ln1_g.l0]\n"
    "    2  VEC.rsum mean, x\n"
    "    3  VEC.muli mean, mean, 0.03125\n"
    "    4  VEC.sub h, x, mean\n"
    "    5  VEC.mul h, h, l0.g  ; p1.ln:9\n"
    "    6  VEC.addi h, h, 1e-05\n"
    "    7  ST hbm[out], h\n"
    "    8  ST y@s1.tail, h\n"
    "    9  SIG ev.h, 1\n"
    "\n"
    "task s1.tail wg 5 stage 1  ; p1.sms\n"
    "  rf y 32x32 p0 live 0..2\n"
    "    0  WAIT ev.h, 1\n"
    "    1  VEC.muli y, y, 2\n"
    "    2  ST hbm[scratch + 256 stride 128], y\n"
    "\n"
    "hbm x_in[0,0] = x_in 32x32 stride 32\n"
    "hbm ln1_g.l0[0,0] = ln1_g.l0 1x32 stride 32\n"
    "hbm out[0,0] = out 32x32 stride 32\n"
    "hbm scratch[0,64] = scratch + 256 32x32 stride 128\n";

START_TEST(test_print) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  g_autofree char *txt = ir_print(ir);
  ck_assert_msg(strcmp(txt, good_print) == 0, "got:\n%s", txt);
}
END_TEST

static const char *const good_asm =
    "; generated by tcc-gen from tiny.yaml (problem p1); do not edit\n"
    ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0\n"
    ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n"
    "\n"
    ".wg 0   ; sm 0, tasks: s0.blk\n"
    ".rf x                           p0       32x32     ; x\n"
    ".rf l0_g                        p1       1x32      ; l0.g\n"
    ".rf mean                        p1+128   32x1      ; mean\n"
    ".rf h                           p2       32x32     ; h\n"
    "    LD        x, hbm[x_in]                                  ; p1.row_tile:7 s0.blk\n"
    "    LD        l0_g, hbm[ln1_g.l0]                           ; p1.row_tile:7 s0.blk\n"
    "    VEC.rsum  mean, x                                       ; p1.row_tile:7 s0.blk\n"
    "    VEC.muli  mean, mean, 0.03125                           ; p1.row_tile:7 s0.blk\n"
    "    VEC.sub   h, x, mean                                    ; p1.row_tile:7 s0.blk\n"
    "    VEC.mul   h, h, l0_g                                    ; p1.ln:9 s0.blk\n"
    "    VEC.addi  h, h, 1e-05                                   ; p1.row_tile:7 s0.blk\n"
    "    ST        hbm[out], h                                   ; p1.row_tile:7 s0.blk\n"
    "    ST        wg5.y, h                                      ; p1.row_tile:7 s0.blk\n"
    "    SIG       ev.h, 1                                       ; p1.row_tile:7 s0.blk\n"
    "    END\n"
    "\n"
    ".wg 5   ; sm 1, tasks: s1.tail\n"
    ".rf y                           p0       32x32     ; y\n"
    "    WAIT      ev.h, 1                                       ; p1.sms s1.tail\n"
    "    VEC.muli  y, y, 2                                       ; p1.sms s1.tail\n"
    "    ST        hbm[scratch + 256], y, stride 128             ; p1.sms s1.tail\n"
    "    END\n";

START_TEST(test_emit) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  g_autofree char *txt = be_emit(ir);
  ck_assert_msg(strcmp(txt, good_asm) == 0, "got:\n%s", txt);
  g_autoptr(Program) p = sim_asm_parse("good.asm", txt, strlen(txt), &err);
  ck_assert_msg(p, "%s", err ? err->message : "");
}
END_TEST

/* The section of `.wg w` in an emitted text (to the next blank line). */
static char *section(const char *txt, int w) {
  g_autofree char *head = g_strdup_printf("\n.wg %d ", w);
  const char *s = strstr(txt, head);
  ck_assert(s);
  const char *e = strstr(s + 1, "\n\n");
  return e ? g_strndup(s, (gsize)(e - s)) : g_strdup(s);
}

/* Same IR, same bytes; a change in one task leaves the other WG's section
 * byte-identical (no renaming, no shifting columns). */
START_TEST(test_emit_stable) {
  Good G;
  g_autoptr(Ir) ir = good_ir(&G);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  g_autofree char *a = be_emit(ir), *b = be_emit(ir), *pa = ir_print(ir), *pb = ir_print(ir);
  ck_assert_str_eq(a, b);
  ck_assert_str_eq(pa, pb);
  IrOp *op = ir_emit(ir, G.s1, IR_VADDI);
  op->d = op->a = ir_all(ir, G.y);
  op->imm = 1.0f;
  ck_assert(pass_rf_alloc(ir, &err));
  verify_ok(ir, TRUE);
  g_autofree char *c = be_emit(ir);
  g_autofree char *s0a = section(a, 0), *s0c = section(c, 0), *s5a = section(a, 5),
                  *s5c = section(c, 5);
  ck_assert_str_eq(s0a, s0c);
  ck_assert_str_ne(s5a, s5c);
}
END_TEST

/* Immediates survive "%.9g" and the assembler's reader bit for bit. */
START_TEST(test_emit_floats) {
  static const float vals[] = {0.1f,   1e-5f,        -1e30f,       3.40282347e38f, 1.17549435e-38f,
                               1e-45f, 0.0f,         -0.0f,        1.0f,           0.7978845608f,
                               1.0f / 3, 0.044715f, -123456.789f, 16777217.0f,    2.5e-7f};
  g_autoptr(Ir) ir = tiny_ir(NULL, 0);
  int t = ir_task(ir, "t0", 0, (IrProv){NULL, 0, 0});
  int f = ir_tensor_rf(ir, t, "f", 1, 32);
  for (unsigned i = 0; i < G_N_ELEMENTS(vals); i++)
    emit(ir, t, IR_VFILL, ir_win(f, 0, 1, (int)i, 1), none(), none())->imm = vals[i];
  ir_task_at(ir, t)->wg = 0;
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  verify_ok(ir, TRUE);
  g_autofree char *txt = be_emit(ir);
  g_autoptr(Program) p = sim_asm_parse("floats.asm", txt, strlen(txt), &err);
  ck_assert_msg(p, "%s\n%s", err ? err->message : "", txt);
  for (unsigned i = 0; i < G_N_ELEMENTS(vals); i++) {
    float got = p->wgs[0].insns[i].imm;
    ck_assert_msg(memcmp(&got, &vals[i], sizeof got) == 0, "%.9g read back as %.9g",
                  (double)vals[i], (double)got);
  }
}
END_TEST

/* ------------------------------------------------------------ end to end */

/* One task on wg0: out = (x - mean(x)) * ln1_g + 1e-5, through rf_alloc,
 * the backend, the assembler and the simulator; the stored rows equal the
 * same FP32 computation done here. */
START_TEST(test_emit_runs) {
  Good G;
  g_autoptr(Ir) ir = build(&G, FALSE);
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  verify_ok(ir, TRUE);
  g_autofree char *txt = be_emit(ir);
  g_autoptr(Program) p = sim_asm_parse("tiny.asm", txt, strlen(txt), &err);
  ck_assert_msg(p, "%s\n%s", err ? err->message : "", txt);
  SimOptions o;
  sim_options_default(&o);
  o.keep_hbm = TRUE;
  SimResult r;
  ck_assert_msg(sim_run(p, &o, &r, &err), "%s", err ? err->message : "");
  const AbiSym *xs = wl_abi_lookup(&p->abi, "x_in"), *gs = wl_abi_lookup(&p->abi, "ln1_g.l0"),
               *os = wl_abi_lookup(&p->abi, "out");
  const float *x = r.hbm + xs->addr / 4, *g = r.hbm + gs->addr / 4, *out = r.hbm + os->addr / 4;
  for (int i = 0; i < 32; i++) {
    float mean = 0;
    for (int j = 0; j < 32; j++) mean += x[i * 32 + j];
    mean *= 0.03125f;
    for (int j = 0; j < 32; j++) {
      float h = (x[i * 32 + j] - mean) * g[j] + 1e-5f;
      ck_assert_msg(out[i * 32 + j] == h, "out[%d][%d] = %.9g, want %.9g", i, j,
                    (double)out[i * 32 + j], (double)h);
    }
  }
  sim_result_clear(&r);
}
END_TEST

/* Every op kind, two tasks on two SMs (wg0, wg6): LD.mc into both, MMA
 * variants, broadcasts, SFU, RED over both, a windowed remote ST, WAITT.
 * It must emit, assemble and run; a few lines are checked verbatim. */
static IrOp *op2(Ir *ir, int task, IrOpKind k, int mods, IrView d, IrView a, IrView b, IrView c) {
  IrOp *op = emit(ir, task, k, d, a, b);
  op->c = c;
  op->mods = mods;
  return op;
}

static Ir *all_ops_ir(void) {
  Ir *ir = tiny_ir("reduce", 1);
  int A = ir_task(ir, "s0.a", 0, (IrProv){"p1.a", 3, 0}), B = ir_task(ir, "s1.b", 0, (IrProv){"p1.b", 4, 0});
  int w = ir_tensor_rf(ir, A, "l0.w", 32, 32), wb = ir_tensor_rf(ir, B, "l0.w", 32, 32);
  int a = ir_tensor_rf(ir, A, "a", 32, 32), c = ir_tensor_rf(ir, A, "c", 32, 32);
  int r = ir_tensor_rf(ir, A, "r", 32, 1), s = ir_tensor_rf(ir, A, "sum", 32, 32);
  int in = ir_tensor_rf(ir, B, "inbox", 32, 32), cb = ir_tensor_rf(ir, B, "c", 32, 32);
  int sb = ir_tensor_rf(ir, B, "sum", 32, 32);
  IrView no = none();
  IrOp *op = op2(ir, A, IR_LD, IR_MOD_MC, ir_all(ir, w), no, no, no);
  op->mem = ir_all(ir, ir_tensor_hbm(ir, "wqkv.l0[0,32]", "wqkv.l0", 128, 32, 32, 96));
  op->targets = g_new(int, 2);
  op->targets[0] = wb; /* any order: the asm lists WGs ascending */
  op->targets[1] = w;
  op->ntargets = 2;
  ld_x(ir, A, a);
  sync_op(ir, A, IR_SIG, "w", 1);
  op2(ir, A, IR_MMA, IR_MOD_Z, ir_all(ir, c), ir_all(ir, a), ir_all(ir, w), no);
  op2(ir, A, IR_MMA, 0, ir_win(c, 0, 32, 0, 16), ir_all(ir, a), ir_win(w, 0, 32, 16, 16), no);
  op2(ir, A, IR_MMA, IR_MOD_Z | IR_MOD_T, ir_all(ir, c), ir_all(ir, a), ir_all(ir, w), no);
  op2(ir, A, IR_VRMAX, 0, ir_all(ir, r), ir_all(ir, c), no, no);
  op2(ir, A, IR_VRSUM, 0, ir_all(ir, r), ir_all(ir, c), no, no);
  op2(ir, A, IR_VFMA, 0, ir_all(ir, c), ir_all(ir, c), ir_all(ir, r), ir_win(a, 0, 1, 0, 32));
  op2(ir, A, IR_VSUB, 0, ir_all(ir, c), ir_all(ir, c), ir_all(ir, r), no);
  op2(ir, A, IR_VMAX, 0, ir_all(ir, c), ir_all(ir, c), ir_win(a, 3, 1, 4, 1), no);
  op2(ir, A, IR_VMIN, 0, ir_all(ir, c), ir_all(ir, c), ir_all(ir, a), no);
  op2(ir, A, IR_VMUL, 0, ir_all(ir, c), ir_all(ir, c), ir_all(ir, a), no);
  op2(ir, A, IR_VADD, 0, ir_all(ir, c), ir_all(ir, c), ir_all(ir, a), no);
  op2(ir, A, IR_VMULI, 0, ir_all(ir, c), ir_all(ir, c), no, no)->imm = -0.5f;
  op2(ir, A, IR_VADDI, 0, ir_all(ir, c), ir_all(ir, c), no, no)->imm = 0.25f;
  op2(ir, A, IR_SEXP, 0, ir_all(ir, c), ir_all(ir, c), no, no);
  op2(ir, A, IR_STANH, 0, ir_all(ir, c), ir_all(ir, c), no, no);
  op2(ir, A, IR_SRECIP, 0, ir_all(ir, c), ir_all(ir, c), no, no);
  op2(ir, A, IR_VFILL, 0, ir_win(r, 0, 8, 0, 1), no, no, no)->imm = 4.0f;
  op2(ir, A, IR_SRSQRT, 0, ir_win(r, 0, 8, 0, 1), ir_win(r, 0, 8, 0, 1), no, no);
  op2(ir, A, IR_VCOPY, 0, ir_win(c, 0, 8, 0, 1), ir_win(r, 0, 8, 0, 1), no, no);
  op = op2(ir, A, IR_ST, 0, no, ir_win(a, 0, 16, 0, 32), no, no);
  op->mem = ir_win(in, 16, 16, 0, 32);
  sync_op(ir, A, IR_SIG, "inbox", 1);
  op = op2(ir, A, IR_RED, 0, ir_all(ir, s), ir_all(ir, c), no, no);
  op->event = ir_event(ir, "red");
  op->n = 2;
  sync_op(ir, A, IR_WAITT, NULL, 10);
  st_scratch(ir, A, ir_all(ir, s), 0);
  sync_op(ir, B, IR_WAIT, "w", 1);
  sync_op(ir, B, IR_WAIT, "inbox", 1);
  op2(ir, B, IR_MMA, IR_MOD_Z, ir_win(cb, 0, 16, 0, 32), ir_win(in, 16, 16, 0, 32), ir_all(ir, wb), no);
  op2(ir, B, IR_VFILL, 0, ir_win(cb, 16, 16, 0, 32), no, no, no)->imm = 1.0f;
  op = op2(ir, B, IR_RED, 0, ir_all(ir, sb), ir_all(ir, cb), no, no);
  op->event = ir_event(ir, "red");
  op->n = 2;
  sync_op(ir, B, IR_WAIT, "red", 1);
  st_scratch(ir, B, ir_all(ir, sb), 4096);
  ir_task_at(ir, A)->wg = 6;
  ir_task_at(ir, B)->wg = 0;
  return ir;
}

START_TEST(test_emit_all_ops) {
  g_autoptr(Ir) ir = all_ops_ir();
  g_autoptr(GError) err = NULL;
  verify_ok(ir, FALSE);
  ck_assert_msg(pass_rf_alloc(ir, &err), "%s", err ? err->message : "");
  verify_ok(ir, TRUE);
  g_autofree char *txt = be_emit(ir), *irt = ir_print(ir);
  static const char *const lines[] = {
      "    LD.mc     l0_w, hbm[wqkv.l0 + 128], stride 96, {0, 6}   ; p1.a:3 s0.a\n",
      "    MMA       c[:, 0:16], a, l0_w[:, 16:32]                 ; p1.a:3 s0.a\n",
      "    MMA.z.t   c, a, l0_w                                    ; p1.a:3 s0.a\n",
      "    VEC.fma   c, c, r, a[0:1, :]                            ; p1.a:3 s0.a\n",
      "    VEC.max   c, c, a[3:4, 4:5]                             ; p1.a:3 s0.a\n",
      "    VEC.muli  c, c, -0.5                                    ; p1.a:3 s0.a\n",
      "    ST        wg0.inbox[16:32, :], a[0:16, :]               ; p1.a:3 s0.a\n",
      "    RED       sum, c, ev.red, 2                             ; p1.a:3 s0.a\n",
      "    WAITT     10                                            ; p1.a:3 s0.a\n",
      ".rf inbox                       p1       32x32     ; inbox\n",
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(lines); i++)
    ck_assert_msg(strstr(txt, lines[i]), "missing line %s in:\n%s", lines[i], txt);
  ck_assert_msg(strstr(irt, "  LD.mc l0.w, hbm[wqkv.l0 + 128 stride 96], {l0.w@s1.b, l0.w}\n"), "%s", irt);
  ck_assert_msg(strstr(irt, "  ST inbox[16:32, :]@s1.b, a[0:16, :]\n"), "%s", irt);
  g_autoptr(Program) p = sim_asm_parse("all.asm", txt, strlen(txt), &err);
  ck_assert_msg(p, "%s\n%s", err ? err->message : "", txt);
  SimOptions o;
  sim_options_default(&o);
  SimResult r;
  ck_assert_msg(sim_run(p, &o, &r, &err), "%s\n%s", err ? err->message : "", txt);
  sim_result_clear(&r);
}
END_TEST

/* An IR that skipped ir_verify with an LD.mc target named unlike d: the
 * backend still emits, and flags the line for the reader. */
START_TEST(test_emit_bad_target) {
  g_autoptr(Ir) ir = all_ops_ir();
  g_autoptr(GError) err = NULL;
  ck_assert(pass_rf_alloc(ir, &err));
  IrTensor *wb = ir_tensor(ir, g_array_index(ir_task_at(ir, 0)->ops, IrOp, 0).targets[0]);
  g_free(wb->name);
  wb->name = g_strdup("l0.v");
  ck_assert(!ir_verify(ir, TRUE, &err));
  g_autofree char *txt = be_emit(ir);
  ck_assert_msg(strstr(txt, "; p1.a:3 s0.a error: LD.mc target 'l0.v' is not named 'l0.w'\n"), "%s", txt);
}
END_TEST

Suite *suite_ir(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("ir_verify");
  tcase_add_test(tc, test_verify_good);
  tcase_add_loop_test(tc, test_verify_broken, 0, G_N_ELEMENTS(broken));
  suite_add_tcase(s, tc);
  tc = tcase_create("pass_rf_alloc");
  tcase_add_test(tc, test_alloc_good);
  tcase_add_test(tc, test_ir_error_location);
  tcase_add_test(tc, test_alloc_remote_only);
  tcase_add_test(tc, test_alloc_remote_ordered);
  tcase_add_test(tc, test_alloc_reuse);
  tcase_add_test(tc, test_alloc_no_run);
  tcase_add_test(tc, test_alloc_no_gap);
  tcase_add_test(tc, test_alloc_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("ir_print");
  tcase_add_test(tc, test_print);
  suite_add_tcase(s, tc);
  tc = tcase_create("be_emit");
  tcase_add_test(tc, test_emit);
  tcase_add_test(tc, test_emit_stable);
  tcase_add_test(tc, test_emit_floats);
  tcase_add_test(tc, test_emit_runs);
  tcase_add_test(tc, test_emit_all_ops);
  tcase_add_test(tc, test_emit_bad_target);
  suite_add_tcase(s, tc);
  return s;
}
