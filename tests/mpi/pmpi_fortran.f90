! An ordinary Fortran MPI program (`use mpi`) for libweft_mpi.so
! (tests/mpi/pmpi_fortran.sh): Open MPI's Fortran bindings call PMPI_*
! directly, so the library must intercept the Fortran entry points. It runs
! MPI_Allreduce (INTEGER sum; DOUBLE PRECISION max in place), MPI_Bcast of
! REAL from the last rank, MPI_Comm_split with keys reversing the order and
! an MPI_Allreduce on it, MPI_Iallreduce with MPI_Wait, and a final
! MPI_Allreduce of the failure count; every result is checked. Rank 0
! prints "pmpi_fortran: N ranks, F failed".
program pmpi_fortran
  use mpi
  implicit none
  integer :: ierr, me, n, i, fails, total, sub, subme, req, one
  integer :: iv(5), isum(5)
  double precision :: dv(3)
  real :: rv(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  fails = 0
  do i = 1, 5
    iv(i) = me * i
  end do
  call MPI_Allreduce(iv, isum, 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 5
    if (isum(i) /= i * n * (n - 1) / 2) fails = fails + 1
  end do
  dv = (/ dble(me), dble(-me), 0.5d0 /)
  call MPI_Allreduce(MPI_IN_PLACE, dv, 3, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (dv(1) /= dble(n - 1) .or. dv(2) /= 0d0 .or. dv(3) /= 0.5d0) fails = fails + 1
  rv = 0.0
  if (me == n - 1) rv = (/ 1.5, 2.5 /)
  call MPI_Bcast(rv, 2, MPI_REAL, n - 1, MPI_COMM_WORLD, ierr)
  if (rv(1) /= 1.5 .or. rv(2) /= 2.5) fails = fails + 1
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -me, sub, ierr)
  call MPI_Comm_rank(sub, subme, ierr)
  if (subme /= n - 1 - me) fails = fails + 1
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  if (total /= n * (n - 1) / 2) fails = fails + 1
  call MPI_Comm_free(sub, ierr)
  one = me + 1
  call MPI_Iallreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (total /= n * (n + 1) / 2 .or. ierr /= MPI_SUCCESS) fails = fails + 1
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) write (*, '(a, i0, a, i0, a)') 'pmpi_fortran: ', n, ' ranks, ', total, ' failed'
  call MPI_Finalize(ierr)
end program pmpi_fortran
