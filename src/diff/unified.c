/* unified.c - the generated code's difference as unified diffs, one per WG
 * whose instructions differ (unified.h).
 *
 * Lines compare without their provenance comment (as codediff.c: a knob
 * written on another line of the plan is no difference) and print whole,
 * each side's own.  The edit script is Myers' greedy search with its
 * frontier kept for every D (E. Myers, "An O(ND) Difference Algorithm and
 * Its Variations", 1986), after the common prefix and suffix are trimmed;
 * past `max_d` edits the WG is shown as replaced whole and the header says
 * so: nothing is cut without a word. */
#include "unified.h"

#include <string.h>

#include "linediff.h"

/* One WG's instruction lines of one program: text (whole) and id (without
 * the comment), with their lines in the .asm. */
typedef struct Lines {
  GPtrArray *text; /* const char* into the program's source: not owned */
  GArray *len;     /* gsize: each text's length                          */
  GArray *id;      /* guint                                              */
  GArray *line;    /* int: the line in the .asm                          */
} Lines;

static void lines_init(Lines *l) {
  l->text = g_ptr_array_new();
  l->len = g_array_new(FALSE, FALSE, sizeof(gsize));
  l->id = g_array_new(FALSE, FALSE, sizeof(guint));
  l->line = g_array_new(FALSE, FALSE, sizeof(int));
}

static void lines_clear(Lines *l) {
  g_ptr_array_free(l->text, TRUE);
  g_array_free(l->len, TRUE);
  g_array_free(l->id, TRUE);
  g_array_free(l->line, TRUE);
}

/* The text of an instruction up to its line's end. */
static gsize line_len(const char *t) {
  const char *nl = strchr(t, '\n');
  return nl ? (gsize)(nl - t) : strlen(t);
}

static void read_wg(const Program *p, int w, DiffInterner *in, GString *key, Lines *l) {
  if (w >= p->nwgs) return;
  const WgCode *wc = &p->wgs[w];
  for (int pc = 0; pc < wc->n; pc++) {
    const Insn *ins = &wc->insns[pc];
    const char *text = sim_insn_text(p, ins);
    gsize n = line_len(text), k = n;
    const char *semi = memchr(text, ';', n);
    if (semi) k = (gsize)(semi - text);
    while (k > 0 && g_ascii_isspace(text[k - 1])) k--;
    while (n > 0 && g_ascii_isspace(text[n - 1])) n--;
    g_string_truncate(key, 0);
    g_string_append_len(key, text, (gssize)k);
    guint id = diff_intern(in, key->str);
    g_ptr_array_add(l->text, (gpointer)text);
    g_array_append_val(l->len, n);
    g_array_append_val(l->id, id);
    g_array_append_val(l->line, ins->line);
  }
}

GArray *diff_edit_script(const guint *a, int na, const guint *b, int nb, int max_d) {
  int pre = 0, suf = 0;
  while (pre < na && pre < nb && a[pre] == b[pre]) pre++;
  while (suf < na - pre && suf < nb - pre && a[na - 1 - suf] == b[nb - 1 - suf]) suf++;
  const guint *x = a + pre, *y = b + pre;
  int n = na - pre - suf, m = nb - pre - suf, lim = MIN(n + m, max_d), off = lim + 1;
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guchar));
  guchar keep = 0, del = 1, add = 2;
  for (int i = 0; i < pre; i++) g_array_append_val(out, keep);
  if (n + m > 0) {
    /* v[k]: the furthest x on diagonal k; trace[d] the frontier before step d */
    int *v = g_new0(int, 2 * (gsize)off + 1);
    GPtrArray *trace = g_ptr_array_new_with_free_func(g_free);
    int found = -1;
    for (int d = 0; d <= lim && found < 0; d++) {
      g_ptr_array_add(trace, g_memdup2(v, sizeof(int) * (2 * (gsize)off + 1)));
      for (int k = -d; k <= d; k += 2) {
        int xi = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
        int yi = xi - k;
        while (xi < n && yi < m && x[xi] == y[yi]) xi++, yi++;
        v[off + k] = xi;
        if (xi >= n && yi >= m) {
          found = d;
          break;
        }
      }
    }
    g_free(v);
    if (found < 0) {
      g_ptr_array_free(trace, TRUE);
      g_array_free(out, TRUE);
      return NULL;
    }
    /* back from (n, m): each d's step, then its diagonal's snake */
    GArray *rev = g_array_new(FALSE, FALSE, sizeof(guchar));
    int xi = n, yi = m;
    for (int d = found; d > 0; d--) {
      const int *pv = g_ptr_array_index(trace, d);
      int k = xi - yi;
      gboolean down = k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1]);
      int pk = down ? k + 1 : k - 1, px = pv[off + pk], py = px - pk;
      int sx = down ? px : px + 1; /* where the snake starts */
      while (xi > sx) g_array_append_val(rev, keep), xi--, yi--;
      if (down)
        g_array_append_val(rev, add);
      else
        g_array_append_val(rev, del);
      xi = px, yi = py;
    }
    while (xi > 0) g_array_append_val(rev, keep), xi--;
    for (guint i = rev->len; i-- > 0;) g_array_append_val(out, g_array_index(rev, guchar, i));
    g_array_free(rev, TRUE);
    g_ptr_array_free(trace, TRUE);
  }
  for (int i = 0; i < suf; i++) g_array_append_val(out, keep);
  return out;
}

/* The task a line belongs to: its comment's last word ("; knob:line TASK"). */
static void put_task(GString *g, const char *t, gsize n) {
  const char *semi = memchr(t, ';', n);
  if (!semi) return;
  const char *e = t + n, *s = e;
  while (s > semi + 1 && s[-1] != ' ') s--;
  if (s < e) g_string_append_printf(g, " %.*s", (int)(e - s), s);
}

static void put_line(GString *g, char mark, const Lines *l, guint i) {
  g_string_append_c(g, mark);
  g_string_append_len(g, g_ptr_array_index(l->text, i), (gssize)g_array_index(l->len, gsize, i));
  g_string_append_c(g, '\n');
}

/* The .asm line a hunk's side starts at: its first line's, or for a side
 * with no lines (n 0), the line before where they would be (0: none). */
static int start_line(const Lines *l, guint i, guint n) {
  if (n > 0) return g_array_index(l->line, int, i);
  return i > 0 ? g_array_index(l->line, int, i - 1) : 0;
}

/* The hunks of one WG's script, `ctx` lines of context. */
static void hunks(GString *g, const Lines *a, const Lines *b, const GArray *ed, int ctx) {
  guint ne = ed->len;
  /* each step's index on each side */
  g_autofree guint *ia = g_new(guint, ne + 1), *ib = g_new(guint, ne + 1);
  guint xa = 0, xb = 0;
  for (guint s = 0; s < ne; s++) {
    ia[s] = xa, ib[s] = xb;
    guchar e = g_array_index(ed, guchar, s);
    xa += e != 2, xb += e != 1;
  }
  for (guint s = 0; s < ne;) {
    if (g_array_index(ed, guchar, s) == 0) {
      s++;
      continue;
    }
    /* a hunk: from ctx keeps before the change to ctx keeps after the last
     * change that is not more than 2 * ctx keeps from the next */
    guint start = s >= (guint)ctx ? s - (guint)ctx : 0, end = s;
    for (;;) {
      while (end < ne && g_array_index(ed, guchar, end) != 0) end++;
      guint run = 0;
      while (end + run < ne && g_array_index(ed, guchar, end + run) == 0) run++;
      if (end + run < ne && run <= 2 * (guint)ctx) {
        end += run;
        continue;
      }
      end += MIN(run, (guint)ctx);
      break;
    }
    guint na = 0, nb = 0;
    for (guint t = start; t < end; t++) {
      guchar e = g_array_index(ed, guchar, t);
      na += e != 2, nb += e != 1;
    }
    /* as diff -u: an empty side's range starts at the line before it */
    int la = start_line(a, ia[start], na), lb = start_line(b, ib[start], nb);
    g_string_append_printf(g, "@@ -%d,%u +%d,%u @@", la, na, lb, nb);
    guint first = s; /* the hunk's first change names its task */
    guchar fe = g_array_index(ed, guchar, first);
    if (fe == 1)
      put_task(g, g_ptr_array_index(a->text, ia[first]), g_array_index(a->len, gsize, ia[first]));
    else
      put_task(g, g_ptr_array_index(b->text, ib[first]), g_array_index(b->len, gsize, ib[first]));
    g_string_append_c(g, '\n');
    for (guint t = start; t < end; t++) {
      guchar e = g_array_index(ed, guchar, t);
      if (e == 1)
        put_line(g, '-', a, ia[t]);
      else if (e == 2)
        put_line(g, '+', b, ib[t]);
      else
        put_line(g, ' ', b, ib[t]);
    }
    s = end;
  }
}

char *diff_unified(const Program *a, const Program *b, const char *label_a, const char *label_b, int context,
                   int max_d, int *wgs_shown) {
  GString *g = g_string_new(NULL);
  g_autoptr(GString) key = g_string_new(NULL);
  DiffInterner *in = diff_interner_new();
  int nw = MAX(a->nwgs, b->nwgs), shown = 0;
  for (int w = 0; w < nw; w++) {
    Lines la, lb;
    lines_init(&la);
    lines_init(&lb);
    read_wg(a, w, in, key, &la);
    read_wg(b, w, in, key, &lb);
    GArray *ed = diff_edit_script((const guint *)(const void *)la.id->data, (int)la.id->len,
                       (const guint *)(const void *)lb.id->data, (int)lb.id->len, max_d);
    gboolean same = ed != NULL;
    for (guint s = 0; ed && s < ed->len && same; s++) same = g_array_index(ed, guchar, s) == 0;
    if (!same) {
      shown++;
      g_string_append_printf(g, "--- %s wg %d\n+++ %s wg %d\n", label_a, w, label_b, w);
      if (ed) {
        hunks(g, &la, &lb, ed, context);
      } else { /* too far apart to align: every line, said so */
        g_string_append_printf(g, "@@ -%d,%u +%d,%u @@ more than %d edits: the WG whole, removed and added\n",
                               la.line->len ? g_array_index(la.line, int, 0) : 0, la.id->len,
                               lb.line->len ? g_array_index(lb.line, int, 0) : 0, lb.id->len, max_d);
        for (guint i = 0; i < la.id->len; i++) put_line(g, '-', &la, i);
        for (guint i = 0; i < lb.id->len; i++) put_line(g, '+', &lb, i);
      }
    }
    if (ed) g_array_free(ed, TRUE);
    lines_clear(&la);
    lines_clear(&lb);
  }
  diff_interner_free(in);
  if (wgs_shown) *wgs_shown = shown;
  return g_string_free(g, FALSE);
}
