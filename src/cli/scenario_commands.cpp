// `advplan scenarios` and `advplan validate`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "commands.hpp"

namespace advplan::cli {

namespace {
ExperimentConfig config_or_default(const std::string& path) {
  return path.empty() ? default_experiment_config() : load_experiment_config(path);
}
}  // namespace

void add_scenarios_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("scenarios", "Write the generated corpus as JSON lines, one scenario per line");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in paper config)");
  cmd->add_option("--out", *out, "output file (default: stdout)");
  cmd->callback([&run, config, out] {
    run = [config, out] {
      const auto cfg = config_or_default(*config);
      // One scenario at a time: a large corpus is streamed, never held in memory.
      const std::size_t n = corpus_size(cfg);
      if (out->empty()) {
        for (std::size_t i = 0; i < n; ++i) std::cout << scenario_to_string(corpus_scenario(cfg, i)) << '\n';
        return 0;
      }
      io::AtomicWriter w(*out);
      for (std::size_t i = 0; i < n; ++i) w.stream() << scenario_to_string(corpus_scenario(cfg, i)) << '\n';
      w.commit();
      return 0;
    };
  });
}

void add_validate_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("validate", "Check a plan against a scenario and print its metrics");
  auto plan_path = std::make_shared<std::string>();
  auto scenario_id = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto json_out = std::make_shared<bool>(false);
  cmd->add_option("PLAN", *plan_path, "plan JSON file (the form of docs/POLICIES.md)")->required();
  cmd->add_flag("--json", *json_out, "print one JSON object (valid, violations or metrics) on stdout");
  cmd->add_option("--scenario", *scenario_id, "scenario id, e.g. urban-100")->required();
  cmd->add_option("--config", *config, "experiment config (default: the built-in paper config)");
  cmd->callback([&run, plan_path, scenario_id, config, json_out] {
    run = [plan_path, scenario_id, config, json_out] {
      const auto cfg = config_or_default(*config);
      const Scenario sc = find_scenario(cfg, *scenario_id);
      const std::string text = io::read_text_file(*plan_path, io::kMaxDocumentBytes);
      const PlanParse parsed = parse_plan_text(text, sc);
      if (!parsed.ok() && *json_out) {
        nlohmann::ordered_json j{{"plan", *plan_path}, {"scenario", sc.id}, {"valid", false}};
        j["violations"] = nlohmann::ordered_json::array();
        for (const auto& v : parsed.violations) j["violations"].push_back(untrusted::excerpt(v.str(), 300));
        fmt::print("{}\n", j.dump());
        return 1;
      }
      if (!parsed.ok()) {
        fmt::print(stderr, "{}: invalid plan for scenario {} ({} violation{}):\n", *plan_path, sc.id,
                   parsed.violations.size(), parsed.violations.size() == 1 ? "" : "s");
        constexpr std::size_t kShown = 50;  // a plan with thousands of faults gets the first ones, each one line
        for (std::size_t i = 0; i < parsed.violations.size() && i < kShown; ++i)
          fmt::print(stderr, "  {}: {}\n", *plan_path, untrusted::excerpt(parsed.violations[i].str(), 300));
        if (parsed.violations.size() > kShown)
          fmt::print(stderr, "  {}: and {} more\n", *plan_path, parsed.violations.size() - kShown);
        return 1;
      }
      const Plan& p = *parsed.plan;
      const auto q = quality(p, sc, cfg.quality);
      const auto d = coherence(p, sc);
      const auto st = structure(p);
      if (*json_out) {
        nlohmann::ordered_json j{{"plan", *plan_path},   {"plan_id", p.plan_id}, {"side", std::string(to_string(p.side))},
                                 {"scenario", sc.id},    {"valid", true},        {"q", q.q},
                                 {"e", q.e},             {"c", q.c},             {"r", q.r},
                                 {"D", d.D},             {"O", st.O},            {"P_V", st.P_V},
                                 {"W", st.W}};
        for (std::size_t i = 0; i < kNumCoherenceParts; ++i)
          j["D_parts"][std::string(to_string(static_cast<CoherencePart>(i)))] = d.part[i];
        fmt::print("{}\n", j.dump());
        return 0;
      }
      fmt::print("plan {} ({}) is valid for scenario {}\n", p.plan_id, to_string(p.side), sc.id);
      fmt::print("q {:.4f}\ne {:.4f}\nc {:.4f}\nr {:.4f}\nD {:.4f}\nO {:.4f}\nP_V {:.4f}\nW {:.4f}\n", q.q, q.e, q.c,
                 q.r, d.D, st.O, st.P_V, st.W);
      for (std::size_t i = 0; i < kNumCoherenceParts; ++i)
        fmt::print("D.{} {:.4f}\n", to_string(static_cast<CoherencePart>(i)), d.part[i]);
      return 0;
    };
  });
}

}  // namespace advplan::cli
