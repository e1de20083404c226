/* Atomic output files: commit renames, abort and failures leave nothing,
 * an existing file survives a failed write. */
#include "cli/args.c"
#include "cli/group.c"
#include "cli/outfile.c"

#include <dirent.h>
#include <sys/stat.h>

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

    /* Cannot rename over a directory: the temporary is removed. */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK_INT(mkdir(sub, 0700), 0);
    char subfile[700];
    snprintf(subfile, sizeof subfile, "%s/x", sub);
    FILE *f = fopen(subfile, "w");
    if (f)
        fclose(f);
    CHECK_INT(cli_out_open(&o, sub), CLI_EXIT_OK);
    fputs("data", o.f);
    CHECK_INT(cli_out_close(&o, true), CLI_EXIT_INPUT);
    CHECK_INT(count_entries(dir), 2); /* out.txt and sub */
    unlink(subfile);
    rmdir(sub);

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

    unlink(path);
    rmdir(dir);
    return weft_test_done();
}
