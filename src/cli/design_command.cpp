// `advplan design RUN_DIR --mde X --out DIR [--power P] [--alpha A] [--cpu-price USD] ...`: the study design of a
// pilot run of several samples (docs/METRICS.md "Study design").
#include <fmt/format.h>

#include "advplan/core/error.hpp"
#include "advplan/evaluation/design.hpp"
#include "advplan/io/atomic_file.hpp"
#include "commands.hpp"

namespace advplan::cli {

namespace {

struct DesignFlags {
  std::string dir, out;
  DesignSettings s;
  double sample_cost = -1, replication_seconds = -1;
};

void add_design_options(CLI::App* cmd, DesignFlags& f) {
  cmd->add_option("RUN_DIR", f.dir, "a pilot run with samples: K >= 2")->required();
  cmd->add_option("--out", f.out, "directory for design/design.{csv,md}")->required();
  cmd->add_option("--mde", f.s.target_mde, "the target minimum detectable effect, in the metric's units")->required();
  cmd->add_option("--power", f.s.power, "power at the target")->capture_default_str();
  cmd->add_option("--alpha", f.s.alpha, "two-sided level (Holm's strictest step α/m if you test m comparisons)")
      ->capture_default_str();
  cmd->add_option("--cpu-price", f.s.cpu_price_per_hour, "USD per CPU-hour of the simulator")->capture_default_str();
  cmd->add_option("--scenario-cost", f.s.scenario_cost, "USD per scenario besides its samples")->capture_default_str();
  cmd->add_option("--sample-seconds", f.s.sample_seconds, "CPU seconds of a sample's planning, at --cpu-price")
      ->capture_default_str();
  cmd->add_option("--sample-cost", f.sample_cost,
                  "USD per (scenario, sample), overriding the pilot's priced model calls");
  cmd->add_option("--replication-seconds", f.replication_seconds,
                  "CPU seconds per replication, overriding the pilot's measure");
  cmd->add_option("--max-samples", f.s.limits.max_samples, "largest K considered")->capture_default_str();
  cmd->add_option("--max-replications", f.s.limits.max_replications, "largest R considered")->capture_default_str();
  cmd->add_option("--max-scenarios", f.s.limits.max_scenarios, "largest n considered")->capture_default_str();
}

int run_design(DesignFlags f) {
  auto finite_nonneg = [](double v) { return v >= 0 && v < 1e12; };
  if (!finite_nonneg(f.s.cpu_price_per_hour) || !finite_nonneg(f.s.scenario_cost) ||
      !finite_nonneg(f.s.sample_seconds))
    throw ConfigError("--cpu-price, --scenario-cost and --sample-seconds must be numbers of at least 0");
  if (f.sample_cost != -1) {
    if (!finite_nonneg(f.sample_cost)) throw ConfigError("--sample-cost must be a number of at least 0");
    f.s.sample_cost = f.sample_cost;
  }
  if (f.replication_seconds != -1) {
    if (!finite_nonneg(f.replication_seconds)) throw ConfigError("--replication-seconds must be a number of at least 0");
    f.s.replication_seconds = f.replication_seconds;
  }
  const auto& l = f.s.limits;
  if (l.max_samples < 1 || l.max_samples > 1024 || l.max_replications < 1 || l.max_replications > 10000000 ||
      l.max_scenarios < 2 || l.max_scenarios > 100000000)
    throw ConfigError("--max-samples must be in 1..1024, --max-replications in 1..10^7, --max-scenarios in 2..10^8");
  const auto files = design_files(f.dir, f.s);
  io::write_files(f.out, files);
  fmt::print("{}", files[1].second);
  fmt::print(stderr, "advplan: wrote {}/design/design.csv and design.md\n", f.out);
  return 0;
}

}  // namespace

void add_design_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("design", "Variance components of a pilot run and the cheapest (n, K, R) design");
  auto flags = std::make_shared<DesignFlags>();
  add_design_options(cmd, *flags);
  cmd->callback([&run, flags] {
    run = [flags] { return run_design(*flags); };
  });
}

}  // namespace advplan::cli
