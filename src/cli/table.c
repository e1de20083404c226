/* Aligned tables. See table.h. */
#include "cli/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_table_init(cli_table *t, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols ? ncols : 1;
}

void cli_table_fini(cli_table *t)
{
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void cli_table_align_right(cli_table *t, size_t c)
{
    if (c < 32)
        t->right |= 1u << c;
}

void cli_table_cell(cli_table *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    if (t->ncells == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **cells = realloc(t->cells, cap * sizeof *cells);
        if (!cells) {
            t->oom = true;
            return;
        }
        t->cells = cells;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->oom = true;
        return;
    }
    t->cells[t->ncells++] = text;
}

/* Display width: UTF-8 code points (continuation bytes do not count). */
static size_t width_of(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *f, size_t n)
{
    while (n--)
        fputc(' ', f);
}

int cli_table_print(const cli_table *t, FILE *f, const char *indent)
{
    if (t->oom)
        return -1;
    size_t *w = calloc(t->ncols, sizeof *w);
    if (!w)
        return -1;
    for (size_t i = 0; i < t->ncells; i++) {
        size_t cw = width_of(t->cells[i]);
        if (cw > w[i % t->ncols])
            w[i % t->ncols] = cw;
    }
    for (size_t row = 0; row * t->ncols < t->ncells; row++) {
        char *const *cells = t->cells + row * t->ncols;
        size_t n = t->ncells - row * t->ncols;
        if (n > t->ncols)
            n = t->ncols;
        /* Trailing empty cells print nothing, not even separators. */
        while (n > 1 && cells[n - 1][0] == '\0')
            n--;
        if (indent)
            fputs(indent, f);
        for (size_t c = 0; c < n; c++) {
            size_t gap = w[c] - width_of(cells[c]);
            bool right = t->right >> c & 1u;
            if (right)
                pad(f, gap);
            fputs(cells[c], f);
            if (c + 1 < n) {
                if (!right)
                    pad(f, gap);
                fputs("  ", f);
            }
        }
        fputc('\n', f);
    }
    free(w);
    return 0;
}
