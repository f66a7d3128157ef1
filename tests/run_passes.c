/* run_passes.c - the pass tests of tests/passes (make pass-check;
 * docs/compiler.md, "Testing a pass").
 *
 *   run-passes [--show] FILE.ir ... [--fail FILE.ir ...]
 *
 * Each FILE.ir is an IR in the text form of ir_print (what tcc-gen
 * --emit=ir / --dump-after writes, or a shorter one written by hand) with
 * directives in its comment lines:
 *
 *   ; RUN: PASS [PASS ...]       the passes to run, in order, by their names
 *                                in pass_table (src/passes/pipeline.c)
 *   ; RUN: not PASS [PASS ...]   the same, and the last one must fail: its
 *                                error message is the output checked
 *   ; CHECK: TEXT                a later output line contains TEXT
 *   ; CHECK-NEXT: TEXT           the line right after the previous match does
 *   ; CHECK-NOT: TEXT            no line between the previous match and the
 *                                next CHECK/CHECK-NEXT match (or the end) does
 *
 * as LLVM's FileCheck, but by whole lines: a CHECK searches from the line
 * after the previous match, and TEXT is a plain substring in which a run of
 * blanks matches any run of blanks (leading and trailing blanks ignored).
 *
 * The runner parses the IR (ir_parse), verifies it (ir_verify, as before
 * any pass: unplaced and unallocated allowed), runs the passes, verifies the
 * result (allocated once rf_alloc has run), prints it (ir_print) and matches
 * the directives against that text.  The first failure is reported as
 * "FILE:LINE: error: ..." at the directive, with a note on the output line
 * concerned; --show prints the output of each file, to write the CHECK lines.
 *
 * Files after --fail must fail: their report must be exactly FILE.err (the
 * runner's own tests).  Exit status 0 when every file behaves, 1 otherwise,
 * 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "ir_parse.h"
#include "pipeline.h"

typedef enum { D_CHECK, D_NEXT, D_NOT } DirKind;
static const char *const dir_name[] = {"CHECK", "CHECK-NEXT", "CHECK-NOT"};

typedef struct Dir {
  DirKind kind;
  int line;   /* in the test file */
  char *text; /* canonical blanks */
} Dir;

static void dir_clear(gpointer p) { g_free(((Dir *)p)->text); }

/* `s` with every run of blanks made one space, without leading and
 * trailing blanks. */
static char *canon(const char *s, gsize n) {
  GString *o = g_string_sized_new(n);
  gboolean blank = FALSE;
  for (gsize i = 0; i < n; i++) {
    if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
      blank = TRUE;
      continue;
    }
    if (blank && o->len) g_string_append_c(o, ' ');
    blank = FALSE;
    g_string_append_c(o, s[i]);
  }
  return g_string_free(o, FALSE);
}

/* A test: what to run and what to find. */
typedef struct Test {
  const char *file;
  char **passes;     /* NULL-terminated */
  gboolean expect_fail;
  int run_line;
  GArray *dirs;      /* Dir */
} Test;

/* Read the directives of `text`; FALSE with *msg on a malformed one. */
static gboolean read_directives(Test *t, const char *text, GString *msg) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    const char *s = lines[i];
    while (*s == ' ' || *s == '\t') s++;
    if (*s != ';') continue;
    for (s++; *s == ' ' || *s == '\t'; s++) continue;
    int line = i + 1;
    if (g_str_has_prefix(s, "RUN:")) {
      if (t->passes) {
        g_string_append_printf(msg, "%s:%d: error: a second RUN line (the first is line %d)\n",
                               t->file, line, t->run_line);
        return FALSE;
      }
      g_autofree char *args = canon(s + 4, strlen(s + 4));
      char **words = g_strsplit(args, " ", -1);
      int first = 0;
      if (words[0] && strcmp(words[0], "not") == 0) t->expect_fail = TRUE, first = 1;
      t->passes = g_strdupv(words + first);
      g_strfreev(words);
      t->run_line = line;
      if (!t->passes[0] || !*t->passes[0]) {
        g_string_append_printf(msg, "%s:%d: error: RUN names no pass\n", t->file, line);
        return FALSE;
      }
      for (int k = 0; t->passes[k]; k++) {
        const PassDef *p = pass_table;
        while (p->name && strcmp(p->name, t->passes[k]) != 0) p++;
        if (p->name) continue;
        g_string_append_printf(msg,
                               "%s:%d: error: RUN: unknown pass '%s' (tcc-gen --help lists "
                               "the passes)\n",
                               t->file, line, t->passes[k]);
        return FALSE;
      }
      continue;
    }
    if (!g_str_has_prefix(s, "CHECK")) continue;
    Dir d = {D_CHECK, line, NULL};
    const char *rest = NULL;
    for (int k = D_NOT; k >= D_CHECK && !rest; k--) {
      g_autofree char *tag = g_strconcat(dir_name[k], ":", NULL);
      if (g_str_has_prefix(s, tag)) d.kind = (DirKind)k, rest = s + strlen(tag);
    }
    if (!rest) {
      g_string_append_printf(msg,
                             "%s:%d: error: unknown directive '%.20s' (CHECK:, CHECK-NEXT:, "
                             "CHECK-NOT:)\n",
                             t->file, line, s);
      return FALSE;
    }
    d.text = canon(rest, strlen(rest));
    if (!*d.text) {
      g_string_append_printf(msg, "%s:%d: error: %s: an empty pattern\n", t->file, line,
                             dir_name[d.kind]);
      g_free(d.text);
      return FALSE;
    }
    if (d.kind == D_NEXT && t->dirs->len == 0) {
      g_string_append_printf(msg, "%s:%d: error: CHECK-NEXT: no CHECK before it\n", t->file, line);
      g_free(d.text);
      return FALSE;
    }
    g_array_append_val(t->dirs, d);
  }
  if (!t->passes) {
    g_string_append_printf(msg, "%s: error: no '; RUN: PASS' line\n", t->file);
    return FALSE;
  }
  gboolean positive = FALSE;
  for (guint i = 0; i < t->dirs->len; i++) positive |= g_array_index(t->dirs, Dir, i).kind != D_NOT;
  if (!positive) {
    g_string_append_printf(msg, "%s: error: no CHECK line (a test must find something)\n", t->file);
    return FALSE;
  }
  return TRUE;
}

/* Parse, verify, run the passes: the output to check, or NULL with *msg. */
static char *run_test(const Test *t, const char *text, gsize len, GString *msg) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_parse(t->file, text, len, &err);
  if (!ir) {
    g_string_append_printf(msg, "%s\n", err->message);
    return NULL;
  }
  if (!ir_verify(ir, FALSE, &err)) {
    g_string_append_printf(msg, "%s: error: the input IR is invalid: %s\n", t->file, err->message);
    return NULL;
  }
  gboolean allocated = FALSE;
  for (int k = 0; t->passes[k]; k++) {
    const PassDef *p = pass_table;
    while (strcmp(p->name, t->passes[k]) != 0) p++;
    gboolean last = !t->passes[k + 1];
    if (!p->run(ir, &err)) {
      if (last && t->expect_fail) return g_strdup_printf("%s\n", err->message);
      g_string_append_printf(msg, "%s:%d: error: pass %s failed: %s\n", t->file, t->run_line,
                             p->name, err->message);
      return NULL;
    }
    if (last && t->expect_fail) {
      g_string_append_printf(msg, "%s:%d: error: pass %s succeeded; RUN: not expects it to fail\n",
                             t->file, t->run_line, p->name);
      return NULL;
    }
    allocated |= p->run == pass_rf_alloc;
    if (!ir_verify(ir, allocated, &err)) {
      g_string_append_printf(msg, "%s:%d: error: the IR after pass %s is invalid: %s\n", t->file,
                             t->run_line, p->name, err->message);
      return NULL;
    }
  }
  return ir_print(ir);
}

/* A note on output line i (0-based). */
static void note_line(GString *msg, const Test *t, const Dir *d, const char *what, char **out,
                      guint n, guint i) {
  if (i < n)
    g_string_append_printf(msg, "%s:%d: note: %s output line %u: %s\n", t->file, d->line, what,
                           i + 1, out[i]);
  else
    g_string_append_printf(msg, "%s:%d: note: %s the end of the output (%u lines)\n", t->file,
                           d->line, what, n);
}

/* CHECK-NOTs pending over output lines [from, to): FALSE with *msg at the
 * first that occurs. */
static gboolean check_nots(const Test *t, GPtrArray *nots, char **out, char **cout, guint from,
                           guint to, GString *msg) {
  for (guint k = 0; k < nots->len; k++) {
    const Dir *d = g_ptr_array_index(nots, k);
    for (guint i = from; i < to; i++) {
      if (!strstr(cout[i], d->text)) continue;
      g_string_append_printf(msg, "%s:%d: error: CHECK-NOT: excluded string found: %s\n", t->file,
                             d->line, d->text);
      note_line(msg, t, d, "in", out, to, i);
      return FALSE;
    }
  }
  g_ptr_array_set_size(nots, 0);
  return TRUE;
}

/* Match the directives against `output`; FALSE with *msg at the first
 * that fails. */
static gboolean match(const Test *t, const char *output, GString *msg) {
  g_auto(GStrv) out = g_strsplit(output, "\n", -1);
  guint n = g_strv_length(out);
  if (n > 0 && !*out[n - 1]) n--; /* the text ends with a newline */
  char **cout = g_new0(char *, n + 1);
  for (guint i = 0; i < n; i++) cout[i] = canon(out[i], strlen(out[i]));
  g_autoptr(GPtrArray) nots = g_ptr_array_new();
  guint pos = 0;   /* where the next CHECK searches from */
  int prev = -1;   /* the line of the previous match */
  gboolean ok = TRUE;
  for (guint k = 0; ok && k < t->dirs->len; k++) {
    const Dir *d = &g_array_index(t->dirs, Dir, k);
    if (d->kind == D_NOT) {
      g_ptr_array_add(nots, (gpointer)d);
      continue;
    }
    guint j = pos;
    if (d->kind == D_CHECK) {
      while (j < n && !strstr(cout[j], d->text)) j++;
      if (j == n) {
        g_string_append_printf(msg, "%s:%d: error: CHECK: expected string not found: %s\n",
                               t->file, d->line, d->text);
        note_line(msg, t, d, "searched from", out, n, pos);
        ok = FALSE;
        break;
      }
    } else {
      j = (guint)(prev + 1);
      if (j >= n || !strstr(cout[j], d->text)) {
        g_string_append_printf(msg,
                               "%s:%d: error: CHECK-NEXT: not on the line after the previous "
                               "match (output line %d): %s\n",
                               t->file, d->line, prev + 1, d->text);
        note_line(msg, t, d, "that is", out, n, j);
        ok = FALSE;
        break;
      }
    }
    ok = check_nots(t, nots, out, cout, pos, j, msg);
    prev = (int)j;
    pos = j + 1;
  }
  if (ok) ok = check_nots(t, nots, out, cout, pos, n, msg);
  g_strfreev(cout);
  return ok;
}

/* One file: its report (empty when it passes) in *msg. */
static void run_file(const char *file, gboolean show, GString *msg) {
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!g_file_get_contents(file, &text, &len, &err)) {
    g_string_append_printf(msg, "%s: error: cannot read: %s\n", file, err->message);
    return;
  }
  Test t = {file, NULL, FALSE, 0, g_array_new(FALSE, FALSE, sizeof(Dir))};
  g_array_set_clear_func(t.dirs, dir_clear);
  if (read_directives(&t, text, msg)) {
    g_autofree char *output = run_test(&t, text, len, msg);
    if (output && show) printf("---- output of %s\n%s---- end\n", file, output);
    if (output && !match(&t, output, msg))
      g_string_append_printf(msg, "%s: note: run-passes --show %s prints the whole output\n", file,
                             file);
  }
  g_strfreev(t.passes);
  g_array_free(t.dirs, TRUE);
}

int main(int argc, char **argv) {
  gboolean show = FALSE, fail = FALSE;
  int passed = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--show") == 0) {
      show = TRUE;
      continue;
    }
    if (strcmp(a, "--fail") == 0) {
      fail = TRUE;
      continue;
    }
    if (a[0] == '-') {
      fprintf(stderr, "usage: run-passes [--show] FILE.ir ... [--fail FILE.ir ...]\n");
      return 2;
    }
    g_autoptr(GString) msg = g_string_new(NULL);
    run_file(a, show, msg);
    gboolean ok = msg->len == 0;
    if (fail) { /* must fail, with exactly FILE.err */
      g_autofree char *base = g_str_has_suffix(a, ".ir") ? g_strndup(a, strlen(a) - 3) : g_strdup(a);
      g_autofree char *errf = g_strconcat(base, ".err", NULL), *want = NULL;
      ok = g_file_get_contents(errf, &want, NULL, NULL) && strcmp(want, msg->str) == 0;
      if (!ok) {
        g_autofree char *head = g_strdup_printf("expected the report in %s:\n%sgot:\n", errf,
                                                want ? want : "(cannot read it)\n");
        g_string_prepend(msg, head);
      }
    }
    printf("[%s] %s%s\n", ok ? "PASS" : "FAIL", a, fail ? " (must fail)" : "");
    if (!ok) fputs(msg->str, stdout);
    ok ? passed++ : failed++;
  }
  printf("passes: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
