/* SVG line plots. See svg_plot.h. */
#include "cli/svg_plot.h"

#include <math.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "cli/sizes.h"

/* Geometry in SVG user units (pixels): the plot area, and the legend to
 * its right. */
enum {
    PLOT_LEFT = 84,
    PLOT_TOP = 56,
    PLOT_WIDTH = 520,
    PLOT_HEIGHT = 340,
    LEGEND_LEFT = PLOT_LEFT + PLOT_WIDTH + 28,
    LEGEND_ROW = 20,
    WIDTH = LEGEND_LEFT + 196,
};

/* Tableau 10 (Tableau's default categorical palette, as in matplotlib's
 * "tab10"): distinct on screen and in grey print. A plot has more series
 * than colours (weft sim --compare draws up to a dozen algorithms), so the
 * series past each ten repeat the colours with a dash pattern of their own:
 * style j is palette[j % 10] with dashes[(j / 10) % 4], 40 distinct styles.
 * The reference line (the bound) uses none of them: it is black, thicker,
 * dash-dotted and labelled inside the plot area. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
static const char *const dashes[] = {NULL, "8 4", "2 3", "12 3 3 3"};
#define BOUND_COLOR "#000000"
#define BOUND_DASH "10 4 2 4"

/* A series' stroke: its colour and dash pattern (NULL: solid). */
typedef struct style {
    const char *color, *dash;
} style;

/* Series k's style: the reference's, or the next style after the
 * non-reference series before it. */
static style series_style(const cli_plot *p, size_t k)
{
    if (p->series[k].reference)
        return (style){BOUND_COLOR, BOUND_DASH};
    size_t j = 0;
    for (size_t i = 0; i < k; i++)
        j += !p->series[i].reference;
    return (style){palette[j % 10], dashes[(j / 10) % 4]};
}

static void dash_attr(FILE *f, const char *dash)
{
    if (dash)
        fprintf(f, " stroke-dasharray=\"%s\"", dash);
}

/* Writes s with the five XML special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
    }
}

static bool usable(const cli_plot_series *s, size_t i)
{
    return s->x[i] > 0 && isfinite(s->y[i]) && s->y[i] >= 0;
}

/* The axes' ranges: x as whole powers of two [*lo, *hi] (lo < hi), y from
 * 0 to *top in ticks of *step. */
static void ranges(const cli_plot *p, int *lo, int *hi, double *top, double *step)
{
    double xmin = INFINITY, xmax = 0, ymax = 0;
    for (size_t k = 0; k < p->nseries; k++) {
        const cli_plot_series *s = &p->series[k];
        for (size_t i = 0; i < s->n; i++) {
            if (!usable(s, i))
                continue;
            double x = (double)s->x[i];
            xmin = x < xmin ? x : xmin;
            xmax = x > xmax ? x : xmax;
            ymax = s->y[i] > ymax ? s->y[i] : ymax;
        }
    }
    if (!(xmax > 0)) /* nothing to draw: an empty frame from 1 to 1K */
        xmin = 1, xmax = 1024;
    *lo = (int)floor(log2(xmin));
    *hi = (int)ceil(log2(xmax));
    if (*lo == *hi) {
        *lo -= *lo > 0;
        *hi += 1;
    }
    bool empty = !(ymax > 0);
    if (empty)
        ymax = 1;
    double raw = ymax / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
    *step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
    *top = ceil(ymax / *step - 1e-9) * *step;
    /* Headroom: the highest line (often the bound, a round figure such as
     * 100 GB/s) stays at least 5 % of the height below the frame's top
     * edge instead of being drawn on it. */
    if (!empty && *top - ymax < 0.05 * *top)
        *top += *step;
}

void cli_plot_svg(FILE *f, const cli_plot *p)
{
    int lo, hi;
    double top, step;
    ranges(p, &lo, &hi, &top, &step);
    size_t rows = p->nseries;
    int height = PLOT_TOP + PLOT_HEIGHT + 64;
    int legend_height = PLOT_TOP + 24 + (int)rows * LEGEND_ROW + 16;
    if (legend_height > height)
        height = legend_height;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
            "font-size=\"12\">\n",
            WIDTH, height, WIDTH, height);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, height);
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"15\" font-weight=\"bold\">", PLOT_LEFT);
    xml_text(f, p->title);
    fputs("</text>\n", f);

    /* Grid and tick labels. x: a tick every `every` powers of two from the
     * smallest, so that at most 11 are labelled. */
    double x0 = PLOT_LEFT, y0 = PLOT_TOP + PLOT_HEIGHT;
    double xscale = (double)PLOT_WIDTH / (hi - lo), yscale = PLOT_HEIGHT / top;
    int every = 1;
    while ((hi - lo) / every > 10)
        every *= 2;
    fputs("<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n", f);
    for (int e = lo; e <= hi; e++)
        if ((e - lo) % every == 0)
            fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                    x0 + (e - lo) * xscale, PLOT_TOP, x0 + (e - lo) * xscale, y0);
    int yticks = (int)llround(top / step);
    for (int k = 0; k <= yticks; k++)
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0,
                y0 - k * step * yscale, x0 + PLOT_WIDTH, y0 - k * step * yscale);
    fputs("</g>\n<g class=\"ticks\" fill=\"#333333\">\n", f);
    for (int e = lo; e <= hi; e++) {
        if ((e - lo) % every != 0 || e < 0 || e > 63)
            continue;
        char label[32];
        cli_size_label(1ull << e, label, sizeof label);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                x0 + (e - lo) * xscale, y0 + 18, label);
    }
    for (int k = 0; k <= yticks; k++)
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.6g</text>\n", x0 - 8,
                y0 - k * step * yscale + 4, k * step);
    fputs("</g>\n", f);
    fprintf(f,
            "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333333\"/>\n",
            PLOT_LEFT, PLOT_TOP, PLOT_WIDTH, PLOT_HEIGHT);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", x0 + PLOT_WIDTH / 2.0,
            y0 + 44);
    xml_text(f, p->x_title);
    fprintf(f,
            "</text>\n<text transform=\"translate(%d %.2f) rotate(-90)\" "
            "text-anchor=\"middle\">",
            PLOT_LEFT - 52, PLOT_TOP + PLOT_HEIGHT / 2.0);
    xml_text(f, p->y_title);
    fputs("</text>\n", f);

    /* The series, then their legend. */
    for (size_t k = 0; k < p->nseries; k++) {
        const cli_plot_series *s = &p->series[k];
        style st = series_style(p, k);
        fprintf(f, "<g class=\"series%s\" data-name=\"", s->reference ? " bound" : "");
        xml_text(f, s->name);
        fprintf(f, "\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"", st.color,
                s->reference ? "2.5" : "2");
        dash_attr(f, st.dash);
        fputs(" points=\"", f);
        bool first = true;
        double last_x = 0, last_y = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!usable(s, i))
                continue;
            last_x = x0 + (log2((double)s->x[i]) - lo) * xscale;
            last_y = y0 - s->y[i] * yscale;
            fprintf(f, "%s%.2f,%.2f", first ? "" : " ", last_x, last_y);
            first = false;
        }
        fputs("\"/>\n", f);
        /* The reference is labelled on the plot, above its last point and
         * right-aligned inside the frame. */
        if (s->reference && !first) {
            fprintf(f,
                    "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" "
                    "fill=\"%s\">",
                    x0 + PLOT_WIDTH - 6 < last_x ? x0 + PLOT_WIDTH - 6 : last_x, last_y - 6,
                    st.color);
            xml_text(f, s->name);
            fputs("</text>\n", f);
        }
        for (size_t i = 0; i < s->n && !s->reference; i++) {
            if (!usable(s, i))
                continue;
            char label[32];
            cli_size_label(s->x[i], label, sizeof label);
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"><title>",
                    x0 + (log2((double)s->x[i]) - lo) * xscale, y0 - s->y[i] * yscale, st.color);
            xml_text(f, s->name);
            fprintf(f, " %s: %.6g</title></circle>\n", label, s->y[i]);
        }
        fputs("</g>\n", f);
    }
    /* The legend, in series order. */
    fputs("<g class=\"legend\">\n", f);
    for (size_t k = 0; k < p->nseries; k++) {
        const cli_plot_series *s = &p->series[k];
        style st = series_style(p, k);
        double ly = PLOT_TOP + 12 + (double)k * LEGEND_ROW;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"%s\" "
                "stroke-width=\"%s\"",
                LEGEND_LEFT, ly, LEGEND_LEFT + 24, ly, st.color, s->reference ? "2.5" : "2");
        dash_attr(f, st.dash);
        fputs("/>\n", f);
        if (!s->reference)
            fprintf(f, "<circle cx=\"%d\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", LEGEND_LEFT + 12,
                    ly, st.color);
        fprintf(f, "<text x=\"%d\" y=\"%.2f\">", LEGEND_LEFT + 32, ly + 4);
        xml_text(f, s->name);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    fputs("</svg>\n", f);
}

int cli_plot_write(const char *path, const cli_plot *p)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_plot_svg(o.f, p);
    return cli_out_close(&o, true);
}
