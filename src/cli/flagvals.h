/* Flag values with a fixed grammar that several commands share: a
 * collective (--coll), an algorithm (--algo), a bandwidth (--nic-bw ...)
 * and a time (--alpha). Each is read one way everywhere, and a bad value is
 * a usage error (exit 2) whose message names the flag, the value and what
 * is allowed (the list, or the grammar with an example). Bandwidths and
 * times go through weft_parse_quantity, the reader of .topo files and
 * presets, so "25", "25GB/s" and "200Gbps" mean the same on every flag and
 * in every preset. */
#ifndef WEFT_CLI_FLAGVALS_H
#define WEFT_CLI_FLAGVALS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/args.h"
#include "weft/plan.h"
#include "weft/rat.h"

/* The collectives, for messages and --help. */
#define CLI_COLLS "allgather, reducescatter, allreduce, broadcast, reduce or alltoall"

/* Each returns CLI_EXIT_OK with *out set, or prints the usage error of syn
 * and returns CLI_EXIT_USAGE. `flag` is the flag as written ("--coll"). */
int cli_flag_coll(const cli_syntax *syn, const char *flag, const char *text, weft_coll *out);
/* An algorithm name that weft plan --list lists (rings:K with K given), or
 * "optimal" when allow_optimal. Whether it builds the collective is the
 * synthesizer's answer (exit 1: the input does not fit), not this check. */
int cli_flag_algo(const cli_syntax *syn, const char *flag, const char *text, bool allow_optimal);
/* A bandwidth > 0 in GB/s; a bare number is GB/s. */
int cli_flag_bandwidth(const cli_syntax *syn, const char *flag, const char *text, weft_rat *gbps);
/* A time >= 0 and at most max_s seconds, written with a unit (ns, us, ms,
 * s) as a .topo file's lat=; a bare number is a usage error naming the
 * units, except 0. The value in seconds. */
int cli_flag_time(const cli_syntax *syn, const char *flag, const char *text, double max_s,
                  double *seconds);
/* An expert popularity: "uniform" (*zipf false) or "zipf:S", S from 0 to 8
 * with at most 3 decimals (*zipf true, *milli = 1000 S). */
int cli_flag_skew(const cli_syntax *syn, const char *flag, const char *text, bool *zipf,
                  uint32_t *milli);
/* An output file for SVG (--plot): its name must end in ".svg" (any case),
 * since weft writes SVG only and a viewer trusts the extension (a .png
 * holding SVG opens as a broken image). Checked before any work, so a bad
 * name leaves nothing written. */
int cli_flag_svg(const cli_syntax *syn, const char *flag, const char *path);
/* Flag --name of a, when given: a whole number from lo to hi, in decimal
 * digits only (no sign, no suffix); *out is left as it is when not given. */
int cli_flag_whole(const cli_syntax *syn, const cli_args *a, const char *name, uint64_t lo,
                   uint64_t hi, uint64_t *out);

#endif
