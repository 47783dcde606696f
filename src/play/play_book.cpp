// The person's seat and plans (play/play.hpp): the seated config, the book of plans in the output directory,
// and the validator's messages for a plan the person wrote.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/play/play.hpp"

namespace advplan::play {
namespace fs = std::filesystem;

std::string seat_spec(const std::string& out_dir) {
  return "plans:" + (fs::path(out_dir) / kPlayedFile).string();
}

ExperimentConfig seated_config(ExperimentConfig cfg, Side side, const std::string& spec) {
  if (!cfg.sweep.empty())
    throw ConfigError(
        fmt::format("{}: sweep: play seats a person in the config's conditions, not in a sweep's "
                    "points; remove the sweep",
                    cfg.source));
  if (side == Side::Blue) {
    const std::string old = cfg.default_blue;
    for (Condition& c : cfg.conditions)
      if (c.blue == old) c.blue = spec;
    if (cfg.budget_blue == old) cfg.budget_blue = spec;
    cfg.default_blue = spec;
    return cfg;
  }
  // The person's RED plan meets every BLUE policy of the config (a matrix stays a matrix), default_blue's
  // first.
  std::vector<std::string> blues{cfg.default_blue};
  for (const Condition& c : cfg.conditions) {
    if (c.label == kHumanLabel || c.label.ends_with(std::string(" vs ") + kHumanLabel))
      throw ConfigError(
          fmt::format("{}: a condition is labelled '{}' already; play --side red adds that label", cfg.source,
                      untrusted::excerpt(c.label, 80)));
    if (std::find(blues.begin(), blues.end(), c.blue) == blues.end()) blues.push_back(c.blue);
  }
  for (const std::string& b : blues)
    cfg.conditions.push_back(Condition{
        b == cfg.default_blue ? std::string(kHumanLabel) : b + " vs " + kHumanLabel, b, spec, "main", {}});
  return cfg;
}

namespace {

/// The directory `out_dir`, made when missing; IoError when it is something else.
void ensure_directory(const std::string& out_dir) {
  const fs::path p(out_dir);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw IoError(
        fmt::format("{}: exists and is not a directory (a symbolic link is not followed); play writes its "
                    "plans and its run in a directory",
                    out_dir));
  if (!fs::exists(st) && !fs::create_directories(p, ec) && ec)
    throw IoError(fmt::format("{}: cannot create the directory ({})", out_dir, ec.message()));
}

/// Whether the book's file `p` is there; IoError when it is there but not a regular file (a symbolic link, a
/// directory, a FIFO): the book is read from and written into the output directory only.
bool book_file_exists(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  if (!fs::exists(st)) return false;
  if (!fs::is_regular_file(st))
    throw IoError(
        fmt::format("{}: is not a regular file (a symbolic link is not followed); play keeps its plans in "
                    "regular files of --out",
                    p.string()));
  return true;
}

}  // namespace

PlayBook::PlayBook(std::string out_dir, Side side) : dir_(std::move(out_dir)), side_(side) {
  ensure_directory(dir_);
  const fs::path played = fs::path(dir_) / kPlayedFile;
  if (book_file_exists(played)) {
    for (PlayedPlan& l : read_played_plans(played.string())) {
      if (l.side != side_ || !l.plan)
        throw IoError(
            fmt::format("{}: holds a {} line; this directory was not played as {} (use another --out)",
                        played.string(), l.plan ? to_string(l.side) : "null", to_string(side_)));
      if (!plans_.emplace(l.scenario_id, std::move(*l.plan)).second)
        throw IoError(fmt::format("{}: two plans for scenario {}", played.string(),
                                  untrusted::excerpt(l.scenario_id, 60)));
      order_.push_back(l.scenario_id);
    }
  }
  const fs::path times = fs::path(dir_) / kTimesFile;
  if (book_file_exists(times)) {
    const io::CsvTable t = io::CsvTable::read(times.string(), {"scenario_id", "seconds"});
    for (std::size_t i = 0; i < t.size(); ++i) times_[t.at(i, "scenario_id")] = t.at(i, "seconds");
  }
}

void PlayBook::submit(const std::string& scenario_id, const Plan& plan, double seconds) {
  if (played(scenario_id))
    throw std::logic_error("PlayBook::submit: scenario " + scenario_id + " is played already");
  plans_.emplace(scenario_id, plan);
  order_.push_back(scenario_id);
  times_[scenario_id] = fmt::format("{:.3f}", seconds);
  write();
}

void PlayBook::write() const {
  std::string played, times;
  io::append_csv_row(times, {"scenario_id", "seconds"});
  for (const std::string& id : order_) {
    played +=
        played_plan_line(id, side_ == Side::Blue ? "" : kHumanLabel, 0, side_, "human", &plans_.at(id), "") +
        "\n";
    const auto t = times_.find(id);
    io::append_csv_row(times, {id, t == times_.end() ? std::string() : t->second});
  }
  // The plans first: a sitting stopped between the two writes keeps the plan, with its time left blank.
  io::write_files(dir_, {{kPlayedFile, played}, {kTimesFile, times}});
}

std::vector<std::string> plan_messages(std::string_view text, const Scenario& sc, Side side) {
  if (text.size() > kMaxBodyBytes) return {fmt::format("the plan is more than {} bytes", kMaxBodyBytes)};
  nlohmann::json j;
  if (const std::string e = untrusted::parse_json_bounded(text, j, kMaxBodyDepth); !e.empty())
    return {fmt::format("the plan is not JSON: {}", e)};
  if (const std::string e = untrusted::plan_json_limit_error(j); !e.empty()) return {e};
  const PlanParse p = parse_plan_json(j, sc, side);
  std::vector<std::string> out;
  for (const Violation& v : p.violations) out.push_back(untrusted::excerpt(v.str(), 300));
  if (out.empty() && !p.plan) out.emplace_back("not a plan");
  return out;
}

}  // namespace advplan::play
