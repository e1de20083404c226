# weft perf launched by Open MPI: MPI only bootstraps, the table is right.
# Skipped (77) when there is no mpirun.
# Run by CTest as: bash perf_mpi.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
command -v mpirun >/dev/null 2>&1 || exit 77
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS=detect_leaks=0

LAST="mpirun -np 3 weft perf allreduce"
OUT=$(mpirun -np 3 "$WEFT" perf allreduce -b 4 -e 100K -f 5 -n 2 -w 1 -d int32 -o max 2>&1)
RC=$?
expect_rc 0
expect_out_has "# weft perf allreduce: 3 ranks, transport shm"
expect_out_has "
         100            25     int32     max      -1"
expect_out_has "# Out of bounds values : 0 OK"
LAST="mpirun -np 2 weft perf broadcast (tcp)"
OUT=$(WEFT_TRANSPORT=tcp mpirun -x WEFT_TRANSPORT -np 2 "$WEFT" perf broadcast -b 1M -e 1M -r 1 -n 1 -w 0 2>&1)
RC=$?
expect_rc 0
expect_out_has "# weft perf broadcast: 2 ranks, transport tcp"
expect_out_has "# Out of bounds values : 0 OK"
finish
