#include "mpi_support.hpp"

#include <cstdlib>
#include <stdexcept>

#include "advplan/io/modules.hpp"

namespace advplan::cli {

namespace {
bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}
// MPI's calls, from libadvplan_mpi.so (src/mpi_module), loaded once a launcher has started the process.
bool g_initialised = false;
int (*g_all)(int) = nullptr;
MpiWorld g_world;
}  // namespace

bool mpi_available() {
#ifdef ADVPLAN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiWorld mpi_world() {
#ifdef ADVPLAN_HAVE_MPI
  if (!launched_by_mpi()) return MpiWorld{};
  if (!g_initialised) {
    const std::string file = "libadvplan_mpi.so";
    // RTLD_GLOBAL: Open MPI's components, which it loads itself, resolve libmpi's symbols through the module.
    void* h = io::open_module(file, /*global=*/true, "MPI");
    auto init = reinterpret_cast<int (*)(int*, int*)>(io::module_symbol(h, file, "advplan_mpi_init"));
    g_all = reinterpret_cast<int (*)(int)>(io::module_symbol(h, file, "advplan_mpi_all"));
    if (init(&g_world.rank, &g_world.size) != 0) throw std::runtime_error("MPI_Init_thread failed");
    g_initialised = true;
  }
  return g_world;
#else
  (void)launched_by_mpi;
  return MpiWorld{};
#endif
}

bool mpi_all(bool ok) {
  if (!g_initialised) return ok;
  return g_all(ok ? 1 : 0) == 1;
}

}  // namespace advplan::cli
