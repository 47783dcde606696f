#pragma once
// `advplan play` (docs/PLAY.md): a person in one seat of a run. The person's plans are kept in the output
// directory as a plan set (played.jsonl, the plans.jsonl layout of io/played_plans.hpp) with the time spent
// on each scenario (play_times.csv), each rewritten atomically after every plan; once every scenario of the
// corpus has a plan, the config runs with `plans:OUT/played.jsonl` in the person's seat, so the run is, by
// construction, the run of those plans given as a plan set.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/io/local_server.hpp"
#include "advplan/run/config.hpp"

namespace advplan {
class BluePolicy;
}

namespace advplan::play {

inline constexpr const char* kPlayedFile = "played.jsonl";
inline constexpr const char* kTimesFile = "play_times.csv";
inline constexpr const char* kRunDir = "run";
/// The label of the condition `--side red` adds (docs/PLAY.md "The seat").
inline constexpr const char* kHumanLabel = "human";
/// The largest POST body the play page may send, and the nesting its JSON may have.
inline constexpr std::size_t kMaxBodyBytes = 256 * 1024;
inline constexpr std::size_t kMaxBodyDepth = 16;

/// "plans:<out_dir>/played.jsonl": the policy in the person's seat.
std::string seat_spec(const std::string& out_dir);

/// The config with the person's seat filled by `spec`: as BLUE, every condition (and the budget sweep) whose
/// BLUE is the config's default_blue plays `spec` instead, and default_blue becomes `spec` (the labels stay:
/// a condition of the default BLUE is labelled by its RED); as RED, for each BLUE policy of the config
/// (default_blue first, then in the order the conditions name them) a condition {label: "human" for
/// default_blue, else "BLUE vs human", blue, red: spec} is appended, so the person's plan meets every BLUE
/// policy and a matrix stays a matrix. Throws ConfigError when the config has a sweep or, as RED, a condition
/// labelled "human" or "... vs human" already.
ExperimentConfig seated_config(ExperimentConfig cfg, Side side, const std::string& spec);

/// The person's plans so far, in the output directory. Creating it creates the directory (one level) and
/// reads played.jsonl and play_times.csv when they are there; each submit rewrites both atomically (a rename
/// never replaces what is not a regular file: io::AtomicWriter).
class PlayBook {
 public:
  PlayBook(std::string out_dir, Side side);
  bool played(const std::string& scenario_id) const { return plans_.contains(scenario_id); }
  std::size_t size() const { return order_.size(); }
  /// Records the plan of a scenario not played yet (std::logic_error otherwise) and writes both files.
  void submit(const std::string& scenario_id, const Plan& plan, double seconds);
  const std::string& dir() const { return dir_; }

 private:
  void write() const;
  std::string dir_;
  Side side_;
  std::vector<std::string> order_;            // scenario ids in the order played
  std::map<std::string, Plan> plans_;         // by scenario id
  std::map<std::string, std::string> times_;  // by scenario id: the seconds cell as written
};

/// The validator's messages for plan JSON text in a scenario, for `side`: one per violation, each "path:
/// message"; empty when the plan is valid. Bounded: the text at most kMaxBodyBytes, its JSON kMaxBodyDepth
/// deep.
std::vector<std::string> plan_messages(std::string_view text, const Scenario& sc, Side side);

/// A sitting: the corpus, the person's side, the plans so far and, as RED, the BLUE plan each scenario
/// answers.
class PlaySession {
 public:
  /// `cfg` is the config as written (not seated). Generates the corpus and reads the book.
  PlaySession(const ExperimentConfig& cfg, Side side, const std::string& out_dir);
  ~PlaySession();
  Side side() const { return side_; }
  std::size_t total() const { return corpus_.size(); }
  std::size_t played() const { return book_.size(); }
  /// The first scenario of the corpus not played yet, in corpus order; nullopt when every one is.
  std::optional<std::size_t> current() const;
  const Scenario& scenario(std::size_t i) const { return corpus_.at(i); }
  /// As RED: the default BLUE policy's plan for scenario i (its keyed stream, as the run makes it), or
  /// nullopt with the policy's failure in `failure`. As BLUE: nullopt. Made once per scenario (the last one
  /// asked is kept).
  std::optional<Plan> opponent_plan(std::size_t i, std::string& failure) const;
  /// The page's state: side, counts, the current scenario, the plan it answers and its map (JSON text).
  std::string state_json();
  /// Validates the plan text for the current scenario `scenario_id`; when valid, records it with the seconds
  /// since the state first showed that scenario. Returns the validator's messages (empty: recorded), or one
  /// sentence when `scenario_id` is not the current scenario.
  std::vector<std::string> submit(std::string_view scenario_id, std::string_view plan_text);
  /// For tests: the clock the times are read from.
  void set_clock(std::function<std::chrono::steady_clock::time_point()> now) { now_ = std::move(now); }

 private:
  const ExperimentConfig& cfg_;
  Side side_;
  std::vector<Scenario> corpus_;
  PlayBook book_;
  std::unique_ptr<BluePolicy> blue_;  // as RED: the default BLUE policy, whose plan the person answers
  // Its plan for one scenario, made once (a model's plan costs a call): the scenario, the plan, the failure.
  mutable std::optional<std::size_t> opponent_for_;
  mutable std::optional<Plan> opponent_;
  mutable std::string opponent_failure_;
  std::optional<std::size_t> shown_;  // the scenario the state last showed, and when
  std::chrono::steady_clock::time_point shown_at_{};
  std::function<std::chrono::steady_clock::time_point()> now_ = [] {
    return std::chrono::steady_clock::now();
  };
};

/// The server's options: 127.0.0.1:port, GET, HEAD and POST, bodies up to kMaxBodyBytes, the viewer's
/// headers.
io::LocalServerOptions play_server_options(int port);

/// The answer to one request. Paths outside /TOKEN/ are a 403 naming no token; a request a browser marks as
/// from another site is a 403; under /TOKEN/: GET "" or "index.html", "play.js", "play.css" (the page), GET
/// "state" (PlaySession::state_json), POST "validate" ({"scenario_id", "plan"}: {"messages": [...]}) and POST
/// "submit" (the same body: {"messages": [...]} with 422, or the next state). A body that is not such JSON is
/// a 400 with one sentence. `on_submit` is called after each recorded plan (progress).
io::LocalResponse answer_play_request(PlaySession& session, std::string_view token,
                                      const io::LocalRequest& request,
                                      const std::function<void()>& on_submit = {});

}  // namespace advplan::play
