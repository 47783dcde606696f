#pragma once
// budget_families.csv: the RED-budget curve of each attacker family (greedy@k, search@N, any <name>@k) against the
// budget sweep's BLUE policy, with each family's paired difference from greedy at the same budget (docs/METRICS.md
// "Budget curve per attacker family", docs/TRACES.md "budget_families.csv"). Written when the budget sweep has an
// attacker other than greedy (`budget_sweep.attackers`); greedy's extrapolation past the largest k stays in
// extrapolation.csv, and no other family is extrapolated (docs/DECISIONS.md "Search RED").
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

/// budget_families.csv's header.
const std::vector<std::string>& budget_families_header();

/// The conditions of each family's curve: per family of the budget sweep (one with a row of group sweep; greedy first,
/// then the others in byte order) its (k, condition) pairs by ascending k, from the ok rows of per_scenario.csv whose
/// BLUE policy is the budget sweep's and whose RED policy is <family>@<k> (a main condition such as greedy@8
/// included; replays of grid and attribution left out). Empty without a budget sweep.
std::vector<std::pair<std::string, std::vector<std::pair<int, std::string>>>> budget_families(
    const io::CsvTable& per_scenario);

/// The file's text, "" when the budget sweep has no family besides greedy. Intervals are the joint bootstrap's
/// (scope "budget-families") over the scenarios; a family's difference from greedy at k is paired by scenario.
std::string budget_families_csv(const io::CsvTable& per_scenario, const BootstrapSettings& bs);

}  // namespace advplan
