/* text_escape.c - control characters and line breaks escaped for one line
 * (text_escape.h). */
#include "text_escape.h"

#include <glib.h>

char *text_escape(const char *s) {
  GString *g = g_string_new(NULL);
  for (const unsigned char *c = (const unsigned char *)s; *c;) {
    if (*c < 0x80) {
      if (*c == '\n')
        g_string_append(g, "\\n");
      else if (*c == '\t')
        g_string_append(g, "\\t");
      else if (*c == '\r')
        g_string_append(g, "\\r");
      else if (*c < 0x20 || *c == 0x7f)
        g_string_append_printf(g, "\\x%02x", *c);
      else
        g_string_append_c(g, (char)*c);
      c++;
      continue;
    }
    /* a byte that starts no valid UTF-8 character, a C1 control (NEL,
     * U+0085, ends a line in YAML), or the line and paragraph separators
     * (U+2028, U+2029: line breaks to YAML and to JavaScript), or U+FFFE and
     * U+FFFF, which libyaml refuses anywhere in a file */
    int n = (*c & 0xe0) == 0xc0 ? 2 : (*c & 0xf0) == 0xe0 ? 3 : (*c & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || !g_utf8_validate((const char *)c, n, NULL)) { /* overlong, a surrogate, cut short */
      g_string_append_printf(g, "\\x%02x", *c);
      c++;
      continue;
    }
    gunichar u = g_utf8_get_char((const char *)c);
    if ((u >= 0x80 && u <= 0x9f) || u == 0x2028 || u == 0x2029 || u == 0xfffe || u == 0xffff)
      g_string_append_printf(g, "\\u%04x", (unsigned)u);
    else
      g_string_append_len(g, (const char *)c, n);
    c += n;
  }
  return g_string_free(g, FALSE);
}
