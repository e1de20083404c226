/* SVG plots, read back with expat: well-formed XML, one group per series
 * with its points, the legend, size labels on the log axis, escaping, and
 * atomic writing. */
#include "cli/args.c"
#include "cli/group.c"
#include "cli/outfile.c"
#include "cli/sizes.c"
#include "cli/svg_plot.c"

#include <expat.h>
#include <stdlib.h>

#include "base/testing.h"

/* What the parser saw: series groups (name, reference or not, points),
 * polylines per series, legend texts, tick labels. */
typedef struct seen {
    int depth, series_depth, text_kind; /* 1: a tick label, 2: a legend text */
    int nseries, polylines[16], points[16];
    char names[16][64];
    bool reference[16];
    bool in_legend, in_ticks;
    int legend_texts;
    char ticks[512];
    char legend[512];
    char root[16];
} seen;

static const char *attr(const char **a, const char *name)
{
    for (; a && a[0]; a += 2)
        if (strcmp(a[0], name) == 0)
            return a[1];
    return NULL;
}

static void XMLCALL on_start(void *u, const char *el, const char **a)
{
    seen *s = u;
    s->depth++;
    if (s->depth == 1)
        snprintf(s->root, sizeof s->root, "%s", el);
    const char *cls = attr(a, "class");
    if (strcmp(el, "g") == 0 && cls && strncmp(cls, "series", 6) == 0 && s->nseries < 16) {
        int k = s->nseries++;
        snprintf(s->names[k], sizeof s->names[k], "%s", attr(a, "data-name"));
        s->reference[k] = strcmp(cls, "series bound") == 0;
        s->series_depth = s->depth;
    } else if (strcmp(el, "g") == 0 && cls) {
        s->in_legend = strcmp(cls, "legend") == 0;
        s->in_ticks = strcmp(cls, "ticks") == 0;
    } else if (s->series_depth && strcmp(el, "polyline") == 0) {
        s->polylines[s->nseries - 1]++;
    } else if (s->series_depth && strcmp(el, "circle") == 0) {
        s->points[s->nseries - 1]++;
    } else if (strcmp(el, "text") == 0) {
        s->text_kind = s->in_ticks ? 1 : s->in_legend ? 2 : 0;
        if (s->text_kind == 1 && strlen(s->ticks) + 2 < sizeof s->ticks)
            strcat(s->ticks, "|");
        if (s->text_kind == 2) {
            s->legend_texts++;
            if (strlen(s->legend) + 2 < sizeof s->legend)
                strcat(s->legend, "|");
        }
    }
}

static void XMLCALL on_end(void *u, const char *el)
{
    seen *s = u;
    if (s->depth == s->series_depth)
        s->series_depth = 0;
    if (strcmp(el, "g") == 0 && !s->series_depth)
        s->in_legend = s->in_ticks = false;
    if (strcmp(el, "text") == 0)
        s->text_kind = 0;
    s->depth--;
}

static void XMLCALL on_text(void *u, const char *t, int len)
{
    seen *s = u;
    char *to = s->text_kind == 1 ? s->ticks : s->text_kind == 2 ? s->legend : NULL;
    if (to && strlen(to) + (size_t)len + 1 < 512)
        strncat(to, t, (size_t)len);
}

/* Parses text with expat; false (with the error on stderr) when it is not
 * well-formed. */
static bool parse(const char *text, size_t len, seen *s)
{
    memset(s, 0, sizeof *s);
    XML_Parser p = XML_ParserCreate("UTF-8");
    XML_SetUserData(p, s);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    bool ok = XML_Parse(p, text, (int)len, 1) == XML_STATUS_OK;
    if (!ok)
        fprintf(stderr, "expat: %s at line %lu\n", XML_ErrorString(XML_GetErrorCode(p)),
                (unsigned long)XML_GetCurrentLineNumber(p));
    XML_ParserFree(p);
    return ok;
}

static char *render(const cli_plot *p, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    cli_plot_svg(f, p);
    fclose(f);
    return buf;
}

static void test_series_and_points(void)
{
    /* A bound line, two algorithms over a sweep 1K .. 1G by 4 (11 sizes),
     * one of them with a point that cannot be drawn (NaN). */
    uint64_t x[11];
    double bound[11], a[11], b[11];
    for (int i = 0; i < 11; i++) {
        x[i] = 1024ull << (2 * i);
        bound[i] = 325;
        a[i] = 10.0 * (i + 1);
        b[i] = i == 5 ? NAN : 3.0 * i;
    }
    cli_plot_series s[] = {{"bound (325.0 GB/s)", x, bound, 11, true},
                           {"ring", x, a, 11, false},
                           {"a<b & \"c\"", x, b, 11, false}};
    cli_plot p = {"allreduce on a100:2 (16 ranks)", "size (bytes)", "busbw (GB/s)", s, 3};
    size_t len;
    char *text = render(&p, &len);
    seen v;
    CHECK(parse(text, len, &v));
    CHECK_STR(v.root, "svg");
    CHECK_INT(v.nseries, 3);
    CHECK_STR(v.names[0], "bound (325.0 GB/s)");
    CHECK_STR(v.names[2], "a<b & \"c\"");
    CHECK(v.reference[0] && !v.reference[1] && !v.reference[2]);
    CHECK_INT(v.polylines[0], 1);
    CHECK_INT(v.polylines[1], 1);
    CHECK_INT(v.polylines[2], 1);
    CHECK_INT(v.points[0], 0); /* a reference has no markers */
    CHECK_INT(v.points[1], 11);
    CHECK_INT(v.points[2], 10); /* the NaN is left out */
    CHECK_INT(v.legend_texts, 3);
    CHECK_STR(v.legend, "|bound (325.0 GB/s)|ring|a<b & \"c\"");
    /* 1K = 2^10 .. 1G = 2^30: 20 powers of two, ticked every second one
     * (at most 10 steps), then y from 0 to 400 in steps of 100 (325 / 5
     * rounds up to 100). */
    CHECK_STR(v.ticks, "|1K|4K|16K|64K|256K|1M|4M|16M|64M|256M|1G|0|100|200|300|400");
    /* The bound spans the plot at 325 of 400: 396 - 340 x 325 / 400. */
    CHECK_CONTAINS(text, "points=\"84.00,119.75 136.00,119.75");
    CHECK_CONTAINS(text, "<title>ring 1G: 110</title>");
    free(text);
}

static void test_odd_sizes_and_empty(void)
{
    /* One size that is not a power of two: the axis spans the powers of
     * two around it, labelled in bytes below 1K. */
    uint64_t x[] = {1000};
    double y[] = {0.5};
    cli_plot_series s[] = {{"perf", x, y, 1, false}};
    cli_plot p = {"t", "x", "y", s, 1};
    size_t len;
    char *text = render(&p, &len);
    seen v;
    CHECK(parse(text, len, &v));
    CHECK_INT(v.points[0], 1);
    /* 0.5 is the highest point: the axis leaves a tick of headroom. */
    CHECK_STR(v.ticks, "|512|1K|0|0.1|0.2|0.3|0.4|0.5|0.6");
    free(text);
    /* Nothing to draw: still a well-formed, empty frame. */
    p.nseries = 0;
    text = render(&p, &len);
    CHECK(parse(text, len, &v));
    CHECK_INT(v.nseries, 0);
    CHECK_STR(v.ticks, "|1|2|4|8|16|32|64|128|256|512|1K|0|0.2|0.4|0.6|0.8|1");
    free(text);
}

static void test_write(void)
{
    char dir[] = "/tmp/weft_svg_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64], bad[80];
    snprintf(path, sizeof path, "%s/p.svg", dir);
    snprintf(bad, sizeof bad, "%s/no/such/p.svg", dir);
    uint64_t x[] = {1024, 2048};
    double y[] = {1, 2};
    cli_plot_series s[] = {{"a", x, y, 2, false}};
    cli_plot p = {"t", "x", "y", s, 1};
    CHECK_INT(cli_plot_write(path, &p), CLI_EXIT_OK);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        char buf[8192];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        seen v;
        CHECK(parse(buf, n, &v));
        CHECK_INT(v.points[0], 2);
    }
    CHECK_INT(cli_plot_write(bad, &p), CLI_EXIT_INPUT);
    remove(path);
    rmdir(dir);
}

int main(void)
{
    test_series_and_points();
    test_odd_sizes_and_empty();
    test_write();
    return weft_test_done();
}
