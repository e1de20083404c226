/* MPI datatypes and operators to weft's (see pmpi.h). Open MPI's predefined
 * handles are addresses, not integer constants, so the tables are searched
 * rather than switched on. */
#include <limits.h>

#include "run/pmpi/pmpi.h"

/* A predefined integer type by its C properties: weft picks the weft type of
 * the same width and signedness, so MPI_LONG is 64-bit on LP64 hosts. */
typedef struct int_type {
    MPI_Datatype t;
    size_t bytes;
    bool is_signed;
} int_type;

static bool int_dtype(size_t bytes, bool is_signed, weft_dtype *out)
{
    switch (bytes) {
    case 1:
        *out = is_signed ? WEFT_INT8 : WEFT_UINT8;
        return true;
    case 2:
        *out = is_signed ? WEFT_INT16 : WEFT_UINT16;
        return true;
    case 4:
        *out = is_signed ? WEFT_INT32 : WEFT_UINT32;
        return true;
    case 8:
        *out = is_signed ? WEFT_INT64 : WEFT_UINT64;
        return true;
    default:
        return false;
    }
}

/* Fortran's types (fortran.c passes them on): INTEGER and INTEGER1..8 are
 * signed integers, REAL and REAL4 float, DOUBLE PRECISION and REAL8 double,
 * each by the size MPI gives it (-fdefault-integer-8 makes INTEGER 8
 * bytes); none where Open MPI was built without Fortran (size 0). */
static bool fortran_dtype(MPI_Datatype t, weft_dtype *out)
{
    const MPI_Datatype ints[] = {MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                 MPI_INTEGER8};
    const MPI_Datatype reals[] = {MPI_REAL, MPI_REAL4, MPI_DOUBLE_PRECISION, MPI_REAL8};
    int size = 0;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i] == t)
            return PMPI_Type_size(t, &size) == MPI_SUCCESS && size > 0 &&
                   int_dtype((size_t)size, true, out);
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        if (reals[i] != t)
            continue;
        if (PMPI_Type_size(t, &size) != MPI_SUCCESS)
            return false;
        if (size == 4)
            *out = WEFT_FLOAT;
        else if (size == 8)
            *out = WEFT_DOUBLE;
        else
            return false;
        return true;
    }
    return false;
}

bool weft__pmpi_dtype(MPI_Datatype t, weft_dtype *out)
{
    if (t == MPI_DATATYPE_NULL)
        return false;
    if (t == MPI_FLOAT) {
        *out = WEFT_FLOAT;
        return true;
    }
    if (t == MPI_DOUBLE) {
        *out = WEFT_DOUBLE;
        return true;
    }
    const int_type ints[] = {
        {MPI_SIGNED_CHAR, sizeof(signed char), true},
        {MPI_UNSIGNED_CHAR, sizeof(unsigned char), false},
        {MPI_SHORT, sizeof(short), true},
        {MPI_UNSIGNED_SHORT, sizeof(unsigned short), false},
        {MPI_INT, sizeof(int), true},
        {MPI_UNSIGNED, sizeof(unsigned), false},
        {MPI_LONG, sizeof(long), true},
        {MPI_UNSIGNED_LONG, sizeof(unsigned long), false},
        {MPI_LONG_LONG, sizeof(long long), true},
        {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), false},
        {MPI_INT8_T, 1, true},
        {MPI_UINT8_T, 1, false},
        {MPI_INT16_T, 2, true},
        {MPI_UINT16_T, 2, false},
        {MPI_INT32_T, 4, true},
        {MPI_UINT32_T, 4, false},
        {MPI_INT64_T, 8, true},
        {MPI_UINT64_T, 8, false},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i].t == t)
            return int_dtype(ints[i].bytes, ints[i].is_signed, out);
    return fortran_dtype(t, out);
}

bool weft__pmpi_op(MPI_Op op, weft_redop *out)
{
    if (op == MPI_SUM)
        *out = WEFT_SUM;
    else if (op == MPI_PROD)
        *out = WEFT_PROD;
    else if (op == MPI_MIN)
        *out = WEFT_MIN;
    else if (op == MPI_MAX)
        *out = WEFT_MAX;
    else
        return false;
    return true;
}

/* The size of t when it is a predefined basic type weft knows (MPI_BYTE,
 * MPI_CHAR and those weft__pmpi_dtype maps): one C object, so its data is
 * its bytes in order, its lower bounds 0 and its extent its size (MPI 3.1
 * section 4.1.5); 0 for any other type. Spares a call on such a type the
 * four datatype queries and the typemap walk below (about 300 of an
 * 8-byte move's 1300 instructions at one rank, callgrind). */
static size_t basic_size(MPI_Datatype t)
{
    weft_dtype dt;
    if (t == MPI_BYTE || t == MPI_CHAR)
        return 1;
    return weft__pmpi_dtype(t, &dt) ? weft_dtype_size(dt) : 0;
}

/* weft__pmpi_layout_of for a type that is not basic, out of line: its
 * queries' locals kept registers that every call saved and restored (13
 * instructions of an 8-byte MPI_Bcast's, callgrind). */
static __attribute__((noinline)) bool layout_queried(MPI_Datatype t, int count,
                                                     weft__pmpi_layout *out)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS || size < 0)
        return false;
    out->size = (size_t)size;
    out->bytes = (size_t)size * (size_t)count;
    /* No holes and no displacement is not enough: the data must also lie
     * in typemap order (a transposed matrix has no holes). */
    out->contig =
        lb == 0 && tlb == 0 && extent == size && textent == size && weft__pmpi_in_order(t);
    out->extent = extent;
    return true;
}

bool weft__pmpi_layout_of(MPI_Datatype t, int count, weft__pmpi_layout *out)
{
    if (count < 0 || t == MPI_DATATYPE_NULL)
        return false;
    size_t basic = basic_size(t);
    if (!basic)
        return layout_queried(t, count, out);
    out->size = basic;
    out->bytes = basic * (size_t)count;
    out->contig = true;
    out->extent = (MPI_Aint)basic;
    return true;
}

weft_err weft__pmpi_pack(const void *buf, size_t count, MPI_Datatype t, const weft__pmpi_layout *l,
                         unsigned char *packed, bool unpack, weft_diag *d)
{
    if (l->size == 0 || count == 0)
        return WEFT_OK;
    size_t per = (size_t)INT_MAX / l->size; /* >= 1: a type's size is an int */
    for (size_t at = 0; at < count;) {
        size_t k = count - at < per ? count - at : per;
        int pos = 0, bytes = (int)(k * l->size), rc;
        unsigned char *elems = (unsigned char *)buf + (MPI_Aint)at * l->extent;
        unsigned char *piece = packed + at * l->size;
        if (unpack)
            rc = PMPI_Unpack(piece, bytes, &pos, elems, (int)k, t, MPI_COMM_WORLD);
        else
            rc = PMPI_Pack(elems, (int)k, t, piece, bytes, &pos, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS || pos != bytes)
            return weft_diag_set(d, WEFT_EIO,
                                 "%s of %zu elements (%d bytes) failed (MPI error %d, %d bytes)",
                                 unpack ? "MPI_Unpack" : "MPI_Pack", k, bytes, rc, pos);
        at += k;
    }
    return WEFT_OK;
}
