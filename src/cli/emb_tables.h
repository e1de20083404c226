/* The --tables grammar of weft traffic embedding (docs/embedding.md):
 *
 *   TABLES = GROUP {',' GROUP}
 *   GROUP  = [COUNT '*'] ROWS 'x' DIM {'/' KEY '=' VALUE}
 *   ROWS   = a whole number, optionally with K, M, G (10^3, 10^6, 10^9)
 *   KEY    = pool (rows a sample looks up) | dtype (fp32, fp16, bf16,
 *            fp8, int8 or 1 to 8 bytes) | zipf (S from 0 to 8, 3 decimals;
 *            0 is uniform) | shard (tw, rw, dp or cw:K)
 *
 * "26*1Mx128/pool=20,2*10Kx64/shard=cw:4" is 26 tables of a million rows of
 * 128 elements looked up 20 times a sample, and 2 tables of 10,000 rows of
 * 64 split into 4 column shards; keys not given take the defaults in
 * *def. */
#ifndef WEFT_CLI_EMB_TABLES_H
#define WEFT_CLI_EMB_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "weft/embedding.h"

/* Parses text into *out (a malloc'd array of *count tables, free()). On
 * failure returns false with the reason in why ("group 2 ('5x'): no
 * dimension after 'x'"); out of memory is a reason too. */
bool cli_emb_tables_parse(const char *text, const weft_emb_table *def, weft_emb_table **out,
                          uint32_t *count, char *why, size_t why_size);

/* "tw", "rw", "dp", "cw:K" into t->sharding (and t->col_shards). */
bool cli_emb_sharding_parse(const char *text, weft_emb_table *t);
/* fp32, fp16, bf16, fp8, int8 or a number 1 to 8. */
bool cli_emb_dtype_parse(const char *text, uint32_t *bytes);
/* S from 0 to 8 with at most 3 decimals, in thousandths. */
bool cli_emb_milli_parse(const char *text, uint32_t *milli);

#endif
