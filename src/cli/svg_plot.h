/* Line plots of bandwidth against message size, written as standalone SVG
 * (weft sim --plot, weft sim --compare --plot, weft perf --plot).
 *
 * The x axis is the size in bytes on a log2 scale, ticked at powers of two
 * and labelled as nccl-tests and the command line spell sizes ("1K",
 * "64M", "1G"); the y axis is linear from 0, ticked at 1, 2 or 5 times a
 * power of ten. Every series is a polyline with a marker per point (a
 * circle with a <title> giving the exact figure, shown on hover). Every
 * series has a stroke of its own (one of 10 colours, then the colours
 * again with a dash pattern: 40 styles before one repeats). A reference
 * series (the bound) is a thicker black dash-dotted line without markers,
 * labelled with its name inside the plot area; the y axis leaves at least
 * 5 % headroom above the highest line, so the bound is never drawn on the
 * frame. The legend lists the series in order beside the plot; the picture
 * grows in height to fit it.
 *
 * The document is plain SVG 1.1 with no scripts, fonts or external
 * references, so any browser or rsvg-convert draws it. Every series is a
 * <g class="series"> (class "series bound" for a reference) whose
 * data-name is the series name, holding one polyline and, unless a
 * reference, one circle per point: tests count them; the frame is the
 * <rect class="frame">. Output is
 * deterministic (fixed formats, no dates).
 */
#ifndef WEFT_CLI_SVG_PLOT_H
#define WEFT_CLI_SVG_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cli_plot_series {
    const char *name;  /* legend text */
    const uint64_t *x; /* sizes in bytes, > 0 */
    const double *y;   /* values; points with y not finite or < 0 are left out */
    size_t n;
    bool reference; /* a dashed line without markers (the bound) */
} cli_plot_series;

typedef struct cli_plot {
    const char *title;   /* the line above the plot */
    const char *x_title; /* e.g. "size (bytes)" */
    const char *y_title; /* e.g. "busbw (GB/s)" */
    const cli_plot_series *series;
    size_t nseries;
} cli_plot;

/* Writes the plot to f. */
void cli_plot_svg(FILE *f, const cli_plot *p);

/* Writes the plot to path atomically (cli/outfile.h). Returns CLI_EXIT_OK,
 * or CLI_EXIT_INPUT after printing why the file could not be written. */
int cli_plot_write(const char *path, const cli_plot *p);

#endif
