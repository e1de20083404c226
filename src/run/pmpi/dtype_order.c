/* Whether an MPI datatype's data is its bytes in typemap order (see
 * weft__pmpi_in_order in pmpi.h).
 *
 * A type with no gaps (size == true extent) may still hold its elements in
 * another order than their addresses: a transposed matrix (a column vector
 * resized to one element's extent, repeated), an indexed type with
 * displacements {1, 0}. MPI's data is the typemap's order (the type
 * signature), so such a type moved as raw bytes delivers the elements
 * permuted to a rank that receives plain ints: the first version did that.
 *
 * The walk follows the type's constructor tree (MPI_Type_get_envelope and
 * MPI_Type_get_contents, MPI 3.1 section 4.1.13) and keeps a cursor: every
 * piece of data must start where the previous one ended. Constructors it
 * does not know (MPI_Type_create_darray, the Fortran F90 ones) answer false,
 * which only costs a pack: MPI_Pack is right for every type. */
#include <stdlib.h>

#include "run/pmpi/pmpi.h"

/* Nesting deeper than this answers false (packed): no real type is. */
#define ORDER_MAX_DEPTH 32

/* What the walk needs of one constituent type. */
typedef struct part {
    MPI_Aint size, extent, tlb;
    bool dense; /* its data is [tlb, tlb + size) in typemap order */
} part;

/* Where the next piece of data must start (relative to the outer type's
 * origin); started once a piece with data was seen. */
typedef struct cursor {
    MPI_Aint next;
    bool started;
} cursor;

static bool dense(MPI_Datatype t, int depth);

static bool part_of(MPI_Datatype t, int depth, part *p)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS)
        return false;
    p->size = size;
    p->extent = extent;
    p->tlb = tlb;
    p->dense = size == 0 || (textent == size && dense(t, depth + 1));
    return true;
}

/* Appends k consecutive elements of p at displacement disp: true when they
 * continue the cursor in order without gaps. */
static bool append(cursor *c, const part *p, MPI_Aint disp, MPI_Aint k)
{
    if (k == 0 || p->size == 0)
        return true;
    if (k < 0 || !p->dense || (k > 1 && p->extent != p->size))
        return false;
    MPI_Aint start = disp + p->tlb;
    if (c->started && start != c->next)
        return false;
    c->started = true;
    c->next = start + k * p->size;
    return true;
}

/* The contents of a derived type: whether its pieces are in order. */
static bool contents_dense(int combiner, const int *ints, const MPI_Aint *aints,
                           const MPI_Datatype *types, int depth)
{
    cursor c = {0, false};
    part p;
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the typemap is the old type's */
        return part_of(types[0], depth, &p) && p.dense;
    case MPI_COMBINER_CONTIGUOUS:
        return part_of(types[0], depth, &p) && append(&c, &p, 0, ints[0]);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        /* count blocks of blocklength elements, stride apart: in order when
         * the first block is and each next one starts where it ends. */
        int count = ints[0], bl = ints[1];
        if (!part_of(types[0], depth, &p))
            return false;
        MPI_Aint stride = combiner == MPI_COMBINER_VECTOR ? (MPI_Aint)ints[2] * p.extent : aints[0];
        if (count <= 0 || bl == 0 || p.size == 0)
            return true;
        return append(&c, &p, 0, bl) && (count == 1 || stride == (MPI_Aint)bl * p.size);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int count = ints[0];
        bool block =
            combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
        bool bytes = combiner == MPI_COMBINER_HINDEXED || combiner == MPI_COMBINER_HINDEXED_BLOCK;
        if (!part_of(types[0], depth, &p))
            return false;
        for (int i = 0; i < count; i++) {
            int bl = block ? ints[1] : ints[1 + i];
            MPI_Aint disp =
                bytes ? aints[i] : (MPI_Aint)ints[(block ? 2 : 1 + count) + i] * p.extent;
            if (!append(&c, &p, disp, bl))
                return false;
        }
        return true;
    }
    case MPI_COMBINER_STRUCT: {
        int count = ints[0];
        for (int i = 0; i < count; i++)
            if (!part_of(types[i], depth, &p) || !append(&c, &p, aints[i], ints[1 + i]))
                return false;
        return true;
    }
    case MPI_COMBINER_SUBARRAY: {
        /* A subarray's typemap runs in its array order, which is address
         * order (row-major for MPI_ORDER_C, column-major for
         * MPI_ORDER_FORTRAN): in order when its elements are dense and
         * follow each other (extent == size); the caller's true extent ==
         * size then rules out the gaps between rows. */
        int ndims = ints[0];
        MPI_Aint elems = 1;
        for (int i = 0; i < ndims; i++)
            elems *= ints[1 + ndims + i];
        if (!part_of(types[0], depth, &p))
            return false;
        return elems == 0 || p.size == 0 || (p.dense && (elems == 1 || p.extent == p.size));
    }
    default:
        return false;
    }
}

/* Whether t's data lies in typemap order without gaps from its true lower
 * bound (true extent == size is the caller's check). */
static bool dense(MPI_Datatype t, int depth)
{
    int ni, na, nd, combiner;
    if (depth > ORDER_MAX_DEPTH ||
        PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return false;
    /* Predefined types (MPI_INT, MPI_2INT, MPI_FLOAT_INT, ...) hold their
     * members in address order. */
    if (combiner == MPI_COMBINER_NAMED)
        return true;
    int *ints = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na > 0 ? na : 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *types);
    bool ok = ints && aints && types &&
              PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) == MPI_SUCCESS;
    if (ok) {
        ok = contents_dense(combiner, ints, aints, types, depth);
        /* MPI_Type_get_contents returns new handles of derived types, which
         * the caller frees (MPI 3.1 section 4.1.13); never predefined ones. */
        for (int i = 0; i < nd; i++) {
            int a, b, c, comb;
            if (PMPI_Type_get_envelope(types[i], &a, &b, &c, &comb) == MPI_SUCCESS &&
                comb != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[i]);
        }
    }
    free(ints);
    free(aints);
    free(types);
    return ok;
}

bool weft__pmpi_in_order(MPI_Datatype t)
{
    return dense(t, 0);
}
