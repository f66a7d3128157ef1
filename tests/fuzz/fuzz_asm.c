/* fuzz_asm.c - libFuzzer target: the assembler (asm_lexer.re + asm_parser.c)
 * through sim_asm_parse, the in-memory twin of sim_asm_load.
 *
 * Invariants beyond "no crash": a NULL program comes with exactly one error,
 * one line "fuzz.asm:LINE:COL: error: ..."; and the shortcut for common
 * instruction lines (sim_asm_fast_path) and the general parser agree: the
 * same diagnostic, or the same program field by field.
 * Replay outcome: "ok" or the diagnostic.
 */
#include <string.h>

#include "fuzz.h"
#include "program.h"

#define FILE_NAME "fuzz.asm"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_glib_fatal();
  return 0;
}

static void check_diagnostic(const GError *err) { fuzz_check_diagnostic(err, FILE_NAME); }

static gboolean same_ref(const RfRef *x, const RfRef *y) {
  return x->region == y->region && x->r0 == y->r0 && x->rows == y->rows && x->c0 == y->c0 &&
         x->cols == y->cols;
}

static void same_insn(const Program *p, const Insn *x, const Program *q, const Insn *y) {
  FUZZ_REQUIRE(x->op == y->op && x->mods == y->mods && x->line == y->line && x->col == y->col,
               "line %d", x->line);
  FUZZ_REQUIRE(strcmp(sim_insn_text(p, x), sim_insn_text(q, y)) == 0,
               "line %d", x->line);
  FUZZ_REQUIRE(memcmp(&x->imm, &y->imm, sizeof x->imm) == 0, "line %d", x->line);
  FUZZ_REQUIRE(x->event == y->event && x->n == y->n, "line %d", x->line);
  FUZZ_REQUIRE(same_ref(sim_ref(p, x->d), sim_ref(q, y->d)) &&
                   same_ref(sim_ref(p, x->a), sim_ref(q, y->a)) &&
                   same_ref(sim_ref(p, x->b), sim_ref(q, y->b)) &&
                   same_ref(sim_ref(p, x->c), sim_ref(q, y->c)),
               "line %d", x->line);
  FUZZ_REQUIRE(x->space == y->space && x->addr == y->addr && x->stride == y->stride &&
                   same_ref(sim_ref(p, x->dst), sim_ref(q, y->dst)),
               "line %d", x->line);
  FUZZ_REQUIRE(sim_insn_ntargets(x) == sim_insn_ntargets(y), "line %d", x->line);
  for (int i = 0; i < sim_insn_ntargets(x); i++)
    FUZZ_REQUIRE(x->targets[i] == y->targets[i] && sim_insn_tregion(x, i) == sim_insn_tregion(y, i),
                 "line %d", x->line);
}

static void same_program(const Program *p, const Program *q) {
  FUZZ_REQUIRE(strcmp(p->sha256, q->sha256) == 0, "sha256");
  FUZZ_REQUIRE(sim_program_texts(p)->len == sim_program_texts(q)->len && p->regions->len == q->regions->len &&
                   p->events->len == q->events->len && p->nwgs == q->nwgs,
               "sizes");
  FUZZ_REQUIRE(memcmp(&p->hw, &q->hw, sizeof p->hw) == 0, ".machine");
  FUZZ_REQUIRE(memcmp(&p->prob, &q->prob, sizeof p->prob) == 0, ".problem");
  for (int w = 0; w < p->nwgs; w++) {
    FUZZ_REQUIRE(p->wgs[w].n == q->wgs[w].n && p->wgs[w].line == q->wgs[w].line, "wg %d", w);
    for (int i = 0; i < p->wgs[w].n; i++)
      same_insn(p, &p->wgs[w].insns[i], q, &q->wgs[w].insns[i]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  GError *e1 = NULL, *e2 = NULL;
  sim_asm_fast_path = TRUE;
  Program *p = sim_asm_parse(FILE_NAME, text, size, &e1);
  sim_asm_fast_path = FALSE;
  Program *q = sim_asm_parse(FILE_NAME, text, size, &e2);
  sim_asm_fast_path = TRUE;
  FUZZ_REQUIRE(!p == !q, "fast path: %s, general parser: %s", e1 ? e1->message : "ok",
               e2 ? e2->message : "ok");
  if (!p) {
    check_diagnostic(e1);
    check_diagnostic(e2);
    FUZZ_REQUIRE(strcmp(e1->message, e2->message) == 0, "fast path: %s, general parser: %s",
                 e1->message, e2->message);
    fuzz_outcome(e1->message);
    g_error_free(e1);
    g_error_free(e2);
    return 0;
  }
  FUZZ_REQUIRE(e1 == NULL && e2 == NULL, "a program and an error");
  same_program(p, q);
  fuzz_outcome("ok");
  sim_program_free(p);
  sim_program_free(q);
  return 0;
}
