! pmpi_fortran.f90 with `use mpi_f08` (handles of type(MPI_Comm) and
! type(MPI_Request), no ierror arguments): Open MPI 4.1's mpi_f08 bindings
! call their own entry points (mpi_allreduce_f08_ & co.), which
! libweft_mpi.so intercepts too (tests/mpi/pmpi_fortran.sh). Rank 0 prints
! "pmpi_fortran08: N ranks, F failed".
program pmpi_fortran08
  use mpi_f08
  implicit none
  integer :: me, n, i, fails, total, subme, one
  type(MPI_Comm) :: sub
  type(MPI_Request) :: req
  integer :: iv(5), isum(5)
  double precision :: dv(3)
  real :: rv(2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  fails = 0
  do i = 1, 5
    iv(i) = me * i
  end do
  call MPI_Allreduce(iv, isum, 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, 5
    if (isum(i) /= i * n * (n - 1) / 2) fails = fails + 1
  end do
  dv = (/ dble(me), dble(-me), 0.5d0 /)
  call MPI_Allreduce(MPI_IN_PLACE, dv, 3, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  if (dv(1) /= dble(n - 1) .or. dv(2) /= 0d0 .or. dv(3) /= 0.5d0) fails = fails + 1
  rv = 0.0
  if (me == n - 1) rv = (/ 1.5, 2.5 /)
  call MPI_Bcast(rv, 2, MPI_REAL, n - 1, MPI_COMM_WORLD)
  if (rv(1) /= 1.5 .or. rv(2) /= 2.5) fails = fails + 1
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -me, sub)
  call MPI_Comm_rank(sub, subme)
  if (subme /= n - 1 - me) fails = fails + 1
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, sub)
  if (total /= n * (n - 1) / 2) fails = fails + 1
  call MPI_Comm_free(sub)
  one = me + 1
  call MPI_Iallreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (total /= n * (n + 1) / 2) fails = fails + 1
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) write (*, '(a, i0, a, i0, a)') 'pmpi_fortran08: ', n, ' ranks, ', total, ' failed'
  call MPI_Finalize()
end program pmpi_fortran08
