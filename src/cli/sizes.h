/* Byte sizes on the command line, one grammar for every flag that takes a
 * size or a sweep (sim --size, tune --sizes, perf -b and -e):
 *
 *   SIZE  = NUMBER [UNIT], a whole number of bytes > 0
 *   UNIT  = B | K | M | G (also k, m, g: 2^10, 2^20, 2^30, as nccl-tests)
 *         | KiB | MiB | GiB (2^10, 2^20, 2^30)
 *         | KB | kB | MB | GB (10^3, 10^6, 10^9, as GB/s means 10^9 bytes/s)
 *   SWEEP = SIZE | MIN:MAX:xF (MIN, MIN*F, ... up to MAX; F a whole
 *           number >= 2, MAX >= MIN)
 *
 * NUMBER is a decimal ("64", "1.5", "2e3"); "1.5G" is 1610612736 bytes,
 * "0.5K" 512, and "1.5" or "0.1K" are refused as not whole bytes. */
#ifndef WEFT_CLI_SIZES_H
#define WEFT_CLI_SIZES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/args.h"

/* The grammar with examples, for messages and --help. */
#define CLI_SIZE_GRAMMAR                                                                           \
    "a number of bytes with an optional unit: K, M, G = 2^10, 2^20, 2^30 (as nccl-tests; "         \
    "also KiB, MiB, GiB), KB, MB, GB = 10^3, 10^6, 10^9; e.g. 4096, 64K, 1.5G, 1GiB"

/* The len bytes at s as a size in bytes. On failure returns false and sets
 * *why (static text): "not a whole number of bytes", "must be > 0", "too
 * large" or the grammar (CLI_SIZE_GRAMMAR). */
bool cli_parse_size(const char *s, size_t len, uint64_t *out, const char **why);

/* S or MIN:MAX:xF into lo, hi and factor (factor 0 for a single size). On
 * failure returns false and writes why the text is refused into why
 * ("the sweep's end 1024 is below its start 1048576", "its start '1.5':
 * not a whole number of bytes"). */
bool cli_parse_sweep(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor, char *why,
                     size_t why_size);

/* Reads flag's value (as written: "--size", "-b") as a size no larger than
 * max; on failure prints the usage error ("bad --size '1.5': not a whole
 * number of bytes (expected GRAMMAR)") and returns CLI_EXIT_USAGE, else
 * CLI_EXIT_OK. */
int cli_flag_size(const cli_syntax *syn, const char *flag, const char *text, uint64_t max,
                  uint64_t *out);
/* The same for a sweep. */
int cli_flag_sweep(const cli_syntax *syn, const char *flag, const char *text, uint64_t *lo,
                   uint64_t *hi, uint64_t *factor);

/* The size as nccl-tests and the command line spell it when exact: "1K",
 * "64M", "2G"; other sizes in bytes ("1000"). Used for trace process names
 * and plot axis labels. */
void cli_size_label(uint64_t size, char *buf, size_t len);

#endif
