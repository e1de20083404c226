/* A main for the fuzz targets without libFuzzer: every build (gcc included)
 * links each fuzz/NAME.c with this file as fuzz_replay_NAME, and CTest runs
 * it over the target's seed corpus, so the targets' checks run on every
 * seed in the ordinary suite (and under the sanitizers in make test-asan).
 *
 *   fuzz_replay_NAME PATH...
 *
 * Each PATH is a file, or a directory whose regular files are fed in name
 * order (not recursively). Each file is read whole into a block of exactly
 * its size (so reading past the end is seen by AddressSanitizer, as under
 * libFuzzer) and passed to LLVMFuzzerTestOneInput; a target that finds a
 * broken property aborts, which fails the test with the file's name
 * already printed. Exit 0 when every file ran, 1 when a PATH cannot be
 * read or names no file at all (an empty corpus must not pass as tested).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feeds one file; false (with a message) when it cannot be read. */
static bool replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: %s: out of memory\n", path);
            fclose(f);
            return false;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *nbuf = realloc(buf, cap);
        if (!nbuf)
            free(buf);
        buf = nbuf;
    }
    bool ok = !ferror(f);
    fclose(f);
    if (!ok) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return false;
    }
    /* Exactly n bytes, as libFuzzer passes them. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return false;
    }
    memcpy(exact, buf, n);
    free(buf);
    printf("replay: %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Feeds the regular files of dir in name order; adds their number to *count. */
static bool replay_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) {
                ok = false;
                break;
            }
            names = nn;
        }
        if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0) {
            ok = false;
            break;
        }
        n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (ok && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            ok = replay_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    if (!ok)
        fprintf(stderr, "replay: %s: could not list or read every file\n", dir);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        bool ok =
            S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : (count++, replay_file(argv[i]));
        if (!ok)
            return 1;
    }
    if (count == 0) {
        fprintf(stderr, "replay: no input file in the paths given\n");
        return 1;
    }
    printf("replay: %zu inputs, no property broken\n", count);
    return 0;
}
