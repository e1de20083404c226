/* Byte sizes on the command line: "4096", "64K", "1M", "2G" (K, M, G =
 * 2^10, 2^20, 2^30) and nccl-tests-like sweeps "MIN:MAX:xF". Shared by the
 * commands that take a size or a sweep (sim, tune). */
#ifndef WEFT_CLI_SIZES_H
#define WEFT_CLI_SIZES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The len bytes at s as a size in bytes; false when malformed, zero or
 * beyond 64 bits. */
bool cli_parse_size(const char *s, size_t len, uint64_t *out);

/* S or MIN:MAX:xF into lo, hi and factor (factor 0 for a single size, else
 * >= 2 with hi >= lo); false when malformed. */
bool cli_parse_sweep(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor);

/* The size as nccl-tests and the command line spell it when exact: "1K",
 * "64M", "2G"; other sizes in bytes ("1000"). Used for trace process names
 * and plot axis labels. */
void cli_size_label(uint64_t size, char *buf, size_t len);

#endif
