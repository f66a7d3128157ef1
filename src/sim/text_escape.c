/* text_escape.c - control characters escaped for one line (text_escape.h). */
#include "text_escape.h"

#include <glib.h>

char *text_escape(const char *s) {
  GString *g = g_string_new(NULL);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
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
  }
  return g_string_free(g, FALSE);
}
