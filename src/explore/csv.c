/* csv.c - RFC 4180 fields (csv.h). */
#include "csv.h"

#include <string.h>

void csv_field(GString *o, const char *f) {
  if (!strpbrk(f, ",\"\r\n")) {
    g_string_append(o, f);
    return;
  }
  g_string_append_c(o, '"');
  for (const char *p = f; *p; p++) {
    if (*p == '"') g_string_append_c(o, '"');
    g_string_append_c(o, *p);
  }
  g_string_append_c(o, '"');
}
