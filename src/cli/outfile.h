/* Output that is either complete or absent (-o FILE).
 *
 * cli_out_open with a path creates PATH.tmp.PID next to PATH (same
 * directory, so the final rename cannot cross file systems) and hands out
 * its FILE *. cli_out_close(ok = true) flushes, fsyncs, closes and renames
 * it over PATH in one step; with ok = false, or when any of those steps
 * fails, it removes the temporary file instead and PATH is left as it was.
 * If the process is killed by SIGINT, SIGTERM, SIGHUP or SIGPIPE while a
 * temporary file is open, a signal handler removes it before dying. So a
 * reader of PATH sees the old file or the whole new one, never half of it.
 *
 * Without a path (NULL or "-") the output is stdout; closing it checks that
 * everything was written. One output may be open at a time.
 */
#ifndef WEFT_CLI_OUTFILE_H
#define WEFT_CLI_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct cli_out {
    FILE *f;          /* where to write */
    const char *path; /* the final path, or NULL for stdout */
    char *tmp;        /* the temporary path (heap), or NULL */
} cli_out;

/* Returns CLI_EXIT_OK, or CLI_EXIT_INPUT after printing why the file cannot
 * be created ("weft: cannot write 'x.topo': No such file or directory"). */
int cli_out_open(cli_out *o, const char *path);
/* Commits (ok) or discards (!ok) the output; see above. Returns
 * CLI_EXIT_OK, or CLI_EXIT_INPUT after printing why it could not be
 * written. With ok == false it returns CLI_EXIT_OK once cleaned up (the
 * caller reports its own failure). */
int cli_out_close(cli_out *o, bool ok);

#endif
