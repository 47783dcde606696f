#pragma once
// The plan validation's reference check (library internal): the oracle of validate_plan's allocation-free fast
// check, not part of the installed headers (tests/core/validation_test.cpp compares the two).
#include <optional>
#include <vector>

#include "advplan/core/validation.hpp"

namespace advplan {

/// The full check alone, building the Boost.Graph action graph (cycles, reachability) and every message. A
/// valid plan (the common case) is accepted by an allocation-free fast check first; validate_plan runs this one
/// only to name the violations.
std::vector<Violation> validate_plan_reference(const Plan& plan, const Scenario& scenario,
                                               std::optional<Side> expected_side = std::nullopt);

}  // namespace advplan
