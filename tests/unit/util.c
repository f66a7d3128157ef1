/* util.c - helpers shared by the unit suites: assemble-and-run from text. */
#include <stdio.h>
#include <string.h>

#include "tests.h"

gboolean t_run(const char *text, const SimOptions *opt, SimResult *res, GError **err) {
  g_autoptr(Program) p = sim_asm_parse("test.asm", text, strlen(text), err);
  if (!p) return FALSE;
  return sim_run(p, opt, res, err);
}

void t_run_ok(const char *text, SimResult *res) {
  SimOptions o;
  sim_options_default(&o);
  g_autoptr(GError) err = NULL;
  gboolean ok = t_run(text, &o, res, &err);
  ck_assert_msg(ok, "program failed: %s\n%s", err ? err->message : "?", text);
}

int64_t t_cycles(const char *text) {
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  SimResult r;
  g_autoptr(GError) err = NULL;
  gboolean ok = t_run(text, &o, &r, &err);
  ck_assert_msg(ok, "program failed: %s\n%s", err ? err->message : "?", text);
  int64_t c = r.cycles;
  sim_result_clear(&r);
  return c;
}

const char *t_machine(const char *extra) {
  static char buf[512];
  static const char *const keys[] = {"sms", "wgs_per_sm", "rf_kib", "vl", "mma_arrays", "sfu", "sh_kib",
                                     "dma", "hbm", "noc", "multicast", "reduce"};
  static const char *const defs[] = {"16", "4", "64", "16", "1", "8", "0", "2x1", "8", "512", "1", "0"};
  g_auto(GStrv) over = g_strsplit(extra ? extra : "", " ", -1);
  GString *g = g_string_new(".machine");
  for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
    const char *v = defs[k];
    size_t kl = strlen(keys[k]);
    for (int i = 0; over[i]; i++)
      if (strncmp(over[i], keys[k], kl) == 0 && over[i][kl] == '=') v = over[i] + kl + 1;
    g_string_append_printf(g, " %s=%s", keys[k], v);
  }
  g_strlcpy(buf, g->str, sizeof buf);
  g_string_free(g, TRUE);
  return buf;
}
