/* Resolving a spec (a file of any supported format, or a preset) to a
 * fabric. See weft_topo_from_spec in weft/topo.h.
 *
 * A file that exists wins over a preset of the same spelling, so what a user
 * names on disk is always what is loaded. The format is chosen by extension
 * first; a file with any other extension is recognised by its first bytes,
 * because NCCL dumps and ASTRA-sim configs are often saved under names such
 * as "topo.txt" or "network". */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "topo/import_internal.h"
#include "topo/preset_internal.h"
#include "weft/host.h"
#include "weft/topo.h"

void weft_spec_opts_init(weft_spec_opts *o)
{
    memset(o, 0, sizeof *o);
    weft_nccl_import_opts_init(&o->nccl);
}

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

/* Guesses the format of a regular file from its first 4 KiB: '<' first
 * (after blanks and a UTF-8 byte order mark) is XML; a line starting with
 * "topology:" is an ASTRA-sim config; anything else is .topo, whose parser
 * then says precisely what is wrong. */
static weft_spec_kind sniff(const char *path)
{
    char buf[4096];
    FILE *f = fopen(path, "rb");
    if (!f)
        return WEFT_SPEC_TOPO;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    size_t i = 0;
    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && isspace((unsigned char)buf[i]))
        i++;
    if (i < n && buf[i] == '<')
        return WEFT_SPEC_NCCL_XML;
    for (const char *line = buf; line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, "topology:", 9) == 0)
            return WEFT_SPEC_ASTRA_YML;
    }
    return WEFT_SPEC_TOPO;
}

/* The format of an existing file that is not a directory. */
static weft_spec_kind file_kind(const char *spec, const struct stat *st)
{
    if (has_ext(spec, ".xml"))
        return WEFT_SPEC_NCCL_XML;
    if (has_ext(spec, ".yml") || has_ext(spec, ".yaml"))
        return WEFT_SPEC_ASTRA_YML;
    /* A pipe cannot be read twice: it is taken as .topo. */
    if (has_ext(spec, ".topo") || !S_ISREG(st->st_mode))
        return WEFT_SPEC_TOPO;
    return sniff(spec);
}

weft_spec_kind weft_spec_kind_of(const char *spec)
{
    struct stat st;
    if (!spec || stat(spec, &st) != 0) {
        bool host = spec && strncmp(spec, "host", 4) == 0 && (spec[4] == '\0' || spec[4] == ':');
        return host ? WEFT_SPEC_HOST : WEFT_SPEC_PRESET;
    }
    return S_ISDIR(st.st_mode) ? WEFT_SPEC_TOPO : file_kind(spec, &st);
}

const char *weft_spec_kind_name(weft_spec_kind kind)
{
    switch (kind) {
    case WEFT_SPEC_PRESET:
        return "a preset";
    case WEFT_SPEC_HOST:
        return "a host fabric";
    case WEFT_SPEC_NCCL_XML:
        return "an NCCL topology XML";
    case WEFT_SPEC_ASTRA_YML:
        return "an ASTRA-sim config";
    default:
        return "a .topo file";
    }
}

weft_err weft_topo_from_spec(const char *spec, const weft_spec_opts *opts, weft_topo **out,
                             weft_diag *d)
{
    weft_spec_opts defaults;
    if (!opts) {
        weft_spec_opts_init(&defaults);
        opts = &defaults;
    }
    if (!spec || !*spec)
        return weft_diag_set(d, WEFT_EINVAL, "empty spec (a file or a preset; see weft topo list)");
    struct stat st;
    if (stat(spec, &st) != 0) {
        weft_err e;
        if (weft_topo_host_spec(spec, out, &e, d))
            return e; /* "host[:...]", weft/host.h */
        if (weft__topo_is_operator(spec))
            return weft__topo_operator(spec, out, d);
        e = weft_topo_preset(spec, out, d);
        if (e == WEFT_ENOENT)
            return weft_diag_set(d, WEFT_ENOENT, "no such file or preset '%s' (see weft topo list)",
                                 spec);
        return e;
    }
    if (S_ISDIR(st.st_mode))
        return weft_diag_set(d, WEFT_EIO, "%s: is a directory", spec);
    switch (file_kind(spec, &st)) {
    case WEFT_SPEC_NCCL_XML:
        return weft_topo_load_nccl_xml(spec, &opts->nccl, out, d);
    case WEFT_SPEC_ASTRA_YML:
        return weft_topo_load_astra_yml(spec, out, d);
    default:
        return weft_topo_load_file(spec, out, d);
    }
}
