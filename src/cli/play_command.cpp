// `advplan play CONFIG --side blue|red --out DIR [--port P] [--plans FILE|-]` (docs/PLAY.md): a person in one
// seat. The page (or the terminal form, --plans) collects one plan per scenario into DIR/played.jsonl; once
// every scenario has one, the config runs into DIR/run with `plans:DIR/played.jsonl` in the person's seat
// (play::seated_config).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/local_server.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/play/play.hpp"
#include "advplan/report/view_server.hpp"
#include "advplan/run/runner.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

namespace {

struct PlayArgs {
  std::string config, side, out, plans;
  int port = 8766;
  int threads = 0;
};

/// What the person needs to write a plan, on stderr: the scenario, its vocabulary and, as RED, the BLUE plan.
void print_scenario(play::PlaySession& s, std::size_t i) {
  const Scenario& sc = s.scenario(i);
  const Side side = s.side();
  fmt::print(stderr, "\nadvplan: scenario {} of {} ({} played): {} ({} terrain)\n", i + 1, s.total(),
             s.played(), sc.id, sc.terrain.family);
  fmt::print(stderr, "  {} objective: {}\n  places: {}\n  your assets:", to_string(side),
             side == Side::Blue ? sc.blue_objective : sc.red_objective, fmt::join(sc.places, ", "));
  for (const Asset* a : sc.assets_of(side)) fmt::print(stderr, " {} ({})", a->id, a->role);
  fmt::print(stderr, "\n  verbs:");
  for (std::size_t c = 0; c < kNumCategories; ++c)
    fmt::print(stderr, " {}: {};", to_string(static_cast<Category>(c)), fmt::join(sc.verbs[c], " "));
  fmt::print(stderr, "\n");
  if (side == Side::Red) {
    std::string failure;
    const auto blue = s.opponent_plan(i, failure);
    fmt::print(stderr, "  the BLUE plan you answer: {}\n",
               blue ? plan_to_string(*blue) : "none (" + failure + ")");
  }
  fmt::print(stderr,
             "advplan: a {} plan as JSON (the whole scenario: advplan scenarios CONFIG), then Enter:\n",
             to_string(side));
}

/// The next JSON value of `in`: lines are gathered until they parse, an empty line ends a value that does
/// not. nullopt at the end of the input with nothing gathered.
std::optional<std::string> next_value(std::istream& in, std::string& error) {
  std::string text, line;
  while (std::getline(in, line)) {
    if (line.empty() && text.find_first_not_of(" \t\r") == std::string::npos) continue;
    text += line;
    text += '\n';
    if (text.size() > play::kMaxBodyBytes) {
      error = fmt::format("the plan is more than {} bytes", play::kMaxBodyBytes);
      return text;
    }
    nlohmann::json j;
    if (untrusted::parse_json_bounded(text, j, play::kMaxBodyDepth).empty()) return text;
    if (line.empty()) {
      error = "the text before the empty line is not JSON";
      return text;
    }
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  error = "the input ended inside a JSON value";
  return text;
}

/// A value {"scenario_id": ..., "plan": {...}} names its scenario; any other value is the plan itself.
std::string plan_text_of(const std::string& value, const std::string& current, std::string& scenario_id) {
  nlohmann::json j;
  scenario_id = current;
  if (!untrusted::parse_json_bounded(value, j, play::kMaxBodyDepth).empty() || !j.is_object()) return value;
  if (j.contains("plan") && j.contains("scenario_id") && j["scenario_id"].is_string()) {
    scenario_id = j["scenario_id"].get<std::string>();
    return j["plan"].dump();
  }
  return value;
}

/// The terminal form: plans read from `in` until every scenario has one or the input ends. An invalid plan is
/// asked again at a terminal and stops a file with one sentence. Returns whether every scenario is played.
bool play_from_stream(play::PlaySession& s, std::istream& in, bool interactive) {
  while (const std::optional<std::size_t> i = s.current()) {
    (void)s.state_json();  // starts the scenario's clock
    if (interactive) print_scenario(s, *i);
    std::string error;
    const std::optional<std::string> value = next_value(in, error);
    if (!value) return false;
    std::string id;
    const std::string plan = error.empty() ? plan_text_of(*value, s.scenario(*i).id, id) : std::string();
    std::vector<std::string> messages = error.empty() ? s.submit(id, plan) : std::vector<std::string>{error};
    if (messages.empty()) {
      fmt::print(stderr, "advplan: scenario {} played ({} of {})\n", s.scenario(*i).id, s.played(),
                 s.total());
      continue;
    }
    if (!interactive)
      throw PlanError(
          fmt::format("play: the plan for scenario {} is refused: {}{}", s.scenario(*i).id, messages.front(),
                      messages.size() > 1 ? fmt::format(" (and {} more)", messages.size() - 1) : ""));
    for (const auto& m : messages) fmt::print(stderr, "  {}\n", m);
  }
  return true;
}

/// The page: served on 127.0.0.1 until every scenario is played (or Ctrl-C). The server stops a second after
/// the last plan, from another thread, so that the answer to that submit (the page's "all played") is sent
/// first: a stop from inside the handler would end the loop before the response is written.
void play_in_browser(play::PlaySession& s, int port) {
  const std::string token = report::new_view_token();
  io::LocalServer* stop_me = nullptr;
  std::thread stopper;
  io::LocalServer server(play::play_server_options(port), [&](const io::LocalRequest& req) {
    return play::answer_play_request(s, token, req, [&] {
      fmt::print(stderr, "advplan: {} of {} scenarios played\n", s.played(), s.total());
      if (!s.current() && stop_me && !stopper.joinable())
        stopper = std::thread([stop_me] {
          std::this_thread::sleep_for(std::chrono::seconds(1));
          stop_me->stop();
        });
    });
  });
  stop_me = &server;
  fmt::print(
      stderr,
      "advplan: play {} at http://127.0.0.1:{}/{}/ ({} of {} scenarios played; Ctrl-C stops, the plans "
      "so far are kept)\n",
      to_string(s.side()), server.port(), token, s.played(), s.total());
  std::fflush(stderr);
  try {
    server.run();
  } catch (...) {
    if (stopper.joinable()) stopper.join();  // while the server it stops still exists
    throw;
  }
  if (stopper.joinable()) stopper.join();
}

int play(const PlayArgs& a) {
  const Side side = a.side == "red" ? Side::Red : Side::Blue;
  const ExperimentConfig cfg =
      a.config.empty() ? default_experiment_config() : load_experiment_config(a.config);
  const ExperimentConfig seated =
      play::seated_config(cfg, side, play::seat_spec(a.out));  // a sweep fails here
  (void)prepare_run(cfg, run_conditions(cfg));  // the other policies' names fail before the person plays
  play::PlaySession session(cfg, side, a.out);
  bool complete = !session.current().has_value();
  if (!complete && !a.plans.empty()) {
    if (a.plans == "-") {
      complete = play_from_stream(session, std::cin, ::isatty(STDIN_FILENO) != 0);
    } else {
      std::ifstream in(a.plans);
      if (!in) throw IoError(fmt::format("{}: cannot be read", a.plans));
      complete = play_from_stream(session, in, false);
    }
  } else if (!complete) {
    play_in_browser(session, a.port);
    complete = !session.current().has_value();
  }
  if (!complete) {
    fmt::print(
        stderr,
        "advplan: {} of {} scenarios played; the plans are kept in {}: run the same command to go on\n",
        session.played(), session.total(), a.out);
    return 0;
  }
  RunOptions opts;
  opts.out_dir = (fs::path(a.out) / play::kRunDir).string();
  opts.force = true;  // made from the kept plans, byte for byte, every time
  opts.threads = a.threads;
  opts.command = "play";
  opts.observers = standard_observers(opts.studies);
  const RunSummary r = run_experiment(prepare_run(seated, run_conditions(seated)), opts);
  fmt::print(stderr, "advplan: {} scenarios played; the run ({} rows, {} failed) is in {}\n", session.total(),
             r.rows, r.failed_rows, opts.out_dir);
  return 0;
}

}  // namespace

void add_play_command(CLI::App& app, Action& run) {
  auto* cmd =
      app.add_subcommand("play", "Play one side yourself, in a page on 127.0.0.1 or from the terminal");
  auto a = std::make_shared<PlayArgs>();
  cmd->add_option("CONFIG", a->config, "experiment config (default: the built-in paper config)");
  cmd->add_option("--side", a->side, "the side you play")->required()->check(CLI::IsMember({"blue", "red"}));
  cmd->add_option("--out", a->out, "directory of the sitting: your plans, their times and the run")
      ->required();
  cmd->add_option("--port", a->port, "the page's port on 127.0.0.1 (0: any free one)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--plans", a->plans, "the terminal form: JSON plans from FILE, or - for standard input");
  cmd->add_option("--threads", a->threads, "worker threads of the run (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->callback([&run, a] { run = [a] { return play(*a); }; });
}

}  // namespace advplan::cli
