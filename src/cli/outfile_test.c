/* Output files: commit renames, abort and failures leave nothing, an
 * existing file survives a failed write; devices and FIFOs are written
 * through and stay what they are; a symbolic link stays a link and its
 * target is replaced atomically. */
#include "cli/args.c"
#include "cli/group.c"
#include "cli/outfile.c"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "base/testing.h"

/* Number of entries in dir other than "." and "..". */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* cli_error's output of f(arg), read back from a temporary file that stands
 * in for stderr while it runs, into msg (without the newline). */
static int with_stderr(int (*f)(cli_out *, const char *), cli_out *o, const char *arg, char *msg,
                       size_t cap)
{
    fflush(stderr);
    FILE *cap_f = tmpfile();
    int saved = dup(2);
    dup2(fileno(cap_f), 2);
    int rc = f(o, arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(cap_f);
    size_t n = fread(msg, 1, cap - 1, cap_f);
    fclose(cap_f);
    msg[n] = '\0';
    if (n && msg[n - 1] == '\n')
        msg[n - 1] = '\0';
    return rc;
}

static int do_open(cli_out *o, const char *path)
{
    return cli_out_open(o, path);
}

static int do_close_ok(cli_out *o, const char *unused)
{
    return cli_out_close(o, true);
}

/* A device node made here (this test runs as root where it can): major 1,
 * minor 3 is the null device, minor 7 the full one (Linux
 * Documentation/admin-guide/devices.txt). Returns false when mknod is not
 * allowed. */
static bool make_dev(const char *path, unsigned minor)
{
    return mknod(path, S_IFCHR | 0666, makedev(1, minor)) == 0;
}

int main(void)
{
    char dir[] = "/tmp/weft-outfile-XXXXXX";
    if (!mkdtemp(dir))
        return WEFT_TEST_SKIP;
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());

    /* Commit: the temporary exists while writing, then only the result. */
    cli_out o;
    CHECK_INT(cli_out_open(&o, path), CLI_EXIT_OK);
    fputs("hello\n", o.f);
    struct stat st;
    CHECK_INT(stat(tmp, &st), 0);
    CHECK_INT(stat(path, &st), -1);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
    char *text = weft_test_read_file(path, NULL);
    CHECK_STR(text, "hello\n");
    free(text);
    CHECK_INT(count_entries(dir), 1);

    /* Abort: the old file stays as it was and no temporary remains. */
    CHECK_INT(cli_out_open(&o, path), CLI_EXIT_OK);
    fputs("half of something", o.f);
    CHECK_INT(cli_out_close(&o, false), CLI_EXIT_OK);
    text = weft_test_read_file(path, NULL);
    CHECK_STR(text, "hello\n");
    free(text);
    CHECK_INT(count_entries(dir), 1);

    /* Cannot create: a missing directory. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
    fflush(stderr);
    CHECK_INT(cli_out_open(&o, bad), CLI_EXIT_INPUT);
    CHECK(o.f == NULL);

    /* A directory is refused before anything is created. */
    char sub[600], msg[1024], want[1400];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK_INT(mkdir(sub, 0700), 0);
    CHECK_INT(with_stderr(do_open, &o, sub, msg, sizeof msg), CLI_EXIT_INPUT);
    snprintf(want, sizeof want, "weft: cannot write '%s': Is a directory", sub);
    CHECK_STR(msg, want);
    CHECK(o.f == NULL);
    CHECK_INT(count_entries(dir), 2); /* out.txt and sub */
    rmdir(sub);

    /* A symbolic link to a regular file: the link stays, its target gets
     * the new content through a temporary beside the target. */
    char link[600], tmp_target[700];
    snprintf(link, sizeof link, "%s/link.txt", dir);
    CHECK_INT(symlink("out.txt", link), 0);
    CHECK_INT(cli_out_open(&o, link), CLI_EXIT_OK);
    fputs("through the link\n", o.f);
    char *real = realpath(path, NULL);
    snprintf(tmp_target, sizeof tmp_target, "%s.tmp.%ld", real, (long)getpid());
    free(real);
    CHECK_INT(stat(tmp_target, &st), 0);
    text = weft_test_read_file(path, NULL);
    CHECK_STR(text, "hello\n"); /* not yet */
    free(text);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
    CHECK_INT(lstat(link, &st), 0);
    CHECK(S_ISLNK(st.st_mode));
    text = weft_test_read_file(path, NULL);
    CHECK_STR(text, "through the link\n");
    free(text);
    CHECK_INT(count_entries(dir), 2); /* out.txt and link.txt */

    /* A link to nothing is refused and stays dangling. */
    char dangling[600];
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    CHECK_INT(symlink("nowhere", dangling), 0);
    CHECK_INT(with_stderr(do_open, &o, dangling, msg, sizeof msg), CLI_EXIT_INPUT);
    snprintf(want, sizeof want,
             "weft: cannot write '%s': a symbolic link to a file that does not exist", dangling);
    CHECK_STR(msg, want);
    CHECK_INT(lstat(dangling, &st), 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK_INT(count_entries(dir), 3);
    unlink(dangling);

    /* A FIFO is written through: a reader gets the bytes and the FIFO is
     * still a FIFO afterwards (renaming over it would make it a file). */
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK_INT(mkfifo(fifo, 0600), 0);
    for (int via_link = 0; via_link < 2; via_link++) {
        pid_t reader = fork();
        if (reader == 0) {
            /* The child reads what comes and exits 0 iff it is exact. */
            int fd = open(fifo, O_RDONLY);
            char got[64];
            size_t n = 0;
            ssize_t r;
            while (fd >= 0 && n < sizeof got && (r = read(fd, got + n, sizeof got - n)) > 0)
                n += (size_t)r;
            _exit(n == 8 && memcmp(got, "in fifo\n", 8) == 0 ? 0 : 1);
        }
        char fifo_link[600];
        snprintf(fifo_link, sizeof fifo_link, "%s/fifo-link", dir);
        if (via_link)
            CHECK_INT(symlink("fifo", fifo_link), 0);
        CHECK_INT(cli_out_open(&o, via_link ? fifo_link : fifo), CLI_EXIT_OK);
        CHECK(o.tmp == NULL);
        fputs("in fifo\n", o.f);
        CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
        int status = -1;
        CHECK_INT(waitpid(reader, &status, 0), reader);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK_INT(stat(fifo, &st), 0);
        CHECK(S_ISFIFO(st.st_mode));
        if (via_link) {
            CHECK_INT(lstat(fifo_link, &st), 0);
            CHECK(S_ISLNK(st.st_mode));
            unlink(fifo_link);
        }
    }
    unlink(fifo);
    CHECK_INT(count_entries(dir), 2);

    /* Character devices, made in this directory so that the real /dev is
     * never at risk: the null device takes the output and stays a device;
     * the full device fails at close with the system's reason. */
    char null_dev[600], full_dev[600];
    snprintf(null_dev, sizeof null_dev, "%s/null", dir);
    snprintf(full_dev, sizeof full_dev, "%s/full", dir);
    if (make_dev(null_dev, 3) && make_dev(full_dev, 7)) {
        CHECK_INT(cli_out_open(&o, null_dev), CLI_EXIT_OK);
        CHECK(o.tmp == NULL);
        fputs("gone\n", o.f);
        CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
        CHECK_INT(stat(null_dev, &st), 0);
        CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
        CHECK_INT(count_entries(dir), 4); /* out.txt, link.txt, null, full */

        CHECK_INT(cli_out_open(&o, full_dev), CLI_EXIT_OK);
        fputs("no room\n", o.f);
        CHECK_INT(with_stderr(do_close_ok, &o, NULL, msg, sizeof msg), CLI_EXIT_INPUT);
        snprintf(want, sizeof want, "weft: cannot write '%s': No space left on device", full_dev);
        CHECK_STR(msg, want);
        CHECK_INT(stat(full_dev, &st), 0);
        CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7));
        unlink(null_dev);
        unlink(full_dev);
    } else {
        unlink(null_dev);
        printf("mknod not allowed here: device cases skipped\n");
    }
    /* The system's /dev/null, whatever this test may do, stays a device. */
    CHECK_INT(cli_out_open(&o, "/dev/null"), CLI_EXIT_OK);
    CHECK(o.tmp == NULL);
    fputs("gone\n", o.f);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
    CHECK_INT(stat("/dev/null", &st), 0);
    CHECK(S_ISCHR(st.st_mode));
    /* nohup: a SIGHUP ignored when the file was opened stays ignored while
     * it is written (the cleanup handler used to kill the process), and
     * afterwards. */
    signal(SIGHUP, SIG_IGN);
    CHECK_INT(cli_out_open(&o, path), CLI_EXIT_OK);
    fputs("after hangup\n", o.f);
    raise(SIGHUP);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);
    text = weft_test_read_file(path, NULL);
    CHECK_STR(text, "after hangup\n");
    free(text);
    struct sigaction now;
    CHECK_INT(sigaction(SIGHUP, NULL, &now), 0);
    CHECK(now.sa_handler == SIG_IGN);
    signal(SIGHUP, SIG_DFL);

    /* stdout needs no file. */
    CHECK_INT(cli_out_open(&o, "-"), CLI_EXIT_OK);
    CHECK(o.f == stdout);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_OK);

    unlink(link);
    unlink(path);
    rmdir(dir);
    return weft_test_done();
}
