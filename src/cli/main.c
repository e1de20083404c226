/* The weft command: dispatches to subcommands. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        printf("usage: weft COMMAND ...\n");
        return argc < 2 ? 2 : 0;
    }
    fprintf(stderr, "weft: unknown command '%s'\n", argv[1]);
    return 2;
}
