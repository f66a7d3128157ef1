/* ir_parse.c - the text form of the IR read back (ir.h: ir_parse): what
 * ir_print writes (tcc-gen --emit=ir, --dump-after=PASS) becomes an Ir again,
 * so that ir_print(ir_parse(T)) == T byte for byte, and so that a pass can be
 * tested on a small IR written by hand (tests/passes/, docs/compiler.md
 * "Testing a pass").
 *
 * Two sweeps over the lines.  The first reads the header, the schedule
 * record, the events, every task header and its RF tensors, and the HBM
 * tensors; it only numbers and remembers the op lines.  The second reads the
 * ops: an operand may name an RF tensor of a later task ("y@s1", LD.mc
 * targets), and an HBM operand is written as its address
 * ("hbm[wqkv.l0 + 256 stride 96]"), resolved against the hbm lines at the
 * end of the text.
 *
 * What the text does not say, and what the parser puts there instead:
 * - Tensor indices: the printer groups RF tensors by task and the HBM
 *   tensors last; the parsed IR creates them in that order (every pass
 *   refers to tensors by index only through the ops).
 * - Which HBM tensor an HBM operand views: any tensor with the printed
 *   symbol, address and row stride that holds the window (its shape is the
 *   RF side's: LD's d, ST's a) prints the same; the parser takes one whose
 *   first byte is the address when there is one, else the first that holds
 *   it, in the order of the hbm lines.
 * - Provenance columns: an op or task prints "knob:line"; the column comes
 *   from the schedule record's entry of that knob when its line is the same
 *   (0 otherwise).  An op without a comment gets no provenance of its own
 *   (knob NULL: its task's applies, as for an op the lowering made without
 *   one); one that had its task's provenance explicitly reads back so too.
 * - Where the problem section is (Ir.section, Schedule.where): not printed;
 *   line 0.  "; tcc-gen IR of -" is a NULL plan file.
 * - A live range printed "start..L" (a tensor other WGs write) starts at
 *   op 0 of its WG.
 *
 * Hand-written IR may leave out what the printer always writes: .machine and
 * .problem start from the default machine/problem and set the keys given;
 * the schedule record holds the knobs given (the rest have their defaults,
 * docs/plan.md, and are not printed); "sms_used N" gives sched.sms_used when
 * the record does not; without event lines the only event is "in".
 * Comment lines (';' first) and blank lines may appear anywhere.
 *
 * Errors are one line "NAME:LINE:COL: error: MESSAGE" (IR_ERROR,
 * IR_ERROR_PARSE) at the first problem.
 */
#include <string.h>

#include "ir_parse.h"
#include "text_escape.h"
#include "plan_internal.h" /* the knob table: a record path -> its typed field */

/* An op line seen by the first sweep, read by the second. */
typedef struct OpLine {
  int task;
  int line;  /* 1-based line number */
  char *ls;  /* the line (NUL-terminated in Pr.buf) */
  char *at;  /* after the op number */
} OpLine;

typedef enum { IN_TOP, IN_SCHEDULE, IN_TASK, IN_NO_TASK } Context;

typedef struct Pr {
  const char *name;
  GError **err;
  char *buf;           /* a copy of the text; each line NUL-terminated in place */
  int line;            /* the line being read (1-based) */
  char *ls, *p;        /* its start, the cursor */
  Ir *ir;              /* made once .machine and .problem are read */
  Machine hw;
  Problem prob;
  int machine_line;    /* 0 until seen */
  char *plan_file;     /* from "; tcc-gen IR of FILE" */
  gboolean have_file, have_sms, have_events, have_sched;
  Schedule sched;
  Context in;
  int task;            /* the task whose lines are being read, -1 none */
  int task_ops;        /* ops of that task so far */
  int base;            /* WG op number of its op 0 (live ranges)         */
  int nwg;
  int *wg_ops;         /* ops per WG (nwg + 1: unplaced and bad WGs last) */
  GArray *ops;         /* OpLine */
  GHashTable *tasks;   /* name -> index + 1 */
  GHashTable *rfs;     /* "TASK\x1fNAME" -> index + 1 */
  GHashTable *events;  /* name -> index + 1 */
  GHashTable *hbm_at;  /* "SYM\x1fBYTE" -> GArray of HBM tensor indices */
  GHashTable *hbm_sym; /* "SYM" -> GArray of HBM tensor indices */
  GHashTable *groups;  /* family -> GArray of its groups (indices), in order */
  GHashTable *group_prov; /* family -> IrProv* of its "group" line */
  GHashTable *group_any;  /* the families whose "group" line says "any" (any_order) */
  GString *key;        /* scratch for lookups */
} Pr;

/* ------------------------------------------------------------ errors */

static gboolean fail_at(Pr *P, const char *at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Set "NAME:LINE:COL: error: MESSAGE" (COL of `at` in the current line) and
 * return FALSE. */
static gboolean fail_at(Pr *P, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  int col = at && P->ls && at >= P->ls ? (int)(at - P->ls) + 1 : 1;
  g_autofree char *name = text_escape(P->name ? P->name : "(ir)"); /* one line */
  g_set_error(P->err, IR_ERROR, IR_ERROR_PARSE, "%s:%d:%d: error: %s", name, P->line, col, m);
  return FALSE;
}

/* What stands at `s`, for a message: "'TOKEN'" or "the end of the line". */
static char *seen(const char *s) {
  if (!*s) return g_strdup("the end of the line");
  gsize n = 0;
  if (*s == ',') /* ", x": the comma and what it introduces */
    for (n = 1; s[n] == ' ' || s[n] == '\t'; n++) continue;
  while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != ',' && n < 40) n++;
  if (n == 0) n = 1;
  g_autofree char *t = g_strndup(s, n);
  return g_strdup_printf("'%s'", t);
}

/* Fail with "expected WHAT, got ..." at the cursor. */
static gboolean expected(Pr *P, const char *what) {
  g_autofree char *s = seen(P->p);
  return fail_at(P, P->p, "expected %s, got %s", what, s);
}

/* ------------------------------------------------------------ tokens */

static void ws(Pr *P) {
  while (*P->p == ' ' || *P->p == '\t') P->p++;
}

static gboolean at_end(Pr *P) {
  ws(P);
  return *P->p == '\0';
}

/* The literal `s` at the cursor (no whitespace skipped): consume it. */
static gboolean lit(Pr *P, const char *s) {
  gsize n = strlen(s);
  if (strncmp(P->p, s, n) != 0) return FALSE;
  P->p += n;
  return TRUE;
}

/* A keyword: the literal followed by whitespace or the end. */
static gboolean kw(Pr *P, const char *s) {
  gsize n = strlen(s);
  if (strncmp(P->p, s, n) != 0 || (P->p[n] && P->p[n] != ' ' && P->p[n] != '\t')) return FALSE;
  P->p += n;
  return TRUE;
}

static gboolean expect_lit(Pr *P, const char *s, const char *what) {
  ws(P);
  return lit(P, s) || expected(P, what);
}

static gboolean expect_end(Pr *P, const char *after) {
  if (at_end(P)) return TRUE;
  g_autofree char *s = seen(P->p);
  return fail_at(P, P->p, "unexpected %s after %s", s, after);
}

/* A name: the longest run of characters other than blanks and , [ ] { } @ ;
 * (tensor, task, event and symbol names).  *n = its length (0: none). */
static char *name_tok(Pr *P, gsize *n) {
  char *s = P->p;
  while (*P->p && !strchr(" \t,[]{}@;", *P->p)) P->p++;
  *n = (gsize)(P->p - s);
  return s;
}

/* A name that must be there, as a new string. */
static char *expect_name(Pr *P, const char *what) {
  ws(P);
  gsize n;
  char *s = name_tok(P, &n);
  if (n == 0) {
    expected(P, what);
    return NULL;
  }
  return g_strndup(s, n);
}

/* A decimal integer in lo..hi; `what` names it in messages. */
static gboolean int_in(Pr *P, int64_t lo, int64_t hi, const char *what, int64_t *out) {
  char *s = P->p;
  gboolean neg = *P->p == '-';
  if (neg) P->p++;
  if (!g_ascii_isdigit(*P->p)) {
    P->p = s;
    return expected(P, what);
  }
  uint64_t v = 0;
  gboolean big = FALSE;
  for (; g_ascii_isdigit(*P->p); P->p++) {
    unsigned d = (unsigned)(*P->p - '0');
    if (v > (UINT64_MAX - d) / 10) big = TRUE;
    else v = v * 10 + d;
  }
  int64_t x = 0;
  if (!big && neg && v == (uint64_t)INT64_MAX + 1)
    x = INT64_MIN;
  else if (!big && v <= (uint64_t)INT64_MAX)
    x = neg ? -(int64_t)v : (int64_t)v;
  else
    big = TRUE;
  if (big || x < lo || x > hi) {
    g_autofree char *t = g_strndup(s, (gsize)(P->p - s));
    return fail_at(P, s, "%s %s out of range %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, what, t, lo,
                   hi);
  }
  *out = x;
  return TRUE;
}

static gboolean int_of(Pr *P, const char *what, int *out) {
  int64_t v;
  if (!int_in(P, G_MININT, G_MAXINT, what, &v)) return FALSE;
  *out = (int)v;
  return TRUE;
}

/* "R x C" as "RxC" (both >= 0). */
static gboolean shape(Pr *P, int *rows, int *cols) {
  ws(P);
  int64_t r, c;
  if (!int_in(P, 0, G_MAXINT, "a shape ROWSxCOLS", &r)) return FALSE;
  if (!lit(P, "x")) return expected(P, "'x' in the shape ROWSxCOLS");
  if (!int_in(P, 0, G_MAXINT, "the cols of the shape ROWSxCOLS", &c)) return FALSE;
  *rows = (int)r;
  *cols = (int)c;
  return TRUE;
}

/* -------------------------------------------------------- provenance */

/* "; KNOB[:LINE]" or "; -" (a NULL knob) when the cursor is at ';';
 * otherwise *has = FALSE.  The column comes from the schedule record. */
static gboolean prov_comment(Pr *P, IrProv *pv, gboolean *has) {
  *has = FALSE;
  ws(P);
  if (*P->p != ';') return TRUE;
  P->p++;
  ws(P);
  char *s = P->p;
  while (*P->p && *P->p != ' ' && *P->p != '\t') P->p++;
  gsize n = (gsize)(P->p - s);
  if (n == 0) return fail_at(P, s, "expected a provenance KNOB[:LINE] after ';'");
  *has = TRUE;
  *pv = (IrProv){NULL, 0, 0};
  if (n == 1 && *s == '-') return expect_end(P, "the provenance");
  gsize kn = n;
  char *colon = memchr(s, ':', n);
  if (colon) {
    kn = (gsize)(colon - s);
    char *save = P->p;
    P->p = colon + 1;
    int64_t line;
    if (!int_in(P, 0, G_MAXINT, "the plan line after 'KNOB:'", &line)) return FALSE;
    if (P->p != save) return fail_at(P, P->p, "expected the end of the provenance KNOB:LINE");
    pv->line = (int)line;
  }
  if (kn == 0) return fail_at(P, s, "expected a knob before ':'");
  g_autofree char *knob = g_strndup(s, kn);
  pv->knob = g_intern_string(knob);
  return expect_end(P, "the provenance");
}

/* The record's column for a knob cited at `line` (0 when the record does
 * not place it there); the record's own static path when it has the knob. */
static void prov_resolve(const Schedule *s, IrProv *pv) {
  if (!pv->knob) return;
  for (int i = 0; i < SCHED_NKNOBS; i++) {
    if (!s->loc[i].path || strcmp(s->loc[i].path, pv->knob) != 0) continue;
    pv->knob = s->loc[i].path;
    if (pv->line > 0 && pv->line == s->loc[i].line) pv->col = s->loc[i].col;
    return;
  }
}

/* ------------------------------------------------------------ header */

/* ".machine KEY=V ..." ("dma=ExD" for the DMA engines and depth): the
 * default machine with these keys set; validated. */
static gboolean parse_machine(Pr *P) {
  char *dir = P->p;
  P->p += strlen(".machine");
  sim_machine_default(&P->hw);
  while (!at_end(P)) {
    char *k = P->p;
    while (*P->p && *P->p != '=' && *P->p != ' ' && *P->p != '\t') P->p++;
    g_autofree char *key = g_strndup(k, (gsize)(P->p - k));
    if (!*key || *P->p != '=') {
      P->p = k;
      return expected(P, "a machine parameter KEY=VALUE");
    }
    P->p++;
    g_autoptr(GError) e = NULL;
    int64_t v, d;
    if (strcmp(key, "dma") == 0) {
      if (!int_in(P, 0, G_MAXINT, "the DMA engines of dma=ENGINESxDEPTH", &v)) return FALSE;
      if (!lit(P, "x")) return expected(P, "'x' in dma=ENGINESxDEPTH");
      if (!int_in(P, 0, G_MAXINT, "the DMA depth of dma=ENGINESxDEPTH", &d)) return FALSE;
      if (!sim_machine_set(&P->hw, "dma_engines", (long)v, &e) ||
          !sim_machine_set(&P->hw, "dma_depth", (long)d, &e))
        return fail_at(P, k, "%s", e->message);
      continue;
    }
    if (!int_in(P, G_MINLONG, G_MAXLONG, "an integer value", &v)) return FALSE;
    if (!sim_machine_set(&P->hw, key, (long)v, &e)) return fail_at(P, k, "%s", e->message);
  }
  g_autoptr(GError) e = NULL;
  if (!sim_machine_validate(&P->hw, &e)) return fail_at(P, dir, "%s", e->message);
  return TRUE;
}

/* ".problem d1|p1 KEY=V ...": the kind's default problem with these keys
 * set; validated. */
static gboolean parse_problem(Pr *P) {
  char *dir = P->p;
  P->p += strlen(".problem");
  ws(P);
  ProblemKind kind;
  if (kw(P, "d1")) kind = PROB_D1;
  else if (kw(P, "p1")) kind = PROB_P1;
  else return expected(P, "the problem kind d1 or p1");
  wl_problem_default(&P->prob, kind);
  while (!at_end(P)) {
    char *k = P->p;
    while (*P->p && *P->p != '=' && *P->p != ' ' && *P->p != '\t') P->p++;
    g_autofree char *key = g_strndup(k, (gsize)(P->p - k));
    if (!*key || *P->p != '=') {
      P->p = k;
      return expected(P, "a problem parameter KEY=VALUE");
    }
    P->p++;
    int64_t v;
    g_autoptr(GError) e = NULL;
    if (!int_in(P, G_MINLONG, G_MAXLONG, "an integer value", &v)) return FALSE;
    if (!wl_problem_set(&P->prob, key, (long)v, &e)) return fail_at(P, k, "%s", e->message);
  }
  g_autoptr(GError) e = NULL;
  if (!wl_problem_validate(&P->prob, &e)) return fail_at(P, dir, "%s", e->message);
  return TRUE;
}

/* The IR, once the header is complete; the schedule record starts with
 * every knob at its default and no entry. */
static void start_ir(Pr *P) {
  P->ir = ir_new(&P->hw, &P->prob, P->plan_file);
  P->nwg = sim_machine_wgs(&P->hw);
  P->wg_ops = g_new0(int, P->nwg + 1);
  memset(&P->sched, 0, sizeof P->sched);
  P->sched.dims = P->prob;
  plan_problem_defaults(&P->sched, &P->hw);
  for (int i = 0; i < SCHED_NKNOBS; i++) P->sched.loc[i] = (SchedLoc){0, 0, NULL};
}

/* "  PATH = VALUE  ; line L:C" or "... ; default" (or no comment: a
 * default). */
static gboolean parse_record(Pr *P) {
  ProblemKind kind = P->prob.kind;
  char *at = P->p;
  g_autofree char *path = expect_name(P, "a knob PATH = VALUE");
  if (!path) return FALSE;
  int i = plan_knob_index(path);
  const PlanKnobDef *k = i >= 0 ? &plan_knobs[i] : NULL;
  if (!k || !(k->applies & (1u << kind)) || strcmp(k->full[kind], path) != 0)
    return fail_at(P, at, "'%s' is not a knob of a %s schedule", path, wl_problem_name(kind));
  if (P->sched.loc[i].path) return fail_at(P, at, "knob '%s' is given twice", path);
  if (!expect_lit(P, "=", "'=' after the knob")) return FALSE;
  ws(P);
  char *v = P->p;
  while (*P->p && *P->p != ' ' && *P->p != '\t') P->p++;
  gsize n = (gsize)(P->p - v);
  if (n == 0) return expected(P, "the knob's value");
  if (n >= SCHED_VALUE_MAX)
    return fail_at(P, v, "value of '%s' longer than %d characters", path, SCHED_VALUE_MAX - 1);
  char text[SCHED_VALUE_MAX];
  memcpy(text, v, n);
  text[n] = '\0';
  long val = -1;
  if (k->type == KT_BOOL) {
    val = strcmp(text, "true") == 0 ? 1 : strcmp(text, "false") == 0 ? 0 : -1;
    if (val < 0) return fail_at(P, v, "'%s' is not true or false (knob '%s')", text, path);
  } else if (k->type == KT_ENUM) {
    for (int j = 0; k->names[j]; j++)
      if (strcmp(k->names[j], text) == 0) val = j;
    if (val < 0) {
      g_autofree char *names = g_strjoinv(", ", (char **)k->names);
      return fail_at(P, v, "'%s' is not one of %s (knob '%s')", text, names, path);
    }
  } else {
    char *save = P->p;
    P->p = v;
    int64_t x;
    if (!int_in(P, G_MININT, G_MAXINT, "an integer value", &x)) return FALSE;
    if (P->p != save) return fail_at(P, P->p, "'%s' is not an integer (knob '%s')", text, path);
    val = (long)x;
  }
  int line = 0, col = 0;
  gboolean fitted = FALSE;
  int chosen = SCHED_WRITTEN;
  ws(P);
  if (lit(P, ";")) {
    ws(P);
    if (kw(P, "fallback"))
      chosen = SCHED_FALLBACK, ws(P);
    else if (kw(P, "auto"))
      chosen = SCHED_AUTO, ws(P);
    if (chosen == SCHED_WRITTEN && kw(P, "power.fit")) {
      fitted = TRUE;
    } else if (kw(P, "line")) {
      ws(P);
      int64_t l, c;
      if (!int_in(P, 1, G_MAXINT, "the plan line of 'line LINE:COL'", &l)) return FALSE;
      if (!lit(P, ":")) return expected(P, "':' in 'line LINE:COL'");
      if (!int_in(P, 1, G_MAXINT, "the plan column of 'line LINE:COL'", &c)) return FALSE;
      line = (int)l;
      col = (int)c;
    } else if (chosen == SCHED_AUTO || (chosen == SCHED_FALLBACK && !at_end(P))) {
      return expected(P, "'line LINE:COL' after 'fallback' or 'auto'");
    } else if (chosen == SCHED_FALLBACK) { /* a capacity repair of a knob the plan left */
    } else if (!kw(P, "default")) {
      return expected(P, "'line LINE:COL', 'default' or 'power.fit' after ';'");
    }
  }
  if (!expect_end(P, "the knob's place")) return FALSE;
  P->sched.loc[i] = (SchedLoc){line, col, k->full[kind]};
  P->sched.fitted[i] = (unsigned char)fitted;
  P->sched.chosen[i] = (unsigned char)chosen;
  memcpy(P->sched.value[i], text, n + 1);
  *plan_knob_field(&P->sched, k) = (int)val;
  return TRUE;
}

/* ------------------------------------------------------ tasks, tensors */

/* The WG a task's ops count against (the printer's: bad WGs share one). */
static int wg_slot(const Pr *P, int wg) { return wg >= 0 && wg < P->nwg ? wg : P->nwg; }

/* The end of the current task: its ops follow the WG's earlier ones. */
static void end_task(Pr *P) {
  if (P->task >= 0) P->wg_ops[wg_slot(P, ir_task_at(P->ir, P->task)->wg)] += P->task_ops;
  P->task = -1;
  P->task_ops = 0;
  P->in = IN_TOP;
}

/* " role KIND KEY=V ..." after the stage (the cursor after "role"). */
static gboolean parse_role(Pr *P, IrRole *r) {
  ws(P);
  char *at = P->p;
  g_autofree char *kind = expect_name(P, "a role kind");
  if (!kind) return FALSE;
  int k = -1;
  for (int i = 0; i < ROLE__COUNT; i++)
    if (strcmp(ir_role_name[i], kind) == 0) k = i;
  if (k < 0) {
    g_autofree char *names = g_strjoinv(", ", (char **)ir_role_name);
    return fail_at(P, at, "unknown role '%s' (one of %s)", kind, names);
  }
  *r = ir_role((IrRoleKind)k);
  while (!at_end(P) && *P->p != ';') {
    char *ks = P->p;
    if (kw(P, "waits") || kw(P, "signals")) { /* the dependencies follow */
      P->p = ks;
      break;
    }
    while (*P->p && *P->p != '=' && *P->p != ' ' && *P->p != '\t' && *P->p != ';') P->p++;
    g_autofree char *key = g_strndup(ks, (gsize)(P->p - ks));
    if (!*key || *P->p != '=') {
      P->p = ks;
      return expected(P, "a role coordinate KEY=VALUE");
    }
    P->p++;
    if (strcmp(key, "proj") == 0) {
      char *vs = P->p;
      g_autofree char *v = expect_name(P, "a projection (qkv, wo, w1, w2)");
      if (!v) return FALSE;
      r->proj = -1;
      for (int j = 0; j < PROJ__COUNT; j++)
        if (strcmp(sched_proj_name[j], v) == 0) r->proj = j;
      if (r->proj < 0) return fail_at(P, vs, "unknown projection '%s' (qkv, wo, w1, w2)", v);
      continue;
    }
    int *f = strcmp(key, "step") == 0     ? &r->step
             : strcmp(key, "layer") == 0  ? &r->layer
             : strcmp(key, "panel") == 0  ? &r->panel
             : strcmp(key, "tile") == 0   ? &r->tile
             : strcmp(key, "seq") == 0    ? &r->seq
             : strcmp(key, "head") == 0   ? &r->head
             : strcmp(key, "slice") == 0  ? &r->slice
             : strcmp(key, "kshard") == 0 ? &r->kshard
                                          : NULL;
    if (!f)
      return fail_at(P, ks,
                     "unknown role coordinate '%s' (proj, step, layer, panel, tile, seq, head, "
                     "slice, kshard)",
                     key);
    if (!int_of(P, "an integer value", f)) return FALSE;
  }
  return TRUE;
}

/* A dependency "FAMILY#N": the N-th group (from 0) of the family; the
 * family's groups up to N are made in order (only the order within a family
 * means anything: the sync pass counts a family's tasks group by group). */
static gboolean group_ref(Pr *P, int *g) {
  ws(P);
  char *s = P->p;
  while (*P->p && !strchr(" \t,#;", *P->p)) P->p++;
  if (P->p == s || *P->p != '#') {
    P->p = s;
    return expected(P, "a group FAMILY#N");
  }
  g_autofree char *fam = g_strndup(s, (gsize)(P->p - s));
  P->p++;
  int64_t n;
  if (!int_in(P, 0, 1 << 20, "a group number", &n)) return FALSE;
  GArray *a = g_hash_table_lookup(P->groups, fam);
  if (!a) {
    a = g_array_new(FALSE, FALSE, sizeof(int));
    g_hash_table_insert(P->groups, g_strdup(fam), a);
  }
  const IrProv *pv = g_hash_table_lookup(P->group_prov, fam);
  while (a->len <= (guint)n) {
    int i = pv ? ir_group_for(P->ir, fam, *pv) : ir_group(P->ir, fam);
    ((IrGroup *)g_ptr_array_index(P->ir->groups, i))->any_order = g_hash_table_contains(P->group_any, fam);
    g_array_append_val(a, i);
  }
  *g = g_array_index(a, int, n);
  return TRUE;
}

/* "task NAME wg W|- stage S [pin W] [prelude N] [role ...] [waits G, ...] [signals G]  ; PROV" */
static gboolean parse_task(Pr *P) {
  end_task(P);
  P->p += strlen("task");
  ws(P);
  char *at = P->p;
  g_autofree char *name = expect_name(P, "a task name");
  if (!name) return FALSE;
  gpointer prev = g_hash_table_lookup(P->tasks, name);
  if (prev) return fail_at(P, at, "task '%s' is defined twice", name);
  int wg = -1, stage = 0;
  ws(P);
  if (!kw(P, "wg")) return expected(P, "'wg' after the task name");
  ws(P);
  if (!lit(P, "-") && !int_of(P, "a WG number or '-'", &wg)) return FALSE;
  ws(P);
  if (!kw(P, "stage")) return expected(P, "'stage' after the WG");
  ws(P);
  if (!int_of(P, "a stage number", &stage)) return FALSE;
  int pin = -1;
  ws(P);
  if (kw(P, "pin")) {
    ws(P);
    if (!int_of(P, "a WG number", &pin)) return FALSE;
    ws(P);
  }
  int prelude = 0;
  if (kw(P, "prelude")) {
    ws(P);
    if (!int_of(P, "a count of ops", &prelude)) return FALSE;
    if (prelude < 0) return fail_at(P, P->p, "a prelude of %d ops", prelude);
    ws(P);
  }
  IrRole role = ir_role(ROLE_NONE);
  if (kw(P, "role") && !parse_role(P, &role)) return FALSE;
  int k = ir_task(P->ir, name, stage, (IrProv){NULL, 0, 0});
  IrTask *t = ir_task_at(P->ir, k);
  t->wg = wg;
  t->pin = pin;
  t->prelude = prelude;
  t->role = role;
  ws(P);
  if (kw(P, "waits")) {
    do {
      int g;
      if (!group_ref(P, &g)) return FALSE;
      ir_task_waits(P->ir, k, g);
      ws(P);
    } while (lit(P, ","));
  }
  ws(P);
  if (kw(P, "signals") && !group_ref(P, &t->signals)) return FALSE;
  gboolean has;
  if (!prov_comment(P, &t->prov, &has)) return FALSE;
  if (!has && !expect_end(P, "the task header")) return FALSE;
  g_hash_table_insert(P->tasks, g_steal_pointer(&name), GINT_TO_POINTER(k + 1));
  P->task = k;
  P->task_ops = 0;
  P->base = P->wg_ops[wg_slot(P, wg)];
  P->in = IN_TASK;
  return TRUE;
}

/* The key of an RF tensor: its task and name. */
static const char *rf_key(Pr *P, int task, const char *name, gsize n) {
  g_string_printf(P->key, "%d\x1f", task);
  g_string_append_len(P->key, name, (gssize)n);
  return P->key->str;
}

/* "  rf NAME RxC [(uses U rows)] [pP[+OFF] [(N parts)]] [live F..L|start..L]" */
static gboolean parse_rf(Pr *P) {
  P->p += strlen("rf");
  ws(P);
  char *at = P->p;
  g_autofree char *name = expect_name(P, "an RF tensor name");
  if (!name) return FALSE;
  if (g_hash_table_lookup(P->rfs, rf_key(P, P->task, name, strlen(name)))) {
    if (P->task >= 0)
      return fail_at(P, at, "RF tensor '%s' is defined twice in task '%s'", name,
                     ir_task_at(P->ir, P->task)->name);
    return fail_at(P, at, "RF tensor '%s' is defined twice", name);
  }
  int rows, cols;
  if (!shape(P, &rows, &cols)) return FALSE;
  int t = ir_tensor_rf(P->ir, P->task, name, rows, cols);
  IrTensor *x = ir_tensor(P->ir, t);
  g_hash_table_insert(P->rfs, g_strdup(P->key->str), GINT_TO_POINTER(t + 1));
  ws(P);
  if (lit(P, "(uses")) {
    ws(P);
    if (!int_of(P, "the rows used", &x->used_rows)) return FALSE;
    if (!expect_lit(P, "rows)", "'rows)' after '(uses U'")) return FALSE;
    ws(P);
  }
  if (*P->p == 'p' && g_ascii_isdigit(P->p[1])) {
    P->p++;
    int64_t v;
    if (!int_in(P, 0, G_MAXINT, "a partition", &v)) return FALSE;
    x->part = (int)v;
    x->nparts = 1;
    if (lit(P, "+")) {
      if (!int_in(P, 0, G_MAXINT, "a byte offset in the partition", &v)) return FALSE;
      x->part_off = (int)v;
    }
    ws(P);
    if (lit(P, "(")) {
      ws(P);
      if (!int_of(P, "a number of partitions", &x->nparts)) return FALSE;
      if (!expect_lit(P, "parts)", "'parts)' after '(N'")) return FALSE;
    }
  }
  ws(P);
  if (kw(P, "live")) {
    ws(P);
    int first, last;
    gboolean start = lit(P, "start");
    if (!start && !int_of(P, "the first op of the live range", &first)) return FALSE;
    if (!lit(P, "..")) return expected(P, "'..' in the live range F..L");
    if (!int_of(P, "the last op of the live range", &last)) return FALSE;
    x->first_op = start ? 0 : first + P->base;
    x->last_op = last + P->base;
  }
  return expect_end(P, "the RF tensor");
}

/* "hbm NAME = SYM [+ OFF] RxC stride S" */
static gboolean parse_hbm(Pr *P) {
  end_task(P);
  P->p += strlen("hbm");
  ws(P);
  char *ns = P->p; /* any characters but blanks: "x_in[0,0]" */
  while (*P->p && *P->p != ' ' && *P->p != '\t') P->p++;
  if (P->p == ns) return expected(P, "an HBM tensor name");
  g_autofree char *name = g_strndup(ns, (gsize)(P->p - ns));
  if (!expect_lit(P, "=", "'=' after the HBM tensor name")) return FALSE;
  g_autofree char *sym = expect_name(P, "an ABI symbol");
  if (!sym) return FALSE;
  int64_t off = 0;
  ws(P);
  if (lit(P, "+")) {
    ws(P);
    if (!int_in(P, 0, INT64_MAX, "a byte offset", &off)) return FALSE;
  }
  int rows, cols, stride;
  if (!shape(P, &rows, &cols)) return FALSE;
  ws(P);
  if (!kw(P, "stride")) return expected(P, "'stride' after the shape");
  ws(P);
  if (!int_of(P, "the row stride", &stride)) return FALSE;
  if (!expect_end(P, "the HBM tensor")) return FALSE;
  /* indexed by symbol and first byte, and by symbol (hbm_resolve) */
  int t = ir_tensor_hbm(P->ir, name, sym, (uint64_t)off, rows, cols, stride);
  GHashTable *tabs[2] = {P->hbm_at, P->hbm_sym};
  char *keys[2] = {g_strdup_printf("%s\x1f%" G_GUINT64_FORMAT, sym, (uint64_t)off), g_strdup(sym)};
  for (int i = 0; i < 2; i++) {
    GArray *a = g_hash_table_lookup(tabs[i], keys[i]);
    if (a) {
      g_free(keys[i]);
    } else {
      a = g_array_new(FALSE, FALSE, sizeof(int));
      g_hash_table_insert(tabs[i], keys[i], a);
    }
    g_array_append_val(a, t);
  }
  return TRUE;
}

/* "group FAMILY [any]  ; PROV": the provenance of a family's dependencies,
 * which a pass made for a knob (IrGroup.prov), and whether its groups may
 * complete in any order (IrGroup.any_order); before the tasks that use it. */
static gboolean parse_group(Pr *P) {
  end_task(P);
  P->p += strlen("group");
  ws(P);
  char *at = P->p;
  while (*P->p && !strchr(" \t,#;", *P->p)) P->p++;
  if (P->p == at) return expected(P, "a group family name");
  g_autofree char *fam = g_strndup(at, (gsize)(P->p - at));
  if (g_hash_table_contains(P->group_prov, fam)) return fail_at(P, at, "group '%s' is declared twice", fam);
  if (g_hash_table_contains(P->groups, fam))
    return fail_at(P, at, "group '%s' is declared after a task that uses it", fam);
  ws(P);
  if (strncmp(P->p, "any", 3) == 0 && (P->p[3] == '\0' || strchr(" \t;\n", P->p[3]))) {
    P->p += 3;
    g_hash_table_add(P->group_any, g_strdup(fam));
  }
  IrProv pv;
  gboolean has;
  if (!prov_comment(P, &pv, &has)) return FALSE;
  if (!has || !pv.knob) return expected(P, "'; KNOB[:LINE]', the provenance of the group's family");
  g_hash_table_insert(P->group_prov, g_steal_pointer(&fam), g_memdup2(&pv, sizeof pv));
  return TRUE;
}

/* "event NAME" */
static gboolean parse_event(Pr *P) {
  end_task(P);
  P->p += strlen("event");
  ws(P);
  char *at = P->p;
  g_autofree char *name = expect_name(P, "an event name");
  if (!name || !expect_end(P, "the event name")) return FALSE;
  if (!P->have_events) { /* the text lists every event, "in" included */
    g_ptr_array_set_size(P->ir->events, 0);
    P->have_events = TRUE;
  }
  if (g_hash_table_lookup(P->events, name))
    return fail_at(P, at, "event '%s' is declared twice", name);
  g_ptr_array_add(P->ir->events, g_strdup(name));
  ir_events_changed(P->ir);
  g_hash_table_insert(P->events, g_steal_pointer(&name), GINT_TO_POINTER(P->ir->events->len));
  return TRUE;
}

/* "  N  OP ...": numbered in its task, read by the second sweep. */
static gboolean note_op(Pr *P) {
  char *at = P->p;
  int64_t n;
  if (!int_in(P, 0, G_MAXINT, "an op number", &n)) return FALSE;
  if (n != P->task_ops)
    return fail_at(P, at, "op %" G_GINT64_FORMAT " of task '%s' where op %d is due", n,
                   ir_task_at(P->ir, P->task)->name, P->task_ops);
  if (*P->p != ' ' && *P->p != '\t') return expected(P, "an op after its number");
  OpLine o = {P->task, P->line, P->ls, P->p};
  g_array_append_val(P->ops, o);
  P->task_ops++;
  return TRUE;
}

/* ---------------------------------------------------------- the lines */

/* One line of the first sweep. */
static gboolean line_one(Pr *P) {
  P->p = P->ls;
  ws(P);
  if (*P->p == '\0') return TRUE;
  if (*P->p == ';') { /* a comment; the printer's first line names the plan */
    if (!P->ir && !P->have_file && g_str_has_prefix(P->p, "; tcc-gen IR of ")) {
      const char *f = P->p + strlen("; tcc-gen IR of ");
      P->plan_file = strcmp(f, "-") == 0 ? NULL : g_strdup(f);
      P->have_file = TRUE;
    }
    return TRUE;
  }
  gboolean indented = P->p != P->ls;
  if (!P->machine_line) {
    if (!kw(P, ".machine")) return expected(P, "'.machine' (the IR starts with its header)");
    P->p = P->ls;
    ws(P);
    P->machine_line = P->line;
    return parse_machine(P);
  }
  if (!P->ir) {
    if (!kw(P, ".problem")) return expected(P, "'.problem' after '.machine'");
    P->p -= strlen(".problem");
    if (!parse_problem(P)) return FALSE;
    start_ir(P);
    return TRUE;
  }
  if (indented) {
    switch (P->in) {
    case IN_SCHEDULE: return parse_record(P);
    case IN_TASK:
      if (g_ascii_isdigit(*P->p)) return note_op(P);
      /* fall through */
    case IN_NO_TASK:
      if (kw(P, "rf")) {
        P->p -= 2;
        return parse_rf(P);
      }
      return expected(P, P->in == IN_TASK ? "an 'rf' line or a numbered op" : "an 'rf' line");
    case IN_TOP: break;
    }
    return fail_at(P, P->p, "an indented line outside a task or the schedule");
  }
  char *at = P->p;
  if (kw(P, ".machine"))
    return fail_at(P, at, "a second .machine (the first is on line %d)", P->machine_line);
  if (kw(P, ".problem")) return fail_at(P, at, "a second .problem");
  if (kw(P, "sms_used")) {
    end_task(P);
    ws(P);
    if (!int_of(P, "the SMs used", &P->ir->sms_used)) return FALSE;
    P->have_sms = TRUE;
    return expect_end(P, "sms_used N");
  }
  if (kw(P, "schedule")) {
    end_task(P);
    if (P->have_sched) return fail_at(P, at, "a second schedule block");
    P->have_sched = TRUE;
    P->in = IN_SCHEDULE;
    return expect_end(P, "'schedule'");
  }
  P->p = at;
  if (kw(P, "synced")) { /* the sync pass has run: the dependencies are kept */
    end_task(P);
    P->ir->synced = TRUE;
    return expect_end(P, "'synced'");
  }
  P->p = at;
  if (kw(P, "event")) return P->p = at, parse_event(P);
  if (kw(P, "group")) return P->p = at, parse_group(P);
  if (kw(P, "task")) return P->p = at, parse_task(P);
  if (kw(P, "hbm")) return P->p = at, parse_hbm(P);
  if (kw(P, "no")) {
    ws(P);
    if (!kw(P, "task")) return expected(P, "'no task'");
    end_task(P);
    P->in = IN_NO_TASK;
    P->base = 0;
    return expect_end(P, "'no task'");
  }
  g_autofree char *s = seen(at);
  return fail_at(P, at,
                 "unknown line starting with %s (expected .machine, .problem, sms_used, schedule, "
                 "event, task, no task, hbm or a comment)",
                 s);
}

/* ---------------------------------------------------------------- ops */

/* The operands each kind takes, in the printer's order d, a, b, c. */
enum { S_D = 1, S_A = 2, S_B = 4, S_C = 8 };
static const int op_slots[IR__COUNT] = {
    [IR_LD] = S_D,        [IR_ST] = S_A,         [IR_MMA] = S_D | S_A | S_B,
    [IR_VADD] = S_D | S_A | S_B, [IR_VSUB] = S_D | S_A | S_B, [IR_VMUL] = S_D | S_A | S_B,
    [IR_VMAX] = S_D | S_A | S_B, [IR_VMIN] = S_D | S_A | S_B,
    [IR_VFMA] = S_D | S_A | S_B | S_C,
    [IR_VMULI] = S_D | S_A, [IR_VADDI] = S_D | S_A, [IR_VCOPY] = S_D | S_A, [IR_VFILL] = S_D,
    [IR_VRSUM] = S_D | S_A, [IR_VRMAX] = S_D | S_A, [IR_SEXP] = S_D | S_A,
    [IR_STANH] = S_D | S_A, [IR_SRSQRT] = S_D | S_A, [IR_SRECIP] = S_D | S_A,
    [IR_RED] = S_D | S_A,   [IR_SIG] = 0,          [IR_WAIT] = 0, [IR_WAITT] = 0,
};
static const char *const slot_name[] = {"d", "a", "b", "c"};

/* What an op's operand list must be, for messages: "d, a, b". */
static char *op_form(IrOpKind k) {
  GString *s = g_string_new(NULL);
  const char *parts[8];
  int n = 0;
  if (k == IR_ST) parts[n++] = "hbm[...] or RF@task";
  for (int i = 0; i < 4; i++)
    if (op_slots[k] & (1 << i)) parts[n++] = slot_name[i];
  if (k == IR_LD) parts[n++] = "hbm[...] [, {targets}]";
  if (k == IR_VMULI || k == IR_VADDI || k == IR_VFILL) parts[n++] = "immediate";
  if (k == IR_SIG || k == IR_WAIT || k == IR_RED) parts[n++] = "ev.NAME";
  if (k == IR_SIG || k == IR_WAIT || k == IR_RED || k == IR_WAITT) parts[n++] = "count";
  for (int i = 0; i < n; i++) g_string_append_printf(s, "%s%s", i ? ", " : "", parts[i]);
  return g_string_free(s, FALSE);
}

/* The separator before an operand: nothing before the first, ", " after. */
static gboolean sep(Pr *P, gboolean *first, IrOpKind k, const char *what) {
  ws(P);
  if (*first) {
    *first = FALSE;
    if (*P->p && *P->p != ';') return TRUE;
  } else if (*P->p == ',') {
    P->p++;
    ws(P);
    return TRUE;
  }
  g_autofree char *form = op_form(k), *s = seen(P->p);
  return fail_at(P, P->p, "%s takes %s: expected its %s, got %s", ir_op_mnemonic[k], form, what, s);
}

/* An HBM operand as written: its symbol, first byte and stride (if any). */
typedef struct HbmRef {
  char *at;
  char *sym;
  gsize symlen;
  uint64_t off;
  int stride; /* -1: not written (the rows are contiguous) */
} HbmRef;

/* "hbm[SYM [+ BYTES] [stride S]]" (the cursor at "hbm["). */
static gboolean hbm_ref(Pr *P, HbmRef *h) {
  h->at = P->p;
  P->p += strlen("hbm[");
  ws(P);
  h->sym = P->p;
  while (*P->p && *P->p != ' ' && *P->p != ']') P->p++;
  h->symlen = (gsize)(P->p - h->sym);
  if (h->symlen == 0) return expected(P, "an ABI symbol in hbm[...]");
  h->off = 0;
  h->stride = -1;
  ws(P);
  if (lit(P, "+")) {
    ws(P);
    int64_t v;
    if (!int_in(P, 0, INT64_MAX, "a byte offset", &v)) return FALSE;
    h->off = (uint64_t)v;
    ws(P);
  }
  if (kw(P, "stride")) {
    ws(P);
    int64_t v;
    if (!int_in(P, 1, G_MAXINT, "a row stride", &v)) return FALSE;
    h->stride = (int)v;
    ws(P);
  }
  if (!lit(P, "]")) return expected(P, "']' closing hbm[...]");
  return TRUE;
}

/* Does HBM tensor t hold the operand h as a rows x cols window?  Sets *v. */
static gboolean hbm_holds(const Ir *ir, int t, const HbmRef *h, int rows, int cols, IrView *v) {
  const IrTensor *x = ir_tensor(ir, t);
  if (x->stride != (h->stride >= 0 ? h->stride : cols) || h->off < x->offset || x->stride <= 0)
    return FALSE;
  uint64_t d = h->off - x->offset;
  if (d % 4) return FALSE;
  uint64_t e = d / 4, r0 = e / (uint64_t)x->stride, c0 = e % (uint64_t)x->stride;
  if (r0 + (uint64_t)rows > (uint64_t)x->rows || c0 + (uint64_t)cols > (uint64_t)x->cols)
    return FALSE;
  *v = ir_win(t, (int)r0, rows, (int)c0, cols);
  return TRUE;
}

/* The view of an HBM operand whose shape is that of its RF side: a tensor
 * starting at the address, else the first that holds the window. */
static gboolean hbm_resolve(Pr *P, const HbmRef *h, int rows, int cols, IrView *v) {
  g_string_truncate(P->key, 0);
  g_string_append_len(P->key, h->sym, (gssize)h->symlen);
  GArray *all = g_hash_table_lookup(P->hbm_sym, P->key->str);
  g_string_append_printf(P->key, "\x1f%" G_GUINT64_FORMAT, h->off);
  GArray *at = g_hash_table_lookup(P->hbm_at, P->key->str);
  for (guint i = 0; at && i < at->len; i++)
    if (hbm_holds(P->ir, g_array_index(at, int, i), h, rows, cols, v)) return TRUE;
  for (guint i = 0; all && i < all->len; i++)
    if (hbm_holds(P->ir, g_array_index(all, int, i), h, rows, cols, v)) return TRUE;
  char *end = strchr(h->at, ']');
  g_autofree char *text = g_strndup(h->at, end ? (gsize)(end - h->at) + 1 : strlen(h->at));
  return fail_at(P, h->at,
                 "no hbm tensor holds %s as a %dx%d window (the hbm lines list the tensors)", text,
                 rows, cols);
}

/* A window side "LO:HI" or ":" (the whole side: lo = -1). */
static gboolean span(Pr *P, int *lo, int *hi) {
  ws(P);
  if (lit(P, ":")) {
    *lo = *hi = -1;
    return TRUE;
  }
  if (!int_of(P, "a window LO:HI or ':'", lo)) return FALSE;
  if (!lit(P, ":")) return expected(P, "':' in the window LO:HI");
  return int_of(P, "the end of the window LO:HI", hi);
}

/* An RF operand "NAME[R0:R1, C0:C1]@TASK" (window and task optional; the
 * task is the op's by default). */
static gboolean rf_view(Pr *P, int task, const char *what, IrView *v) {
  ws(P);
  char *at = P->p;
  if (g_str_has_prefix(P->p, "hbm["))
    return fail_at(P, at, "operand %s is an HBM operand; it must be an RF tensor", what);
  gsize n;
  char *name = name_tok(P, &n);
  if (n == 0) {
    g_autofree char *m = g_strdup_printf("an RF tensor (operand %s)", what);
    return expected(P, m);
  }
  int r0 = -1, r1 = -1, c0 = -1, c1 = -1;
  gboolean win = lit(P, "[");
  if (win) {
    if (!span(P, &r0, &r1)) return FALSE;
    if (!expect_lit(P, ",", "',' between the window's rows and cols")) return FALSE;
    if (!span(P, &c0, &c1) || !expect_lit(P, "]", "']' closing the window")) return FALSE;
  }
  int owner = task;
  if (lit(P, "@")) {
    char *ts = P->p;
    gsize tn;
    char *tname = name_tok(P, &tn);
    if (tn == 0) return expected(P, "a task name after '@'");
    g_autofree char *tcopy = g_strndup(tname, tn);
    gpointer k = g_hash_table_lookup(P->tasks, tcopy);
    if (!k) return fail_at(P, ts, "unknown task '%s'", tcopy);
    owner = GPOINTER_TO_INT(k) - 1;
  }
  gpointer t = g_hash_table_lookup(P->rfs, rf_key(P, owner, name, n));
  if (!t) {
    g_autofree char *ncopy = g_strndup(name, n);
    return fail_at(P, at, "no RF tensor '%s' in task '%s'", ncopy, ir_task_at(P->ir, owner)->name);
  }
  const IrTensor *x = ir_tensor(P->ir, GPOINTER_TO_INT(t) - 1);
  if (r0 < 0) r0 = 0, r1 = x->rows;
  if (c0 < 0) c0 = 0, c1 = x->cols;
  *v = ir_win(GPOINTER_TO_INT(t) - 1, r0, r1 - r0, c0, c1 - c0);
  return TRUE;
}

/* "{T1, T2, ...}": LD.mc's destination tensors (whole tensors). */
static gboolean targets(Pr *P, int task, IrOp *op) {
  ws(P);
  if (!lit(P, "{")) return expected(P, "'{' opening LD.mc's target list");
  g_autoptr(GArray) ts = g_array_new(FALSE, FALSE, sizeof(int));
  do {
    ws(P);
    char *at = P->p;
    IrView v;
    if (!rf_view(P, task, "target", &v)) return FALSE;
    IrView all = ir_all(P->ir, v.t);
    if (memcmp(&v, &all, sizeof v) != 0)
      return fail_at(P, at, "an LD.mc target is a whole tensor (no window but its used rows)");
    g_array_append_val(ts, v.t);
    ws(P);
  } while (lit(P, ","));
  if (!lit(P, "}")) return expected(P, "',' or '}' in LD.mc's target list");
  if (ts->len > IR_MAX_TARGETS)
    return fail_at(P, P->p, "LD.mc has %u targets; at most %d", ts->len, IR_MAX_TARGETS);
  op->ntargets = ts->len;
  op->targets = (int *)(void *)g_array_free(g_steal_pointer(&ts), FALSE);
  return TRUE;
}

/* "ev.NAME" */
static gboolean event_ref(Pr *P, int *ev) {
  ws(P);
  char *at = P->p;
  if (!lit(P, "ev.")) return expected(P, "an event ev.NAME");
  gsize n;
  char *name = name_tok(P, &n);
  g_autofree char *copy = g_strndup(name, n);
  gpointer e = g_hash_table_lookup(P->events, copy);
  if (!e && !P->have_events && strcmp(copy, "in") == 0) e = GINT_TO_POINTER(1);
  if (!e) return fail_at(P, at, "unknown event 'ev.%s' (declare it with an event line)", copy);
  *ev = GPOINTER_TO_INT(e) - 1;
  return TRUE;
}

/* An immediate as the printer writes it ("%.6g".."%.9g", "inf", "nan"). */
static gboolean imm(Pr *P, float *f) {
  ws(P);
  char *s = P->p;
  while (*P->p && !strchr(" \t,;", *P->p)) P->p++;
  g_autofree char *t = g_strndup(s, (gsize)(P->p - s));
  char *end = NULL;
  double d = *t ? g_ascii_strtod(t, &end) : 0;
  if (!*t || *end) {
    P->p = s;
    return expected(P, "an immediate (a float)");
  }
  *f = (float)d;
  return TRUE;
}

/* "MNEMONIC[.z][.t][.mc]": the longest mnemonic that is a prefix, then the
 * modifiers. */
static gboolean mnemonic(Pr *P, IrOpKind *kind, int *mods) {
  ws(P);
  char *s = P->p;
  while (*P->p && *P->p != ' ' && *P->p != '\t') P->p++;
  gsize n = (gsize)(P->p - s), best = 0;
  int k = -1;
  for (int i = 0; i < IR__COUNT; i++) {
    gsize m = strlen(ir_op_mnemonic[i]);
    if (m <= n && m > best && strncmp(s, ir_op_mnemonic[i], m) == 0 && (m == n || s[m] == '.'))
      k = i, best = m;
  }
  g_autofree char *tok = g_strndup(s, n);
  if (k < 0) return fail_at(P, s, "unknown op '%s'", tok);
  *kind = (IrOpKind)k;
  *mods = 0;
  for (char *q = s + best; q < s + n;) {
    static const struct {
      const char *text;
      int bit;
    } mod[] = {{".z", IR_MOD_Z}, {".t", IR_MOD_T}, {".mc", IR_MOD_MC}, {".cand", IR_MOD_CAND}};
    gboolean ok = FALSE;
    for (unsigned j = 0; j < G_N_ELEMENTS(mod) && !ok; j++) {
      gsize m = strlen(mod[j].text);
      gboolean hit = strncmp(q, mod[j].text, m) == 0 && (q[m] == '.' || q + m == s + n);
      if (hit && !(*mods & mod[j].bit)) {
        *mods |= mod[j].bit;
        q += m;
        ok = TRUE;
      }
    }
    if (!ok) {
      char *e = strchr(q + 1, '.');
      g_autofree char *bad = g_strndup(q, e && e < s + n ? (gsize)(e - q) : (gsize)(s + n - q));
      return fail_at(P, q, "unknown or repeated modifier '%s' of %s (.z, .t, .mc)", bad,
                     ir_op_mnemonic[k]);
    }
  }
  return TRUE;
}

/* One op line (second sweep), in the order put_operands writes. */
static gboolean parse_op(Pr *P, const OpLine *o) {
  P->line = o->line;
  P->ls = o->ls;
  P->p = o->at;
  IrOpKind kind = IR_LD;
  int mods = 0;
  if (!mnemonic(P, &kind, &mods)) return FALSE;
  IrOp *op = ir_emit(P->ir, o->task, kind);
  op->mods = mods;
  IrView *slots[] = {&op->d, &op->a, &op->b, &op->c};
  gboolean first = TRUE;
  HbmRef h = {0};
  gboolean st_hbm = FALSE;
  if (kind == IR_ST) {
    if (!sep(P, &first, kind, "destination")) return FALSE;
    if (g_str_has_prefix(P->p, "hbm[")) {
      if (!hbm_ref(P, &h)) return FALSE;
      st_hbm = TRUE;
    } else if (!rf_view(P, o->task, "mem", &op->mem)) {
      return FALSE;
    }
  }
  for (int i = 0; i < 4; i++) {
    if (!(op_slots[kind] & (1 << i))) continue;
    g_autofree char *what = g_strdup_printf("operand %s", slot_name[i]);
    if (!sep(P, &first, kind, what) || !rf_view(P, o->task, slot_name[i], slots[i])) return FALSE;
  }
  if (st_hbm && !hbm_resolve(P, &h, op->a.rows, op->a.cols, &op->mem)) return FALSE;
  if (kind == IR_LD) {
    if (!sep(P, &first, kind, "source hbm[...]")) return FALSE;
    if (!g_str_has_prefix(P->p, "hbm[")) return expected(P, "LD's source hbm[...]");
    if (!hbm_ref(P, &h) || !hbm_resolve(P, &h, op->d.rows, op->d.cols, &op->mem)) return FALSE;
    if ((mods & IR_MOD_MC) && (!sep(P, &first, kind, "target list") || !targets(P, o->task, op)))
      return FALSE;
  }
  if ((kind == IR_VMULI || kind == IR_VADDI || kind == IR_VFILL) &&
      (!sep(P, &first, kind, "immediate") || !imm(P, &op->imm)))
    return FALSE;
  gboolean has_ev = kind == IR_SIG || kind == IR_WAIT || kind == IR_RED;
  if (!has_ev) { /* any other op prints an event it has */
    ws(P);
    const char *q = P->p;
    if (!first && *q == ',')
      for (q++; *q == ' ' || *q == '\t'; q++) continue;
    has_ev = (first || q != P->p) && g_str_has_prefix(q, "ev.");
  }
  if (has_ev && (!sep(P, &first, kind, "event ev.NAME") || !event_ref(P, &op->event))) return FALSE;
  if (kind == IR_SIG || kind == IR_WAIT || kind == IR_RED || kind == IR_WAITT) {
    int64_t n;
    if (!sep(P, &first, kind, "count")) return FALSE;
    if (!int_in(P, INT64_MIN, INT64_MAX, "a count", &n)) return FALSE;
    op->n = n;
  }
  IrProv pv = {NULL, 0, 0};
  gboolean has;
  ws(P);
  if (*P->p && *P->p != ';') {
    g_autofree char *form = op_form(kind), *s = seen(P->p);
    return fail_at(P, P->p, "%s takes %s: unexpected %s after them", ir_op_mnemonic[kind], form, s);
  }
  if (!prov_comment(P, &pv, &has)) return FALSE;
  if (has) prov_resolve(&P->ir->sched, &pv);
  op->prov = pv; /* none written: the task's applies (knob NULL, as ir_emit makes it) */
  return TRUE;
}

/* ------------------------------------------------------------- entry */

static void pr_clear(Pr *P) {
  g_free(P->buf);
  g_free(P->plan_file);
  g_free(P->wg_ops);
  if (P->ops) g_array_free(P->ops, TRUE);
  if (P->tasks) g_hash_table_destroy(P->tasks);
  if (P->rfs) g_hash_table_destroy(P->rfs);
  if (P->events) g_hash_table_destroy(P->events);
  if (P->hbm_at) g_hash_table_destroy(P->hbm_at);
  if (P->hbm_sym) g_hash_table_destroy(P->hbm_sym);
  if (P->groups) g_hash_table_destroy(P->groups);
  if (P->group_prov) g_hash_table_destroy(P->group_prov);
  if (P->group_any) g_hash_table_destroy(P->group_any);
  if (P->key) g_string_free(P->key, TRUE);
  ir_free(P->ir);
}

static void free_array(gpointer a) { g_array_free(a, TRUE); }

/* The end of the text: the record complete, the ops read. */
static gboolean finish(Pr *P) {
  end_task(P);
  if (!P->ir) {
    P->ls = P->p = NULL;
    return fail_at(P, NULL, "%s", P->machine_line ? "no .problem line" : "no .machine line");
  }
  Ir *ir = P->ir;
  int sms = plan_knob_index("sms_used");
  if (!P->sched.loc[sms].path && P->have_sms) P->sched.sms_used = ir->sms_used;
  P->sched.present = P->have_sched;
  ir->sched = P->sched;
  ir->section = (IrProv){wl_problem_name(ir->prob.kind), 0, 0};
  if (!P->have_sms) ir->sms_used = ir->sched.sms_used > 0 ? ir->sched.sms_used : ir->hw.sms;
  for (guint k = 0; k < ir->tasks->len; k++)
    prov_resolve(&ir->sched, &ir_task_at(ir, (int)k)->prov);
  for (guint g = 0; g < ir->groups->len; g++)
    prov_resolve(&ir->sched, &((IrGroup *)g_ptr_array_index(ir->groups, g))->prov);
  for (guint i = 0; i < P->ops->len; i++)
    if (!parse_op(P, &g_array_index(P->ops, OpLine, i))) return FALSE;
  return TRUE;
}

Ir *ir_parse(const char *name, const char *text, gsize len, GError **err) {
  Pr P;
  memset(&P, 0, sizeof P);
  P.name = name;
  P.err = err;
  P.task = -1;
  P.buf = g_malloc(len + 1);
  memcpy(P.buf, text, len);
  P.buf[len] = '\0';
  P.ops = g_array_new(FALSE, FALSE, sizeof(OpLine));
  P.tasks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  P.rfs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  P.events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  P.hbm_at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_array);
  P.hbm_sym = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_array);
  P.groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_array);
  P.group_prov = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  P.group_any = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  P.key = g_string_new(NULL);
  gboolean ok = TRUE;
  char *s = P.buf, *end = P.buf + len;
  for (P.line = 1; ok && s <= end; P.line++) {
    char *nl = memchr(s, '\n', (gsize)(end - s));
    char *e = nl ? nl : end;
    P.ls = s;
    if (memchr(s, '\0', (gsize)(e - s))) {
      P.p = memchr(s, '\0', (gsize)(e - s));
      ok = fail_at(&P, P.p, "a NUL byte in the text");
      break;
    }
    *e = '\0';
    if (e > s && e[-1] == '\r') e[-1] = '\0';
    if (!nl && s == end) break; /* nothing after the last newline */
    ok = line_one(&P);
    s = e + 1;
  }
  P.line = MAX(P.line - 1, 1);
  if (ok) ok = finish(&P);
  Ir *ir = NULL;
  if (ok) {
    ir = P.ir;
    ir->nops = P.ops->len;
    P.ir = NULL;
  }
  pr_clear(&P);
  return ir;
}
