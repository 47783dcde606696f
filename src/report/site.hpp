#pragma once
// What `advplan report` (report.cpp) and `advplan view` (view.cpp) share: the data files' form, the run's overview
// and the parts of one scenario's page, so a page served by `view` is the bytes the static site holds.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/report/report.hpp"
#include "advplan/io/played_plans.hpp"

namespace advplan::report::site {

/// `ADVPLAN_DATA(key, value);` with the value's JSON ASCII-escaped (no U+2028 can end a string early).
std::string data_call(const std::string& key, const nlohmann::json& value);
/// A CSV cell as JSON: a number when it reads as one, null when empty, else the text.
nlohmann::json cell(const std::string& s);
/// Row `i` of `t` as an object by column name.
nlohmann::json row_object(const io::CsvTable& t, std::size_t i);
/// run_metadata.json, bounded; IoError / CsvError naming it.
nlohmann::json metadata_of(const std::filesystem::path& dir);
/// The overview without its rows: the run card, conditions, metrics, the scope-all summary, the budget curve and
/// the scenario list.
nlohmann::json overview_head(const ReportRun& run, const nlohmann::json& meta, const io::CsvTable& scenarios,
                             const io::CsvTable& bootstrap_summary, std::size_t rows);
/// A plans.jsonl line as the page reads it.
nlohmann::json plan_entry(const PlayedPlan& p);
/// Adds the scenario's JSON (`sc`, or null) and its map (maps/<id>.geojson, when `id` is a plain file name).
void finish_scenario(nlohmann::json& page, const std::string& id, const Scenario* sc, const std::filesystem::path& dir);

}  // namespace advplan::report::site
