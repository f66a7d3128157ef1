/* csv.h - RFC 4180 fields for the research tools' tables (tcc-sweep
 * --collect, tcc-tune's log). */
#ifndef TCC_CSV_H
#define TCC_CSV_H

#include <glib.h>

/* Append field `f`, in double quotes (quotes doubled) when it holds a comma,
 * a quote or a line break. */
void csv_field(GString *o, const char *f);
/* The fields of the record at *p (RFC 4180: quoted fields may hold commas,
 * doubled quotes and line breaks), *p moved past its line end; NULL at the
 * end of the text or for a record with an unterminated quote. */
GPtrArray *csv_record(const char **p);

#endif
