/* weft tuning tables: which plan runs, decided by the simulator ahead of
 * time.
 *
 * The runtime (weft/comm.h) must not call the simulator (DESIGN.md), yet
 * its choice of plan should follow the simulator's ranking. A tuning table
 * bridges the two: `weft tune` simulates, for each collective and size
 * class, every candidate the runtime can build on one fabric and writes the
 * ranking to a small text file; a communicator given the table
 * (weft_comm_config.tuning, WEFT_TUNING) runs, per call, the first entry of
 * the ranking whose chunks divide the call's count. The table records the
 * fabric's canonical hash (FNV-1a 64 of the text weft_topo_write prints) and
 * rank count, so a table made for another fabric is refused.
 *
 * Candidates are named as the runtime builds them (weft_tuning_build):
 * every classic algorithm without parameters (weft_synth_classic: "ring",
 * "hd", ...) and "optimal" (weft_synth_optimal, for allgather,
 * reducescatter and allreduce). Rooted collectives are ranked at root 0;
 * the runtime builds the chosen algorithm at the call's root.
 *
 * Text format, version 1 (docs/run.md, "Tuning tables"), line oriented, '#'
 * starts a comment line:
 *
 *   weft-tuning 1
 *   fabric switch:4              (informative: the spec it was made from)
 *   hash 5bd1e9958ef4a2c3        (the fabric's canonical hash, 16 hex digits)
 *   ranks 4
 *   sim slices=1 alpha=0         (informative: the simulator's options)
 *   entry allreduce 1024 rd=1.5e-07 hd=2e-07 ring=3e-07
 *
 * The header lines come first, in this order, each once. An `entry` line
 * gives a collective, a size in bytes (DESIGN.md's convention: allgather
 * the total output, reducescatter the total input, alltoall one rank's
 * input), and the candidates fastest first, each with its simulated time in
 * seconds (times never decrease along the line). Sizes are powers of two,
 * increasing per collective; a call of B bytes follows the entry with the
 * largest size <= B (the smallest entry below it). Errors name the file and
 * line ("t.tune:7: unknown algorithm 'foo'").
 */
#ifndef WEFT_TUNING_H
#define WEFT_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"
#include "weft/plan.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_TUNING_VERSION 1

typedef struct weft_tuning weft_tuning;

/* ---- Candidates ------------------------------------------------------------ */

/* The candidate names, in a fixed order: the classic algorithms without
 * parameters (weft_classic_get order), then "optimal". */
WEFT_API size_t weft_tuning_candidate_count(void);
WEFT_API const char *weft_tuning_candidate(size_t i);
/* True when `name` is a candidate that can build coll. */
WEFT_API bool weft_tuning_candidate_supports(const char *name, weft_coll coll);
/* Builds candidate `name` for coll on t (root for broadcast and reduce).
 * The errors of weft_synth_classic / weft_synth_optimal (WEFT_ETOPO when the
 * fabric does not fit it); WEFT_ENOENT for a name that is not a candidate. */
WEFT_API weft_err weft_tuning_build(const weft_topo *t, const char *name, weft_coll coll,
                                    weft_rank root, weft_plan **out, weft_diag *d);

/* The fabric's canonical hash: FNV-1a 64 of weft_topo_write's text. */
WEFT_API weft_err weft_tuning_fabric_hash(const weft_topo *t, uint64_t *out, weft_diag *d);

/* ---- Tables ------------------------------------------------------------------ */

typedef struct weft_tuning_info {
    uint32_t version;
    uint32_t ranks;
    uint64_t fabric_hash;
    const char *fabric; /* as recorded; informative */
    const char *sim;    /* as recorded; informative */
    const char *name;   /* the file the table was loaded from, or "<table>" */
    uint32_t entries;
} weft_tuning_info;

typedef struct weft_tuning_entry {
    weft_coll coll;
    uint64_t bytes;
    uint32_t line;            /* its line in the file (0 when built in memory) */
    uint32_t n;               /* candidates, >= 1 */
    const char *const *names; /* fastest first */
    const double *times_s;    /* simulated seconds, same order */
} weft_tuning_entry;

/* An empty table for fabric t. fabric and sim are recorded verbatim (one
 * line each: no newline; fabric may be NULL for "-", sim NULL for "").
 * WEFT_EINVAL for a newline in either. */
WEFT_API weft_err weft_tuning_new(const weft_topo *t, const char *fabric, const char *sim,
                                  weft_tuning **out, weft_diag *d);
/* NULL is allowed. */
WEFT_API void weft_tuning_free(weft_tuning *tt);

/* Adds the ranking of coll at `bytes`: n >= 1 distinct candidates that
 * build coll, with their simulated times (finite, >= 0). They are stored
 * fastest first (ties keep the given order). bytes must be a power of two
 * above every size already added for coll. WEFT_EINVAL naming what is
 * wrong otherwise. */
WEFT_API weft_err weft_tuning_add(weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                                  const char *const *names, const double *times_s, weft_diag *d);

/* Writes the table in the text format (times with 9 significant digits;
 * entries grouped by collective, in weft_coll order, then by size).
 * WEFT_EIO when writing fails. */
WEFT_API weft_err weft_tuning_write(const weft_tuning *tt, FILE *f);
/* Parses text[0..len) (any bytes). `name` is used in messages and recorded
 * as the table's name (NULL: "<table>"). WEFT_EPARSE with "NAME:LINE:
 * reason" for anything malformed (wrong magic or version, header lines
 * missing, repeated or out of order, unknown collective or algorithm, an
 * algorithm that does not build the collective, a repeated candidate, a
 * size that is not a power of two or not increasing, a bad or decreasing
 * time); nothing is returned then. */
WEFT_API weft_err weft_tuning_parse(const char *text, size_t len, const char *name,
                                    weft_tuning **out, weft_diag *d);
/* Reads and parses a file (WEFT_ENOENT / WEFT_EIO naming it; WEFT_ELIMIT
 * beyond WEFT_TUNING_MAX_FILE_BYTES, also for a pipe or /dev/zero). A
 * table `weft tune` writes is a few KiB. */
#define WEFT_TUNING_MAX_FILE_BYTES ((size_t)16 << 20)
WEFT_API weft_err weft_tuning_load_file(const char *path, weft_tuning **out, weft_diag *d);

WEFT_API const weft_tuning_info *weft_tuning_get_info(const weft_tuning *tt);
/* Entry i, 0 .. entries-1, in write order. */
WEFT_API const weft_tuning_entry *weft_tuning_entry_get(const weft_tuning *tt, uint32_t i);
/* The entry a call of coll with `bytes` follows: the largest size <= bytes,
 * else the smallest; NULL when the table has none for coll. */
WEFT_API const weft_tuning_entry *weft_tuning_lookup(const weft_tuning *tt, weft_coll coll,
                                                     uint64_t bytes);

/* Checks that the table was made for t: the same rank count and canonical
 * hash. WEFT_EINVAL otherwise: "NAME: the tuning table is for fabric F
 * (hash H, R ranks); SPEC has hash H2 (R2 ranks); run weft tune SPEC" (spec
 * may be NULL). */
WEFT_API weft_err weft_tuning_check(const weft_tuning *tt, const weft_topo *t, const char *spec,
                                    weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
