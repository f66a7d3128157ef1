/* csv.h - RFC 4180 fields for the research tools' tables (tcc-sweep
 * --collect, tcc-tune's log). */
#ifndef TCC_CSV_H
#define TCC_CSV_H

#include <glib.h>

/* Append field `f`, in double quotes (quotes doubled) when it holds a comma,
 * a quote or a line break. */
void csv_field(GString *o, const char *f);

#endif
