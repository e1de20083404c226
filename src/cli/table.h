/* Aligned tables for human output.
 *
 * Cells are added left to right, row by row, as printf-style text; the
 * table owns copies. Printing pads every column but the last to its widest
 * cell (width counted in UTF-8 code points), separates columns by two
 * spaces, right-aligns the columns marked so (numbers) and never leaves
 * trailing blanks. Memory is O(cells).
 */
#ifndef WEFT_CLI_TABLE_H
#define WEFT_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct cli_table {
    size_t ncols;
    char **cells; /* row-major */
    size_t ncells, cap;
    unsigned right; /* bit c set: column c is right-aligned (c < 32) */
    bool oom;       /* an allocation failed; printing reports it */
} cli_table;

void cli_table_init(cli_table *t, size_t ncols);
void cli_table_fini(cli_table *t);
/* Marks column c (< 32) right-aligned. */
void cli_table_align_right(cli_table *t, size_t c);
/* Appends the next cell; a row is complete after ncols cells. */
void cli_table_cell(cli_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the table, each line starting with `indent`. Returns 0, or -1 if
 * memory ran out while filling it (then nothing is printed). */
int cli_table_print(const cli_table *t, FILE *f, const char *indent);

#endif
