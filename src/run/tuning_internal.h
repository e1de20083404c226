/* Inside tuning tables (weft/tuning.h): the storage shared by tuning.c
 * (tables, lookup, checks) and tuning_text.c (the text format). */
#ifndef WEFT_RUN_TUNING_INTERNAL_H
#define WEFT_RUN_TUNING_INTERNAL_H

#include <stdio.h>

#include "weft/tuning.h"

typedef struct tuning_entry {
    weft_tuning_entry pub; /* its arrays point at names and times below */
    char **names;
    double *times;
} tuning_entry;

struct weft_tuning {
    weft_tuning_info info;
    char *fabric, *sim, *name;
    tuning_entry *entries; /* grouped by collective (weft_coll order), sizes increasing */
    size_t cap;
};

/* A table without entries; the caller fills ranks and hash. */
weft_err weft__tuning_alloc(const char *fabric, const char *sim, const char *name,
                            weft_tuning **out);
/* Why (coll, bytes, names, times) cannot be the next entry of tt, written
 * to why; WEFT_OK when it can. Times are not required to be sorted. */
weft_err weft__tuning_check_entry(const weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                                  const char *const *names, const double *times, char *why,
                                  size_t cap);
/* Appends a checked entry in the given order; only WEFT_ENOMEM fails. */
weft_err weft__tuning_append(weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                             const char *const *names, const double *times, uint32_t line);

/* FNV-1a 64 of the text w writes for obj (the agreement and fabric hashes). */
typedef weft_err (*weft__tuning_writer)(const void *obj, FILE *f);
weft_err weft__tuning_text_hash(const void *obj, weft__tuning_writer w, uint64_t *out,
                                weft_diag *d);

#endif
