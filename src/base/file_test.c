/* Reading a file a user named (file.h): exact contents and lengths, and
 * the message of every failure: a directory, a missing file, a path
 * through a file, a file that cannot be read, a file without permission
 * (unless root), the size limit on a regular file and on an endless
 * device; allocation failures. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/testing.h"

#define TMP WEFT_BINARY_DIR "/file_test.tmp"

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_INT(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* weft__file_read must fail with err and exactly msg. */
static void expect_error(const char *path, size_t max, weft_err err, const char *msg)
{
    weft_diag d;
    weft_diag_clear(&d);
    char *out = (char *)"untouched";
    size_t len = 7;
    CHECK_ERR(weft__file_read(path, max, "a test file", &out, &len, &d), err);
    CHECK_STR(d.msg, msg);
    CHECK_STR(out, "untouched");
    CHECK_INT(len, 7);
}

typedef struct sweep {
    char *text;
    size_t len;
} sweep;

static weft_err read_tmp(void *arg)
{
    sweep *s = arg;
    return weft__file_read(TMP, WEFT__FILE_ANY_SIZE, "a test file", &s->text, &s->len, NULL);
}

static void free_text(void *arg)
{
    sweep *s = arg;
    weft__free(s->text);
}

int main(void)
{
    char *out = NULL;
    size_t len = 0;
    weft_diag d;

    /* Contents, with a NUL inside, and an empty file. */
    write_file(TMP, "ab\0cd\n", 6);
    CHECK_ERR(weft__file_read(TMP, WEFT__FILE_ANY_SIZE, "a test file", &out, &len, NULL), WEFT_OK);
    CHECK_INT(len, 6);
    CHECK(out && memcmp(out, "ab\0cd\n", 7) == 0);
    weft__free(out);
    write_file(TMP, "", 0);
    CHECK_ERR(weft__file_read(TMP, 0, "a test file", &out, &len, NULL), WEFT_OK);
    CHECK_INT(len, 0);
    CHECK_STR(out, "");
    weft__free(out);

    /* A file larger than its first buffer is read whole. */
    size_t big = (size_t)200 << 10;
    char *text = malloc(big);
    CHECK(text != NULL);
    if (text) {
        for (size_t i = 0; i < big; i++)
            text[i] = (char)('a' + i % 26);
        write_file(TMP, text, big);
        CHECK_ERR(weft__file_read(TMP, big, "a test file", &out, &len, NULL), WEFT_OK);
        CHECK_INT(len, big);
        CHECK(out && memcmp(out, text, big) == 0 && out[big] == '\0');
        weft__free(out);
        /* One byte over the limit. */
        expect_error(TMP, big - 1, WEFT_ELIMIT,
                     TMP ": larger than 204799 bytes, the limit for a test file");
        expect_error(TMP, 1024, WEFT_ELIMIT,
                     TMP ": larger than 1024 bytes, the limit for a test file");
        free(text);
    }
    /* A device without an end stops at the limit. */
    expect_error("/dev/zero", (size_t)1 << 20, WEFT_ELIMIT,
                 "/dev/zero: larger than 1 MiB, the limit for a test file");

    /* Failures name the path and the reason. */
    expect_error(WEFT_BINARY_DIR, WEFT__FILE_ANY_SIZE, WEFT_EIO,
                 WEFT_BINARY_DIR ": is a directory");
    expect_error("/", WEFT__FILE_ANY_SIZE, WEFT_EIO, "/: is a directory");
    expect_error("/nonexistent/x", WEFT__FILE_ANY_SIZE, WEFT_ENOENT,
                 "/nonexistent/x: cannot open: No such file or directory");
    expect_error(TMP "/x", WEFT__FILE_ANY_SIZE, WEFT_EIO, TMP "/x: cannot open: Not a directory");
    /* Opens, but reading fails: nothing is mapped at address 0. */
    if (access("/proc/self/mem", R_OK) == 0)
        expect_error("/proc/self/mem", WEFT__FILE_ANY_SIZE, WEFT_EIO,
                     "/proc/self/mem: cannot read: Input/output error");
    /* Root reads anything, so the permission check only runs for others. */
    if (geteuid() != 0 && chmod(TMP, 0) == 0) {
        expect_error(TMP, WEFT__FILE_ANY_SIZE, WEFT_EIO, TMP ": cannot open: Permission denied");
        chmod(TMP, 0644);
    }

    /* weft__file_open: the same checks, and a usable stream. */
    FILE *f = NULL;
    weft_diag_clear(&d);
    CHECK_ERR(weft__file_open(WEFT_BINARY_DIR, &f, &d), WEFT_EIO);
    CHECK_STR(d.msg, WEFT_BINARY_DIR ": is a directory");
    CHECK(f == NULL);
    CHECK_ERR(weft__file_open("/nonexistent/x", &f, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "/nonexistent/x: cannot open: No such file or directory");
    write_file(TMP, "xyz", 3);
    CHECK_ERR(weft__file_open(TMP, &f, &d), WEFT_OK);
    if (f) {
        char b[8] = {0};
        CHECK_INT(fread(b, 1, sizeof b, f), 3);
        CHECK_STR(b, "xyz");
        fclose(f);
    }
    CHECK_ERR(weft__file_read_error("p.plan", 5, &d), WEFT_EIO);
    CHECK_STR(d.msg, "p.plan: cannot read: Input/output error");

    /* Every allocation failing in turn: WEFT_ENOMEM, nothing left. */
    sweep s = {0};
    CHECK(weft_test_oom_sweep("weft__file_read", read_tmp, free_text, &s) >= 1);
    unlink(TMP);
    return weft_test_done();
}
