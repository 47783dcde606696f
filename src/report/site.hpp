#pragma once
// What `advplan report` (report.cpp) and `advplan view` (view.cpp) share: the data files' form, the run's overview
// and the parts of one scenario's page, so a page served by `view` is the bytes the static site holds.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/report/report.hpp"
#include "advplan/io/played_plans.hpp"

namespace advplan {
struct RunPlan;
}

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
/// The run's policies, ready to make its plans again (docs/REPORT.md "Plans made again"), when it kept no
/// plans.jsonl and every policy of its config is built in (looked up by name, never started); else null.
std::shared_ptr<const RunPlan> plan_replay(const ExperimentConfig* cfg, const std::filesystem::path& dir);
/// When the page has no plans and `replay` is set: scenario `sc`'s plans made again (replay_plans), if the page's
/// rows were played under the replay's conditions (the same labels and policies); sets `plans_made_again`.
void replay_into(nlohmann::json& page, const Scenario* sc, const RunPlan* replay);
/// What a page shows of the model calls (transcripts.jsonl, rubric/transcripts.jsonl) and the rubric verdicts
/// (docs/REPORT.md "Model calls on a page"): each string cut at kMaxShownText bytes, and per page at most
/// kMaxPageCalls calls (or verdicts) and kMaxPageCallBytes of their text; the static report shows at most
/// kMaxSiteCallBytes over all its pages. A line is read only up to kMaxCallLineBytes.
inline constexpr std::size_t kMaxShownText = std::size_t{64} << 10;
inline constexpr std::size_t kMaxPageCalls = 200;
inline constexpr std::size_t kMaxPageCallBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxSiteCallBytes = std::size_t{128} << 20;
inline constexpr std::size_t kMaxCallLineBytes = std::size_t{16} << 20;

/// Cuts each string in `v` (at any depth) longer than kMaxShownText to that length (at a UTF-8 character boundary)
/// and adds the bytes cut to `cut_bytes` of the object that holds it. Returns the bytes of text left.
std::size_t cut_long_strings(nlohmann::json& v);

/// The calls (or verdicts) one page shows, in the order added: the first ones within the page's bounds (and the
/// site's, when a budget is given), each cut by cut_long_strings; the rest counted, with their bytes as read.
class CallList {
 public:
  explicit CallList(std::size_t* site_budget = nullptr) : budget_(site_budget) {}
  /// `call` as parsed from a line of `line_bytes` bytes.
  void add(nlohmann::json call, std::size_t line_bytes);
  /// page[key] = the calls shown; page[key + "_left_out"] = {calls, bytes} when some were not.
  void finish(nlohmann::json& page, const std::string& key);

 private:
  std::size_t* budget_;
  nlohmann::json shown_ = nlohmann::json::array();
  std::size_t bytes_ = 0, left_calls_ = 0, left_bytes_ = 0;
};

/// Streams the lines of `path` in [begin, end) (end 0: to the end of the file) in 1 MiB reads, calling
/// f(line text, line number within the range); never holds more than one line. A line longer than
/// kMaxCallLineBytes is a CsvError naming the file and the byte where it starts.
void for_each_line(const std::filesystem::path& path, std::uint64_t begin, std::uint64_t end,
                   const std::function<void(std::string_view, std::size_t)>& f);

/// How much of a shared map (maps/_shared/, a run on a user's map) the site draws, and how many shared maps it reads.
inline constexpr std::size_t kMaxDrawnPositions = 20'000;
inline constexpr std::size_t kMaxSharedMaps = 4;
/// The run's shared maps, each read once and drawn within kMaxDrawnPositions (geo::to_geojson_bounded): an object
/// from the name a scenario's map gives as its `base` ("_shared/<sha256>.geojson") to the FeatureCollection; empty
/// when the run has none.
nlohmann::json map_bases(const std::filesystem::path& dir);

/// Adds the scenario's JSON (`sc`, or null) and its map (maps/<id>.geojson, when `id` is a plain file name).
void finish_scenario(nlohmann::json& page, const std::string& id, const Scenario* sc, const std::filesystem::path& dir);

}  // namespace advplan::report::site
