/* test_asm.c - the assembler (asm_lexer.re, asm_parser.c, program.c): the
 * lexer's tokens, the Program a valid file assembles into, and the exact text
 * of every diagnostic (table-driven: input -> the one-line message). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "asm_lexer.h"
#include "file_read.h"
#include "tests.h"

/* ------------------------------------------------------------------ lexer */

typedef struct LexCase {
  const char *in;
  TokKind kinds[12]; /* ends with TK_EOF */
} LexCase;

static const LexCase lex_cases[] = {
    {"VEC.add x, 1.5", {TK_IDENT, TK_IDENT, TK_COMMA, TK_FLOAT, TK_EOF}},
    {"wg5.kbuf ev.in wqkv.l0 MMA.z.t _a9",
     {TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_EOF}},
    {"128x16 dma=2x1 12x", {TK_SHAPE, TK_IDENT, TK_EQ, TK_SHAPE, TK_INT, TK_IDENT, TK_EOF}},
    {"-1.5 1e-5 0.125 .5 2.5E+3 7 1.",
     {TK_MINUS, TK_FLOAT, TK_FLOAT, TK_FLOAT, TK_FLOAT, TK_FLOAT, TK_INT, TK_FLOAT, TK_EOF}},
    {".machine .problem .wg .rf .foo .rfx",
     {TK_MACHINE, TK_PROBLEM, TK_WG, TK_RF, TK_BADDIR, TK_BADDIR, TK_EOF}},
    {", [ ] : + - { } =",
     {TK_COMMA, TK_LBRACK, TK_RBRACK, TK_COLON, TK_PLUS, TK_MINUS, TK_LBRACE, TK_RBRACE, TK_EQ,
      TK_EOF}},
    {"x[0:1,:] ; c, [ 1\n",
     {TK_IDENT, TK_LBRACK, TK_INT, TK_COLON, TK_INT, TK_COMMA, TK_COLON, TK_RBRACK, TK_COMMENT,
      TK_NEWLINE, TK_EOF}},
    {"p12+64 \t\r\n", {TK_IDENT, TK_PLUS, TK_INT, TK_NEWLINE, TK_EOF}},
    {"@ $\xc3", {TK_ERROR, TK_ERROR, TK_ERROR, TK_EOF}},
    {"", {TK_EOF}},
};

START_TEST(test_lex_kinds) {
  const LexCase *c = &lex_cases[_i];
  Lexer lx;
  Token t;
  sim_asm_lex_init(&lx, c->in, strlen(c->in));
  for (int k = 0;; k++) {
    sim_asm_lex(&lx, &t);
    ck_assert_msg(t.kind == c->kinds[k], "input \"%s\": token %d is kind %d '%.*s', expected %d",
                  c->in, k, t.kind, (int)t.len, t.s, c->kinds[k]);
    if (t.kind == TK_EOF) break;
  }
}
END_TEST

/* Line and column (bytes, 1-based) of each token; the comment's text. */
START_TEST(test_lex_positions) {
  const char *in = "a\n  bc ;x y\n\n\tEND";
  static const struct {
    TokKind kind;
    int line, col, len;
  } want[] = {{TK_IDENT, 1, 1, 1},   {TK_NEWLINE, 1, 2, 1}, {TK_IDENT, 2, 3, 2},
              {TK_COMMENT, 2, 6, 4}, {TK_NEWLINE, 2, 10, 1}, {TK_NEWLINE, 3, 1, 1},
              {TK_IDENT, 4, 2, 3},   {TK_EOF, 4, 5, 0},      {TK_EOF, 4, 5, 0}};
  Lexer lx;
  Token t;
  sim_asm_lex_init(&lx, in, strlen(in));
  for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
    sim_asm_lex(&lx, &t);
    ck_assert_msg(t.kind == want[k].kind && t.line == want[k].line && t.col == want[k].col &&
                      (int)t.len == want[k].len,
                  "token %zu: kind %d at %d:%d len %zu", k, t.kind, t.line, t.col, t.len);
  }
  sim_asm_lex_init(&lx, in, strlen(in));
  for (int k = 0; k < 4; k++) sim_asm_lex(&lx, &t);
  ck_assert_int_eq(t.kind, TK_COMMENT);
  ck_assert_int_eq(strncmp(t.s, ";x y", t.len), 0);
}
END_TEST

/* A NUL before the end is a token of its own; the sentinel is the end. */
START_TEST(test_lex_nul) {
  const char in[] = "a\0b";
  static const TokKind want[] = {TK_IDENT, TK_NUL, TK_IDENT, TK_EOF};
  Lexer lx;
  Token t;
  sim_asm_lex_init(&lx, in, 3);
  for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
    sim_asm_lex(&lx, &t);
    ck_assert_int_eq(t.kind, want[k]);
  }
  ck_assert_int_eq(t.col, 4);
}
END_TEST

/* ------------------------------------------------------- a valid program */

static const char valid[] =
    "; a program that touches every operand form\n"
    ".machine sms=2 wgs_per_sm=3 rf_kib=32 vl=8 sh_kib=8 dma=4x2 reduce=2\n"
    ".problem p1 d_model=64 heads=2 d_ff=128 layers=1 seqs=1 rows=32\n"
    "\n"
    ".wg 3                      ; sm 1 slot 0\n"
    ".rf k   p1 32x32\n"                 /* 0: one 4 KiB partition          */
    ".rf w   p2 64x32           ; two partitions\n" /* 1                       */
    ".rf v   p4+256 1x64\n"              /* 2                               */
    ".rf acc p5 32x32\n"                 /* 3                               */
    ".rf s   p6 32x1\n"                  /* 4                               */
    "    WAIT ev.in, 1\n"                /* 0                               */
    "    LD   k, hbm[x_in], stride 64\n" /* 1                               */
    "    LD   w[0:32, :], hbm[wqkv.l0 + 128], stride 192\n"
    "    LD.mc v, hbm[bqkv.l0], {2, 0, 2}\n"
    "    MMA.z.t acc, k, w[0:32, :]\n"
    "    VEC.add acc, acc, v[:, 0:32]\n"
    "    VEC.fma acc, acc, s, v[0:1, 32:64]\n"
    "    VEC.muli acc, acc, 0.125\n"
    "    VEC.fill s, -1.5\n"
    "    VEC.rsum s, acc\n"
    "    SFU.exp acc, acc\n"             /* 10                              */
    "    ST   hbm[scratch + 64], acc[0:1, :], stride 32\n"
    "    ST   sh[128], s         ; to SH   \n"
    "    ST   wg1.t[0:1, :], acc[1:2, :]\n"
    "    RED  s, s, ev.sum, 2\n"
    "    SIG  ev.done, 1\n"              /* 15                              */
    "    WAIT ev.sum, 2\n"
    "    WAITT 0\n"
    "    ST   hbm[ln1_g.l0 + 512], acc[0:2, :], stride 1024\n"
    "    END\n"                          /* 19                              */
    ".wg 0\n"
    ".rf v p0 1x64\n"                    /* 5                               */
    "    LD.mc q, hbm[bqkv.l0 + 256], {2}\n"
    "    END\n"
    ".wg 2\n"
    ".rf v p7 1x64\n"                    /* 6                               */
    ".rf q p3 1x64\n"                    /* 7                               */
    "    END\n"
    ".wg 1\n"
    ".rf t p0 4x32\n"                    /* 8                               */
    "    END";                           /* no final newline                */

static Program *parse_ok(const char *text) {
  g_autoptr(GError) err = NULL;
  Program *p = sim_asm_parse("t.asm", text, strlen(text), &err);
  ck_assert_msg(p != NULL, "unexpected error: %s\n%s", err ? err->message : "?", text);
  return p;
}

static void check_ref(const Program *p, const RfRef *r, const char *want) {
  g_autofree char *s = sim_rfref_str(p, r);
  ck_assert_str_eq(s, want);
}

START_TEST(test_valid_header) {
  g_autoptr(Program) p = parse_ok(valid);
  ck_assert_str_eq(p->file, "t.asm");
  ck_assert_int_eq(p->hw.sms, 2);
  ck_assert_int_eq(p->hw.wgs_per_sm, 3);
  ck_assert_int_eq(p->hw.rf_kib, 32);
  ck_assert_int_eq(p->hw.vl, 8);
  ck_assert_int_eq(p->hw.sh_kib, 8);
  ck_assert_int_eq(p->hw.dma_engines, 4);
  ck_assert_int_eq(p->hw.dma_depth, 2);
  ck_assert_int_eq(p->hw.reduce_units, 2);
  ck_assert_int_eq(p->hw.hbm_channels, 8); /* default */
  ck_assert_int_eq(p->prob.kind, PROB_P1);
  ck_assert_int_eq(p->prob.d_model, 64);
  ck_assert_int_eq(p->prob.rows, 32);
  ck_assert_ptr_nonnull(wl_abi_lookup(&p->abi, "wqkv.l0"));
  ck_assert_int_gt(p->abi.hbm_bytes, 0);
  g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, valid, -1);
  ck_assert_str_eq(p->sha256, sum);
}
END_TEST

START_TEST(test_valid_regions) {
  g_autoptr(Program) p = parse_ok(valid);
  static const struct {
    const char *name;
    int wg, part, nparts, byte, rows, cols, line, col;
  } want[] = {
      {"k", 3, 1, 1, 4096, 32, 32, 6, 5},   {"w", 3, 2, 2, 8192, 64, 32, 7, 5},
      {"v", 3, 4, 1, 16640, 1, 64, 8, 5},   {"acc", 3, 5, 1, 20480, 32, 32, 9, 5},
      {"s", 3, 6, 1, 24576, 32, 1, 10, 5},  {"v", 0, 0, 1, 0, 1, 64, 32, 5},
      {"v", 2, 7, 1, 28672, 1, 64, 36, 5},  {"q", 2, 3, 1, 12288, 1, 64, 37, 5},
      {"t", 1, 0, 1, 0, 4, 32, 40, 5},
  };
  ck_assert_int_eq(p->regions->len, G_N_ELEMENTS(want));
  for (guint i = 0; i < p->regions->len; i++) {
    const Region *g = g_ptr_array_index(p->regions, i);
    ck_assert_msg(strcmp(g->name, want[i].name) == 0 && g->wg == want[i].wg &&
                      g->part == want[i].part && g->nparts == want[i].nparts &&
                      (int)g->byte == want[i].byte && g->rows == want[i].rows &&
                      g->cols == want[i].cols && g->line == want[i].line &&
                      g->col == want[i].col,
                  "region %u: %s wg%d p%d n%d byte %u %dx%d at %d:%d", i, g->name, g->wg,
                  g->part, g->nparts, g->byte, g->rows, g->cols, g->line, g->col);
  }
}
END_TEST

START_TEST(test_valid_wgs) {
  g_autoptr(Program) p = parse_ok(valid);
  ck_assert_int_eq(p->nwgs, 6);
  static const int n[] = {2, 1, 1, 20, 0, 0}, line[] = {31, 39, 35, 5, 0, 0};
  for (int w = 0; w < 6; w++) {
    ck_assert_int_eq(p->wgs[w].wg, w);
    ck_assert_int_eq(p->wgs[w].n, n[w]);
    ck_assert_int_eq(p->wgs[w].line, line[w]);
    if (n[w]) ck_assert_int_eq(p->wgs[w].insns[n[w] - 1].op, OP_END);
  }
  ck_assert_int_eq(p->events->len, 3);
  ck_assert_str_eq(g_ptr_array_index(p->events, 0), "in");
  ck_assert_str_eq(g_ptr_array_index(p->events, 1), "sum");
  ck_assert_str_eq(g_ptr_array_index(p->events, 2), "done");
  ck_assert_int_eq(sim_program_texts(p)->len, 24);
}
END_TEST

START_TEST(test_valid_transfers) {
  g_autoptr(Program) p = parse_ok(valid);
  const Insn *in = p->wgs[3].insns;
  const AbiSym *x_in = wl_abi_lookup(&p->abi, "x_in"), *wqkv = wl_abi_lookup(&p->abi, "wqkv.l0"),
               *bqkv = wl_abi_lookup(&p->abi, "bqkv.l0"),
               *scratch = wl_abi_lookup(&p->abi, "scratch");
  /* LD k, hbm[x_in], stride 64 */
  ck_assert_int_eq(in[1].op, OP_LD);
  ck_assert_int_eq(in[1].mods, 0);
  check_ref(p, sim_ref(p, in[1].d), "wg3.k");
  ck_assert_int_eq(in[1].space, MEM_HBM);
  ck_assert_uint_eq(in[1].addr, x_in->addr);
  ck_assert_int_eq(in[1].stride, 64);
  ck_assert_int_eq(sim_ref(p, in[1].a)->region, -1);
  /* LD w[0:32, :], hbm[wqkv.l0 + 128], stride 192 */
  check_ref(p, sim_ref(p, in[2].d), "wg3.w[0:32,0:32]");
  ck_assert_uint_eq(in[2].addr, wqkv->addr + 128);
  ck_assert_int_eq(in[2].stride, 192);
  /* LD.mc v, hbm[bqkv.l0], {2, 0, 2}: targets sorted and unique; default stride */
  ck_assert_int_eq(in[3].mods, MOD_MC);
  check_ref(p, sim_ref(p, in[3].d), "wg3.v");
  ck_assert_uint_eq(in[3].addr, bqkv->addr);
  ck_assert_int_eq(in[3].stride, 64);
  ck_assert_int_eq(sim_insn_ntargets(&in[3]), 2);
  ck_assert_int_eq(in[3].targets[0], 0);
  ck_assert_int_eq(in[3].targets[1], 2);
  ck_assert_int_eq(sim_insn_tregion(&in[3], 0), 5);
  ck_assert_int_eq(sim_insn_tregion(&in[3], 1), 6);
  /* ST hbm[scratch + 64], acc[0:1, :], stride 32 */
  ck_assert_int_eq(in[11].op, OP_ST);
  check_ref(p, sim_ref(p, in[11].a), "wg3.acc[0:1,0:32]");
  ck_assert_uint_eq(in[11].addr, scratch->addr + 64);
  ck_assert_int_eq(in[11].stride, 32);
  ck_assert_int_eq(sim_ref(p, in[11].d)->region, -1);
  /* ST sh[128], s */
  ck_assert_int_eq(in[12].space, MEM_SH);
  ck_assert_uint_eq(in[12].addr, 128);
  ck_assert_int_eq(in[12].stride, 1);
  /* ST wg1.t[0:1, :], acc[1:2, :]: resolved after WG 1's section */
  ck_assert_int_eq(in[13].space, MEM_RF);
  check_ref(p, sim_ref(p, in[13].dst), "wg1.t[0:1,0:32]");
  ck_assert_int_eq(sim_ref(p, in[13].dst)->region, 8);
  check_ref(p, sim_ref(p, in[13].a), "wg3.acc[1:2,0:32]");
  /* WG 0: LD.mc q ... {2}: WG 0 has no q, so d is WG 2's */
  const Insn *mc = &p->wgs[0].insns[0];
  check_ref(p, sim_ref(p, mc->d), "wg2.q");
  ck_assert_int_eq(sim_insn_ntargets(mc), 1);
  ck_assert_int_eq(sim_insn_tregion(mc, 0), 7);
  ck_assert_int_eq(mc->stride, 64);
}
END_TEST

START_TEST(test_valid_compute) {
  g_autoptr(Program) p = parse_ok(valid);
  const Insn *in = p->wgs[3].insns;
  /* WAIT ev.in, 1 */
  ck_assert_int_eq(in[0].op, OP_WAIT);
  ck_assert_int_eq(in[0].event, 0);
  ck_assert_int_eq(in[0].n, 1);
  ck_assert_int_eq(in[0].line, 11);
  ck_assert_int_eq(in[0].col, 5);
  /* MMA.z.t acc, k, w[0:32, :] */
  ck_assert_int_eq(in[4].op, OP_MMA);
  ck_assert_int_eq(in[4].mods, MOD_Z | MOD_T);
  check_ref(p, sim_ref(p, in[4].d), "wg3.acc");
  check_ref(p, sim_ref(p, in[4].a), "wg3.k");
  check_ref(p, sim_ref(p, in[4].b), "wg3.w[0:32,0:32]");
  /* VEC.add acc, acc, v[:, 0:32]: row broadcast */
  ck_assert_int_eq(in[5].op, OP_VADD);
  check_ref(p, sim_ref(p, in[5].b), "wg3.v[0:1,0:32]");
  /* one operand, one entry of p->refs: acc is in[4]'s d and in[5]'s d */
  ck_assert_uint_eq(in[4].d, in[5].d);
  ck_assert_uint_ne(in[4].d, 0);
  ck_assert_uint_eq(in[5].c, 0); /* absent */
  ck_assert_uint_lt(p->nrefs, 64);
  ck_assert_int_eq(sim_ref(p, in[5].c)->region, -1);
  /* VEC.fma acc, acc, s, v[0:1, 32:64] */
  check_ref(p, sim_ref(p, in[6].b), "wg3.s");
  check_ref(p, sim_ref(p, in[6].c), "wg3.v[0:1,32:64]");
  ck_assert(in[7].imm == 0.125f);
  ck_assert(in[8].imm == -1.5f);
  check_ref(p, sim_ref(p, in[8].d), "wg3.s");
  ck_assert_int_eq(in[9].op, OP_VRSUM);
  ck_assert_int_eq(in[10].op, OP_SEXP);
  /* RED s, s, ev.sum, 2 */
  ck_assert_int_eq(in[14].op, OP_RED);
  check_ref(p, sim_ref(p, in[14].d), "wg3.s");
  check_ref(p, sim_ref(p, in[14].a), "wg3.s");
  ck_assert_int_eq(in[14].event, 1);
  ck_assert_int_eq(in[14].n, 2);
  ck_assert_int_eq(in[15].event, 2);
  ck_assert_int_eq(in[16].event, 1);
  ck_assert_int_eq(in[17].op, OP_WAITT);
  ck_assert_int_eq(in[17].n, 0);
  ck_assert_int_eq(in[17].event, -1);
  /* texts: the trimmed source line, comment included */
  ck_assert_str_eq(sim_insn_text(p, &in[12]), "ST   sh[128], s         ; to SH");
  ck_assert_str_eq(sim_insn_text(p, &in[19]), "END");
  ck_assert_str_eq(sim_insn_text(p, &p->wgs[1].insns[0]), "END");
}
END_TEST

/* The op tables expand ops.def; rfref printing. */
START_TEST(test_tables) {
  ck_assert_str_eq(sim_op_mnemonic[OP_VADD], "VEC.add");
  ck_assert_str_eq(sim_op_mnemonic[OP_END], "END");
  ck_assert_int_eq(sim_op_unit[OP_SEXP], UNIT_SFU);
  ck_assert_int_eq(sim_op_unit[OP_WAIT], UNIT_NONE);
  ck_assert_int_eq(sim_op_form[OP_VFMA], F_FMA);
  ck_assert_int_eq(sim_op_form[OP_VRMAX], F_ROW);
  ck_assert_int_eq(sim_op_form[OP_LD], F_LD);
  g_autoptr(Program) p = parse_ok(valid);
  RfRef none = {.region = -1}, bad = {.region = 99, .rows = 1, .cols = 1};
  check_ref(p, &none, "-");
  check_ref(p, &bad, "-");
}
END_TEST

/* CRLF line ends, blank lines and comments everywhere, a text that is not
 * NUL-terminated at len (the parser copies it). */
START_TEST(test_valid_variants) {
  const char *crlf = ".machine ; hw\r\n\r\n.problem d1 ; pb\r\n.wg 0\r\n END ; done\r\n";
  g_autoptr(Program) p = parse_ok(crlf);
  ck_assert_int_eq(p->wgs[0].n, 1);
  ck_assert_str_eq(g_ptr_array_index(sim_program_texts(p), 0), "END ; done");
  const char *full = ".machine\n.problem d1\n.wg 0\n END\ngarbage";
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) q = sim_asm_parse("t.asm", full, strlen(full) - strlen("garbage"), &err);
  ck_assert_msg(q != NULL, "%s", err ? err->message : "");
  g_autofree char *sum =
      g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)full, strlen(full) - 7);
  ck_assert_str_eq(q->sha256, sum);
}
END_TEST

/* ------------------------------------------------------------ diagnostics */

#define HDR ".machine sh_kib=4 reduce=1\n.problem d1\n"
/* Lines 3-7; the first instruction is on line 8. */
#define WG1 HDR ".wg 1\n.rf x p0 4x32\n.rf y p1 4x32\n.rf r p2 4x1\n.rf big p4 64x32\n"

typedef struct ErrCase {
  const char *in, *err;
} ErrCase;

static const ErrCase err_cases[] = {
    /* syntax */
    {WG1 "VEC.add x, x, y @\n END\n",
     "t.asm:8:17: error: unexpected character '@'"},
    {WG1 "VEC.add x, x, y\xc3\xa9\n END\n",
     "t.asm:8:16: error: unexpected byte 0xc3"},
    {WG1 "VEC.add x, x y\n END\n",
     "t.asm:8:14: error: expected ',', got 'y'"},
    {WG1 "[ x\n END\n",
     "t.asm:8:1: error: expected instruction or directive, got '['"},
    {WG1 "VEC.add x[0:1, 0:2, x, y\n END\n",
     "t.asm:8:19: error: expected ']', got ','"},
    {WG1 "VEC.add x[0 1], x, y\n END\n",
     "t.asm:8:13: error: expected ':', got '1'"},
    {WG1 ".rf z p8 2x2 extra\n END\n",
     "t.asm:8:14: error: expected end of line, got 'extra'"},
    {HDR ".foo 1\n",
     "t.asm:3:1: error: unknown directive '.foo'"},
    {HDR ".wgg 1\n",
     "t.asm:3:1: error: unknown directive '.wgg'; did you mean '.wg'?"},
    {HDR ".wggg 1\n",
     "t.asm:3:1: error: unknown directive '.wggg'; did you mean '.wg'?"},
    {WG1 "WAITT 99999999999999999999\n END\n",
     "t.asm:8:7: error: integer out of range"},
    {HDR ".wg 99999999999999999999\n",
     "t.asm:3:5: error: integer out of range"},
    {WG1 "VEC.fill x, 1e999\n END\n",
     "t.asm:8:13: error: float out of range"},
    /* insn */
    {WG1 "VEC.ad x, x, y\n END\n",
     "t.asm:8:1: error: unknown instruction 'VEC.ad'; did you mean 'VEC.add'?"},
    {WG1 "vec.add x, x, y\n END\n",
     "t.asm:8:1: error: unknown instruction 'vec.add'; did you mean 'VEC.add'?"},
    {WG1 "mma x, x, y\n END\n",
     "t.asm:8:1: error: unknown instruction 'mma'; did you mean 'MMA'?"},
    {WG1 "FOO x\n END\n",
     "t.asm:8:1: error: unknown instruction 'FOO'"},
    {WG1 "VEC.adds x, x, y\n END\n",
     "t.asm:8:1: error: unknown instruction 'VEC.adds'; did you mean 'VEC.add'?"},
    /* did-you-mean reaches distance 2 (two insertions; two substitutions),
     * not 3 */
    {WG1 "SIGXX ev.a, 1\n END\n",
     "t.asm:8:1: error: unknown instruction 'SIGXX'; did you mean 'SIG'?"},
    {WG1 "VEC.fiXX x, 1.0\n END\n",
     "t.asm:8:1: error: unknown instruction 'VEC.fiXX'; did you mean 'VEC.fill'?"},
    {WG1 "SIGXXX ev.a, 1\n END\n",
     "t.asm:8:1: error: unknown instruction 'SIGXXX'"},
    {WG1 "VEC.fXXX x, 1.0\n END\n",
     "t.asm:8:1: error: unknown instruction 'VEC.fXXX'"},
    /* mod */
    {WG1 "VEC.add.z x, x, y\n END\n",
     "t.asm:8:8: error: unknown modifier '.z' for VEC.add (it takes none)"},
    {WG1 "MMA.x x, x, y\n END\n",
     "t.asm:8:4: error: unknown modifier '.x' for MMA (expected .z or .t)"},
    {WG1 "MMA.z.z x, x, y\n END\n",
     "t.asm:8:6: error: duplicate modifier '.z'"},
    {WG1 "LD.t x, hbm[0]\n END\n",
     "t.asm:8:3: error: unknown modifier '.t' for LD (expected .mc)"},
    {WG1 "END.now\n",
     "t.asm:8:4: error: unknown modifier '.now' for END (it takes none)"},
    /* operands */
    {WG1 "VEC.add x, x\n END\n",
     "t.asm:8:13: error: missing operand b (usage: VEC.add d, a, b)"},
    {WG1 "VEC.add x, x, y, y\n END\n",
     "t.asm:8:16: error: too many operands (usage: VEC.add d, a, b)"},
    {WG1 "VEC.add\n END\n",
     "t.asm:8:8: error: missing operand d (usage: VEC.add d, a, b)"},
    {WG1 "END x\n",
     "t.asm:8:5: error: too many operands (usage: END)"},
    {WG1 "VEC.add x, 1.5, y\n END\n",
     "t.asm:8:12: error: expected region, got '1.5'"},
    {WG1 "VEC.muli x, y, z\n END\n",
     "t.asm:8:16: error: expected immediate, got 'z'"},
    {WG1 "VEC.fill x\n END\n",
     "t.asm:8:11: error: missing operand IMM (usage: VEC.fill d, IMM)"},
    {WG1 "SIG ev.a\n END\n",
     "t.asm:8:9: error: missing operand N (usage: SIG ev.E, N)"},
    {WG1 "WAITT\n END\n",
     "t.asm:8:6: error: missing operand N (usage: WAITT N)"},
    {WG1 "LD x\n END\n",
     "t.asm:8:5: error: missing operand hbm[ADDR] (usage: LD d, hbm[ADDR]|sh[OFF] [, stride S])"},
    {WG1 "LD x, y\n END\n",
     "t.asm:8:7: error: expected hbm[ADDR] or sh[OFF], got 'y'"},
    {WG1 "LD x, hbm[0], 32\n END\n",
     "t.asm:8:15: error: expected 'stride', got '32'"},
    {WG1 "ST x, y\n END\n",
     "t.asm:8:4: error: expected hbm[ADDR], sh[OFF] or wgN.region, got 'x'"},
    {WG1 "RED x, y, ev.g\n END\n",
     "t.asm:8:15: error: missing operand N (usage: RED d, s, ev.G, N)"},
    {WG1 "LD x, wg1.y\n END\n",
     "t.asm:8:7: error: expected hbm[ADDR] or sh[OFF], got 'wg1.y'"},
    /* header */
    {"",
     "t.asm:1:1: error: expected .machine as the first directive, got end of file"},
    {"; only a comment\n\n",
     "t.asm:3:1: error: expected .machine as the first directive, got end of file"},
    {".problem d1\n.machine\n",
     "t.asm:1:1: error: expected .machine as the first directive, got '.problem'"},
    {".wg 0\n END\n",
     "t.asm:1:1: error: expected .machine as the first directive, got '.wg'"},
    {".machine\n.wg 0\n END\n",
     "t.asm:2:1: error: expected .problem after .machine, got '.wg'"},
    {".machine\n",
     "t.asm:2:1: error: expected .problem after .machine, got end of file"},
    {HDR ".machine\n",
     "t.asm:3:1: error: duplicate .machine (first at line 1)"},
    {HDR ".wg 0\n END\n.problem d1\n",
     "t.asm:5:1: error: duplicate .problem (first at line 2)"},
    /* machine */
    {".machine foo=1\n.problem d1\n",
     "t.asm:1:10: error: unknown machine parameter 'foo'"},
    {".machine sms=65\n.problem d1\n",
     "t.asm:1:10: error: sms=65 out of range 1..64 (streaming multiprocessors)"},
    {".machine rf_kib=48\n.problem d1\n",
     "t.asm:1:10: error: rf_kib=48 must be a power of two (register file per WG, KiB)"},
    {".machine sms=2 sms=4\n.problem d1\n",
     "t.asm:1:16: error: duplicate machine parameter 'sms'"},
    {".machine dma=2\n.problem d1\n",
     "t.asm:1:14: error: expected ENGINESxDEPTH, got '2'"},
    {".machine dma=9x1\n.problem d1\n",
     "t.asm:1:10: error: dma_engines=9 out of range 1..8 (DMA engines per SM)"},
    {".machine dma=2x0\n.problem d1\n",
     "t.asm:1:10: error: dma_depth=0 out of range 1..8 (descriptors in flight per engine)"},
    {".machine dma_engines=2\n.problem d1\n",
     "t.asm:1:10: error: unknown machine parameter 'dma_engines' (use dma=ENGINESxDEPTH)"},
    {".machine sms\n.problem d1\n",
     "t.asm:1:13: error: expected '=', got end of line"},
    {".machine sms=-1\n.problem d1\n",
     "t.asm:1:10: error: sms=-1 out of range 1..64 (streaming multiprocessors)"},
    {".machine sms=99999999999999999999\n.problem d1\n",
     "t.asm:1:14: error: integer out of range"},
    {".machine sms=1.5\n.problem d1\n",
     "t.asm:1:14: error: expected integer, got '1.5'"},
    /* problem */
    {".machine\n.problem\n",
     "t.asm:2:9: error: expected problem kind d1 or p1, got end of line"},
    {".machine\n.problem q1\n",
     "t.asm:2:10: error: unknown problem kind 'q1'; expected d1 or p1"},
    {".machine\n.problem d1 seqs=2\n",
     "t.asm:2:13: error: 'seqs' does not apply to d1"},
    {".machine\n.problem d1 d_model=100 heads=3\n",
     "t.asm:2:13: error: d_model=100 must be a multiple of 32"},
    {".machine\n.problem d1 heads=2\n",
     "t.asm:2:1: error: d_model=128 with heads=2: head_dim must be 32 (d_model = 32*heads)"},
    {".machine\n.problem p1 foo=2\n",
     "t.asm:2:13: error: unknown problem parameter 'foo'"},
    {".machine\n.problem d1 steps=1 steps=2\n",
     "t.asm:2:21: error: duplicate problem parameter 'steps'"},
    /* wg */
    {HDR ".wg 64\n",
     "t.asm:3:5: error: .wg 64 out of range 0..63 (sms*wgs_per_sm = 64)"},
    {".machine sms=2 wgs_per_sm=2\n.problem d1\n.wg 4\n",
     "t.asm:3:5: error: .wg 4 out of range 0..3 (sms*wgs_per_sm = 4)"},
    {HDR ".wg 1\n END\n.wg 1\n END\n",
     "t.asm:5:5: error: duplicate .wg 1 (first at line 3)"},
    {HDR ".wg\n",
     "t.asm:3:4: error: expected WG number, got end of line"},
    {HDR ".wg -1\n",
     "t.asm:3:5: error: expected WG number, got '-'"},
    /* outside */
    {HDR "WAITT 1\n",
     "t.asm:3:1: error: instruction 'WAITT' outside a .wg section"},
    {HDR ".rf x p0 1x1\n",
     "t.asm:3:1: error: .rf outside a .wg section"},
    /* end */
    {HDR ".wg 1\n",
     "t.asm:3:1: error: section of WG 1 does not end with END"},
    {HDR ".wg 1\nWAITT 1\n.wg 2\n END\n",
     "t.asm:4:1: error: section of WG 1 does not end with END"},
    {HDR ".wg 1\nWAITT 1 ; no END\n",
     "t.asm:4:1: error: section of WG 1 does not end with END"},
    {HDR "  .wg 1\n",
     "t.asm:3:3: error: section of WG 1 does not end with END"},
    /* after_end */
    {HDR ".wg 1\n END\nWAITT 1\n",
     "t.asm:5:1: error: instruction after END in the section of WG 1"},
    /* redecl */
    {WG1 ".rf x p8 1x1\n END\n",
     "t.asm:8:5: error: region 'x' redeclared in WG 1 (first declared at line 4)"},
    /* rf */
    {WG1 ".rf z p16 4x32\n END\n",
     "t.asm:8:7: error: partition 'p16' out of range p0..p15"},
    {WG1 ".rf z q3 4x32\n END\n",
     "t.asm:8:7: error: expected partition pN, got 'q3'"},
    {WG1 ".rf z.w p3 4x32\n END\n",
     "t.asm:8:5: error: region name 'z.w' must not contain '.'"},
    {WG1 ".rf hbm p3 4x32\n END\n",
     "t.asm:8:5: error: region name 'hbm' is reserved"},
    {WG1 ".rf z p3 32\n END\n",
     "t.asm:8:10: error: expected shape RxC, got '32'"},
    {WG1 ".rf z p3 0x32\n END\n",
     "t.asm:8:5: error: region 'z' has no elements (0x32)"},
    {WG1 ".rf z p3 99999999999x1\n END\n",
     "t.asm:8:10: error: integer out of range"},
    {WG1 ".rf z p3+\n END\n",
     "t.asm:8:10: error: expected offset, got end of line"},
    /* partition */
    {WG1 ".rf z p14+4000 4x32\n END\n",
     "t.asm:8:5: error: region 'z' (bytes 61344..61855) straddles partitions p14..p15: a region "
     "must lie inside one partition or start at a partition boundary and cover whole partitions"},
    {WG1 ".rf z p3 33x32\n END\n",
     "t.asm:8:5: error: region 'z' (bytes 12288..16511) straddles partitions p3..p4: a region "
     "must lie inside one partition or start at a partition boundary and cover whole partitions"},
    {WG1 ".rf z p3+4 64x32\n END\n",
     "t.asm:8:5: error: region 'z' (bytes 12292..20483) straddles partitions p3..p5: a region "
     "must lie inside one partition or start at a partition boundary and cover whole partitions"},
    {WG1 ".rf z p8+4096 1x1\n END\n",
     "t.asm:8:5: error: region 'z': offset +4096 is outside partition p8 (4096 bytes)"},
    /* overflow */
    {WG1 ".rf z p15 64x32\n END\n",
     "t.asm:8:5: error: RF overflow: region 'z' (bytes 61440..69631) runs past the last "
     "partition p15 (the RF has 65536 bytes)"},
    {WG1 ".rf z p15+4092 1x2\n END\n",
     "t.asm:8:5: error: RF overflow: region 'z' (bytes 65532..65539) runs past the last "
     "partition p15 (the RF has 65536 bytes)"},
    {WG1 ".rf z p0 513x32\n END\n",
     "t.asm:8:5: error: RF overflow: region 'z' (bytes 0..65663) runs past the last partition "
     "p15 (the RF has 65536 bytes)"},
    {WG1 ".rf z p0 2147483647x2147483647\n END\n",
     "t.asm:8:5: error: RF overflow: region 'z' (bytes 0..18446744056529682435) runs past the "
     "last partition p15 (the RF has 65536 bytes)"},
    {WG1 ".rf z p15+9223372036854775804 1x1\n END\n",
     "t.asm:8:5: error: region 'z': offset +9223372036854775804 is outside partition p15 (4096 "
     "bytes)"},
    /* offset */
    {WG1 ".rf z p8+6 1x1\n END\n",
     "t.asm:8:5: error: region 'z': offset +6 is not a multiple of 4"},
    /* unknown_region */
    {WG1 "VEC.add xx, x, y\n END\n",
     "t.asm:8:9: error: unknown region 'xx' in WG 1; did you mean 'x'?"},
    {WG1 "VEC.add x, x, q\n END\n",
     "t.asm:8:15: error: unknown region 'q' in WG 1; did you mean 'x'?"},
    {WG1 "VEC.add xxx, x, y\n END\n",
     "t.asm:8:9: error: unknown region 'xxx' in WG 1; did you mean 'x'?"},
    {WG1 "VEC.add a.b, x, y\n END\n",
     "t.asm:8:9: error: unknown region 'a.b' in WG 1"},
    /* window */
    {WG1 "VEC.add x[0:5], x, y\n END\n",
     "t.asm:8:9: error: window [0:5,0:32] of region 'x' (4x32) is out of bounds"},
    {WG1 "VEC.add x[:, 30:33], x, y\n END\n",
     "t.asm:8:9: error: window [0:4,30:33] of region 'x' (4x32) is out of bounds"},
    {WG1 "VEC.add x[2:2], x, y\n END\n",
     "t.asm:8:9: error: window [2:2,0:32] of region 'x' (4x32) is empty"},
    {WG1 "VEC.add x[3:1, :], x, y\n END\n",
     "t.asm:8:9: error: window [3:1,0:32] of region 'x' (4x32) is empty"},
    /* shape */
    {WG1 "MMA big, x, y\n END\n",
     "t.asm:8:5: error: shape mismatch: c wg1.big is 64x32 but a wg1.x is 4x32 (c must have as "
     "many rows as a)"},
    {WG1 "MMA x, x, big\n END\n",
     "t.asm:8:11: error: shape mismatch: b wg1.big is 64x32 but a wg1.x is 4x32 (b must have as "
     "many rows as a has cols)"},
    {WG1 "MMA.t x, x, big\n END\n",
     "t.asm:8:7: error: shape mismatch: c wg1.x is 4x32 but b wg1.big is 64x32 (with .t, c must "
     "have as many cols as b has rows)"},
    {WG1 "MMA.z x, x, big[0:32, 0:16]\n END\n",
     "t.asm:8:7: error: shape mismatch: c wg1.x is 4x32 but b wg1.big[0:32,0:16] is 32x16 (c "
     "must have as many cols as b)"},
    {WG1 "MMA.z.t x, x, big[0:16, 0:16]\n END\n",
     "t.asm:8:15: error: shape mismatch: b wg1.big[0:16,0:16] is 16x16 but a wg1.x is 4x32 "
     "(with .t, b must have as many cols as a)"},
    {WG1 "VEC.add x, x, big\n END\n",
     "t.asm:8:15: error: shape mismatch: b wg1.big is 64x32 but a wg1.x is 4x32 (b must be "
     "4x32, 1x32, 4x1 or 1x1)"},
    {WG1 "VEC.add x, x, y[0:2, :]\n END\n",
     "t.asm:8:15: error: shape mismatch: b wg1.y[0:2,0:32] is 2x32 but a wg1.x is 4x32 (b must "
     "be 4x32, 1x32, 4x1 or 1x1)"},
    {WG1 "VEC.add x[0:1], x, y\n END\n",
     "t.asm:8:9: error: shape mismatch: d wg1.x[0:1,0:32] is 1x32 but a wg1.x is 4x32 (d must "
     "have the shape of a)"},
    {WG1 "VEC.fma x, x, y, big\n END\n",
     "t.asm:8:18: error: shape mismatch: c wg1.big is 64x32 but a wg1.x is 4x32 (c must be "
     "4x32, 1x32, 4x1 or 1x1)"},
    {WG1 "VEC.muli x, big, 2\n END\n",
     "t.asm:8:10: error: shape mismatch: d wg1.x is 4x32 but a wg1.big is 64x32 (d must have "
     "the shape of a)"},
    {WG1 "SFU.exp x[:, 0:16], y\n END\n",
     "t.asm:8:9: error: shape mismatch: d wg1.x[0:4,0:16] is 4x16 but a wg1.y is 4x32 (d must "
     "have the shape of a)"},
    {WG1 "VEC.rsum x, y\n END\n",
     "t.asm:8:10: error: shape mismatch: d wg1.x is 4x32 but a wg1.y is 4x32 (d must be 4x1)"},
    {WG1 "VEC.rmax r[0:2], y\n END\n",
     "t.asm:8:10: error: shape mismatch: d wg1.r[0:2,0:1] is 2x1 but a wg1.y is 4x32 (d must be "
     "4x1)"},
    {WG1 "RED x, r, ev.g, 2\n END\n",
     "t.asm:8:5: error: shape mismatch: d wg1.x is 4x32 but s wg1.r is 4x1 (d must have the "
     "shape of s)"},
    /* abi */
    {WG1 "LD x, hbm[x_inn]\n END\n",
     "t.asm:8:11: error: unknown ABI symbol 'x_inn'; did you mean 'x_in'?"},
    {WG1 "LD x, hbm[w1.l9]\n END\n",
     "t.asm:8:11: error: unknown ABI symbol 'w1.l9'; did you mean 'w1.l0'?"},
    {WG1 "LD x, hbm[x_inxx]\n END\n",
     "t.asm:8:11: error: unknown ABI symbol 'x_inxx'; did you mean 'x_in'?"},
    {WG1 "LD x, hbm[sxratcx]\n END\n",
     "t.asm:8:11: error: unknown ABI symbol 'sxratcx'; did you mean 'scratch'?"},
    {WG1 "LD x, hbm[zzz]\n END\n",
     "t.asm:8:11: error: unknown ABI symbol 'zzz'"},
    /* align */
    {WG1 "LD x, hbm[x_in + 2]\n END\n",
     "t.asm:8:7: error: HBM address 2 is not a multiple of 4"},
    {WG1 "LD x, hbm[6]\n END\n",
     "t.asm:8:7: error: HBM address 6 is not a multiple of 4"},
    {WG1 "LD x, sh[6]\n END\n",
     "t.asm:8:7: error: SH offset 6 is not a multiple of 4"},
    /* oob */
    {WG1 "LD x, hbm[x_in - 4]\n END\n",
     "t.asm:8:11: error: out of bounds: HBM address x_in - 4 is negative"},
    {WG1 "LD x, hbm[scratch + 8388600]\n END\n",
     "t.asm:8:7: error: out of bounds: transfer touches HBM bytes 10313720..10314231 but HBM "
     "has 10313728 bytes"},
    {WG1 "LD big, hbm[scratch + 8388608], stride 1\n END\n",
     "t.asm:8:40: error: stride 1 is smaller than the window's 32 cols"},
    {WG1 "ST hbm[99999999999996], x\n END\n",
     "t.asm:8:4: error: out of bounds: transfer touches HBM bytes "
     "99999999999996..100000000000507 but HBM has 10313728 bytes"},
    {WG1 "LD x, sh[4096]\n END\n",
     "t.asm:8:7: error: out of bounds: transfer touches SH bytes 4096..4607 but SH has 4096 bytes"},
    {WG1 "ST sh[0], big, stride 64\n END\n",
     "t.asm:8:4: error: out of bounds: transfer touches SH bytes 0..16255 but SH has 4096 bytes"},
    /* weights */
    {WG1 "ST hbm[w1.l0], x\n END\n",
     "t.asm:8:4: error: out of bounds: write into read-only weights 'w1.l0' (HBM bytes "
     "290816..291327)"},
    {WG1 "ST hbm[b1.l0 - 128], x[0:1, :]\n END\n",
     "t.asm:8:4: error: out of bounds: write into read-only weights 'w1.l0' (HBM bytes "
     "552832..552959)"},
    {WG1 "ST hbm[ln1_g.l0 + 512], x[0:2, :], stride 1023\n END\n",
     "t.asm:8:4: error: out of bounds: write into read-only weights 'ln1_b.l0' (HBM bytes "
     "4608..8827)"},
    /* no_sh */
    {".machine\n.problem d1\n.wg 0\n.rf x p0 1x4\nLD x, sh[0]\n END\n",
     "t.asm:5:7: error: no SH on this machine (sh_kib=0)"},
    /* stride */
    {WG1 "LD x, hbm[0], stride 16\n END\n",
     "t.asm:8:22: error: stride 16 is smaller than the window's 32 cols"},
    {WG1 "ST hbm[scratch], x, stride 99999999999\n END\n",
     "t.asm:8:28: error: integer out of range"},
    {WG1 "LD x, hbm[0], stride\n END\n",
     "t.asm:8:21: error: expected stride, got end of line"},
    /* mc */
    {".machine multicast=0\n.problem d1\n.wg 0\n.rf x p0 1x4\nLD.mc x, hbm[0], {1}\n END\n",
     "t.asm:5:1: error: LD.mc needs multicast=1 (this machine has multicast=0)"},
    {WG1 "LD.mc x, hbm[0], {}\n END\n",
     "t.asm:8:18: error: LD.mc target list is empty"},
    {WG1 "LD.mc x, hbm[0]\n END\n",
     "t.asm:8:16: error: missing operand {WG, ...} (usage: LD.mc d, hbm[ADDR] [, stride S], "
     "{WG, ...})"},
    {WG1 "LD.mc x, hbm[0], stride 32\n END\n",
     "t.asm:8:27: error: missing operand {WG, ...} (usage: LD.mc d, hbm[ADDR] [, stride S], "
     "{WG, ...})"},
    {WG1 "LD.mc x, hbm[0], 5\n END\n",
     "t.asm:8:18: error: expected 'stride' or {WG, ...}, got '5'"},
    {WG1 "LD.mc x, hbm[0], {1, 64}\n END\n",
     "t.asm:8:22: error: target WG 64 out of range 0..63"},
    {WG1 "LD.mc x, hbm[0], {1 2}\n END\n",
     "t.asm:8:21: error: expected ',' or '}', got '2'"},
    {WG1 "LD.mc x, sh[0], {1}\n END\n",
     "t.asm:8:10: error: LD.mc reads from HBM only"},
    {WG1 "LD x, hbm[0], {1}\n END\n",
     "t.asm:8:15: error: a target list needs LD.mc"},
    {WG1 "LD x, hbm[0], stride 32, {1}\n END\n",
     "t.asm:8:26: error: a target list needs LD.mc"},
    {WG1 "LD.mc x, hbm[0], {1, 2}\n END\n.wg 2\n END\n",
     "t.asm:8:7: error: unknown region 'x' in WG 2"},
    {WG1 "LD.mc x, hbm[0], {2, 1}\n END\n.wg 2\n.rf x p0 4x16\n END\n",
     "t.asm:8:7: error: shape mismatch: target wg2.x is 4x16 but d wg1.x is 4x32 (every LD.mc "
     "target must declare the region with the same shape)"},
    {HDR ".wg 1\nLD.mc z, hbm[scratch + 8388600], {2}\n END\n.wg 2\n.rf z p0 4x32\n END\n",
     "t.asm:4:10: error: out of bounds: transfer touches HBM bytes 10313720..10314231 but HBM "
     "has 10313728 bytes"},
    {HDR ".wg 1\nLD.mc z[0:8], hbm[0], {2}\n END\n.wg 2\n.rf z p0 4x32\n END\n",
     "t.asm:4:7: error: window [0:8,0:32] of region 'z' (4x32) is out of bounds"},
    {HDR ".wg 1\nLD.mc z, hbm[0], {3, 2}\n END\n.wg 2\n.rf z p0 4x32\n END\n.wg 3\n.rf zz p0 "
     "4x32\n END\n",
     "t.asm:4:7: error: unknown region 'z' in WG 3; did you mean 'zz'?"},
    /* red */
    {".machine\n.problem d1\n.wg 0\n.rf x p0 1x4\nRED x, x, ev.g, 1\n END\n",
     "t.asm:5:1: error: RED needs reduce units (this machine has reduce=0)"},
    {WG1 "RED x, y, ev.g, 0\n END\n",
     "t.asm:8:17: error: RED contributor count must be 1..64, got 0"},
    {WG1 "RED x, y, ev.g, 65\n END\n",
     "t.asm:8:17: error: RED contributor count must be 1..64, got 65"},
    {WG1 "RED x, y, ev.in, 2\n END\n",
     "t.asm:8:11: error: RED may not signal ev.in (it belongs to the host)"},
    /* sig_in */
    {WG1 "SIG ev.in, 1\n END\n",
     "t.asm:8:5: error: SIG ev.in is not allowed: ev.in belongs to the host"},
    /* event */
    {WG1 "SIG ev, 1\n END\n",
     "t.asm:8:5: error: bad event 'ev': events are written ev.NAME"},
    {WG1 "SIG ev., 1\n END\n",
     "t.asm:8:5: error: bad event 'ev.': events are written ev.NAME"},
    {WG1 "WAIT in, 1\n END\n",
     "t.asm:8:6: error: bad event 'in': events are written ev.NAME"},
    {WG1 "WAIT ev.a.b, 1\n END\n",
     "t.asm:8:6: error: bad event 'ev.a.b': events are written ev.NAME"},
    {WG1 "WAIT ev.1a, 1\n END\n",
     "t.asm:8:6: error: bad event 'ev.1a': events are written ev.NAME"},
    {WG1 "WAIT 3, 1\n END\n",
     "t.asm:8:6: error: expected event ev.NAME, got '3'"},
    /* count */
    {WG1 "SIG ev.a, 0\n END\n",
     "t.asm:8:11: error: SIG count must be >= 1, got 0"},
    {WG1 "WAIT ev.a, -1\n END\n",
     "t.asm:8:12: error: WAIT count must be >= 0, got -1"},
    {WG1 "WAITT -5\n END\n",
     "t.asm:8:7: error: WAITT cycles must be >= 0, got -5"},
    /* remote */
    {WG1 "ST wg64.x, x\n END\n",
     "t.asm:8:4: error: 'wg64.x': target WG 64 out of range 0..63"},
    {WG1 "ST wg99999999999999999999.x, x\n END\n",
     "t.asm:8:4: error: 'wg99999999999999999999.x': target WG out of range 0..63"},
    {WG1 "ST wg2.x, x\n END\n",
     "t.asm:8:4: error: unknown region 'x' in WG 2"},
    {WG1 "ST wg2.x, x\n END\n.wg 2\n.rf xx p0 4x32\n END\n",
     "t.asm:8:4: error: unknown region 'x' in WG 2; did you mean 'xx'?"},
    {WG1 "ST wg2.x, x\n END\n.wg 2\n.rf x p0 4x16\n END\n",
     "t.asm:8:4: error: shape mismatch: destination wg2.x is 4x16 but a wg1.x is 4x32 (the "
     "destination must have the shape of a)"},
    {WG1 "ST wg2.x[0:8], x\n END\n.wg 2\n.rf x p0 4x32\n END\n",
     "t.asm:8:4: error: window [0:8,0:32] of region 'x' (4x32) is out of bounds"},
    {WG1 "ST wg2.x, x, stride 32\n END\n.wg 2\n.rf x p0 4x32\n END\n",
     "t.asm:8:12: error: too many operands (usage: ST hbm[ADDR]|sh[OFF]|wgN.d, a [, stride S])"},
    {WG1 "VEC.copy wg2.x, x\n END\n",
     "t.asm:8:10: error: 'wg2.x': another WG's region is only allowed as the destination of ST"},
    {WG1 "ST wg.x, x\n END\n",
     "t.asm:8:4: error: expected hbm[ADDR], sh[OFF] or wgN.region, got 'wg.x'"},
};

static char *error_of(const char *text, size_t len) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_parse("t.asm", text, len, &err);
  if (p) return g_strdup("(no error)");
  ck_assert_msg(err->domain == SIM_ASM_ERROR, "error domain for:\n%s", text);
  ck_assert_msg(strchr(err->message, '\n') == NULL, "not one line: %s", err->message);
  return g_strdup(err->message);
}

START_TEST(test_errors) {
  const ErrCase *c = &err_cases[_i];
  g_autofree char *got = error_of(c->in, strlen(c->in));
  ck_assert_msg(strcmp(got, c->err) == 0, "input:\n%s\nexpected: %s\n     got: %s", c->in, c->err,
                got);
}
END_TEST

/* NUL bytes, very long lines, deep junk: one error, no crash. */
START_TEST(test_errors_hostile) {
  static const char nul1[] = WG1 "END ;x\0y\n", nul2[] = WG1 "END\0";
  g_autofree char *e1 = error_of(nul1, sizeof nul1 - 1), *e2 = error_of(nul2, sizeof nul2 - 1);
  ck_assert_str_eq(e1, "t.asm:8:7: error: NUL byte in input");
  ck_assert_str_eq(e2, "t.asm:8:4: error: NUL byte in input");

  GString *s = g_string_new(WG1 "VEC.add x, x, ");
  for (int i = 0; i < 1000000; i++) g_string_append_c(s, 'y');
  g_autofree char *e3 = error_of(s->str, s->len);
  ck_assert_str_eq(e3, "t.asm:8:15: error: unknown region "
                       "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...' in WG 1");
  g_string_assign(s, WG1 "WAITT ");
  for (int i = 0; i < 100000; i++) g_string_append_c(s, '9');
  g_autofree char *e4 = error_of(s->str, s->len);
  ck_assert_str_eq(e4, "t.asm:8:7: error: integer out of range");
  g_string_assign(s, ".machine ");
  for (int i = 0; i < 100000; i++) g_string_append_c(s, 'k');
  g_string_append(s, "=1\n.problem d1\n");
  g_autofree char *e6 = error_of(s->str, s->len);
  ck_assert_str_eq(e6, "t.asm:1:10: error: unknown machine parameter "
                       "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...'");
  g_string_assign(s, HDR);
  for (int i = 0; i < 100000; i++) g_string_append(s, "[[,,]]");
  g_autofree char *e5 = error_of(s->str, s->len);
  ck_assert_str_eq(e5, "t.asm:3:1: error: expected instruction or directive, got '['");
  g_string_free(s, TRUE);
}
END_TEST

/* Every prefix of a valid program is either valid or one clean error. */
START_TEST(test_errors_prefixes) {
  size_t n = strlen(valid);
  for (size_t len = 0; len <= n; len += 7) {
    g_autofree char *text = g_strndup(valid, len);
    g_autoptr(GError) err = NULL;
    g_autoptr(Program) p = sim_asm_parse("t.asm", text, len, &err);
    ck_assert_msg(p != NULL || (err && g_str_has_prefix(err->message, "t.asm:")),
                  "prefix %zu", len);
  }
}
END_TEST

/* --------------------------------------------- fast path, hash, floats */

static void same_ref(const RfRef *x, const RfRef *y) {
  ck_assert(x->region == y->region && x->r0 == y->r0 && x->rows == y->rows &&
            x->c0 == y->c0 && x->cols == y->cols);
}

static void same_insn(const Program *p, const Insn *x, const Program *q, const Insn *y) {
  ck_assert_int_eq(x->op, y->op);
  ck_assert_int_eq(x->mods, y->mods);
  ck_assert_int_eq(x->line, y->line);
  ck_assert_int_eq(x->col, y->col);
  ck_assert_str_eq(sim_insn_text(p, x), sim_insn_text(q, y));
  ck_assert(memcmp(&x->imm, &y->imm, sizeof x->imm) == 0);
  ck_assert_int_eq(x->event, y->event);
  ck_assert_int_eq(x->n, y->n);
  same_ref(sim_ref(p, x->d), sim_ref(q, y->d));
  same_ref(sim_ref(p, x->a), sim_ref(q, y->a));
  same_ref(sim_ref(p, x->b), sim_ref(q, y->b));
  same_ref(sim_ref(p, x->c), sim_ref(q, y->c));
  ck_assert(x->space == y->space && x->addr == y->addr && x->stride == y->stride);
  same_ref(sim_ref(p, x->dst), sim_ref(q, y->dst));
  ck_assert_int_eq(sim_insn_ntargets(x), sim_insn_ntargets(y));
  for (int i = 0; i < sim_insn_ntargets(x); i++)
    ck_assert(x->targets[i] == y->targets[i] && sim_insn_tregion(x, i) == sim_insn_tregion(y, i));
}

/* Two parses of one text: the same error, or the same program. */
static void same_program(const char *text, const Program *p, const GError *e1, const Program *q,
                         const GError *e2) {
  ck_assert_msg(!p == !q, "%s\nfirst: %s\nsecond: %s", text, e1 ? e1->message : "ok",
                e2 ? e2->message : "ok");
  if (!p) {
    ck_assert_str_eq(e1->message, e2->message);
    return;
  }
  ck_assert_str_eq(p->sha256, q->sha256);
  ck_assert_int_eq(sim_program_texts(p)->len, sim_program_texts(q)->len);
  ck_assert_int_eq(p->regions->len, q->regions->len);
  ck_assert_int_eq(p->events->len, q->events->len);
  ck_assert_int_eq(p->nwgs, q->nwgs);
  for (int w = 0; w < p->nwgs; w++) {
    ck_assert_int_eq(p->wgs[w].n, q->wgs[w].n);
    ck_assert_int_eq(p->wgs[w].line, q->wgs[w].line);
    for (int i = 0; i < p->wgs[w].n; i++)
      same_insn(p, &p->wgs[w].insns[i], q, &q->wgs[w].insns[i]);
  }
}

/* The shortcut for common lines (sim_asm_fast_path) against the general
 * parser, and sim_asm_parse_take (tcc-grade's: the text given away)
 * against sim_asm_parse: the same error, or the same program. */
static void same_both_ways(const char *text, size_t len) {
  g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;
  g_autoptr(Program) p = sim_asm_parse("t.asm", text, len, &e1);
  sim_asm_fast_path = FALSE;
  g_autoptr(Program) q = sim_asm_parse("t.asm", text, len, &e2);
  sim_asm_fast_path = TRUE;
  same_program(text, p, e1, q, e2);
  g_autoptr(Program) r = sim_asm_parse_take("t.asm", g_memdup2(text, len), len, &e3);
  same_program(text, p, e1, r, e3);
}

START_TEST(test_fast_path_files) {
  same_both_ways(valid, strlen(valid));
  static const char *const files[] = {"tests/asm/tiny_d1.asm", "tests/asm/tiny_p1.asm"};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *path = g_build_filename(TCC_TOP, files[i], NULL), *text = NULL;
    gsize len;
    ck_assert(g_file_get_contents(path, &text, &len, NULL));
    same_both_ways(text, len);
  }
}
END_TEST

/* Lines built from pieces: half from valid instructions with random
 * spacing, tails and now and then a wrong piece, half from random pieces;
 * in the middle of a section and as the last line of the file. */
START_TEST(test_fast_path_lines) {
  static const struct {
    const char *mn, *ops[4];
    gboolean imm;
  } tpl[] = {
      {"VEC.add", {"x", "y", "r"}, 0},      {"VEC.sub", {"x", "x", "c1"}, 0},
      {"VEC.mul", {"x", "y", "s"}, 0},      {"VEC.max", {"big", "big", "big"}, 0},
      {"VEC.min", {"y", "x", "y"}, 0},      {"VEC.fma", {"x", "y", "r", "c1"}, 0},
      {"VEC.fma", {"sq", "sq", "sq2", "s"}, 0}, {"VEC.muli", {"x", "y"}, 1},
      {"VEC.addi", {"big", "big"}, 1},      {"VEC.copy", {"x", "y"}, 0},
      {"VEC.fill", {"x"}, 1},               {"VEC.fill", {"s"}, 1},
      {"VEC.rsum", {"r", "x"}, 0},          {"VEC.rmax", {"r", "y"}, 0},
      {"SFU.exp", {"x", "y"}, 0},           {"SFU.tanh", {"big", "big"}, 0},
      {"SFU.rsqrt", {"s", "s"}, 0},         {"SFU.recip", {"c1", "c1"}, 0},
      {"MMA", {"sq", "sq", "sq2"}, 0},      {"MMA", {"x", "x", "sq"}, 0},
      {"MMA.z", {"sq", "sq2", "sq"}, 0},    {"MMA.t", {"sq", "sq", "sq2"}, 0},
      {"END", {NULL}, 0},                   {"VEC.add", {"x[0:2, :]", "y[2:4, :]", "r[0:2,:]"}, 0},
      {"VEC.add", {"x", "y", "y"}, 0},      {"VEC.rmax", {"c1", "x"}, 0},
  };
  static const char *const mn[] = {
      "VEC.add", "VEC.sub", "VEC.mul", "VEC.max",   "VEC.min",   "VEC.fma",   "VEC.muli",
      "VEC.addi", "VEC.copy", "VEC.fill", "VEC.rsum", "VEC.rmax", "SFU.exp",  "SFU.tanh",
      "SFU.rsqrt", "SFU.recip", "MMA",    "MMA.z",    "MMA.t",     "END",       "RED",
      "SIG",      "LD",       "ST",       "WAITT",    "VEC.add.z", "vec.add",   "VEC.ad",
      "FOO",      "VEC",      "END.x",    "MMA.z.t",  "_x"};
  static const char *const opnd[] = {
      "x",  "y",     "r",    "c1",        "s",         "big",   "sq",  "sq2", "zz",
      "x[0:1, :]", "x[:,0:1]", "wg1.x", "wg9.x", "x.y", "_", "1", "hbm", "X", "ev.a", "s1x"};
  static const char *const imm[] = {
      "0.5",  "-1.5",   "- 2",     "1e5",     "1e",     "1e+",    ".5",      "1.",
      "3.4e38", "3.5e38", "-3.5e38", "1e39",   "12x3",   "0x10",   "1.5.2",   "00012",
      "1e-50", "123456789012345678901234", "9007199254740993", "0", "-0", ".", "-", "e5",
      "1E+3", "4.9e-324", "1e-45", "7.006e-46", "2.5E-3x", "0.1", "1e22", "1e23", "x", "-.5e-3"};
  static const char *const sep[] = {", ", ",", " , ", "\t,\t", ",  ", " ,", ",\r", ",,", ", ,", " "};
  static const char *const lead[] = {" ", "\t", "", "  ", "\r", "\v "};
  static const char *const tail[] = {"",   " ",   " ; c", ";c",   "\r", " \t\r", "\f ;x", " ;,",
                                     " x", ",",   " ;\x01", "]",  "\v", ";"};
#define PICK(a) a[g_rand_int_range(rnd, 0, G_N_ELEMENTS(a))]
#define PICK_OK(a, nok) a[g_rand_int_range(rnd, 0, g_rand_int_range(rnd, 0, 10) ? (nok) : G_N_ELEMENTS(a))]
  GRand *rnd = g_rand_new_with_seed(12345);
  for (int k = 0; k < 6000; k++) {
    GString *g = g_string_new(HDR ".wg 1\n.rf x p0 4x32\n.rf y p1 4x32\n.rf r p2 4x1\n"
                                  ".rf c1 p3 1x32\n.rf s p3+128 1x1\n.rf big p4 64x32\n"
                                  ".rf sq p8 32x32\n.rf sq2 p10 32x32\n");
    if (k % 2 == 0) {
      int t = g_rand_int_range(rnd, 0, G_N_ELEMENTS(tpl));
      g_string_append_printf(g, "%s%s", PICK_OK(lead, 4), tpl[t].mn);
      for (int i = 0; i < 4 && tpl[t].ops[i]; i++)
        g_string_append_printf(g, "%s%s", i ? PICK_OK(sep, 7) : PICK_OK(lead, 4),
                               g_rand_int_range(rnd, 0, 20) ? tpl[t].ops[i] : PICK(opnd));
      if (tpl[t].imm) g_string_append_printf(g, "%s%s", PICK_OK(sep, 7), PICK(imm));
      g_string_append(g, PICK_OK(tail, 8));
    } else {
      g_string_append_printf(g, "%s%s", PICK(lead), PICK(mn));
      int nops = g_rand_int_range(rnd, 0, 6);
      for (int i = 0; i < nops; i++)
        g_string_append_printf(g, "%s%s", i ? PICK(sep) : PICK(lead), PICK(opnd));
      if (g_rand_boolean(rnd)) g_string_append_printf(g, "%s%s", PICK(sep), PICK(imm));
      g_string_append(g, PICK(tail));
    }
    if (k % 13 == 0) g_string_append_c(g, '\0'); /* a NUL in the line, or the comment */
    if (k % 5 == 0) same_both_ways(g->str, g->len); /* the last line */
    g_string_append(g, "\n END\n");
    same_both_ways(g->str, g->len);
    g_string_free(g, TRUE);
  }
  g_rand_free(rnd);
#undef PICK
#undef PICK_OK
}
END_TEST

/* Immediates are g_ascii_strtod's value rounded to float, however they are
 * read. */
START_TEST(test_imm_values) {
  GRand *rnd = g_rand_new_with_seed(99);
  for (int k = 0; k < 4000; k++) {
    char lit[80];
    int nd = g_rand_int_range(rnd, 1, k % 3 ? 10 : 26), pos = 0, dot = g_rand_int_range(rnd, -1, nd);
    if (dot == -1 && k % 2) lit[pos++] = '.';
    for (int i = 0; i < nd; i++) {
      lit[pos++] = (char)('0' + g_rand_int_range(rnd, 0, 10));
      if (i == dot) lit[pos++] = '.';
    }
    if (k % 4) pos += g_snprintf(lit + pos, sizeof lit - pos, "e%d", g_rand_int_range(rnd, -60, 50));
    lit[pos] = '\0';
    g_autofree char *text = g_strdup_printf(WG1 "VEC.fill x, %s%s\n END\n", k % 2 ? "-" : "", lit);
    g_autoptr(GError) err = NULL;
    g_autoptr(Program) p = sim_asm_parse("t.asm", text, strlen(text), &err);
    double v = g_ascii_strtod(lit, NULL);
    float want = (float)(k % 2 ? -v : v);
    if (!isfinite(want)) {
      ck_assert_msg(p == NULL, "%s", lit);
      continue;
    }
    ck_assert_msg(p != NULL, "%s: %s", lit, err ? err->message : "");
    float got = p->wgs[1].insns[0].imm;
    ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s: %a != %a", lit, got, want);
  }
  g_rand_free(rnd);
}
END_TEST

/* RfRef's 16-bit r0/c0 and int rows/cols hold the extremes of the largest
 * RF: a 65536x1 and a 1x65536 region. */
START_TEST(test_rfref_extremes) {
  g_autoptr(Program) p = parse_ok(".machine rf_kib=256 vl=4\n.problem d1\n.wg 0\n"
                                  ".rf col p0 65536x1\n"
                                  "VEC.copy col[65535:65536, :], col[0:1, :]\n"
                                  "VEC.copy col, col\nEND\n"
                                  ".wg 1\n.rf row p0 1x65536\n"
                                  "VEC.copy row[:, 65535:65536], row[:, 0:1]\n"
                                  "END\n.wg 2\nEND");
  const Insn *in = p->wgs[0].insns;
  ck_assert_int_eq(sim_ref(p, in[0].d)->r0, 65535);
  ck_assert_int_eq(sim_ref(p, in[0].d)->rows, 1);
  ck_assert_int_eq(sim_ref(p, in[1].d)->rows, 65536);
  ck_assert_int_eq(sim_ref(p, in[1].d)->cols, 1);
  in = p->wgs[1].insns;
  ck_assert_int_eq(sim_ref(p, in[0].d)->c0, 65535);
  ck_assert_int_eq(sim_ref(p, in[0].a)->cols, 1);
}
END_TEST

/* The program hash is SHA-256 of the text, for every length of the last
 * block; hashed in line (the default for small texts) and on the hashing
 * thread (sim_asm_hash_thread_min 0), also when the parse fails while the
 * thread runs (joined before the text is freed: ASan's build checks). */
START_TEST(test_sha256) {
  size_t min = sim_asm_hash_thread_min;
  for (int threaded = 0; threaded < 2; threaded++) {
    sim_asm_hash_thread_min = threaded ? 0 : min;
    GString *g = g_string_new(valid);
    g_string_append(g, "\n;");
    for (int k = 0; k < 140; k++) {
      g_autoptr(Program) p = parse_ok(g->str);
      g_autofree char *want =
          g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)g->str, g->len);
      ck_assert_msg(strcmp(p->sha256, want) == 0, "threaded %d, length %zu: %s, want %s", threaded,
                    g->len, p->sha256, want);
      g_string_append_c(g, (char)('a' + k % 26));
    }
    g_string_free(g, TRUE);
    g_autoptr(GError) err = NULL;
    const char *bad = ".machine\n.problem d1\n.wg 0\n NOP\n";
    ck_assert_ptr_null(sim_asm_parse("t.asm", bad, strlen(bad), &err));
    ck_assert_ptr_nonnull(err);
  }
  sim_asm_hash_thread_min = min;
  ck_assert_uint_eq(min, (size_t)1 << 20); /* the documented default */
}
END_TEST

/* The bounded reader (file_read.h): a regular file by its size, a pipe and
 * an endless device after limit + 1 bytes; the padding; the errors. */
START_TEST(test_file_read) {
  g_autofree char *dir = g_dir_make_tmp("tcc-read-XXXXXX", NULL);
  g_autofree char *f = g_build_filename(dir, "f", NULL);
  ck_assert(g_file_set_contents(f, "0123456789", 10, NULL));
  gsize len = 99;
  int e = 0;
  g_autofree char *t10 = file_read(f, 10, 3, &len, &e);
  ck_assert(t10 && len == 10 && memcmp(t10, "0123456789\0\0\0\0", 14) == 0);
  ck_assert_ptr_null(file_read(f, 9, 0, &len, &e));
  ck_assert_int_eq(e, FILE_READ_TOO_LARGE);
  g_autofree char *why = file_read_why(e, 9);
  ck_assert_str_eq(why, "larger than the limit of 9 bytes");
  /* an endless device: refused once limit + 1 bytes are in */
  e = 0;
  ck_assert_ptr_null(file_read("/dev/zero", 100000, 0, &len, &e));
  ck_assert_int_eq(e, FILE_READ_TOO_LARGE);
  /* a pipe: read to its end when it fits, refused when it does not */
  for (int k = 0; k < 2; k++) {
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    char buf[3000];
    memset(buf, 'x', sizeof buf);
    ck_assert_int_eq(write(fd[1], buf, sizeof buf), (ssize_t)sizeof buf); /* under the pipe's buffer */
    close(fd[1]);
    g_autofree char *path = g_strdup_printf("/dev/fd/%d", fd[0]);
    e = 0;
    g_autofree char *t = file_read(path, k ? 2999 : 3000, 0, &len, &e);
    close(fd[0]);
    if (k) {
      ck_assert_ptr_null(t);
      ck_assert_int_eq(e, FILE_READ_TOO_LARGE);
    } else {
      ck_assert(t && len == 3000 && t[2999] == 'x' && t[3000] == '\0');
    }
  }
  ck_assert_ptr_null(file_read(dir, 10, 0, &len, &e));
  ck_assert_int_eq(e, EISDIR);
  g_autofree char *none = g_build_filename(dir, "none", NULL);
  ck_assert_ptr_null(file_read(none, 10, 0, &len, &e));
  ck_assert_int_eq(e, ENOENT);
  g_autofree char *nowhy = file_read_why(e, 10);
  ck_assert_str_eq(nowhy, "No such file or directory");
  g_unlink(f);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_load) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_load("tests/does-not-exist.asm", &err);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(err->message,
                   "tests/does-not-exist.asm:1:1: error: cannot read: No such file or directory");
  g_clear_error(&err);
  ck_assert_ptr_null(sim_asm_load(TOP_PATH("tests"), &err));
  g_autofree char *isdir = g_strconcat(TOP_PATH("tests"), ":1:1: error: cannot read: Is a directory", NULL);
  ck_assert_str_eq(err->message, isdir);
  g_clear_error(&err);
  ck_assert_ptr_null(sim_asm_load("/dev/null", &err)); /* not a regular file */
  ck_assert_str_eq(err->message,
                   "/dev/null:1:1: error: expected .machine as the first directive, got end of file");
  g_autoptr(Program) q = sim_asm_load(TOP_PATH("tests/asm/tiny_d1.asm"), NULL);
  ck_assert_ptr_nonnull(q);
  ck_assert_str_eq(q->file, TOP_PATH("tests/asm/tiny_d1.asm"));
  ck_assert_int_gt(q->wgs[0].n, 1);
}
END_TEST

/* sim_asm_load maps a regular file when the bytes after its end in its
 * last page can serve as the lexer's NUL sentinel and padding, and reads it
 * otherwise (a file ending at or a few bytes before a page boundary): either
 * way the same program as sim_asm_parse of its text, texts included (built
 * from the positions, sim_program_texts). */
START_TEST(test_load_mapped) {
  const char *head = ".machine sms=1 wgs_per_sm=2\n.problem d1\n.wg 0\n.rf x p0 1x16\n"
                     "  VEC.fill x, 1.5   ; a comment\n\n\tVEC.add x, x, x\t \n END\n.wg 1\nEND";
  long page = sysconf(_SC_PAGESIZE);
  int mapped = 0, read = 0;
  for (long size = page - 12; size <= 2 * page + 1; size++) {
    if (size > page + 2 && size < 2 * page - 12) size = 2 * page - 12;
    g_autoptr(GString) t = g_string_new(head);
    g_string_append(t, " ; pad ");
    while ((long)t->len < size - 1) g_string_append_c(t, 'p');
    g_string_append_c(t, '\n');
    ck_assert_int_eq((long)t->len, size);
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("tcc-map-XXXXXX.asm", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert(g_file_set_contents(path, t->str, (gssize)t->len, NULL));
    g_autoptr(GError) e1 = NULL, e2 = NULL;
    g_autoptr(Program) p = sim_asm_load(path, &e1);
    g_autoptr(Program) q = sim_asm_parse(path, t->str, t->len, &e2);
    ck_assert_ptr_nonnull(p);
    same_program(t->str, p, e1, q, e2);
    ck_assert_str_eq(sim_insn_text(p, &p->wgs[0].insns[0]), "VEC.fill x, 1.5   ; a comment");
    ck_assert_str_eq(sim_insn_text(p, &p->wgs[0].insns[1]), "VEC.add x, x, x");
    const char *end = strstr(t->str, "\nEND") + 1; /* to the last newline */
    g_autofree char *last = g_strndup(end, (gsize)(t->str + t->len - 1 - end));
    ck_assert_str_eq(sim_insn_text(p, &p->wgs[1].insns[0]), last);
    /* mapped exactly when 9 bytes (NUL and padding) fit after the end */
    gboolean fits = size % page != 0 && page - size % page >= 9;
    ck_assert_int_eq(p->source_map != 0, fits);
    mapped += fits;
    read += !fits;
    g_unlink(path);
  }
  ck_assert(mapped > 0 && read > 0);
}
END_TEST

/* tests/bad/NAME.asm + NAME.err: what tests/run_cli.sh checks through tcc-sim.
 * The assembler's own cases must fail to assemble with exactly the .err line;
 * any other file there that fails to assemble (the run-time cases assemble)
 * must match its .err too. */
static const char *const bad_asm[] = {
    "hbm_oob",     "mc_target", "missing_end",   "mma_shape",    "no_problem",     "partition",
    "remote_region", "rf_overflow", "sig_in", "unknown_insn", "unknown_symbol", "weights_write",
};

/* The diagnostic of tests/bad/NAME.asm plus "\n", or NULL if it assembles. */
static char *bad_file_error(const char *name) {
  g_autofree char *rel = g_strconcat("tests/bad/", name, ".asm", NULL);
  g_autofree char *path = g_build_filename(TCC_TOP, rel, NULL);
  g_autofree char *text = NULL;
  gsize len;
  ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
  g_autoptr(GError) err = NULL;
  g_autoptr(Program) p = sim_asm_parse(rel, text, len, &err);
  return p ? NULL : g_strconcat(err->message, "\n", NULL);
}

static char *bad_file_want(const char *name) {
  g_autofree char *path = g_strconcat(TCC_TOP, "/tests/bad/", name, ".err", NULL);
  char *want = NULL;
  ck_assert_msg(g_file_get_contents(path, &want, NULL, NULL), "missing %s", path);
  return want;
}

START_TEST(test_bad_files) {
  const char *name = bad_asm[_i];
  g_autofree char *got = bad_file_error(name), *want = bad_file_want(name);
  ck_assert_msg(got != NULL, "tests/bad/%s.asm assembles", name);
  ck_assert_msg(strcmp(got, want) == 0, "tests/bad/%s.asm\nexpected: %s     got: %s", name, want,
                got);
}
END_TEST

START_TEST(test_bad_files_others) {
  g_autoptr(GDir) dir = g_dir_open(TOP_PATH("tests/bad"), 0, NULL);
  ck_assert_ptr_nonnull(dir);
  for (const char *f; (f = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(f, ".asm")) continue;
    g_autofree char *name = g_strndup(f, strlen(f) - 4);
    g_autofree char *got = bad_file_error(name);
    if (!got) continue; /* a run-time case */
    g_autofree char *want = bad_file_want(name);
    ck_assert_msg(strcmp(got, want) == 0, "tests/bad/%s\nexpected: %s     got: %s", f, want, got);
  }
}
END_TEST

Suite *suite_asm(void) {
  Suite *s = suite_create("asm");
  TCase *tc = tcase_create("sim_asm_lex");
  tcase_add_loop_test(tc, test_lex_kinds, 0, G_N_ELEMENTS(lex_cases));
  tcase_add_test(tc, test_lex_positions);
  tcase_add_test(tc, test_lex_nul);
  suite_add_tcase(s, tc);
  tc = tcase_create("sim_asm_parse");
  tcase_add_test(tc, test_file_read);
  tcase_add_test(tc, test_valid_header);
  tcase_add_test(tc, test_valid_regions);
  tcase_add_test(tc, test_valid_wgs);
  tcase_add_test(tc, test_valid_transfers);
  tcase_add_test(tc, test_valid_compute);
  tcase_add_test(tc, test_valid_variants);
  tcase_add_test(tc, test_tables);
  suite_add_tcase(s, tc);
  tc = tcase_create("diagnostics");
  tcase_add_loop_test(tc, test_errors, 0, G_N_ELEMENTS(err_cases));
  tcase_add_test(tc, test_errors_hostile);
  tcase_add_test(tc, test_errors_prefixes);
  tcase_add_test(tc, test_fast_path_files);
  tcase_add_test(tc, test_fast_path_lines);
  tcase_add_test(tc, test_imm_values);
  tcase_add_test(tc, test_sha256);
  tcase_add_test(tc, test_rfref_extremes);
  tcase_add_test(tc, test_load);
  tcase_add_test(tc, test_load_mapped);
  tcase_add_loop_test(tc, test_bad_files, 0, G_N_ELEMENTS(bad_asm));
  tcase_add_test(tc, test_bad_files_others);
  suite_add_tcase(s, tc);
  return s;
}
