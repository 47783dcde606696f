// libadvplan_mpi.so: the three MPI calls of `mpirun -n N advplan run`, behind a C interface. The CLI loads it only
// when an MPI launcher started the process (src/cli/mpi_support.cpp), so other runs do not load Open MPI.
#include <mpi.h>

#include <cstdlib>

namespace {
void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}
}  // namespace

/// MPI_Init_thread (funneled), finalised at exit; this rank and the world's size. Nonzero on failure.
extern "C" __attribute__((visibility("default"))) int advplan_mpi_init(int* rank, int* size) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
  std::atexit(finalize);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

/// The minimum of `ok` (0 or 1) over the ranks: a collective, every rank calls it.
extern "C" __attribute__((visibility("default"))) int advplan_mpi_all(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}
