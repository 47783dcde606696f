#pragma once
// MPI for `mpirun -n N advplan run`: only src/cli/ includes this. MPI itself is in libadvplan_mpi.so
// (src/mpi_module, built when the build found MPI: ADVPLAN_HAVE_MPI), loaded only when an MPI launcher started
// the process. Without MPI, or when not launched by mpirun, the world is one process.
#include <string>

namespace advplan::cli {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

/// Initialises MPI when the process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
/// PMIX_RANK in the environment); otherwise a world of one. Finalised at exit.
MpiWorld mpi_world();
/// True on every rank when `ok` is true on every rank (a collective: every rank must call it).
bool mpi_all(bool ok);
/// Whether this build has MPI support.
bool mpi_available();

}  // namespace advplan::cli
