/* json_num.c - the shortest spelling of JSON numbers (json_num.h). */
#include "json_num.h"

#include <glib.h>
#include <string.h>

/* The shortest text of D that g_ascii_strtod reads back as D: fixed with
 * 1..21 decimals (trailing zeros cut, one kept), or %g with 1..17 digits.
 * %.17g writes fixed notation only down to 1e-4, so 17 significant digits
 * need at most 21 decimals. */
static void shortest(GString *o, double d, gboolean fixed) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE + 32];
  for (int p = 1; p <= (fixed ? 21 : 17); p++) {
    char fmt[8];
    g_snprintf(fmt, sizeof fmt, fixed ? "%%.%df" : "%%.%dg", p);
    g_ascii_formatd(buf, sizeof buf, fmt, d);
    if (g_ascii_strtod(buf, NULL) == d) break;
  }
  if (fixed) {
    size_t n = strlen(buf);
    while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.') buf[--n] = '\0';
  }
  g_string_append(o, buf);
}

char *json_shortest_numbers(const char *text) {
  GString *o = g_string_sized_new(strlen(text) + 1);
  const char *s = text;
  while (*s) {
    if (*s == '"') { /* a string: copied to its closing quote */
      const char *e = s + 1;
      while (*e && *e != '"') e += (e[0] == '\\' && e[1]) ? 2 : 1;
      if (*e) e++;
      g_string_append_len(o, s, e - s);
      s = e;
    } else if (*s == '-' || g_ascii_isdigit(*s)) {
      const char *e = s;
      gboolean frac = FALSE, expo = FALSE;
      while (*e == '-' || *e == '+' || *e == '.' || *e == 'e' || *e == 'E' || g_ascii_isdigit(*e)) {
        if (*e == '.') frac = TRUE;
        if (*e == 'e' || *e == 'E') expo = TRUE;
        e++;
      }
      char *end = NULL;
      double d = g_ascii_strtod(s, &end);
      if ((frac || expo) && end == e && (d == d) && d - d == 0)
        shortest(o, d, !expo);
      else
        g_string_append_len(o, s, e - s);
      s = e;
    } else {
      g_string_append_c(o, *s++);
    }
  }
  return g_string_free(o, FALSE);
}

char *json_utf8(const char *s) {
  if (!s) return NULL;
  return g_utf8_validate(s, -1, NULL) ? g_strdup(s) : g_utf8_make_valid(s, -1);
}
