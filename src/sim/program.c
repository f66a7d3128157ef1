/* program.c - the instruction tables expanded from ops.def, and the
 * lifetime and printing helpers of an assembled Program (program.h). */
#define _DEFAULT_SOURCE 1 /* madvise() */
#include "program.h"

#include <string.h>
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

void sim_prefault(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  if (n < (256u << 10)) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* EINVAL on old kernels */
#else
  (void)p;
  (void)n;
#endif
}

void sim_program_free(Program *p) {
  if (!p) return;
  g_free(p->insn_block); /* wgs[w].insns point into it */
  g_free(p->refs);
  if (p->xwg) g_array_unref(p->xwg);
  if (p->lists) g_ptr_array_unref(p->lists);
  g_free(p->wgs);
  if (p->regions) g_ptr_array_unref(p->regions);
  if (p->events) g_ptr_array_unref(p->events);
  if (p->texts) g_ptr_array_unref(p->texts);
  g_free(p->text_buf);
  if (p->text_at) g_array_unref(p->text_at);
  if (p->source_map)
    munmap((void *)p->source, p->source_map);
  else
    g_free((char *)p->source);
  wl_abi_clear(&p->abi);
  g_free(p->file);
  g_free(p);
}

/* The texts from the instructions' positions: instructions are in file
 * order, so one walk over the source's lines finds them all.  An
 * instruction's text runs from its mnemonic (line, col) to the newline or
 * the end of the text, trailing blanks trimmed: what the line held after
 * the assembler accepted it (comments included). */
static void build_texts(Program *p) {
  const char *src = p->source, *end = src + p->source_len, *ls = src;
  int64_t line = 1;
  GPtrArray *tx = g_ptr_array_sized_new((guint)p->ninsns);
  /* each text is a distinct part of a distinct line: they fit in the
   * source's size, plus one NUL each */
  char *buf = g_malloc(p->source_len + p->ninsns + 1), *o = buf;
  guint ex = 0, nex = p->text_at ? p->text_at->len / 2 : 0;
  for (size_t k = 0; k < p->ninsns; k++) {
    const Insn *in = &p->insn_block[k];
    const char *b;
    if (ex < nex && g_array_index(p->text_at, uint64_t, 2 * ex) == k) {
      b = src + g_array_index(p->text_at, uint64_t, 2 * ex + 1);
      ex++;
    } else {
      while (line < in->line && ls < end) {
        const char *nl = memchr(ls, '\n', (size_t)(end - ls));
        ls = nl ? nl + 1 : end;
        line++;
      }
      b = ls + MIN((size_t)(in->col - 1), (size_t)(end - ls));
    }
    const char *e = b;
    while (e < end && *e != '\n' && *e != '\0') e++;
    while (e > b && g_ascii_isspace(e[-1])) e--;
    g_ptr_array_add(tx, o);
    memcpy(o, b, (size_t)(e - b));
    o += e - b;
    *o++ = '\0';
  }
  p->text_buf = buf;
  p->texts = tx;
}

const GPtrArray *sim_program_texts(const Program *cp) {
  Program *p = (Program *)cp; /* the texts are a cache: built once */
  if (g_once_init_enter(&p->texts_once)) {
    build_texts(p);
    g_once_init_leave(&p->texts_once, 1);
  }
  return p->texts;
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
