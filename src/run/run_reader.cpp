#include "advplan/run/run_reader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/trace_schema.hpp"

namespace advplan {
namespace fs = std::filesystem;
using io::CsvTable;

RunTraces read_run_traces(const std::string& dir) {
  // One complete run, as its MANIFEST lists it: no stale file of another run, no interrupted write.
  io::verify_run_directory(dir);
  RunTraces r;
  r.dir = dir;
  auto path = [&](const std::string& f) { return (fs::path(dir) / f).string(); };
  r.scenarios = CsvTable::read(path("scenarios.csv"), schema::scenarios());
  // Every numeric cell must parse and lie in its documented range: a malformed or impossible number (inf, nan, an
  // advantage of -5) is named now rather than printed in a table. A run of several samples is read as its means.
  r.per_scenario = schema::read_per_scenario(path("per_scenario.csv"));
  if (r.per_scenario.has_col("sample")) r.per_scenario = sample_means(r.per_scenario);
  r.bootstrap_summary = CsvTable::read(path("bootstrap_summary.csv"), schema::bootstrap_summary());
  // A BLUE policy in per_scenario.csv that declares extra trace files (PolicyInfo::traces) means they must be
  // there.
  std::set<std::string> blues;
  const auto cb = r.per_scenario.col("blue_policy");
  for (const auto& row : r.per_scenario.rows()) blues.insert(row[cb]);
  for (const auto& spec : blues) {
    const std::string name = spec.substr(0, spec.find(':'));
    if (!BlueRegistry::instance().contains(name)) continue;
    for (const auto& f : BlueRegistry::instance().info(name, "BLUE").traces)
      if (!fs::exists(path(f.name)))
        throw CsvError(fmt::format("{}: missing (per_scenario.csv has rows of BLUE policy {}, which writes it)",
                                   path(f.name), spec));
  }
  return r;
}

}  // namespace advplan
