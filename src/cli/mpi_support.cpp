#include "mpi_support.hpp"

#include <cstdlib>

#ifdef ADVPLAN_HAVE_MPI
#include <mpi.h>
#endif

namespace advplan::cli {

namespace {
bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}
#ifdef ADVPLAN_HAVE_MPI
bool g_initialised = false;
void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}
#endif
}  // namespace

bool mpi_available() {
#ifdef ADVPLAN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiWorld mpi_world() {
  MpiWorld w;
#ifdef ADVPLAN_HAVE_MPI
  if (!launched_by_mpi()) return w;
  if (!g_initialised) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    g_initialised = true;
    std::atexit(finalize);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
#else
  (void)launched_by_mpi;
#endif
  return w;
}

bool mpi_all(bool ok) {
#ifdef ADVPLAN_HAVE_MPI
  if (!g_initialised) return ok;
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
#else
  return ok;
#endif
}

}  // namespace advplan::cli
