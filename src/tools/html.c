/* html.c - the one-page report of tcc-grade --html (html.h; docs/tools.md
 * "HTML report"). */
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "machine.h" /* POWER_WINDOW */
#include "outfile.h"

/* ---- escaping ----------------------------------------------------------- */

void html_escape_append(GString *g, const char *s) {
  if (!s) return;
  g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
  if (valid) s = valid;
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    switch (c) {
    case '&': g_string_append(g, "&amp;"); break;
    case '<': g_string_append(g, "&lt;"); break;
    case '>': g_string_append(g, "&gt;"); break;
    case '"': g_string_append(g, "&quot;"); break;
    case '\'': g_string_append(g, "&#39;"); break;
    default:
      if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
        g_string_append(g, "\xef\xbf\xbd"); /* U+FFFD */
      else
        g_string_append_c(g, (char)c);
    }
  }
}

char *html_escape(const char *s) {
  GString *g = g_string_new(NULL);
  html_escape_append(g, s);
  return g_string_free(g, FALSE);
}

/* ---- knobs -------------------------------------------------------------- */

char *html_knob_source(const Schedule *s, int i, HtmlKnobSource *kind) {
  const SchedLoc *l = &s->loc[i];
  if (s->fitted[i]) {
    *kind = HTML_KNOB_FIT;
    return g_strdup("power.fit");
  }
  if (s->chosen[i] && l->line > 0) {
    gboolean aut = s->chosen[i] == SCHED_AUTO;
    *kind = aut ? HTML_KNOB_AUTO : HTML_KNOB_FALLBACK;
    return g_strdup_printf(aut ? "auto (line %d:%d)" : "fallback (written at line %d:%d)", l->line, l->col);
  }
  if (s->chosen[i] == SCHED_FALLBACK) {
    *kind = HTML_KNOB_FALLBACK;
    return g_strdup("fallback (capacity repair)");
  }
  if (l->line > 0) {
    *kind = HTML_KNOB_PLAN;
    return g_strdup_printf("plan line %d:%d", l->line, l->col);
  }
  *kind = HTML_KNOB_DEFAULT;
  return g_strdup("default");
}

/* ---- the page ----------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'DejaVu Sans',sans-serif;color:#1a1a1a;background:#fff;"
    "margin:0 auto;max-width:1240px;padding:16px 24px}\n"
    "h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid #ddd}"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    "table{border-collapse:collapse;margin:6px 0 10px}th,td{padding:3px 9px;border-bottom:1px solid #e4e4e4;"
    "text-align:left;vertical-align:top}th{background:#f3f3f3;font-weight:600}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "code,.mono{font-family:'DejaVu Sans Mono',monospace;font-size:12.5px}\n"
    ".pass{color:#0a6b2d;font-weight:700}.fail{color:#b3141a;font-weight:700}\n"
    ".score{font-size:20px;margin:8px 0}.muted{color:#666}\n"
    ".plot svg{width:100%;height:auto;max-width:1200px;border:1px solid #e4e4e4}\n"
    ".bar{position:relative;width:220px;height:10px;background:#f0f0f0}"
    ".bar span{position:absolute;top:0;height:10px;background:#3b7dd8}\n"
    ".src-plan{color:#1a1a1a}.src-fit{color:#7a4d00;font-weight:600}.src-fallback{color:#b3141a;font-weight:600}"
    ".src-auto{color:#3b5bb0}.src-default{color:#888}\n"
    "pre{background:#f7f7f7;padding:8px;overflow-x:auto;white-space:pre-wrap}\n"
    "details summary{cursor:pointer;color:#444}\n";

static void esc(GString *g, const char *s) { html_escape_append(g, s); }

/* printf into the page, then escaped: numbers and fixed words only reach
 * the page through here or as literals. */
G_GNUC_PRINTF(2, 3) static void escf(GString *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  esc(g, s);
}

static void verdict_cell(GString *g, gboolean pass) {
  g_string_append_printf(g, "<td class=\"%s\">%s</td>", pass ? "pass" : "fail", pass ? "PASS" : "FAIL");
}

static void verdicts(GString *g, const HtmlPage *pg) {
  g_string_append(g, "<h2 id=\"verdicts\">Verdicts</h2>\n<table class=\"verdicts\">\n<tr><th>problem</th>"
                     "<th>verdict</th><th>why</th><th class=\"n\">cycles</th><th class=\"n\">peak W</th>"
                     "<th>hottest window</th><th class=\"n\">area mm&#178;</th>");
  for (int s = 0; s < pg->nseeds; s++)
    g_string_append_printf(g, "<th class=\"n\">err s%" G_GUINT64_FORMAT "</th>", pg->seeds[s]);
  g_string_append(g, "</tr>\n");
  for (int i = 0; i < pg->nprob; i++) {
    const HtmlProblem *p = &pg->prob[i];
    g_string_append(g, "<tr><td><a href=\"#");
    esc(g, p->name);
    g_string_append(g, "\">");
    esc(g, p->name);
    g_string_append(g, "</a></td>");
    verdict_cell(g, p->pass);
    g_string_append(g, "<td>");
    esc(g, p->failures && *p->failures ? p->failures : "within every budget, right on every seed");
    g_string_append_printf(g, "</td><td class=\"n\">%" G_GINT64_FORMAT "</td><td class=\"n\">%.4f</td>"
                              "<td>[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")</td><td class=\"n\">%.4f</td>",
                           p->cycles, p->peak_w, p->peak_start, p->peak_start + POWER_WINDOW, p->area_mm2);
    for (int s = 0; s < pg->nseeds; s++) {
      g_string_append_printf(g, "<td class=\"n%s\">", p->numerics_ok[s] ? "" : " fail");
      escf(g, "%.1e", p->max_abs_err[s]);
      g_string_append(g, "</td>");
    }
    g_string_append(g, "</tr>\n");
  }
  g_string_append(g, "</table>\n");
  for (int i = 0; i < pg->nprob; i++)
    if (pg->prob[i].hint) {
      g_string_append(g, "<pre class=\"hint\">");
      esc(g, pg->prob[i].hint);
      g_string_append(g, "</pre>\n");
    }
  g_string_append(g, "<p class=\"score\">score ");
  if (pg->has_score)
    g_string_append_printf(g, "<b>%.2f</b>", pg->score);
  else {
    g_string_append(g, "<b>-</b> <span class=\"muted\">(");
    esc(g, pg->score_note);
    g_string_append(g, ")</span>");
  }
  g_string_append(g, "</p>\n");
}

static void bounds(GString *g, const HtmlPage *pg) {
  g_string_append(g, "<h2 id=\"bounds\">Lower bounds</h2>\n<p class=\"muted\">No program for the problem on "
                     "this hardware can take fewer cycles than the binding bound (docs/bounds.md).</p>\n"
                     "<table class=\"bounds\">\n<tr><th>problem</th><th class=\"n\">cycles</th>"
                     "<th class=\"n\">bound</th><th>binding</th><th class=\"n\">cycles / bound</th>");
  const HtmlProblem *p0 = &pg->prob[0];
  for (int k = 0; pg->nprob && k < p0->nbounds; k++) {
    g_string_append(g, "<th class=\"n\">");
    esc(g, p0->bound_name[k]);
    g_string_append(g, "</th>");
  }
  g_string_append(g, "</tr>\n");
  for (int i = 0; i < pg->nprob; i++) {
    const HtmlProblem *p = &pg->prob[i];
    int64_t b = p->bound_cycles[p->binding];
    g_string_append(g, "<tr><td>");
    esc(g, p->name);
    g_string_append_printf(g, "</td><td class=\"n\">%" G_GINT64_FORMAT "</td><td class=\"n\">%" G_GINT64_FORMAT
                              "</td><td>",
                           p->cycles, b);
    esc(g, p->bound_name[p->binding]);
    g_string_append_printf(g, "</td><td class=\"n\">%.2f</td>", b > 0 ? (double)p->cycles / (double)b : 0.0);
    for (int k = 0; k < p->nbounds; k++) {
      if (p->bound_cycles[k] > 0)
        g_string_append_printf(g, "<td class=\"n\">%" G_GINT64_FORMAT "</td>", p->bound_cycles[k]);
      else
        g_string_append(g, "<td class=\"n muted\">-</td>");
    }
    g_string_append(g, "</tr>\n");
  }
  g_string_append(g, "</table>\n");
}

/* The plot's SVG with its XML declaration left out and its ids (glyphs,
 * surfaces, clips) prefixed by the problem's name: two plots in one page
 * share one id space. */
static void inline_svg(GString *g, const char *svg, const char *prefix) {
  const char *p = svg;
  if (g_str_has_prefix(p, "<?xml")) {
    const char *e = strstr(p, "?>");
    p = e ? e + 2 : p;
    while (*p == '\n' || *p == '\r') p++;
  }
  static const char *const pats[] = {"id=\"", "href=\"#", "url(#"};
  while (*p) {
    const char *best = NULL;
    int which = -1;
    for (int k = 0; k < 3; k++) {
      const char *f = strstr(p, pats[k]);
      if (f && (!best || f < best)) best = f, which = k;
    }
    if (!best) {
      g_string_append(g, p);
      break;
    }
    size_t n = strlen(pats[which]);
    g_string_append_len(g, p, best - p + (gssize)n);
    g_string_append(g, prefix);
    g_string_append_c(g, '-');
    p = best + n;
  }
}

static void stages(GString *g, const HtmlProblem *p) {
  g_string_append(g, "<h3>Time and energy per stage</h3>\n");
  if (p->nstages == 0) {
    g_string_append(g, "<p class=\"muted\">No stages: the program's comments name no tasks.</p>\n");
    return;
  }
  double dyn = 0;
  for (int i = 0; i < p->nstages; i++) dyn += p->stages[i].energy_uj;
  g_string_append(g, "<table class=\"stages\">\n<tr><th>stage</th><th class=\"n\">start</th><th class=\"n\">end</th>"
                     "<th class=\"n\">span</th><th>when</th><th class=\"n\">WGs</th><th class=\"n\">insns</th>"
                     "<th class=\"n\">MMA blocks</th><th class=\"n\">HBM lines</th><th class=\"n\">energy uJ</th>"
                     "<th class=\"n\">share</th><th class=\"n\">dyn W</th></tr>\n");
  double run = (double)MAX(p->cycles, 1);
  for (int i = 0; i < p->nstages; i++) {
    const HtmlStage *s = &p->stages[i];
    int64_t span = s->end - s->start;
    g_string_append(g, "<tr><td class=\"mono\">");
    esc(g, s->name);
    g_string_append_printf(g, "</td><td class=\"n\">%" G_GINT64_FORMAT "</td><td class=\"n\">%" G_GINT64_FORMAT
                              "</td><td class=\"n\">%" G_GINT64_FORMAT "</td>",
                           s->start, s->end, span);
    double a = CLAMP((double)s->start / run * 100.0, 0.0, 100.0);
    double w = CLAMP((double)span / run * 100.0, 0.0, 100.0 - a);
    g_string_append_printf(g, "<td><div class=\"bar\"><span style=\"left:%.2f%%;width:%.2f%%\"></span></div></td>", a,
                           MAX(w, 0.4));
    g_string_append_printf(g, "<td class=\"n\">%d</td><td class=\"n\">%" G_GINT64_FORMAT "</td><td class=\"n\">%"
                              G_GINT64_FORMAT "</td><td class=\"n\">%" G_GINT64_FORMAT "</td><td class=\"n\">%.3f</td>"
                              "<td class=\"n\">%.1f%%</td><td class=\"n\">%.3f</td></tr>\n",
                           s->wgs, s->insns, s->mma_blocks, s->hbm_lines, s->energy_uj,
                           dyn > 0 ? 100.0 * s->energy_uj / dyn : 0.0,
                           span > 0 ? s->energy_uj * 1e3 / (double)span : 0.0);
  }
  g_string_append(g, "</table>\n");
}

static void units(GString *g, const HtmlProblem *p) {
  g_string_append(g, "<h3>Energy by unit against the unavoidable minimum</h3>\n<p class=\"muted\">The minimum is "
                     "the dynamic energy any program for this problem spends (the power bound's count, "
                     "docs/bounds.md); a unit without one has no floor there.</p>\n");
  g_string_append(g, "<table class=\"units\">\n<tr><th>unit</th><th class=\"n\">energy uJ</th>"
                     "<th class=\"n\">minimum uJ</th><th class=\"n\">energy / minimum</th>"
                     "<th class=\"n\">above the minimum uJ</th></tr>\n");
  double all = 0, min = 0;
  for (int u = 0; u < p->nunits; u++) {
    const HtmlUnit *x = &p->units[u];
    all += x->uj;
    g_string_append(g, "<tr><td>");
    esc(g, x->name);
    g_string_append_printf(g, "</td><td class=\"n\">%.3f</td>", x->uj);
    if (isnan(x->min_uj)) {
      g_string_append(g, "<td class=\"n muted\">-</td><td class=\"n muted\">-</td><td class=\"n muted\">-</td>");
    } else {
      min += x->min_uj;
      g_string_append_printf(g, "<td class=\"n\">%.3f</td>", x->min_uj);
      if (x->min_uj > 0)
        g_string_append_printf(g, "<td class=\"n\">%.2f</td>", x->uj / x->min_uj);
      else
        g_string_append(g, "<td class=\"n muted\">-</td>");
      g_string_append_printf(g, "<td class=\"n\">%.3f</td>", x->uj - x->min_uj);
    }
    g_string_append(g, "</tr>\n");
  }
  g_string_append_printf(g, "<tr><th>dynamic</th><th class=\"n\">%.3f</th><th class=\"n\">%.3f</th><th class=\"n\">"
                            "%s</th><th class=\"n\">%.3f</th></tr>\n",
                         all, min, "", all - min);
  g_string_append_printf(g, "<tr><td>static</td><td class=\"n\">%.3f</td><td colspan=\"3\" class=\"muted\">%.4f W "
                            "for %" G_GINT64_FORMAT " cycles</td></tr>\n</table>\n",
                         p->static_w * (double)p->cycles * 1e-3, p->static_w, p->cycles);
  if (p->dynamic_budget_w > 0)
    g_string_append_printf(g, "<p class=\"muted\">The minimum, %.3f uJ, spent at the %.4f W the limit leaves above "
                              "static power, takes %.1f cycles: the power bound.</p>\n",
                           p->min_dynamic_uj, p->dynamic_budget_w, p->min_dynamic_uj / p->dynamic_budget_w * 1e3);
}

static void knob_row(GString *g, const HtmlProblem *p, int i) {
  const Schedule *s = p->sched;
  HtmlKnobSource kind;
  g_autofree char *src = html_knob_source(s, i, &kind);
  static const char *const cls[] = {"default", "plan", "fit", "fallback", "auto"};
  g_string_append(g, "<tr><td class=\"mono\">");
  esc(g, s->loc[i].path);
  g_string_append(g, "</td><td class=\"mono\">");
  esc(g, s->value[i]);
  g_string_append(g, "</td><td class=\"mono\">");
  /* what the plan section had, when the compiler changed it (a capacity
   * fallback or repair, power.fit); the loader's own fallbacks are in its
   * warnings */
  if (p->planned && p->planned->loc[i].path && strcmp(p->planned->value[i], s->value[i]) != 0)
    esc(g, p->planned->value[i]);
  g_string_append_printf(g, "</td><td class=\"src-%s\">", cls[kind]);
  esc(g, src);
  g_string_append(g, "</td></tr>\n");
}

static HtmlKnobSource source_kind(const Schedule *s, int i) {
  HtmlKnobSource kind;
  g_free(html_knob_source(s, i, &kind));
  return kind;
}

static void knobs(GString *g, const HtmlProblem *p) {
  g_string_append(g, "<h3>Effective knobs</h3>\n");
  if (!p->sched) return;
  const char *head = "<tr><th>knob</th><th>value</th><th>before compiling</th><th>source</th></tr>\n";
  int ndef = 0;
  g_string_append(g, "<p class=\"muted\">The values the program was compiled with: written in the plan, "
                     "chosen by the compiler (auto), taken back when they did not fit (fallback) or set by "
                     "the power fitting (power.fit).</p>\n<table class=\"knobs\">\n");
  g_string_append(g, head);
  for (int i = 0; i < SCHED_NKNOBS; i++) {
    if (!p->sched->loc[i].path) continue;
    if (source_kind(p->sched, i) == HTML_KNOB_DEFAULT) {
      ndef++;
      continue;
    }
    knob_row(g, p, i);
  }
  g_string_append(g, "</table>\n");
  if (ndef) {
    g_string_append_printf(g, "<details><summary>%d knobs at their defaults</summary>\n<table class=\"knobs\">\n",
                           ndef);
    g_string_append(g, head);
    for (int i = 0; i < SCHED_NKNOBS; i++) {
      if (!p->sched->loc[i].path) continue;
      if (source_kind(p->sched, i) == HTML_KNOB_DEFAULT) knob_row(g, p, i);
    }
    g_string_append(g, "</table>\n</details>\n");
  }
  if (p->nwarnings) {
    g_string_append(g, "<p>Warnings of the plan loader and the compiler:</p>\n<pre class=\"warnings\">");
    for (int i = 0; i < p->nwarnings; i++) {
      esc(g, p->warnings[i]);
      g_string_append_c(g, '\n');
    }
    g_string_append(g, "</pre>\n");
  }
  if (p->fit_note) {
    g_string_append(g, "<p>Power fitting:</p>\n<pre class=\"fit\">");
    esc(g, p->fit_note);
    g_string_append(g, "</pre>\n");
  }
}

static void identity(GString *g, const HtmlPage *pg, const HtmlProblem *p) {
  g_string_append(g, "<h3>Program</h3>\n<table class=\"ids\">\n<tr><th>problem</th><td class=\"mono\">");
  esc(g, p->problem);
  g_string_append(g, "</td></tr>\n<tr><th>hardware</th><td class=\"mono\">");
  esc(g, p->machine);
  g_string_append(g, "</td></tr>\n<tr><th>program_sha256</th><td class=\"mono\">");
  esc(g, p->program_sha256);
  g_string_append(g, "</td></tr>\n<tr><th>hardware_sha256</th><td class=\"mono\">");
  esc(g, p->hardware_sha256);
  g_string_append(g, "</td></tr>\n</table>\n<p>To rebuild the program, check its hash and write its timeline "
                     "(Perfetto) and power plot:</p>\n<pre class=\"commands\">");
  /* the plan's path quoted for a shell when it needs it */
  gboolean plain = *pg->plan != '\0';
  for (const char *c = pg->plan; *c; c++)
    plain &= g_ascii_isalnum(*c) || strchr("_./-+,=:@%", *c) != NULL;
  g_autofree char *plan = plain ? g_strdup(pg->plan) : g_shell_quote(pg->plan);
  g_autofree char *asm_ = g_strdup_printf("%s.asm", p->name);
  escf(g, "tcc-gen %s --problem %s -o %s\n", plan, p->name, asm_);
  escf(g, "tcc-sim %s --timing-only | grep sha256\n", asm_);
  escf(g, "tcc-sim %s --trace=%s.json\n", asm_, p->name);
  escf(g, "tcc-sim %s --profile --plot=%s.svg", asm_, p->name);
  g_string_append(g, "</pre>\n");
}

static void problem(GString *g, const HtmlPage *pg, const HtmlProblem *p) {
  g_string_append(g, "<section class=\"problem\" id=\"");
  esc(g, p->name);
  g_string_append(g, "\">\n<h2>");
  g_autofree char *up = g_ascii_strup(p->name, -1);
  esc(g, up);
  g_string_append(g, " <span class=\"muted mono\">");
  esc(g, p->problem);
  g_string_append(g, "</span></h2>\n");
  g_string_append_printf(g, "<p>%s: %" G_GINT64_FORMAT " cycles, peak %.4f W in [%" G_GINT64_FORMAT ", %"
                            G_GINT64_FORMAT "), %.4f mm&#178;, %.3f uJ in all.</p>\n",
                         p->pass ? "<span class=\"pass\">PASS</span>" : "<span class=\"fail\">FAIL</span>", p->cycles,
                         p->peak_w, p->peak_start, p->peak_start + 1000, p->area_mm2, p->energy_uj);
  g_string_append(g, "<h3>Power</h3>\n");
  if (p->svg) {
    g_string_append(g, "<div class=\"plot\">\n");
    inline_svg(g, p->svg, p->name);
    g_string_append(g, "</div>\n");
  } else {
    g_string_append(g, "<p class=\"muted\">No plot: ");
    esc(g, p->svg_note ? p->svg_note : "not drawn");
    g_string_append(g, "</p>\n");
  }
  stages(g, p);
  units(g, p);
  knobs(g, p);
  identity(g, pg, p);
  g_string_append(g, "</section>\n");
}

/* The hardware keys the plan wrote (the rest are the defaults). */
static void hardware(GString *g, const HtmlPage *pg) {
  if (!pg->loaded) return;
  g_string_append(g, "<h2 id=\"hardware\">Hardware</h2>\n<p>");
  if (pg->nprob) {
    g_string_append(g, "<code>");
    esc(g, pg->prob[0].machine);
    g_string_append(g, "</code></p>\n<p>");
  }
  int n = 0;
  for (int i = 0; i < PLAN_NHW; i++) {
    const PlanLoc *l = &pg->loaded->hw_loc[i];
    if (l->line <= 0) continue;
    g_string_append(g, n++ ? ", " : "Written in the plan: ");
    g_string_append(g, "<code>");
    esc(g, plan_hw_key(i));
    g_string_append(g, "</code>");
    escf(g, " (line %d:%d)", l->line, l->col);
  }
  g_string_append(g, n ? "; every other key at its default.</p>\n" : "Every key at its default.</p>\n");
}

char *html_page(const HtmlPage *pg) {
  GString *g = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  g_string_append(g, "tcc-grade: ");
  esc(g, pg->plan);
  g_string_append(g, "</title>\n<style>\n");
  g_string_append(g, css);
  g_string_append(g, "</style>\n</head>\n<body>\n<h1>tcc-grade report: <span class=\"mono\">");
  esc(g, pg->plan);
  g_string_append(g, "</span></h1>\n<p class=\"muted\">");
  esc(g, pg->grader);
  g_string_append(g, "; simulator ");
  esc(g, pg->simulator);
  if (pg->plan_sha256) {
    g_string_append(g, "; plan sha256 <span class=\"mono\">");
    esc(g, pg->plan_sha256);
    g_string_append(g, "</span>");
  }
  g_string_append(g, "; seed ");
  for (int s = 0; s < pg->nseeds; s++)
    g_string_append_printf(g, "%s%" G_GUINT64_FORMAT, s == 0 ? "" : s == 1 ? " graded, checked on " : ", ",
                           pg->seeds[s]);
  g_string_append(g, ".</p>\n<p>");
  for (int i = 0; i < pg->nprob; i++) {
    g_string_append(g, i ? " &middot; " : "");
    g_string_append(g, "<a href=\"#");
    esc(g, pg->prob[i].name);
    g_string_append(g, "\">");
    esc(g, pg->prob[i].name);
    g_string_append(g, "</a>");
  }
  g_string_append(g, "</p>\n");
  verdicts(g, pg);
  bounds(g, pg);
  for (int i = 0; i < pg->nprob; i++) problem(g, pg, &pg->prob[i]);
  hardware(g, pg);
  g_string_append(g, "</body>\n</html>\n");
  return g_string_free(g, FALSE);
}

/* ---- the file ----------------------------------------------------------- */

gboolean html_out_open(HtmlOut *o, const char *file, const char *input, GError **err) {
  *o = (HtmlOut){NULL, NULL};
  g_autoptr(GError) e = NULL;
  o->out = outfile_open(file, (const char *const[]){input, NULL}, OUTFILE_DEFAULT, &e);
  if (o->out) {
    o->file = g_strdup(file);
    return TRUE;
  }
  if (g_error_matches(e, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST, "tcc-grade: error: --html %s is the plan itself", file);
  else
    g_set_error(err, G_FILE_ERROR, e->code, "%s: error: cannot write: %s", file, e->message);
  return FALSE;
}

gboolean html_out_commit(HtmlOut *o, const char *text, gsize len, GError **err) {
  g_autoptr(GError) e = NULL;
  fwrite(text, 1, len, outfile_stream(o->out)); /* an error stays on the stream: the commit says it */
  gboolean ok = outfile_commit(o->out, &e);
  o->out = NULL;
  if (!ok) g_set_error(err, G_FILE_ERROR, e->code, "%s: error: cannot write: %s", o->file, e->message);
  g_clear_pointer(&o->file, g_free);
  return ok;
}

void html_out_abort(HtmlOut *o) {
  outfile_abandon(o->out);
  o->out = NULL;
  g_clear_pointer(&o->file, g_free);
}
