/* Big and pathological Chakra traces (issue 24): memory grows with the
 * file's bytes by a small factor, and what carries nothing is refused
 * before anything is allocated for it.
 *
 * Each load runs in a forked child that reports its error and how far its
 * peak resident size (getrusage's ru_maxrss) rose during the load, so the
 * figures are the load's alone. Before the fix, a 10 MiB trace of empty
 * nodes took 2.3 GB (220 bytes per byte: a 200-byte node record for each
 * 1-byte message) and 3-byte nodes 74 bytes per byte; now the empty one
 * is refused at node 0 having read the file (1 byte per byte), and the
 * 3-byte nodes take 40 B (node) + 16 B (sorted id) per node, 19 bytes per
 * byte with the file itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "weft/work.h"
#include "work/chakra.h"

/* Memory per input byte is checked in ordinary builds only: a sanitizer's
 * allocator adds redzones and quarantine to every allocation. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define MIB ((size_t)1 << 20)

typedef struct report {
    int err;
    long grow_kib; /* ru_maxrss after the load, less before it */
    char msg[WEFT_DIAG_MSG_SIZE];
} report;

static long maxrss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss; /* kilobytes on Linux */
}

/* GlobalMetadata (version "0.0.4"), framed: 8 bytes. */
static size_t put_meta(uint8_t *b)
{
    static const uint8_t meta[] = {7, 0x0a, 5, '0', '.', '0', '.', '4'};
    memcpy(b, meta, sizeof meta);
    return sizeof meta;
}

/* Writes a trace of `len` bytes: the metadata, then `node` (framed) again
 * and again; a tail too short for a whole node is zeros (empty nodes). */
static int write_trace(const char *path, const uint8_t *node, size_t nlen, size_t len)
{
    uint8_t *b = malloc(len);
    if (!b)
        return -1;
    size_t n = put_meta(b);
    for (; nlen && n + nlen <= len; n += nlen)
        memcpy(b + n, node, nlen);
    memset(b + n, 0, len - n);
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(b, 1, len, f) == len ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    free(b);
    return rc;
}

/* Loads prefix (one rank) in a child; its error and peak growth. */
static report load_in_child(const char *prefix)
{
    report rep = {.err = -1};
    int fd[2];
    if (pipe(fd))
        return rep;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        report c = {0};
        long before = maxrss_kib();
        weft_chakra *w = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        c.err = (int)weft_chakra_load(prefix, 1, &w, &d);
        c.grow_kib = maxrss_kib() - before;
        snprintf(c.msg, sizeof c.msg, "%s", c.err ? d.msg : "");
        weft_chakra_free(w);
        ssize_t k = write(fd[1], &c, sizeof c);
        _exit(k == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0) {
        if (read(fd[0], &rep, sizeof rep) != (ssize_t)sizeof rep)
            rep.err = -1;
        waitpid(pid, NULL, 0);
    }
    close(fd[0]);
    return rep;
}

static void test_big(const char *dir)
{
    char prefix[128], path[160], want[WEFT_DIAG_MSG_SIZE];
    size_t len = 10 * MIB;

    /* 10 MiB of empty Node messages: refused at the first, no node kept. */
    snprintf(prefix, sizeof prefix, "%s/empty", dir);
    snprintf(path, sizeof path, "%s.0.et", prefix);
    CHECK_INT(write_trace(path, NULL, 0, len), 0);
    report r = load_in_child(prefix);
    CHECK_INT(r.err, WEFT_EINVAL);
    snprintf(want, sizeof want,
             "%s: offset 8: node 0 is an empty message (no id, no type: et_def.proto's defaults, "
             "which no Chakra converter writes)",
             path);
    CHECK_STR(r.msg, want);
    fprintf(stderr, "empty nodes: peak rose %ld KiB for %zu bytes\n", r.grow_kib, len);
    CHECK(SANITIZED || r.grow_kib * 1024 < 2 * (long)len); /* the file's copy, ~1 byte a byte */
    unlink(path);

    /* 3-byte nodes (type COMP, id 0): every one decoded (the smallest
     * node there is), then refused for the repeated id. */
    static const uint8_t comp[] = {2, 0x18, 4};
    snprintf(prefix, sizeof prefix, "%s/dup", dir);
    snprintf(path, sizeof path, "%s.0.et", prefix);
    size_t dlen = 8 + (len - 8) / 3 * 3; /* whole nodes only */
    CHECK_INT(write_trace(path, comp, sizeof comp, dlen), 0);
    r = load_in_child(prefix);
    CHECK_INT(r.err, WEFT_EINVAL);
    snprintf(want, sizeof want, "%s: node id 0 appears twice (nodes 0 and 1)", path);
    CHECK_STR(r.msg, want);
    fprintf(stderr, "3-byte nodes: peak rose %ld KiB for %zu bytes\n", r.grow_kib, dlen);
    CHECK(SANITIZED || r.grow_kib * 1024 < 22 * (long)len);
    unlink(path);
}

/* More than WEFT_CK_NODES_MAX nodes: refused by the first pass, which
 * allocates nothing, at the first node past the limit. */
static void test_limit(void)
{
    static const uint8_t comp[] = {2, 0x18, 4};
    size_t n = WEFT_CK_NODES_MAX + 1, len = 8 + n * sizeof comp;
    uint8_t *b = malloc(len);
    CHECK(b != NULL);
    if (!b)
        return;
    size_t k = put_meta(b);
    for (size_t i = 0; i < n; i++, k += sizeof comp)
        memcpy(b + k, comp, sizeof comp);
    weft_ck_trace t;
    char err[200];
    CHECK_INT(weft_ck_decode(b, len, &t, err, sizeof err), -1);
    CHECK_STR(err, "offset 50331656: node 16777216: more than 16777216 nodes, weft's limit per "
                   "rank");
    CHECK(t.nodes == NULL && t.n == 0);
    free(b);
}

/* Ids in a scrambled order, each node depending on the one of the next id:
 * every dep resolves only if the ids are sorted right (check_rank's
 * heapsort); then one id made a duplicate is named with both indices. */
static void test_scrambled_ids(void)
{
    enum { N = 5000 };
    static uint8_t b[8 + N * 16];
    size_t len = put_meta(b);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t id = (i * 2381u) % N + 1; /* 2381 is prime: a permutation of 1..N */
        uint8_t node[16];
        size_t k = 0;
        node[k++] = 0x08; /* id */
        for (uint32_t v = id;; v >>= 7) {
            node[k++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
            if (!(v >> 7))
                break;
        }
        node[k++] = 0x18, node[k++] = 4; /* COMP */
        if (id < N) {
            node[k++] = 0x28; /* data_deps: id + 1 */
            for (uint32_t v = id + 1;; v >>= 7) {
                node[k++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
                if (!(v >> 7))
                    break;
            }
        }
        b[len++] = (uint8_t)k;
        memcpy(b + len, node, k);
        len += k;
    }
    const uint8_t *bufs[] = {b};
    const char *names[] = {"scrambled.0.et"};
    weft_chakra *w = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_chakra_parse(bufs, &len, names, 1, &w, &d), WEFT_OK);
    CHECK_INT(w ? weft_chakra_nodes(w) : 0, N);
    weft_chakra_free(w);
    /* node 3 (id 3 * 2381 % N + 1 = 2144) becomes a second id 1 (node 0) */
    size_t at = 8;
    for (int i = 0; i < 3; i++)
        at += 1 + b[at];
    CHECK_INT(b[at + 1], 0x08);
    CHECK_INT(b[at + 2], 0x80 | (2144 & 0x7f));
    CHECK_INT(b[at + 3], 2144 >> 7);
    b[at + 2] = 0x81; /* 2-byte varint of 1 */
    b[at + 3] = 0x00;
    w = NULL;
    CHECK_ERR(weft_chakra_parse(bufs, &len, names, 1, &w, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "scrambled.0.et: node id 1 appears twice (nodes 0 and 3)");
    weft_chakra_free(w);
}

int main(void)
{
    char dir[] = "/tmp/weft_chakra_big_XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_big(dir);
    rmdir(dir);
    test_limit();
    test_scrambled_ids();
    return weft_test_done();
}
