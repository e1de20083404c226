/* The table printer: alignment, UTF-8 widths, trailing blanks, indent. */
#include "cli/table.c"

#include "base/testing.h"

static char *print(const cli_table *t, const char *indent, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    *rc = cli_table_print(t, f, indent);
    fclose(f);
    return buf;
}

int main(void)
{
    cli_table t;
    cli_table_init(&t, 3);
    cli_table_align_right(&t, 1);
    cli_table_cell(&t, "kind");
    cli_table_cell(&t, "count");
    cli_table_cell(&t, "note");
    cli_table_cell(&t, "compute");
    cli_table_cell(&t, "%u", 16u);
    cli_table_cell(&t, "ranks");
    cli_table_cell(&t, "sw\xc3\xaftch"); /* 6 code points, 7 bytes */
    cli_table_cell(&t, "%d", 4);
    cli_table_cell(&t, "%s", "");
    cli_table_cell(&t, "nic");
    cli_table_cell(&t, "%d", 1234567);
    int rc = -2;
    char *text = print(&t, "  ", &rc);
    CHECK_INT(rc, 0);
    CHECK_STR(text, "  kind       count  note\n"
                    "  compute       16  ranks\n"
                    "  sw\xc3\xaftch         4\n"
                    "  nic      1234567\n");
    free(text);
    cli_table_fini(&t);

    /* One column, no indent. */
    cli_table_init(&t, 1);
    cli_table_cell(&t, "a");
    cli_table_cell(&t, "bb");
    text = print(&t, NULL, &rc);
    CHECK_STR(text, "a\nbb\n");
    free(text);
    cli_table_fini(&t);

    /* An empty table prints nothing. */
    cli_table_init(&t, 2);
    text = print(&t, NULL, &rc);
    CHECK_STR(text, "");
    CHECK_INT(rc, 0);
    free(text);
    cli_table_fini(&t);
    return weft_test_done();
}
