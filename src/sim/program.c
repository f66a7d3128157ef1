/* program.c - the instruction tables expanded from ops.def, and the
 * lifetime and printing helpers of an assembled Program (program.h). */
#define _DEFAULT_SOURCE 1 /* madvise() */
#include "program.h"

#include <sys/mman.h>
#include <unistd.h>

G_DEFINE_QUARK(tcc-asm-error-quark, sim_asm_error)

const char *const sim_op_mnemonic[OP__COUNT] = {
#define X(e, m, u, f) [OP_##e] = m,
#include "ops.def"
#undef X
};

const Unit sim_op_unit[OP__COUNT] = {
#define X(e, m, u, f) [OP_##e] = u,
#include "ops.def"
#undef X
};

const OpForm sim_op_form[OP__COUNT] = {
#define X(e, m, u, f) [OP_##e] = f,
#include "ops.def"
#undef X
};

void sim_huge_hint(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n < (4u << 20)) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

void sim_program_free(Program *p) {
  if (!p) return;
  g_free(p->insn_block); /* wgs[w].insns point into it */
  if (p->lists) g_ptr_array_unref(p->lists);
  g_free(p->wgs);
  if (p->regions) g_ptr_array_unref(p->regions);
  if (p->events) g_ptr_array_unref(p->events);
  if (p->texts) g_ptr_array_unref(p->texts);
  g_free(p->source); /* the texts */
  wl_abi_clear(&p->abi);
  g_free(p->file);
  g_free(p);
}

/* "wg5.x" for a whole region, "wg5.x[0:1,0:128]" for a window (half-open
 * row and column ranges); "-" for an absent operand. */
char *sim_rfref_str(const Program *p, const RfRef *r) {
  if (!p || !r || r->region < 0 || (guint)r->region >= p->regions->len) return g_strdup("-");
  const Region *g = g_ptr_array_index(p->regions, r->region);
  if (r->r0 == 0 && r->c0 == 0 && r->rows == g->rows && r->cols == g->cols)
    return g_strdup_printf("wg%d.%s", g->wg, g->name);
  return g_strdup_printf("wg%d.%s[%d:%d,%d:%d]", g->wg, g->name, r->r0, r->r0 + r->rows, r->c0,
                         r->c0 + r->cols);
}
