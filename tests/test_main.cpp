// The test binary's main: loads the example C++ plug-in (build/plugins/example_cpp.so, examples/cpp_policy)
// through the same loader as `advplan --plugin`, then runs GoogleTest. Loading comes first so the
// parameterised registry suites (BluePolicyConformance) list example_cpp.
#include <gtest/gtest.h>

#include <cstdio>

#include "advplan/core/error.hpp"
#include "advplan/io/plugins.hpp"
#include "advplan/policy/registry_access.hpp"

int main(int argc, char** argv) {
  try {
    advplan::load_policy_plugin(ADVPLAN_EXAMPLE_PLUGIN);
  } catch (const advplan::Error& e) {
    std::fprintf(stderr, "advplan_tests: %s\n", e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
