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

GPtrArray *csv_record(const char **p) {
  const char *s = *p;
  if (!*s) return NULL;
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GString *f = g_string_new(NULL);
  for (;;) {
    if (*s == '"') { /* quoted: up to the lone closing quote */
      for (s++;; s++) {
        if (!*s) {
          g_string_free(f, TRUE);
          g_ptr_array_unref(out);
          return NULL;
        }
        if (*s == '"' && s[1] == '"') {
          g_string_append_c(f, '"');
          s++;
        } else if (*s == '"') {
          s++;
          break;
        } else {
          g_string_append_c(f, *s);
        }
      }
    }
    while (*s && *s != ',' && *s != '\n' && *s != '\r') g_string_append_c(f, *s++);
    g_ptr_array_add(out, g_string_free(f, FALSE));
    if (*s != ',') break;
    s++;
    f = g_string_new(NULL);
  }
  if (*s == '\r') s++;
  if (*s == '\n') s++;
  *p = s;
  return out;
}
