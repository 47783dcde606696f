#pragma once
// The BLUE and RED registries as out-of-line functions of the library. Registry<Base>::instance() is an inline
// function template, so a module built with hidden visibility (a pybind11 extension, which loads
// libadvplan.so privately) would otherwise get a registry of its own. Code outside the library that adds
// policies at run time (the Python module, python/) goes through these, so its policies land in the registries
// the runner reads.
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {

BlueRegistry& blue_registry();
RedRegistry& red_registry();

/// Loads a policy plug-in (io::load_plugin) and refuses it when it registered a name that was already registered
/// without asking to override it (ADVPLAN_OVERRIDE_BLUE_POLICY / ADVPLAN_OVERRIDE_RED_POLICY): PolicyError naming
/// the file and the policy. The existing policy stays as it was.
void load_policy_plugin(const std::string& path);

}  // namespace advplan
