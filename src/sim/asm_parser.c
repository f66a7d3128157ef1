/* asm_parser.c - the assembler: `.asm` text -> Program (program.h).
 *
 * A recursive-descent parser over the re2c tokens (asm_lexer.re).  One pass
 * over the text, line by line; every statement is checked as soon as it is
 * complete (docs/machine.md §2, §3, §7), except the references into other
 * WGs' regions (`ST wgN.d`, `LD.mc` targets): sections may come in any order,
 * so those are resolved after the last line, in source order.
 *
 * Conventions: every parse function returns FALSE after recording the first
 * error in P->error ("file:line:col: error: message", one line) and the
 * callers just propagate FALSE; P->tok is the current token and never a
 * comment.  The grammar rule each function accepts is in the comment above it.
 */
#define _DEFAULT_SOURCE 1 /* MAP_POPULATE */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "asm_lexer.h"
#include "file_read.h"
#include "program.h"
#include "text_escape.h"

enum { ASM_ERROR_SYNTAX = 1, ASM_ERROR_IO = 2 };

/* One side of a window `[lo:hi]`; -1 = the side was left empty. */
typedef struct Span {
  int64_t lo, hi;
} Span;

/* An RF operand as written: `NAME[rows, cols]` or `wgN.NAME[...]`. */
typedef struct Operand {
  Token tok;          /* the name token (error position)                */
  int wg;             /* N of `wgN.NAME`; -1 for a plain NAME            */
  const char *name;   /* the region name (after `wgN.`), not terminated */
  size_t nlen;
  Span rows, cols;
} Operand;

/* The memory side of LD/ST as written. */
typedef struct MemOp {
  Token tok;          /* `hbm` / `sh`                                   */
  Token stride_tok;   /* the stride value, if given                     */
  gboolean stride_given;
} MemOp;

/* A name table keyed by (pointer, length), so that lookups need no copy:
 * open addressing with linear probing over entries stored in place (a
 * lookup per operand of every line: GHashTable's calls through function
 * pointers and its separate entries cost the assembler ~7% of the bench).
 * The stored names must outlive the table (region, event and ABI names). */
typedef struct NameEnt {
  const char *s;        /* NULL: an empty slot                          */
  size_t n;
  int value;            /* > 0                                          */
  int rows, cols;       /* region tables: the region's shape            */
  guint hash;
  uint64_t w;           /* name_word: the first 8 bytes, compared whole  */
} NameEnt;

typedef struct Names {
  NameEnt *e;           /* cap slots, at most half of them used; NULL   */
  size_t cap, used;     /* while empty                                  */
} Names;

/* An instruction while it is parsed: its operands in full (Insn holds
 * them as indices into Program.refs), the memory side as a MemRef, the
 * target count apart.  Committed to the compact Insn (commit) once it is
 * complete; a fixup expands it again (expand). */
typedef struct PInsn {
  int64_t n;       /* Insn.n                                        */
  float imm;       /* Insn.imm                                      */
  int *targets;    /* LD.mc: the list block's targets (Insn.targets) */
  int ntargets;
  int line, col;
  int event;
  Op op;
  int mods;
  RfRef d, a, b, c, dst;
  MemRef mem;      /* LD, ST                                        */
} PInsn;

/* The interned RF operands: Program.refs, with an open-addressing index
 * (slot: ref id + 1, 0 empty) and, per region, the id of the last operand
 * interned in it (0: none), which is most often the next one (a whole
 * region). */
typedef struct Refs {
  uint32_t *slot;
  size_t cap;           /* a power of two, at most half used           */
  uint32_t *last;       /* per region (nlast of them): the id of its    */
  size_t nlast;         /* last operand                                */
  guint capref;         /* Program.refs allocated                       */
} Refs;

/* A WG's section while it is being parsed.  Sections are contiguous in the
 * file, so a section's instructions are a contiguous run of Parser.code. */
typedef struct Section {
  gboolean seen;        /* the WG has a section                         */
  size_t first, n;      /* its instructions: Parser.code[first..+n)     */
  Names regions;        /* region name -> index in prog->regions + 1    */
  int line, col;        /* of `.wg`                                     */
  gboolean ended;       /* END seen                                     */
} Section;

/* A reference into another WG, resolved after the whole file is read. */
typedef struct Fixup {
  int wg;               /* the issuing WG                               */
  size_t at;            /* the instruction: Parser.code[at]             */
  Operand op;           /* ST: the destination; LD.mc: d               */
  MemOp mem;            /* LD.mc: for the deferred bounds check        */
  gboolean resolved;    /* LD.mc: d already resolved on the issuer      */
} Fixup;

typedef struct Parser {
  const char *file;
  Lexer lx;
  Token tok;            /* current token (comments skipped)            */
  Token peek;           /* the next token, when `peeked` (fast path)   */
  gboolean peeked;
  Program *prog;
  Section *secs;        /* prog->nwgs of them, after `.machine`        */
  int cur;              /* WG of the current section; -1 before any    */
  Insn *code;           /* every section's instructions, in file order */
  Refs refs;            /* the operands in prog->refs                  */
  size_t ncode, capcode;
  const char *src;      /* the text (prog->source)                     */
  Names events;         /* name -> index in prog->events + 1           */
  Names abi;            /* ABI symbol name -> index in abi.syms + 1    */
  Names ops;            /* mnemonic -> op + 1                           */
  size_t op_maxlen;     /* of the longest mnemonic                      */
  GArray *fixups;       /* Fixup                                       */
  int machine_line, problem_line;
  GError *error;        /* the first error                             */
} Parser;

/* ---------------------------------------------------------------- memory */


/* A first guess at the instructions in n bytes of text: lines are rarely
 * shorter than 16 bytes (and the array grows when they are). */
static size_t insn_guess(size_t n) { return MIN(n / 16 + 64, (size_t)1 << 22); }

/* --------------------------------------------------------------- SHA-256 */

/* The program hash: SHA-256 of the text in lowercase hex.  OpenSSL's
 * libcrypto uses the CPU's SHA instructions where it has them: 4 times
 * faster than GLib's on a 12 MB program, a tenth of tcc-sim --timing-only.
 * Its configuration file (openssl.cnf: providers, engines, policies) is
 * not read: it cannot change a SHA-256, and reading it cost ~3 ms of every
 * run's first hash on this VM.  GLib's (the same digest) if libcrypto
 * fails. */
static void sha256_hex(const char *text, size_t len, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) &&
      EVP_Digest(text, len, md, &n, EVP_sha256(), NULL) && n == 32) {
    for (unsigned i = 0; i < n; i++) g_snprintf(out + 2 * i, 3, "%02x", md[i]);
    return;
  }
  g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
  g_strlcpy(out, sum, 65);
}

/* The hash of a large text is computed on a thread of its own while the
 * text is parsed (the parse only reads the text too), and joined before
 * the Program is returned: the same digest, and the hash (~7 ms of CPU on
 * the 12 MB bench program, plus libcrypto's set-up) off the critical path
 * when a second core is free.  A smaller text is hashed in line (a thread
 * costs more than hashing it); tests lower the threshold to run the thread
 * on small programs. */
size_t sim_asm_hash_thread_min = (size_t)1 << 20;

typedef struct HashJob {
  const char *text;
  size_t len;
  char *out;           /* 65 bytes: Program.sha256 */
} HashJob;

static gpointer hash_main(gpointer data) {
  HashJob *j = data;
  sha256_hex(j->text, j->len, j->out);
  return NULL;
}

/* Start hashing text into out[65]: on a thread (returned, for hash_join)
 * when the text is large enough and a thread can be made, else at once
 * (NULL). */
static GThread *hash_start(HashJob *j, const char *text, size_t len, char out[65]) {
  *j = (HashJob){text, len, out};
  GThread *t = len >= sim_asm_hash_thread_min ? g_thread_try_new("tcc-sha256", hash_main, j, NULL) : NULL;
  if (!t) hash_main(j);
  return t;
}

static void hash_join(GThread *t) {
  if (t) g_thread_join(t);
}

/* ------------------------------------------------------------ diagnostics */

static gboolean fail(Parser *P, int line, int col, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* Record "file:line:col: error: message" unless an error is already set. */
static gboolean fail(Parser *P, int line, int col, const char *fmt, ...) {
  if (P->error) return FALSE;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *name = text_escape(P->file); /* one line, whatever the name holds */
  g_set_error(&P->error, SIM_ASM_ERROR, ASM_ERROR_SYNTAX, "%s:%d:%d: error: %s", name, line, col, msg);
  return FALSE;
}

#define FAIL_AT(t, ...) fail(P, (t)->line, (t)->col, __VA_ARGS__)

/* Quote user text for a message, cut to keep diagnostics short. */
static char *quote(const char *s, size_t n) {
  if (n > 40) return g_strdup_printf("'%.*s...'", 40, s);
  return g_strdup_printf("'%.*s'", (int)n, s);
}

/* "end of line", "end of file" or the token's text in quotes. */
static char *describe(const Token *t) {
  if (t->kind == TK_EOF) return g_strdup("end of file");
  if (t->kind == TK_NEWLINE) return g_strdup("end of line");
  return quote(t->s, t->len);
}

/* Levenshtein distance, cut off above 2 (only near misses matter). */
static int distance(const char *a, size_t na, const char *b, size_t nb) {
  if (na > 64 || nb > 64 || (na > nb ? na - nb : nb - na) > 2) return 3;
  int row[65];
  for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j];
      int sub = diag + (a[i - 1] != b[j - 1]);
      int best = MIN(sub, MIN(up, row[j - 1]) + 1);
      diag = up;
      row[j] = best;
    }
  }
  return row[nb];
}

/* The best "did you mean" candidate seen so far. */
typedef struct Suggest {
  const char *word;
  size_t n;
  const char *best;
  int dist;
} Suggest;

static void suggest(Suggest *s, const char *cand) {
  size_t cn = strlen(cand);
  int d = distance(s->word, s->n, cand, cn);
  if (cn == s->n && g_ascii_strncasecmp(s->word, cand, cn) == 0) d = MIN(d, 1);
  if (d <= 2 && (s->best == NULL || d < s->dist)) {
    s->best = cand;
    s->dist = d;
  }
}

/* "; did you mean 'X'?" or "". */
static char *hint(const Suggest *s) {
  return s->best ? g_strdup_printf("; did you mean '%s'?", s->best) : g_strdup("");
}

/* Report the current token as unexpected; lexical errors speak for
 * themselves whatever was expected. */
static gboolean expected(Parser *P, const char *what) {
  const Token *t = &P->tok;
  if (t->kind == TK_NUL) return FAIL_AT(t, "NUL byte in input");
  if (t->kind == TK_ERROR) {
    unsigned char c = (unsigned char)t->s[0];
    if (c >= 0x20 && c < 0x7f) return FAIL_AT(t, "unexpected character '%c'", c);
    return FAIL_AT(t, "unexpected byte 0x%02x", c);
  }
  if (t->kind == TK_BADDIR) {
    static const char *const dirs[] = {".machine", ".problem", ".wg", ".rf"};
    Suggest s = {t->s, t->len, NULL, 0};
    for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) suggest(&s, dirs[i]);
    g_autofree char *q = quote(t->s, t->len), *h = hint(&s);
    return FAIL_AT(t, "unknown directive %s%s", q, h);
  }
  g_autofree char *got = describe(t);
  return FAIL_AT(t, "expected %s, got %s", what, got);
}

/* ----------------------------------------------------------------- tokens */

static void next(Parser *P) {
  if (P->peeked) {
    P->tok = P->peek;
    P->peeked = FALSE;
    return;
  }
  do sim_asm_lex(&P->lx, &P->tok);
  while (P->tok.kind == TK_COMMENT);
}

static gboolean at(const Parser *P, TokKind k) { return P->tok.kind == k; }

static gboolean at_eol(const Parser *P) { return at(P, TK_NEWLINE) || at(P, TK_EOF); }

static gboolean accept(Parser *P, TokKind k) {
  if (!at(P, k)) return FALSE;
  next(P);
  return TRUE;
}

static gboolean expect(Parser *P, TokKind k, const char *what) {
  return accept(P, k) || expected(P, what);
}

static gboolean is_word(const Token *t, const char *w) {
  return t->kind == TK_IDENT && t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

/* The program text is kept with SRC_PAD zero bytes after its NUL sentinel,
 * so that the fast path may load 8 bytes at any position of the text. */
enum { SRC_PAD = 8 };

/* The length of the run of [A-Za-z0-9_] at p, with '.' too if `dot` (a
 * TK_IDENT). */
static inline size_t ident_run(const char *p, gboolean dot) {
  size_t n = 0;
  while ((sim_asm_ident[(guchar)p[n]] & SIM_ID_CHAR) && (dot || p[n] != '.')) n++;
  return n;
}

/* The first min(n, 8) bytes of s[0..n) as a number, the others zero (the
 * same for every s with those bytes). */
static inline uint64_t name_word_safe(const char *s, size_t n) {
  uint64_t w = 0;
  for (size_t i = 0; i < n && i < 8; i++) w |= (uint64_t)(guchar)s[i] << (8 * i);
  return w;
}

/* name_word_safe with one 8-byte load, for a name inside the program text,
 * which is followed by SRC_PAD readable bytes (every lookup's name). */
static inline uint64_t name_word_text(const char *s, size_t n) {
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  uint64_t w;
  memcpy(&w, s, 8);
  return n >= 8 ? w : w & ((1ull << (8 * n)) - 1);
#else
  return name_word_safe(s, n);
#endif
}

/* The hash of s[0..n), whose name word is w. */
static inline guint name_hash(const char *s, size_t n, uint64_t w) {
  uint64_t h = (w ^ n) * 0x9E3779B97F4A7C15ull;
  for (size_t i = 8; i < n; i++) h = (h ^ (guchar)s[i]) * 0x100000001B3ull;
  return (guint)(h >> 32);
}

/* The slot of s[0..n) (word w, hash h): its entry, or the empty slot where
 * it would go.  t->cap > 0. */
static inline NameEnt *names_slot(const Names *t, const char *s, size_t n, uint64_t w, guint h) {
  size_t mask = t->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    NameEnt *e = &t->e[i];
    if (!e->s || (e->w == w && e->n == n && (n <= 8 || memcmp(e->s + 8, s + 8, n - 8) == 0)))
      return e;
  }
}

/* names[s[0..n)] = value (> 0), replacing an entry of the same name; s
 * must outlive the table.  Returns the entry (valid until the next put). */
static NameEnt *names_put_n(Names *t, const char *s, size_t n, int value) {
  if (2 * (t->used + 1) > t->cap) { /* grow: rehash into twice the slots */
    Names g = {g_new0(NameEnt, MAX(t->cap * 2, 16)), MAX(t->cap * 2, 16), t->used};
    for (size_t i = 0; i < t->cap; i++)
      if (t->e[i].s) *names_slot(&g, t->e[i].s, t->e[i].n, t->e[i].w, t->e[i].hash) = t->e[i];
    g_free(t->e);
    *t = g;
  }
  uint64_t w = name_word_safe(s, n);
  guint h = name_hash(s, n, w);
  NameEnt *e = names_slot(t, s, n, w, h);
  if (!e->s) t->used++;
  *e = (NameEnt){.s = s, .n = n, .value = value, .hash = h, .w = w};
  return e;
}

static void names_put(Names *t, const char *s, int value) { names_put_n(t, s, strlen(s), value); }

/* The entry of s[0..n) (NULL when absent); s lies in the program text. */
static inline const NameEnt *names_find(const Names *t, const char *s, size_t n) {
  if (!t->cap) return NULL;
  uint64_t w = name_word_text(s, n);
  const NameEnt *e = names_slot(t, s, n, w, name_hash(s, n, w));
  return e->s ? e : NULL;
}

/* names[s[0..n)], 0 when absent; s lies in the program text. */
static int names_get(const Names *t, const char *s, size_t n) {
  const NameEnt *e = names_find(t, s, n);
  return e ? e->value : 0;
}

static void names_clear(Names *t) {
  g_free(t->e);
  *t = (Names){0};
}

/* Decimal digits -> value; FALSE when it does not fit in int64. */
static gboolean digits(const char *s, size_t n, int64_t *v) {
  int64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    int d = s[i] - '0';
    if (x > (INT64_MAX - d) / 10) return FALSE;
    x = x * 10 + d;
  }
  *v = x;
  return TRUE;
}

/* int := INT */
static gboolean parse_int(Parser *P, const char *what, int64_t *v) {
  if (!at(P, TK_INT)) return expected(P, what);
  if (!digits(P->tok.s, P->tok.len, v)) return FAIL_AT(&P->tok, "integer out of range");
  next(P);
  return TRUE;
}

/* sint := ['-'] INT */
static gboolean parse_sint(Parser *P, const char *what, int64_t *v) {
  gboolean neg = at(P, TK_MINUS);
  if (neg) next(P);
  if (!parse_int(P, what, v)) return FALSE;
  if (neg) *v = -*v;
  return TRUE;
}

/* shape := SHAPE   (RxC, both at most INT_MAX) */
static gboolean parse_shape(Parser *P, const char *what, int *r, int *c) {
  if (!at(P, TK_SHAPE)) return expected(P, what);
  const char *x = memchr(P->tok.s, 'x', P->tok.len);
  int64_t a, b;
  if (!digits(P->tok.s, (size_t)(x - P->tok.s), &a) ||
      !digits(x + 1, P->tok.len - (size_t)(x - P->tok.s) - 1, &b) || a > INT_MAX ||
      b > INT_MAX)
    return FAIL_AT(&P->tok, "integer out of range");
  *r = (int)a;
  *c = (int)b;
  next(P);
  return TRUE;
}

/* end := NEWLINE | EOF */
static gboolean end_line(Parser *P) {
  if (at(P, TK_EOF)) return TRUE;
  return expect(P, TK_NEWLINE, "end of line");
}

/* ------------------------------------------------------ .machine .problem */

/* A key=value list entry seen twice is an error: `seen` holds the keys. */
static gboolean once(Parser *P, GHashTable *seen, const Token *key, const char *what) {
  char *k = g_strndup(key->s, key->len);
  if (g_hash_table_contains(seen, k)) {
    g_free(k);
    g_autofree char *q = quote(key->s, key->len);
    return FAIL_AT(key, "duplicate %s parameter %s", what, q);
  }
  g_hash_table_add(seen, k);
  return TRUE;
}

/* dma := 'dma' '=' SHAPE     (ENGINESxDEPTH) */
static gboolean machine_dma(Parser *P, const Token *key) {
  Machine *m = &P->prog->hw;
  int e, d;
  if (!parse_shape(P, "ENGINESxDEPTH", &e, &d)) return FALSE;
  g_autoptr(GError) err = NULL;
  if (!sim_machine_set(m, "dma_engines", e, &err) ||
      !sim_machine_set(m, "dma_depth", d, &err))
    return FAIL_AT(key, "%s", err->message);
  return TRUE;
}

/* machine := '.machine' { KEY '=' sint | 'dma' '=' SHAPE } */
static gboolean parse_machine(Parser *P) {
  P->machine_line = P->tok.line;
  Token dir = P->tok;
  next(P);
  sim_machine_default(&P->prog->hw);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  while (!at_eol(P)) {
    Token key = P->tok;
    if (!expect(P, TK_IDENT, "machine parameter KEY=VALUE")) return FALSE;
    if (!once(P, seen, &key, "machine") || !expect(P, TK_EQ, "'='")) return FALSE;
    if (is_word(&key, "dma")) {
      if (!machine_dma(P, &key)) return FALSE;
      continue;
    }
    int64_t v;
    if (!parse_sint(P, "integer", &v)) return FALSE;
    g_autofree char *k = g_strndup(key.s, key.len), *q = quote(key.s, key.len);
    g_autoptr(GError) err = NULL;
    if (key.len > 40) return FAIL_AT(&key, "unknown machine parameter %s", q);
    if (is_word(&key, "dma_engines") || is_word(&key, "dma_depth"))
      return FAIL_AT(&key, "unknown machine parameter '%s' (use dma=ENGINESxDEPTH)", k);
    if (v < LONG_MIN || v > LONG_MAX || !sim_machine_set(&P->prog->hw, k, (long)v, &err))
      return FAIL_AT(&key, "%s", err ? err->message : "integer out of range");
  }
  g_autoptr(GError) err = NULL;
  if (!sim_machine_validate(&P->prog->hw, &err)) return FAIL_AT(&dir, "%s", err->message);
  return TRUE;
}

/* kind := 'd1' | 'p1' */
static gboolean problem_kind(Parser *P, ProblemKind *kind) {
  if (is_word(&P->tok, "d1") || is_word(&P->tok, "p1")) {
    *kind = P->tok.s[0] == 'd' ? PROB_D1 : PROB_P1;
    next(P);
    return TRUE;
  }
  if (!at(P, TK_IDENT)) return expected(P, "problem kind d1 or p1");
  g_autofree char *q = quote(P->tok.s, P->tok.len);
  return FAIL_AT(&P->tok, "unknown problem kind %s; expected d1 or p1", q);
}

/* problem := '.problem' kind { KEY '=' sint } */
static gboolean parse_problem(Parser *P) {
  Program *prog = P->prog;
  P->problem_line = P->tok.line;
  Token dir = P->tok;
  next(P);
  ProblemKind kind = PROB_D1;
  if (!problem_kind(P, &kind)) return FALSE;
  wl_problem_default(&prog->prob, kind);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  while (!at_eol(P)) {
    Token key = P->tok;
    int64_t v;
    if (!expect(P, TK_IDENT, "problem parameter KEY=VALUE")) return FALSE;
    if (!once(P, seen, &key, "problem") || !expect(P, TK_EQ, "'='") ||
        !parse_sint(P, "integer", &v))
      return FALSE;
    g_autofree char *k = g_strndup(key.s, key.len), *q = quote(key.s, key.len);
    g_autoptr(GError) err = NULL;
    if (key.len > 40) return FAIL_AT(&key, "unknown problem parameter %s", q);
    if (v < LONG_MIN || v > LONG_MAX || !wl_problem_set(&prog->prob, k, (long)v, &err))
      return FAIL_AT(&key, "%s", err ? err->message : "integer out of range");
  }
  g_autoptr(GError) err = NULL;
  if (!wl_problem_validate(&prog->prob, &err)) return FAIL_AT(&dir, "%s", err->message);
  wl_abi_build(&prog->prob, &prog->abi);
  for (int i = 0; i < prog->abi.n; i++) names_put(&P->abi, prog->abi.syms[i].name, i + 1);
  return TRUE;
}

/* --------------------------------------------------------- sections, .rf */

/* Close the current section: its last instruction must be END. */
static gboolean close_section(Parser *P) {
  if (P->cur < 0) return TRUE;
  Section *s = &P->secs[P->cur];
  if (s->ended) return TRUE;
  if (P->ncode == s->first)
    return fail(P, s->line, s->col, "section of WG %d does not end with END", P->cur);
  const Insn *last = &P->code[P->ncode - 1];
  return fail(P, last->line, last->col, "section of WG %d does not end with END", P->cur);
}

/* wg := '.wg' INT */
static gboolean parse_wg(Parser *P) {
  int line = P->tok.line, col = P->tok.col;
  next(P);
  if (!close_section(P)) return FALSE;
  Token t = P->tok;
  int64_t w;
  if (!parse_int(P, "WG number", &w)) return FALSE;
  int nwgs = P->prog->nwgs;
  if (w >= nwgs)
    return FAIL_AT(&t, ".wg %" G_GINT64_FORMAT " out of range 0..%d (sms*wgs_per_sm = %d)",
                   w, nwgs - 1, nwgs);
  Section *s = &P->secs[w];
  if (s->seen)
    return FAIL_AT(&t, "duplicate .wg %d (first at line %d)", (int)w, s->line);
  s->seen = TRUE;
  s->first = P->ncode;
  s->line = line;
  s->col = col;
  P->cur = (int)w;
  return TRUE;
}

/* part := 'p' DIGITS   (an identifier token such as p12) */
static gboolean parse_part(Parser *P, int *part) {
  const Token *t = &P->tok;
  int64_t v;
  gboolean ok = t->kind == TK_IDENT && t->len >= 2 && t->s[0] == 'p';
  for (size_t i = 1; ok && i < t->len; i++) ok = g_ascii_isdigit(t->s[i]);
  if (!ok) return expected(P, "partition pN");
  int vl = P->prog->hw.vl;
  if (!digits(t->s + 1, t->len - 1, &v) || v >= vl) {
    g_autofree char *q = quote(t->s, t->len);
    return FAIL_AT(t, "partition %s out of range p0..p%d", q, vl - 1);
  }
  *part = (int)v;
  next(P);
  return TRUE;
}

/* The partition rule (docs/machine.md §2) and the RF bound for region g,
 * declared at offset `off` in its first partition.  Sizes are unsigned:
 * 4*R*C < 2^64 for R, C <= INT_MAX. */
static gboolean check_placement(Parser *P, const Token *t, const Region *g, int64_t off) {
  uint64_t pb = (uint64_t)sim_machine_part_bytes(&P->prog->hw), rf = pb * (uint64_t)P->prog->hw.vl;
  g_autofree char *q = quote(g->name, strlen(g->name));
  if (off % 4 != 0)
    return FAIL_AT(t, "region %s: offset +%" G_GINT64_FORMAT " is not a multiple of 4", q, off);
  if ((uint64_t)off >= pb)
    return FAIL_AT(t, "region %s: offset +%" G_GINT64_FORMAT
                      " is outside partition p%d (%" G_GUINT64_FORMAT " bytes)",
                   q, off, g->part, pb);
  uint64_t size = 4u * (uint64_t)g->rows * (uint64_t)g->cols;
  uint64_t first = (uint64_t)g->part * pb + (uint64_t)off, last = first + size - 1;
  if (last >= rf)
    return FAIL_AT(t, "RF overflow: region %s (bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                      ") runs past the last partition p%d (the RF has %" G_GUINT64_FORMAT
                      " bytes)",
                   q, first, last, P->prog->hw.vl - 1, rf);
  if ((uint64_t)off + size <= pb || (off == 0 && size % pb == 0)) return TRUE;
  return FAIL_AT(t, "region %s (bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                    ") straddles partitions p%d..p%d: a region must lie inside one "
                    "partition or start at a partition boundary and cover whole partitions",
                 q, first, last, (int)(first / pb), (int)(last / pb));
}

/* A region name: an identifier without '.'; `hbm` and `sh` are reserved. */
static gboolean region_name(Parser *P) {
  const Token *t = &P->tok;
  if (!at(P, TK_IDENT)) return expected(P, "region name");
  g_autofree char *q = quote(t->s, t->len);
  if (memchr(t->s, '.', t->len)) return FAIL_AT(t, "region name %s must not contain '.'", q);
  if (is_word(t, "hbm") || is_word(t, "sh")) return FAIL_AT(t, "region name %s is reserved", q);
  return TRUE;
}

/* rf := '.rf' NAME part ['+' INT] SHAPE */
static gboolean parse_rf(Parser *P) {
  Token dir = P->tok;
  next(P);
  if (P->cur < 0) return FAIL_AT(&dir, ".rf outside a .wg section");
  Token name = P->tok;
  if (!region_name(P)) return FALSE;
  next(P);
  Section *s = &P->secs[P->cur];
  g_autofree char *nm = g_strndup(name.s, name.len), *q = quote(name.s, name.len);
  int prev = names_get(&s->regions, name.s, name.len);
  if (prev) {
    const Region *o = g_ptr_array_index(P->prog->regions, prev - 1);
    return FAIL_AT(&name, "region %s redeclared in WG %d (first declared at line %d)", q,
                   P->cur, o->line);
  }
  Region g = {.wg = P->cur, .line = name.line, .col = name.col, .name = nm};
  int64_t off = 0;
  if (!parse_part(P, &g.part)) return FALSE;
  if (accept(P, TK_PLUS) && !parse_int(P, "offset", &off)) return FALSE;
  if (!parse_shape(P, "shape RxC", &g.rows, &g.cols)) return FALSE;
  if (g.rows < 1 || g.cols < 1)
    return FAIL_AT(&name, "region %s has no elements (%dx%d)", q, g.rows, g.cols);
  if (!check_placement(P, &name, &g, off)) return FALSE;
  int pb = sim_machine_part_bytes(&P->prog->hw);
  int64_t size = 4 * (int64_t)g.rows * g.cols;
  g.nparts = off + size <= pb ? 1 : (int)(size / pb);
  g.byte = (uint32_t)((int64_t)g.part * pb + off);
  Region *r = g_new(Region, 1);
  *r = g;
  r->name = g_steal_pointer(&nm);
  g_ptr_array_add(P->prog->regions, r);
  NameEnt *e = names_put_n(&s->regions, r->name, name.len, (int)P->prog->regions->len);
  e->rows = r->rows;
  e->cols = r->cols;
  return TRUE;
}

/* ------------------------------------------------------------ RF operands */

/* span := [INT] ':' [INT] */
static gboolean parse_span(Parser *P, Span *sp) {
  sp->lo = sp->hi = -1;
  if (at(P, TK_INT) && !parse_int(P, "integer", &sp->lo)) return FALSE;
  if (!expect(P, TK_COLON, "':'")) return FALSE;
  if (at(P, TK_INT) && !parse_int(P, "integer", &sp->hi)) return FALSE;
  return TRUE;
}

/* `wgN.NAME` -> N and NAME; -1 when the identifier is not of that form. */
static int64_t remote_wg(const Token *t, const char **name, size_t *nlen) {
  size_t i = 2;
  if (t->len < 4 || memcmp(t->s, "wg", 2) != 0 || !g_ascii_isdigit(t->s[2])) return -1;
  while (i < t->len && g_ascii_isdigit(t->s[i])) i++;
  if (i + 1 >= t->len || t->s[i] != '.') return -1;
  int64_t w;
  if (!digits(t->s + 2, i - 2, &w)) w = INT64_MAX;
  *name = t->s + i + 1;
  *nlen = t->len - i - 1;
  return w;
}

/* operand := NAME ['[' span [',' span] ']'] | 'wg'N'.'NAME [...] */
static gboolean parse_operand(Parser *P, Operand *o) {
  o->tok = P->tok;
  o->wg = -1;
  o->rows.lo = o->rows.hi = o->cols.lo = o->cols.hi = -1;
  if (!at(P, TK_IDENT)) return expected(P, "region");
  o->name = P->tok.s;
  o->nlen = P->tok.len;
  int64_t w = remote_wg(&P->tok, &o->name, &o->nlen);
  if (w >= P->prog->nwgs) {
    g_autofree char *q = quote(P->tok.s, P->tok.len);
    g_autofree char *n = w == INT64_MAX ? g_strdup("") : g_strdup_printf(" %" G_GINT64_FORMAT, w);
    return FAIL_AT(&P->tok, "%s: target WG%s out of range 0..%d", q, n, P->prog->nwgs - 1);
  }
  o->wg = (int)w;
  next(P);
  if (!accept(P, TK_LBRACK)) return TRUE;
  if (!parse_span(P, &o->rows)) return FALSE;
  if (accept(P, TK_COMMA) && !parse_span(P, &o->cols)) return FALSE;
  return expect(P, TK_RBRACK, "']'");
}

/* The region called o->name in WG `wg`, as an index into prog->regions. */
static gboolean find_region(Parser *P, const Operand *o, int wg, int *idx) {
  int v = names_get(&P->secs[wg].regions, o->name, o->nlen);
  if (v) {
    *idx = v - 1;
    return TRUE;
  }
  Suggest s = {o->name, o->nlen, NULL, 0};
  for (guint i = 0; i < P->prog->regions->len; i++) {
    const Region *g = g_ptr_array_index(P->prog->regions, i);
    if (g->wg == wg) suggest(&s, g->name);
  }
  g_autofree char *q = quote(o->name, o->nlen), *hn = hint(&s);
  return FAIL_AT(&o->tok, "unknown region %s in WG %d%s", q, wg, hn);
}

/* Resolve operand o against WG `wg`'s regions: window inside the region. */
static gboolean resolve(Parser *P, const Operand *o, int wg, RfRef *r) {
  int idx = -1;
  if (!find_region(P, o, wg, &idx)) return FALSE;
  const Region *g = g_ptr_array_index(P->prog->regions, idx);
  int64_t r0 = o->rows.lo < 0 ? 0 : o->rows.lo, r1 = o->rows.hi < 0 ? g->rows : o->rows.hi;
  int64_t c0 = o->cols.lo < 0 ? 0 : o->cols.lo, c1 = o->cols.hi < 0 ? g->cols : o->cols.hi;
  if (r1 > g->rows || c1 > g->cols || r0 >= r1 || c0 >= c1) {
    g_autofree char *q = quote(g->name, strlen(g->name));
    const char *what = r1 > g->rows || c1 > g->cols ? "out of bounds" : "empty";
    return FAIL_AT(&o->tok,
                   "window [%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                   ":%" G_GINT64_FORMAT "] of region %s (%dx%d) is %s",
                   r0, r1, c0, c1, q, g->rows, g->cols, what);
  }
  /* r0 < r1 <= g->rows and rows*cols <= 65536 (the RF holds at most 256 KiB) */
  g_assert(r0 <= UINT16_MAX && c0 <= UINT16_MAX);
  *r = (RfRef){.region = idx, .r0 = (uint16_t)r0, .rows = (int)(r1 - r0), .c0 = (uint16_t)c0,
               .cols = (int)(c1 - c0)};
  return TRUE;
}

/* A plain NAME: `wgN.NAME` is only for the destination of ST. */
static gboolean not_remote(Parser *P, const Operand *o) {
  if (o->wg < 0) return TRUE;
  g_autofree char *q = quote(o->tok.s, o->tok.len);
  return FAIL_AT(&o->tok, "%s: another WG's region is only allowed as the destination of ST", q);
}

/* An operand of the current WG (no `wgN.` prefix). */
static gboolean local(Parser *P, RfRef *r) {
  Operand o;
  return parse_operand(P, &o) && not_remote(P, &o) && resolve(P, &o, P->cur, r);
}

/* ---------------------------------------------------------------- shapes */

static gboolean same_shape(const RfRef *a, const RfRef *b) {
  return a->rows == b->rows && a->cols == b->cols;
}

/* "shape mismatch: X REF is RxC but Y REF is RxC (rule)" at token t. */
static gboolean mismatch(Parser *P, const Token *t, const char *xn, const RfRef *x,
                         const char *yn, const RfRef *y, const char *rule) {
  g_autofree char *xs = sim_rfref_str(P->prog, x), *ys = sim_rfref_str(P->prog, y);
  return FAIL_AT(t, "shape mismatch: %s %s is %dx%d but %s %s is %dx%d (%s)", xn, xs, x->rows,
                 x->cols, yn, ys, y->rows, y->cols, rule);
}

/* b of an elementwise op against a: RxC, 1xC, Rx1 or 1x1. */
static gboolean broadcast(Parser *P, const Token *t, const char *bn, const RfRef *b,
                          const RfRef *a) {
  if ((b->rows == a->rows || b->rows == 1) && (b->cols == a->cols || b->cols == 1))
    return TRUE;
  g_autofree char *rule = g_strdup_printf("%s must be %dx%d, 1x%d, %dx1 or 1x1", bn, a->rows,
                                          a->cols, a->cols, a->rows);
  return mismatch(P, t, bn, b, "a", a, rule);
}

/* c[MxN] (+)= a[MxK] * b[KxN]  (b[NxK] with .t) */
static gboolean mma_shapes(Parser *P, const Token *tk, const PInsn *in) {
  gboolean t = (in->mods & MOD_T) != 0;
  int bk = t ? in->b.cols : in->b.rows, bn = t ? in->b.rows : in->b.cols;
  if (in->d.rows != in->a.rows)
    return mismatch(P, &tk[0], "c", &in->d, "a", &in->a, "c must have as many rows as a");
  if (bk != in->a.cols)
    return mismatch(P, &tk[2], "b", &in->b, "a", &in->a,
                    t ? "with .t, b must have as many cols as a" :
                        "b must have as many rows as a has cols");
  if (bn != in->d.cols)
    return mismatch(P, &tk[0], "c", &in->d, "b", &in->b,
                    t ? "with .t, c must have as many cols as b has rows" :
                        "c must have as many cols as b");
  return TRUE;
}

/* Shape rules of the compute forms; tk[i] is the token of operand i. */
static gboolean check_shapes(Parser *P, const PInsn *in, const Token *tk) {
  switch (sim_op_form[in->op]) {
  case F_MMA: return mma_shapes(P, tk, in);
  case F_FMA:
    if (!broadcast(P, &tk[3], "c", &in->c, &in->a)) return FALSE;
    /* fallthrough */
  case F_BIN:
    if (!broadcast(P, &tk[2], "b", &in->b, &in->a)) return FALSE;
    /* fallthrough */
  case F_IMM:
  case F_UN:
    if (same_shape(&in->d, &in->a)) return TRUE;
    return mismatch(P, &tk[0], "d", &in->d, "a", &in->a, "d must have the shape of a");
  case F_ROW: {
    if (in->d.rows == in->a.rows && in->d.cols == 1) return TRUE;
    g_autofree char *rule = g_strdup_printf("d must be %dx1", in->a.rows);
    return mismatch(P, &tk[0], "d", &in->d, "a", &in->a, rule);
  }
  case F_RED:
    if (same_shape(&in->d, &in->a)) return TRUE;
    return mismatch(P, &tk[0], "d", &in->d, "s", &in->a, "d must have the shape of s");
  default: return TRUE;
  }
}

/* -------------------------------------------------------------- memory */

/* addr := SYMBOL [('+'|'-') INT] | INT     (inside hbm[...]) */
static gboolean parse_addr(Parser *P, uint64_t *addr) {
  if (at(P, TK_INT)) {
    int64_t v;
    if (!parse_int(P, "address", &v)) return FALSE;
    *addr = (uint64_t)v;
    return TRUE;
  }
  Token sym = P->tok;
  if (!at(P, TK_IDENT)) return expected(P, "ABI symbol or address");
  int i = names_get(&P->abi, sym.s, sym.len);
  if (!i) {
    Suggest sg = {sym.s, sym.len, NULL, 0};
    for (int k = 0; k < P->prog->abi.n; k++) suggest(&sg, P->prog->abi.syms[k].name);
    g_autofree char *q = quote(sym.s, sym.len), *h = hint(&sg);
    return FAIL_AT(&sym, "unknown ABI symbol %s%s", q, h);
  }
  const AbiSym *s = &P->prog->abi.syms[i - 1];
  next(P);
  *addr = s->addr;
  gboolean minus = at(P, TK_MINUS);
  if (!minus && !at(P, TK_PLUS)) return TRUE;
  next(P);
  int64_t v;
  if (!parse_int(P, "integer offset", &v)) return FALSE;
  if (minus && (uint64_t)v > s->addr)
    return FAIL_AT(&sym, "out of bounds: HBM address %s - %" G_GINT64_FORMAT " is negative",
                   s->name, v);
  *addr = minus ? s->addr - (uint64_t)v : s->addr + (uint64_t)v;
  return TRUE;
}

/* mem := 'hbm' '[' addr ']' | 'sh' '[' INT ']' */
static gboolean parse_mem(Parser *P, MemRef *m, MemOp *mo) {
  mo->tok = P->tok;
  gboolean hbm = is_word(&P->tok, "hbm"), sh = is_word(&P->tok, "sh");
  if (!hbm && !sh) return expected(P, "hbm[ADDR] or sh[OFF]");
  if (sh && P->prog->hw.sh_kib == 0)
    return FAIL_AT(&mo->tok, "no SH on this machine (sh_kib=0)");
  next(P);
  if (!expect(P, TK_LBRACK, "'['")) return FALSE;
  m->space = hbm ? MEM_HBM : MEM_SH;
  if (hbm && !parse_addr(P, &m->addr)) return FALSE;
  int64_t off;
  if (sh && !parse_int(P, "SH offset", &off)) return FALSE;
  if (sh) m->addr = (uint64_t)off;
  if (m->addr % 4 != 0)
    return FAIL_AT(&mo->tok, "%s %" G_GUINT64_FORMAT " is not a multiple of 4",
                   hbm ? "HBM address" : "SH offset", m->addr);
  return expect(P, TK_RBRACK, "']'");
}

/* stride := 'stride' INT     (after the ',') */
static gboolean parse_stride(Parser *P, MemRef *m, MemOp *mo) {
  if (!is_word(&P->tok, "stride")) return expected(P, "'stride'");
  next(P);
  mo->stride_tok = P->tok;
  int64_t v;
  if (!parse_int(P, "stride", &v)) return FALSE;
  if (v > INT_MAX) return FAIL_AT(&mo->stride_tok, "integer out of range");
  m->stride = (int)v;
  mo->stride_given = TRUE;
  return TRUE;
}

/* Does the transfer (rows of `cols` floats, `stride` apart, from `first`)
 * touch any byte of [lo, hi)? */
static gboolean touches(uint64_t first, int rows, int cols, int stride, uint64_t lo,
                        uint64_t hi) {
  uint64_t row = 4ull * (uint64_t)stride, len = 4ull * (uint64_t)cols, r = 0;
  if (first + len <= lo) r = (lo - first - len) / row + 1;
  return r < (uint64_t)rows && first + r * row < hi;
}

/* Stores may not write ABI_WEIGHT symbols (docs/machine.md §3). */
static gboolean check_weights(Parser *P, const MemRef *m, const RfRef *rf, const Token *t,
                              uint64_t last) {
  const Abi *abi = &P->prog->abi;
  int lo = 0, hi = abi->n; /* first symbol ending after m->addr */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (abi->syms[mid].addr + abi->syms[mid].bytes <= m->addr) lo = mid + 1;
    else hi = mid;
  }
  for (int i = lo; i < abi->n && abi->syms[i].addr <= last; i++) {
    const AbiSym *s = &abi->syms[i];
    if (s->kind == ABI_WEIGHT &&
        touches(m->addr, rf->rows, rf->cols, m->stride, s->addr, s->addr + s->bytes))
      return FAIL_AT(t, "out of bounds: write into read-only weights '%s' (HBM bytes %"
                        G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT ")",
                     s->name, m->addr, last);
  }
  return TRUE;
}

/* The memory side of a transfer of window rf: default stride, stride at
 * least the window's cols, every byte inside HBM / SH, no weight writes. */
static gboolean check_transfer(Parser *P, MemRef *m, const MemOp *mo, const RfRef *rf,
                               gboolean store) {
  if (!mo->stride_given) m->stride = rf->cols;
  if (m->stride < rf->cols)
    return FAIL_AT(&mo->stride_tok, "stride %d is smaller than the window's %d cols",
                   m->stride, rf->cols);
  uint64_t span = 4ull * ((uint64_t)(rf->rows - 1) * (uint64_t)m->stride + (uint64_t)rf->cols);
  uint64_t last = m->addr + span - 1;
  gboolean hbm = m->space == MEM_HBM;
  uint64_t size = hbm ? P->prog->abi.hbm_bytes : (uint64_t)P->prog->hw.sh_kib * 1024u;
  if (last >= size)
    return FAIL_AT(&mo->tok,
                   "out of bounds: transfer touches %s bytes %" G_GUINT64_FORMAT
                   "..%" G_GUINT64_FORMAT " but %s has %" G_GUINT64_FORMAT " bytes",
                   hbm ? "HBM" : "SH", m->addr, last, hbm ? "HBM" : "SH", size);
  if (hbm && store) return check_weights(P, m, rf, &mo->tok, last);
  return TRUE;
}

/* ------------------------------------------------------------- operands */

static const char *const form_usage[] = {
    [F_LD] = "d, hbm[ADDR]|sh[OFF] [, stride S]",
    [F_ST] = "hbm[ADDR]|sh[OFF]|wgN.d, a [, stride S]",
    [F_MMA] = "c, a, b",
    [F_BIN] = "d, a, b",
    [F_FMA] = "d, a, b, c",
    [F_IMM] = "d, a, IMM",
    [F_UN] = "d, a",
    [F_FILL] = "d, IMM",
    [F_ROW] = "d, a",
    [F_RED] = "d, s, ev.G, N",
    [F_EV] = "ev.E, N",
    [F_N] = "N",
    [F_NONE] = "",
};

/* "usage: LD.mc d, hbm[ADDR] [, stride S], {WG, ...}" etc. */
static char *usage(const PInsn *in) {
  if (in->mods & MOD_MC) return g_strdup("usage: LD.mc d, hbm[ADDR] [, stride S], {WG, ...}");
  const char *u = form_usage[sim_op_form[in->op]];
  return g_strdup_printf("usage: %s%s%s", sim_op_mnemonic[in->op], *u ? " " : "", u);
}

/* Before operand `name`: the line must not have ended. */
static gboolean operand(Parser *P, const PInsn *in, const char *name) {
  if (!at_eol(P)) return TRUE;
  g_autofree char *u = usage(in);
  return FAIL_AT(&P->tok, "missing operand %s (%s)", name, u);
}

/* ',' before operand `name`. */
static gboolean comma(Parser *P, const PInsn *in, const char *name) {
  return operand(P, in, name) && expect(P, TK_COMMA, "','");
}

/* The instruction must end here. */
static gboolean no_more(Parser *P, const PInsn *in) {
  if (at_eol(P)) return TRUE;
  TokKind k = P->tok.kind;
  if (k != TK_NUL && k != TK_ERROR && k != TK_BADDIR &&
      (k == TK_COMMA || sim_op_form[in->op] == F_NONE)) {
    g_autofree char *u = usage(in);
    return FAIL_AT(&P->tok, "too many operands (%s)", u);
  }
  return expected(P, "end of line");
}

/* The value of a FLOAT or INT token, exactly as g_ascii_strtod gives it.
 * Fast path (Clinger): when the significant digits fit in 53 bits and the
 * power of ten is exact (10^0..10^22), one IEEE multiplication or division
 * is correctly rounded, as strtod is.  Anything else goes to strtod. */
static double token_double(const char *s, size_t n) {
#if FLT_EVAL_METHOD == 0
  static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t m = 0;
  int ndig = 0, e10 = 0;
  gboolean dot = FALSE;
  size_t i = 0;
  for (; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
    if (s[i] == '.') {
      dot = TRUE;
    } else {
      if (m == 0 && s[i] == '0') { /* leading zeros are not significant */
      } else if (++ndig > 19) {
        goto slow;
      } else {
        m = m * 10 + (uint64_t)(s[i] - '0');
      }
      if (dot) e10--;
    }
  }
  if (i < n) { /* exponent: [eE][+-]?digits */
    int sign = 1, e = 0;
    i++;
    if (s[i] == '+' || s[i] == '-') sign = s[i++] == '-' ? -1 : 1;
    for (; i < n; i++) {
      if (e > 100000) goto slow;
      e = e * 10 + (s[i] - '0');
    }
    e10 += sign * e;
  }
  if (m == 0) return 0.0;
  if (m > (UINT64_C(1) << 53) || e10 < -22 || e10 > 22) goto slow;
  return e10 < 0 ? (double)m / p10[-e10] : (double)m * p10[e10];
slow:
#endif
  {
    char buf[64];
    if (n < sizeof buf) {
      memcpy(buf, s, n);
      buf[n] = '\0';
      return g_ascii_strtod(buf, NULL);
    }
    g_autofree char *copy = g_strndup(s, n);
    return g_ascii_strtod(copy, NULL);
  }
}

/* imm := ['-'] (FLOAT | INT) */
static gboolean parse_imm(Parser *P, float *out) {
  gboolean neg = at(P, TK_MINUS);
  if (neg) next(P);
  if (!at(P, TK_FLOAT) && !at(P, TK_INT)) return expected(P, "immediate");
  double v = token_double(P->tok.s, P->tok.len);
  float f = (float)(neg ? -v : v);
  if (!isfinite(f)) return FAIL_AT(&P->tok, "float out of range");
  *out = f;
  next(P);
  return TRUE;
}

/* event := 'ev.' NAME */
static gboolean parse_event(Parser *P, int *idx) {
  const Token *t = &P->tok;
  if (!at(P, TK_IDENT)) return expected(P, "event ev.NAME");
  gboolean ok = t->len > 3 && memcmp(t->s, "ev.", 3) == 0 &&
                (g_ascii_isalpha(t->s[3]) || t->s[3] == '_');
  for (size_t i = 4; ok && i < t->len; i++) ok = g_ascii_isalnum(t->s[i]) || t->s[i] == '_';
  if (!ok) {
    g_autofree char *q = quote(t->s, t->len);
    return FAIL_AT(t, "bad event %s: events are written ev.NAME", q);
  }
  int v = names_get(&P->events, t->s + 3, t->len - 3);
  if (!v) {
    char *nm = g_strndup(t->s + 3, t->len - 3);
    g_ptr_array_add(P->prog->events, nm);
    v = (int)P->prog->events->len;
    names_put_n(&P->events, nm, t->len - 3, v);
  }
  *idx = v - 1;
  next(P);
  return TRUE;
}

/* The compute forms: MMA, BIN, FMA, IMM, UN, FILL, ROW, RED (d, a, b, c
 * then IMM or event and count as the form says). */
static gboolean compute_operands(Parser *P, PInsn *in) {
  OpForm f = sim_op_form[in->op];
  static const char *const mma[] = {"c", "a", "b"}, *const std[] = {"d", "a", "b", "c"},
                           *const red[] = {"d", "s"};
  const char *const *names = f == F_MMA ? mma : f == F_RED ? red : std;
  int nrf = f == F_FILL ? 1 : f == F_BIN || f == F_MMA ? 3 : f == F_FMA ? 4 : 2;
  RfRef *rf[] = {&in->d, &in->a, &in->b, &in->c};
  Token tk[4];
  for (int i = 0; i < nrf; i++) {
    if (!(i ? comma(P, in, names[i]) : operand(P, in, names[i]))) return FALSE;
    tk[i] = P->tok;
    if (!local(P, rf[i])) return FALSE;
  }
  if (f == F_IMM || f == F_FILL)
    return comma(P, in, "IMM") && parse_imm(P, &in->imm) && check_shapes(P, in, tk);
  if (f == F_RED) {
    Token ev, nt;
    if (!comma(P, in, "ev.G")) return FALSE;
    ev = P->tok;
    if (!parse_event(P, &in->event) || !comma(P, in, "N")) return FALSE;
    nt = P->tok;
    if (!parse_sint(P, "integer", &in->n)) return FALSE;
    if (in->event == 0) return FAIL_AT(&ev, "RED may not signal ev.in (it belongs to the host)");
    if (in->n < 1 || in->n > P->prog->nwgs)
      return FAIL_AT(&nt, "RED contributor count must be 1..%d, got %" G_GINT64_FORMAT,
                     P->prog->nwgs, in->n);
  }
  return check_shapes(P, in, tk);
}

/* ev := ('SIG' | 'WAIT') event ',' sint  |  'WAITT' sint */
static gboolean sync_operands(Parser *P, PInsn *in) {
  Token ev = P->tok;
  if (in->op != OP_WAITT &&
      !(operand(P, in, "ev.E") && parse_event(P, &in->event) && comma(P, in, "N")))
    return FALSE;
  Token nt = P->tok;
  if (!operand(P, in, "N") || !parse_sint(P, "integer", &in->n)) return FALSE;
  if (in->op == OP_SIG && in->event == 0)
    return FAIL_AT(&ev, "SIG ev.in is not allowed: ev.in belongs to the host");
  int64_t min = in->op == OP_SIG ? 1 : 0;
  const char *what = in->op == OP_WAITT ? "cycles" : "count";
  if (in->n < min)
    return FAIL_AT(&nt, "%s %s must be >= %d, got %" G_GINT64_FORMAT, sim_op_mnemonic[in->op],
                   what, (int)min, in->n);
  if (in->n > TCC_MAX_COUNT)
    return FAIL_AT(&nt, "%s %s must be <= %" G_GINT64_FORMAT ", got %" G_GINT64_FORMAT,
                   sim_op_mnemonic[in->op], what, TCC_MAX_COUNT, in->n);
  return TRUE;
}

/* Queue a reference into another WG for resolution after the last line. */
static void defer(Parser *P, const Operand *o, const MemOp *mo, gboolean resolved) {
  Fixup f = {.wg = P->cur, .at = P->ncode, .op = *o, .resolved = resolved};
  if (mo) f.mem = *mo;
  g_array_append_val(P->fixups, f);
}

static int cmp_int(gconstpointer a, gconstpointer b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* targets := '{' INT {',' INT} '}'    (stored sorted, duplicates dropped) */
static gboolean parse_targets(Parser *P, PInsn *in) {
  Token open = P->tok;
  if (!expect(P, TK_LBRACE, "target list {WG, ...}")) return FALSE;
  if (at(P, TK_RBRACE)) return FAIL_AT(&open, "LD.mc target list is empty");
  g_autoptr(GArray) ws = g_array_new(FALSE, FALSE, sizeof(int));
  do {
    Token t = P->tok;
    int64_t w;
    if (!parse_int(P, "WG number", &w)) return FALSE;
    if (w >= P->prog->nwgs)
      return FAIL_AT(&t, "target WG %" G_GINT64_FORMAT " out of range 0..%d", w,
                     P->prog->nwgs - 1);
    int wi = (int)w;
    g_array_append_val(ws, wi);
  } while (accept(P, TK_COMMA));
  if (!expect(P, TK_RBRACE, "',' or '}'")) return FALSE;
  g_array_sort(ws, cmp_int);
  int *block = g_new0(int, 2 * (gsize)ws->len + 1); /* count, targets, then tregions */
  g_ptr_array_add(P->prog->lists, block);
  in->targets = block + 1;
  for (guint i = 0; i < ws->len; i++) {
    int w = g_array_index(ws, int, i);
    if (in->ntargets == 0 || in->targets[in->ntargets - 1] != w) in->targets[in->ntargets++] = w;
  }
  block[0] = in->ntargets; /* sim_insn_ntargets */
  return TRUE;
}

/* ld_tail := [',' stride] [',' targets]     (targets with .mc only, required) */
static gboolean ld_tail(Parser *P, PInsn *in, MemOp *mo) {
  gboolean mc = (in->mods & MOD_MC) != 0, sep = accept(P, TK_COMMA);
  if (sep && is_word(&P->tok, "stride")) {
    if (!parse_stride(P, &in->mem, mo)) return FALSE;
    sep = accept(P, TK_COMMA);
  }
  if (!mc && at(P, TK_LBRACE)) return FAIL_AT(&P->tok, "a target list needs LD.mc");
  if (!mc) return !sep || expected(P, "'stride'");
  if (!(sep ? operand(P, in, "{WG, ...}") : comma(P, in, "{WG, ...}"))) return FALSE;
  if (!at(P, TK_LBRACE))
    return expected(P, mo->stride_given ? "target list {WG, ...}" : "'stride' or {WG, ...}");
  return parse_targets(P, in);
}

static gboolean has_region(Parser *P, const Operand *o, int wg) {
  return names_get(&P->secs[wg].regions, o->name, o->nlen) != 0;
}

/* ld := 'LD' ['.mc'] operand ',' mem ld_tail
 * LD.mc's d is resolved on the issuer when it declares the region, else on
 * the first target after the whole file is read. */
static gboolean ld_operands(Parser *P, PInsn *in) {
  gboolean mc = (in->mods & MOD_MC) != 0;
  if (mc && !P->prog->hw.multicast)
    return fail(P, in->line, in->col, "LD.mc needs multicast=1 (this machine has multicast=0)");
  Operand d;
  MemOp mo = {0};
  if (!operand(P, in, "d") || !parse_operand(P, &d) || !not_remote(P, &d)) return FALSE;
  gboolean here = !mc || has_region(P, &d, P->cur);
  if (here && !resolve(P, &d, P->cur, &in->d)) return FALSE;
  if (!comma(P, in, "hbm[ADDR]") || !parse_mem(P, &in->mem, &mo)) return FALSE;
  if (mc && in->mem.space != MEM_HBM) return FAIL_AT(&mo.tok, "LD.mc reads from HBM only");
  if (!ld_tail(P, in, &mo)) return FALSE;
  if (here && !check_transfer(P, &in->mem, &mo, &in->d, FALSE)) return FALSE;
  if (mc) defer(P, &d, &mo, here);
  return TRUE;
}

/* st := 'ST' (mem | 'wg'N'.'NAME [window]) ',' operand [',' stride] */
static gboolean st_operands(Parser *P, PInsn *in) {
  MemOp mo = {0};
  Operand dst;
  const char *nm;
  size_t n;
  if (!operand(P, in, "destination")) return FALSE;
  gboolean mem = is_word(&P->tok, "hbm") || is_word(&P->tok, "sh");
  if (!mem && (!at(P, TK_IDENT) || remote_wg(&P->tok, &nm, &n) < 0))
    return expected(P, "hbm[ADDR], sh[OFF] or wgN.region");
  if (mem ? !parse_mem(P, &in->mem, &mo) : !parse_operand(P, &dst)) return FALSE;
  if (!comma(P, in, "a") || !local(P, &in->a)) return FALSE;
  if (mem) {
    if (accept(P, TK_COMMA) && !parse_stride(P, &in->mem, &mo)) return FALSE;
    return check_transfer(P, &in->mem, &mo, &in->a, TRUE);
  }
  in->mem.space = MEM_RF;
  in->mem.stride = in->a.cols;
  defer(P, &dst, NULL, FALSE);
  return TRUE;
}

/* ----------------------------------------------------------- instructions */

/* A modifier suffix `.NAME` of op -> MOD_* bit, 0 when unknown. */
static int modifier(Op op, const char *s, size_t n) {
  if (op == OP_MMA && n == 1 && s[0] == 'z') return MOD_Z;
  if (op == OP_MMA && n == 1 && s[0] == 't') return MOD_T;
  if (op == OP_LD && n == 2 && memcmp(s, "mc", 2) == 0) return MOD_MC;
  return 0;
}

/* The modifiers after the mnemonic: {'.' MOD} */
static gboolean parse_mods(Parser *P, const Token *t, size_t from, PInsn *in) {
  static const char *const takes[OP__COUNT] = {[OP_LD] = "expected .mc",
                                               [OP_MMA] = "expected .z or .t"};
  for (size_t i = from; i < t->len;) {
    size_t j = i + 1;
    while (j < t->len && t->s[j] != '.') j++;
    int m = modifier(in->op, t->s + i + 1, j - i - 1);
    g_autofree char *q = quote(t->s + i, j - i);
    int col = t->col + (int)MIN(i, (size_t)INT_MAX - (size_t)t->col);
    if (!m)
      return fail(P, t->line, col, "unknown modifier %s for %s (%s)", q, sim_op_mnemonic[in->op],
                  takes[in->op] ? takes[in->op] : "it takes none");
    if (in->mods & m) return fail(P, t->line, col, "duplicate modifier %s", q);
    in->mods |= m;
    i = j;
  }
  return TRUE;
}

/* mnemonic := NAME {'.' MOD}    (the longest table name that is a prefix
 * ending at a '.' or at the end) */
static gboolean parse_mnemonic(Parser *P, PInsn *in) {
  const Token *t = &P->tok;
  size_t best = 0;
  int op = -1;
  for (size_t n = MIN(t->len, P->op_maxlen); n > 0 && op < 0; n--) /* longest first */
    if (n == t->len || t->s[n] == '.') {
      int v = names_get(&P->ops, t->s, n);
      if (v) {
        best = n;
        op = v - 1;
      }
    }
  if (op < 0) {
    Suggest s = {t->s, t->len, NULL, 0};
    for (int i = 0; i < OP__COUNT; i++) suggest(&s, sim_op_mnemonic[i]);
    g_autofree char *q = quote(t->s, t->len), *h = hint(&s);
    return FAIL_AT(t, "unknown instruction %s%s", q, h);
  }
  in->op = (Op)op;
  if (!parse_mods(P, t, best, in)) return FALSE;
  next(P);
  return TRUE;
}

/* The texts are found again from the instructions' positions
 * (sim_program_texts), but for an instruction whose line or column
 * saturated (a text of more than INT_MAX lines, or a line of more than
 * INT_MAX bytes): its mnemonic's offset is kept aside. */
static void note_text(Parser *P, const Insn *in, const char *s) {
  if (in->line < INT_MAX && in->col < INT_MAX) return;
  Program *prog = P->prog;
  if (!prog->text_at) prog->text_at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t pair[2] = {P->ncode, (uint64_t)(s - P->src)};
  g_array_append_vals(prog->text_at, pair, 2);
}

/* Room for one more instruction at P->code[P->ncode].  The array is not
 * cleared: commit() writes the whole slot.  (Clearing the guess, ~6 times
 * the instructions of a P1 program, was 36% of the page clearing of a
 * tcc-grade, whose one arena is never fresh memory that calloc may skip.) */
static Insn *new_insn(Parser *P) {
  if (P->ncode == P->capcode) {
    size_t cap = MAX(2 * P->capcode, 64);
    P->code = g_renew(Insn, P->code, cap);
    sim_huge_hint(P->code, cap * sizeof(Insn));
    P->capcode = cap;
  }
  return &P->code[P->ncode];
}

/* ------------------------------------------------------------- operands */

static guint ref_hash(const RfRef *r) {
  uint64_t h = ((uint64_t)(uint32_t)r->region << 32 | (uint64_t)r->r0 << 16 | r->c0) *
               0x9E3779B97F4A7C15ull;
  h = (h ^ ((uint64_t)(uint32_t)r->rows << 32 | (uint32_t)r->cols)) * 0x9E3779B97F4A7C15ull;
  return (guint)(h >> 32);
}

/* RfRef has no padding: 16 bytes compared as two words */
static inline gboolean ref_eq(const RfRef *a, const RfRef *b) { return memcmp(a, b, sizeof *a) == 0; }

/* intern's slow path: the hash table (and the per-region cache's growth). */
static uint32_t intern_slow(Parser *P, const RfRef *r) {
  Program *prog = P->prog;
  Refs *t = &P->refs;
  if ((size_t)r->region >= t->nlast) {
    size_t n = MAX(2 * t->nlast, (size_t)r->region + 1);
    t->last = g_renew(uint32_t, t->last, n);
    memset(t->last + t->nlast, 0, sizeof(uint32_t) * (n - t->nlast));
    t->nlast = n;
  }
  uint32_t *last = &t->last[r->region];
  if (2 * (size_t)prog->nrefs >= t->cap) { /* rehash into twice the slots */
    size_t cap = 2 * t->cap;
    uint32_t *slot = g_new0(uint32_t, cap);
    for (uint32_t id = 1; id < prog->nrefs; id++) {
      size_t h = ref_hash(&prog->refs[id]) & (cap - 1);
      while (slot[h]) h = (h + 1) & (cap - 1);
      slot[h] = id + 1;
    }
    g_free(t->slot);
    t->slot = slot;
    t->cap = cap;
  }
  size_t h = ref_hash(r) & (t->cap - 1);
  for (; t->slot[h]; h = (h + 1) & (t->cap - 1))
    if (ref_eq(&prog->refs[t->slot[h] - 1], r)) return *last = t->slot[h] - 1;
  if (prog->nrefs == t->capref) {
    t->capref *= 2;
    prog->refs = g_renew(RfRef, prog->refs, t->capref);
  }
  uint32_t id = prog->nrefs++;
  prog->refs[id] = *r;
  t->slot[h] = id + 1;
  return *last = id;
}

/* The id of operand r in prog->refs, added if new (0: absent).  The last
 * operand of each region is tried first (a whole region, mostly). */
static inline uint32_t intern(Parser *P, const RfRef *r) {
  if (r->region < 0) return 0;
  if ((size_t)r->region < P->refs.nlast) {
    uint32_t id = P->refs.last[r->region];
    if (ref_eq(&P->prog->refs[id], r)) return id;
  }
  return intern_slow(P, r);
}

static void refs_init(Parser *P) {
  Program *prog = P->prog;
  P->refs.capref = 64;
  prog->refs = g_new0(RfRef, P->refs.capref);
  prog->refs[0].region = -1; /* the absent operand */
  prog->nrefs = 1;
  P->refs.cap = 256;
  P->refs.slot = g_new0(uint32_t, P->refs.cap);

}

static void refs_clear(Parser *P) {
  g_free(P->refs.slot);
  g_free(P->refs.last);
  memset(&P->refs, 0, sizeof P->refs);
}

/* The parsed instruction into its compact form (every field written).
 * Written in place, zeros first: a copy built on the stack and stored
 * whole read its 16-byte parts back across the narrow stores that had
 * just written them (a store-forwarding stall per instruction). */
static void commit(Parser *P, const PInsn *in, Insn *out) {
  OpForm f = sim_op_form[in->op];
  uint32_t d = intern(P, &in->d), a = intern(P, &in->a);
  uint32_t b, c = 0;
  if (f == F_LD || f == F_ST) {
    b = intern(P, &in->dst);
  } else {
    b = intern(P, &in->b);
    c = intern(P, &in->c);
  }
  memset(out, 0, sizeof *out);
  out->line = in->line;
  out->col = in->col;
  out->op = (uint8_t)in->op;
  out->mods = (uint8_t)in->mods;
  out->d = d;
  out->a = a;
  out->b = b; /* dst for LD and ST */
  out->c = c;
  if (f == F_LD || f == F_ST) {
    out->addr = in->mem.addr;
    out->stride = in->mem.stride;
    out->space = (uint8_t)in->mem.space;
    out->targets = in->targets;
  } else {
    out->n = in->n;
    if (f == F_IMM || f == F_FILL) out->imm = in->imm; /* n is 0 in these forms */
    out->event = in->event;
  }
}

/* A committed LD/ST back into its parse form (fixups). */
static void expand(const Parser *P, const Insn *in, PInsn *out) {
  const Program *prog = P->prog;
  PInsn x = {.line = in->line, .col = in->col, .event = -1, .op = (Op)in->op, .mods = in->mods};
  x.d = prog->refs[in->d];
  x.a = prog->refs[in->a];
  x.b = x.c = prog->refs[0];
  x.dst = prog->refs[in->dst];
  x.mem = sim_insn_mem(in);
  x.targets = in->targets;
  x.ntargets = sim_insn_ntargets(in);
  *out = x;
}

/* ------------------------------------------------------------ fast path */

/* Most lines of a large program are compute instructions on whole regions:
 * `VEC.add q, q, r`, `VEC.muli q, q, 0.5`, `MMA acc, a, b0`, `END`.
 * fast_insn reads such a line straight from the bytes (the mnemonic is the
 * current token) and fills *in exactly as the general parser would.  On
 * anything else -- a modifier, a window, `wgN.`, another form, an unknown
 * name, a shape error, unusual blanks -- it returns FALSE having changed
 * nothing, and the general parser takes the line, diagnostics and all.  So
 * it accepts a subset of what the general parser accepts, with the same
 * result (tests/unit/test_asm.c compares the two on generated lines). */
gboolean sim_asm_fast_path = TRUE;

static gboolean blank(char c) { return c == ' ' || c == '\t'; }
static gboolean digit(char c) { return c >= '0' && c <= '9'; }

/* Would check_shapes accept these operands (no modifiers)? */
static gboolean fast_shapes(OpForm f, const RfRef *r) {
  const RfRef *d = &r[0], *a = &r[1], *b = &r[2], *c = &r[3];
#define BCAST(x) (((x)->rows == a->rows || (x)->rows == 1) && ((x)->cols == a->cols || (x)->cols == 1))
  switch (f) {
  case F_MMA: return d->rows == a->rows && b->rows == a->cols && b->cols == d->cols;
  case F_FMA: return BCAST(c) && BCAST(b) && same_shape(d, a);
  case F_BIN: return BCAST(b) && same_shape(d, a);
  case F_IMM:
  case F_UN: return same_shape(d, a);
  case F_ROW: return d->rows == a->rows && d->cols == 1;
  default: return TRUE; /* F_FILL, F_NONE */
  }
#undef BCAST
}

static gboolean fast_insn(Parser *P, PInsn *in) {
  const Token mn = P->tok;
  /* the whole token: no modifiers */
  int v = names_get(&P->ops, mn.s, mn.len);
  if (!v) return FALSE;
  OpForm f = sim_op_form[v - 1];
  int nrf = f == F_MMA || f == F_BIN ? 3 : f == F_FMA ? 4 : f == F_FILL ? 1 : f == F_NONE ? 0 : 2;
  if (f != F_MMA && f != F_BIN && f != F_FMA && f != F_IMM && f != F_UN && f != F_ROW &&
      f != F_FILL && f != F_NONE)
    return FALSE;
  const Names *regs = &P->secs[P->cur].regions;
  const char *p = mn.s + mn.len;
  RfRef r[4] = {{.region = -1}, {.region = -1}, {.region = -1}, {.region = -1}};
  for (int i = 0; i < nrf; i++) {
    while (blank(*p)) p++;
    if (i > 0) {
      if (*p++ != ',') return FALSE;
      while (blank(*p)) p++;
    }
    const char *name = p;
    if (!(sim_asm_ident[(guchar)*p] & SIM_ID_START)) return FALSE;
    size_t n = ident_run(p, FALSE);
    p += n;
    if (*p == '.' || *p == '[') return FALSE; /* wgN.NAME, NAME.x, a window */
    const NameEnt *g = names_find(regs, name, n);
    if (!g) return FALSE;
    r[i] = (RfRef){.region = g->value - 1, .rows = g->rows, .cols = g->cols};
  }
  float imm = 0;
  if (f == F_IMM || f == F_FILL) { /* ',' ['-'] number, as the lexer's INT / FLOAT */
    while (blank(*p)) p++;
    if (*p++ != ',') return FALSE;
    while (blank(*p)) p++;
    gboolean neg = *p == '-';
    if (neg) p++;
    const char *num = p;
    if (digit(*p)) {
      while (digit(*p)) p++;
      if (*p == '.')
        for (p++; digit(*p); p++) {
        }
    } else if (*p == '.' && digit(p[1])) {
      for (p++; digit(*p); p++) {
      }
    } else {
      return FALSE;
    }
    if ((*p == 'e' || *p == 'E') &&
        (digit(p[1]) || ((p[1] == '+' || p[1] == '-') && digit(p[2]))))
      for (p += 2; digit(*p); p++) {
      }
    double d = token_double(num, (size_t)(p - num));
    imm = (float)(neg ? -d : d);
    if (!isfinite(imm)) return FALSE;
  }
  /* The line ends here: blanks, then a comment, the newline or the end. */
  while (blank(*p) || *p == '\r' || *p == '\v' || *p == '\f') p++;
  if (*p != '\n' && *p != ';' && !(*p == '\0' && p == P->lx.end)) return FALSE;
  if (!fast_shapes(f, r)) return FALSE;
  if (*p == '\n') {
    sim_asm_lex_emit(&P->lx, &P->tok, TK_NEWLINE, p, p + 1);
    /* The next line's first token when it is an identifier (the next
     * mnemonic, most likely), as the lexer would find it. */
    const char *q = p + 1;
    while (blank(*q)) q++;
    if (sim_asm_ident[(guchar)*q] & SIM_ID_START) {
      sim_asm_lex_emit(&P->lx, &P->peek, TK_IDENT, q, q + ident_run(q, TRUE));
      P->peeked = TRUE;
    }
  } else { /* a comment or the end: let the lexer see */
    Lexer lx = P->lx;
    P->lx.cur = p; /* same line: line and line_start hold */
    next(P);
    if (!at_eol(P)) { /* a NUL inside the comment */
      P->lx = lx;
      P->tok = mn;
      return FALSE;
    }
  }
  in->op = (Op)(v - 1);
  in->d = r[0];
  in->a = r[1];
  in->b = r[2];
  in->c = r[3];
  in->imm = imm;
  return TRUE;
}

/* insn := mnemonic operands     (operands by the op's form, ops.def) */
static gboolean parse_insn(Parser *P) {
  if (P->cur < 0) {
    g_autofree char *q = quote(P->tok.s, P->tok.len);
    return FAIL_AT(&P->tok, "instruction %s outside a .wg section", q);
  }
  Section *s = &P->secs[P->cur];
  if (s->ended)
    return FAIL_AT(&P->tok, "instruction after END in the section of WG %d", P->cur);
  /* Parsed in pi; committed to P->code (P->ncode++) only when complete. */
  Insn *slot = new_insn(P);
  PInsn pi = {.line = P->tok.line, .col = P->tok.col, .event = -1, .d.region = -1,
              .a.region = -1, .b.region = -1, .c.region = -1, .dst.region = -1};
  PInsn *in = &pi;
  const char *start = P->tok.s;
  if (sim_asm_fast_path && fast_insn(P, in)) goto done;
  if (!parse_mnemonic(P, in)) return FALSE;
  if (in->op == OP_RED && P->prog->hw.reduce_units == 0)
    return fail(P, in->line, in->col, "RED needs reduce units (this machine has reduce=0)");
  gboolean ok;
  switch (sim_op_form[in->op]) {
  case F_LD: ok = ld_operands(P, in); break;
  case F_ST: ok = st_operands(P, in); break;
  case F_EV:
  case F_N: ok = sync_operands(P, in); break;
  case F_NONE: ok = TRUE; break;
  default: ok = compute_operands(P, in); break;
  }
  if (ok) ok = no_more(P, in);
  if (!ok) return FALSE; /* an LD.mc target list is in prog->lists */
done:
  commit(P, in, slot);
  note_text(P, slot, start); /* texts[i] is code[i]'s (sim_program_texts) */
  s->ended = in->op == OP_END;
  P->ncode++;
  s->n++;
  return TRUE;
}

/* --------------------------------------------------------------- the file */

/* stmt := wg | rf | insn | (a second .machine / .problem is an error) */
static gboolean parse_stmt(Parser *P) {
  switch (P->tok.kind) {
  case TK_MACHINE:
    return FAIL_AT(&P->tok, "duplicate .machine (first at line %d)", P->machine_line);
  case TK_PROBLEM:
    return FAIL_AT(&P->tok, "duplicate .problem (first at line %d)", P->problem_line);
  case TK_WG: return parse_wg(P);
  case TK_RF: return parse_rf(P);
  case TK_IDENT: return parse_insn(P);
  default: return expected(P, "instruction or directive");
  }
}

static void skip_blank(Parser *P) {
  while (at(P, TK_NEWLINE)) next(P);
}

/* header := machine NEWLINE {NEWLINE} problem NEWLINE */
static gboolean parse_header(Parser *P) {
  Program *prog = P->prog;
  skip_blank(P);
  if (!at(P, TK_MACHINE)) return expected(P, ".machine as the first directive");
  if (!parse_machine(P) || !end_line(P)) return FALSE;
  prog->nwgs = sim_machine_wgs(&prog->hw);
  prog->wgs = g_new0(WgCode, prog->nwgs);
  P->secs = g_new0(Section, prog->nwgs);
  for (int w = 0; w < prog->nwgs; w++) prog->wgs[w].wg = w;
  skip_blank(P);
  if (!at(P, TK_PROBLEM)) return expected(P, ".problem after .machine");
  return parse_problem(P) && end_line(P);
}

/* Resolve an `ST wgN.d` destination: region of WG N, same shape as a. */
static gboolean fix_st(Parser *P, const Fixup *f, PInsn *in) {
  if (!resolve(P, &f->op, f->op.wg, &in->dst)) return FALSE;
  if (same_shape(&in->dst, &in->a)) return TRUE;
  return mismatch(P, &f->op.tok, "destination", &in->dst, "a", &in->a,
                  "the destination must have the shape of a");
}

/* LD.mc: d (on the first target unless the issuer declares it), bounds,
 * and a region of the same name and shape in every target. */
static gboolean fix_mc(Parser *P, Fixup *f, PInsn *in) {
  if (!f->resolved && (!resolve(P, &f->op, in->targets[0], &in->d) ||
                       !check_transfer(P, &in->mem, &f->mem, &in->d, FALSE)))
    return FALSE;
  const Region *ref = g_ptr_array_index(P->prog->regions, in->d.region);
  for (int i = 0; i < in->ntargets; i++) {
    int idx = -1;
    if (!find_region(P, &f->op, in->targets[i], &idx)) return FALSE;
    const Region *g = g_ptr_array_index(P->prog->regions, idx);
    if (g->rows != ref->rows || g->cols != ref->cols) {
      RfRef a = {.region = idx, .rows = g->rows, .cols = g->cols},
            b = {.region = in->d.region, .rows = ref->rows, .cols = ref->cols};
      return mismatch(P, &f->op.tok, "target", &a, "d", &b,
                      "every LD.mc target must declare the region with the same shape");
    }
    in->targets[in->ntargets + i] = idx; /* sim_insn_tregion */
  }
  return TRUE;
}

static gboolean fix_all(Parser *P) {
  GArray *x = P->prog->xwg = g_array_sized_new(FALSE, FALSE, sizeof(SimXwg), P->fixups->len);
  for (guint i = 0; i < P->fixups->len; i++) {
    const Fixup *f = &g_array_index(P->fixups, Fixup, i);
    SimXwg e = {f->at, f->wg};
    g_array_append_val(x, e);
  }
  for (guint i = 0; i < P->fixups->len; i++) {
    Fixup *f = &g_array_index(P->fixups, Fixup, i);
    PInsn in;
    expand(P, &P->code[f->at], &in);
    if (!(in.op == OP_ST ? fix_st(P, f, &in) : fix_mc(P, f, &in))) return FALSE;
    commit(P, &in, &P->code[f->at]);
  }
  return TRUE;
}

/* file := header {stmt? NEWLINE} EOF */
static gboolean parse_file(Parser *P) {
  next(P);
  if (!parse_header(P)) return FALSE;
  while (!at(P, TK_EOF)) {
    if (accept(P, TK_NEWLINE)) continue;
    if (!parse_stmt(P) || !end_line(P)) return FALSE;
  }
  return close_section(P) && fix_all(P);
}

/* Hand the instructions to prog (also after an error, so that
 * sim_program_free releases them): one array, each WG's run in it. */
static void finish_sections(Parser *P) {
  Program *prog = P->prog;
  if (P->ncode < P->capcode) P->code = g_renew(Insn, P->code, P->ncode); /* NULL if 0 */
  prog->insn_block = P->code;
  prog->ninsns = P->ncode;
  for (int w = 0; P->secs && w < prog->nwgs; w++) {
    Section *s = &P->secs[w];
    names_clear(&s->regions);
    if (!s->seen) continue;
    prog->wgs[w].line = s->line;
    prog->wgs[w].n = (int)s->n;
    prog->wgs[w].insns = s->n ? P->code + s->first : NULL;
  }
  g_free(P->secs);
}

static void free_region(gpointer p) {
  Region *r = p;
  g_free(r->name);
  g_free(r);
}

/* Assemble buf[0..len) (buf[len] is NUL, then SRC_PAD more), taking
 * ownership of buf: it becomes prog->source (`mapped` bytes of a mapping,
 * or g_malloc'd when 0). */
/* The first line of buf[0..len) that starts with a plan's top-level key
 * ("version:", "hardware:", "p1:", "d1:"), or 0: a plan given to tcc-sim. */
static int plan_line(const char *buf, size_t len) {
  static const char *const keys[] = {"version:", "hardware:", "p1:", "d1:"};
  int line = 1;
  for (size_t i = 0; i < len; line++) {
    for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
      size_t n = strlen(keys[k]);
      if (len - i >= n && memcmp(buf + i, keys[k], n) == 0) return line;
    }
    const char *nl = memchr(buf + i, '\n', len - i);
    if (!nl) break;
    i = (size_t)(nl - buf) + 1;
  }
  return 0;
}

static Program *parse_owned(const char *file, const char *buf, size_t len, size_t mapped,
                            GError **err) {
  size_t cap = insn_guess(len);
  Program *prog = g_new0(Program, 1);
  prog->file = g_strdup(file);
  prog->source = buf;
  prog->source_len = len;
  prog->source_map = mapped;
  HashJob job;
  GThread *hashing = hash_start(&job, buf, len, prog->sha256); /* joined below */
  prog->regions = g_ptr_array_new_with_free_func(free_region);
  prog->events = g_ptr_array_new_with_free_func(g_free);
  prog->lists = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(prog->events, g_strdup("in")); /* event 0 */
  Parser P = {.file = file, .prog = prog, .cur = -1, .src = buf, .capcode = cap};
  P.code = g_new(Insn, cap); /* not cleared: new_insn */
  sim_huge_hint(P.code, cap * sizeof(Insn));
  P.fixups = g_array_new(FALSE, FALSE, sizeof(Fixup));
  refs_init(&P);
  names_put(&P.events, g_ptr_array_index(prog->events, 0), 1);
  for (int i = 0; i < OP__COUNT; i++) {
    names_put(&P.ops, sim_op_mnemonic[i], i + 1);
    P.op_maxlen = MAX(P.op_maxlen, strlen(sim_op_mnemonic[i]));
  }
  sim_asm_lex_init(&P.lx, buf, len);
  gboolean ok = parse_file(&P);
  hash_join(hashing); /* before the source can be freed, and before anyone reads the digest */
  finish_sections(&P);
  names_clear(&P.events);
  names_clear(&P.abi);
  names_clear(&P.ops);
  g_array_free(P.fixups, TRUE);
  refs_clear(&P);
  if (!ok) {
    int at = P.error && P.error->domain == SIM_ASM_ERROR ? plan_line(buf, len) : 0;
    if (at > 0) { /* a plan, not a program: say so, not what the lexer met first */
      g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
      g_set_error(err, SIM_ASM_ERROR, P.error->code,
                  "%s:%d:1: error: this is a plan (YAML), not assembly: compile it with tcc-gen "
                  "first (tcc-gen PLAN.yaml -o prog.asm)", name, at);
      g_error_free(P.error);
    } else {
      g_propagate_error(err, P.error);
    }
    sim_program_free(prog);
    return NULL;
  }
  return prog;
}

Program *sim_asm_parse(const char *file, const char *text, size_t len, GError **err) {
  g_return_val_if_fail(err == NULL || *err == NULL, NULL);
  char *copy = g_malloc(len + 1 + SRC_PAD); /* the NUL sentinel the lexer needs, and padding */
  sim_huge_hint(copy, len + 1 + SRC_PAD);
  memcpy(copy, text, len);
  memset(copy + len, 0, 1 + SRC_PAD);
  return parse_owned(file, copy, len, 0, err);
}

Program *sim_asm_parse_take(const char *file, char *text, size_t len, GError **err) {
  g_return_val_if_fail(err == NULL || *err == NULL, NULL);
  char *buf = g_realloc(text, len + 1 + SRC_PAD); /* in place, mostly: room for the padding */
  memset(buf + len, 0, 1 + SRC_PAD);
  return parse_owned(file, buf, len, 0, err);
}

/* A regular file mapped read-only (its pages from the page cache: no
 * copy, and no fresh pages for the kernel to clear, which the bench program's
 * 12 MB cost as much as assembling it), when the bytes after its end in the
 * last page are the NUL sentinel and the padding the lexer needs.  NULL when
 * it cannot be mapped so (read_file then reads it, or reports why not). */
static const char *map_file(const char *file, size_t *len, size_t *mapped) {
#ifdef MAP_POPULATE
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  const char *text = NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uintmax_t)st.st_size <= TCC_ASM_MAX_BYTES && (size_t)st.st_size % page != 0 &&
      page - (size_t)st.st_size % page >= 1 + SRC_PAD) { /* zeros after the end, same page */
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      text = m;
      *len = *mapped = (size_t)st.st_size;
    }
  }
  close(fd);
  return text;
#else
  (void)file;
  (void)len;
  (void)mapped;
  return NULL;
#endif
}

/* A file that cannot be read has no place in it: its error is
 * "FILE:1:1: error: cannot read: REASON" (docs/machine.md, "Diagnostics");
 * one over TCC_ASM_MAX_BYTES is "FILE:1:1: error: program is larger than
 * the limit of N bytes", refused by its size or, a pipe or a device, once
 * limit + 1 bytes are read (file_read.h). */
Program *sim_asm_load(const char *file, GError **err) {
  g_return_val_if_fail(err == NULL || *err == NULL, NULL);
  size_t len = 0, mapped = 0;
  const char *m = map_file(file, &len, &mapped);
  if (m) return parse_owned(file, m, len, mapped, err);
  int errnum = 0;
  /* regular files the mapping cannot take (a size a multiple of the page),
   * pipes and devices: NUL-terminated and padded for the lexer */
  char *text = file_read(file, TCC_ASM_MAX_BYTES, SRC_PAD, &len, &errnum);
  if (!text) {
    g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
    if (errnum == FILE_READ_TOO_LARGE)
      g_set_error(err, SIM_ASM_ERROR, ASM_ERROR_IO, "%s:1:1: error: program is larger than the limit of %" G_GSIZE_FORMAT
                  " bytes", name, TCC_ASM_MAX_BYTES);
    else
      g_set_error(err, SIM_ASM_ERROR, ASM_ERROR_IO, "%s:1:1: error: cannot read: %s", name, g_strerror(errnum));
    return NULL;
  }
  return parse_owned(file, text, len, 0, err);
}
