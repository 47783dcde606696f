#include "advplan/evaluation/samples.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>

namespace advplan {
using io::CsvTable;
using io::fmt_real;

double pass_at_k(std::size_t n, std::size_t c, std::size_t k) {
  if (n == 0 || k == 0 || k > n || c > n) return std::numeric_limits<double>::quiet_NaN();
  if (n - c < k) return 1.0;
  double miss = 1.0;  // C(n - c, k) / C(n, k)
  for (std::size_t i = n - c + 1; i <= n; ++i) miss *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - miss;
}

double pass_hat_k(std::size_t n, std::size_t c, std::size_t k) {
  if (n == 0 || k == 0 || k > n || c > n) return std::numeric_limits<double>::quiet_NaN();
  double all = 1.0;  // C(c, k) / C(n, k)
  for (std::size_t i = 0; i < k; ++i) all *= static_cast<double>(c - std::min(c, i)) / static_cast<double>(n - i);
  return all;
}

namespace {

/// The two declared events, each over every sample of the cell (so pass@k at every k averages the same
/// scenarios): a sample's BLUE wins the majority of its replications (a failed row, or one without a win rate,
/// is a sample without the event), and a sample's BLUE plan is valid (it fails only when the row's reason starts
/// "blue: ").
constexpr const char* kEvents[] = {"blue_win", "valid_plan"};

/// One (scenario, condition) over its samples.
struct Cell {
  std::string scenario, tpl, condition, blue, red;
  std::size_t samples = 0, ok = 0, with_advantage = 0;
  double advantage_sum = 0, advantage_worst = std::numeric_limits<double>::infinity();
  std::size_t trials[2] = {0, 0}, events[2] = {0, 0};
};

void add_sample(Cell& c, const CsvTable& per, std::size_t row) {
  ++c.samples;
  const bool ok = per.at(row, "status") == "ok";
  const bool blue_failed = !ok && std::string_view(per.at(row, "failure_reason")).starts_with("blue: ");
  ++c.trials[0];
  ++c.trials[1];
  c.events[1] += blue_failed ? 0 : 1;
  if (!ok) return;
  ++c.ok;
  const double adv = per.real(row, "advantage");
  if (!std::isnan(adv)) {
    ++c.with_advantage;
    c.advantage_sum += adv;
    c.advantage_worst = std::min(c.advantage_worst, adv);
  }
  if (const double w = per.real(row, "blue_win_rate"); !std::isnan(w)) c.events[0] += w > 0.5 ? 1 : 0;
}

/// The cells in file order of their first sample, and the largest sample count.
std::vector<Cell> cells_of(const CsvTable& per, std::size_t& most) {
  std::vector<Cell> cells;
  std::map<std::pair<std::string, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto key = std::make_pair(per.at(i, "scenario_id"), per.at(i, "condition"));
    auto [it, fresh] = at.try_emplace(key, cells.size());
    if (fresh)
      cells.push_back({key.first, per.at(i, "template"), key.second, per.at(i, "blue_policy"), per.at(i, "red_policy")});
    add_sample(cells[it->second], per, i);
  }
  most = 0;
  for (const auto& c : cells) most = std::max(most, c.samples);
  return cells;
}

std::string majority(const Cell& c, int e) {
  if (c.trials[e] == 0) return "";
  return 2 * c.events[e] > c.trials[e] ? "1" : "0";
}

std::string reducers_csv(const std::vector<Cell>& cells) {
  CsvTable t({"scenario_id", "template", "condition", "blue_policy", "red_policy", "samples", "ok_samples",
              "advantage_mean", "advantage_worst", "blue_win_trials", "blue_wins", "blue_win_majority",
              "valid_plans", "valid_plan_majority"});
  for (const auto& c : cells) {
    const bool any = c.with_advantage > 0;
    t.add({c.scenario, c.tpl, c.condition, c.blue, c.red, std::to_string(c.samples), std::to_string(c.ok),
           any ? fmt_real(c.advantage_sum / static_cast<double>(c.with_advantage)) : "",
           any ? fmt_real(c.advantage_worst) : "",
           std::to_string(c.trials[0]), std::to_string(c.events[0]), majority(c, 0), std::to_string(c.events[1]),
           majority(c, 1)});
  }
  return t.to_string();
}

/// k = 1, 2, 4, ... up to N, and N itself.
std::vector<std::size_t> ks_up_to(std::size_t n) {
  std::vector<std::size_t> ks;
  for (std::size_t k = 1; k <= n; k *= 2) ks.push_back(k);
  if (ks.empty() || ks.back() != n) ks.push_back(n);
  return ks;
}

std::vector<std::string> conditions_in_order(const std::vector<Cell>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells)
    if (std::find(out.begin(), out.end(), c.condition) == out.end()) out.push_back(c.condition);
  return out;
}

void add_pass_rows(CsvTable& t, const std::vector<const Cell*>& cond, int e, std::size_t k, const BootstrapSettings& bs) {
  std::vector<double> at, hat;
  for (const Cell* c : cond)
    if (c->trials[e] >= k) {
      at.push_back(pass_at_k(c->trials[e], c->events[e], k));
      hat.push_back(pass_hat_k(c->trials[e], c->events[e], k));
    }
  const Cell& first = *cond.front();
  if (at.empty()) {  // no scenario of the condition has k samples: no value, not a zero
    t.add({first.condition, first.blue, first.red, kEvents[e], std::to_string(k), "0", "", "", "", "", "", ""});
    return;
  }
  const std::string key = fmt::format("{}|{}|{}", first.condition, kEvents[e], k);
  const Interval a = bootstrap_mean(at, bs.resamples, bs.seed, "pass@k|" + key);
  const Interval h = bootstrap_mean(hat, bs.resamples, bs.seed, "pass^k|" + key);
  t.add({first.condition, first.blue, first.red, kEvents[e], std::to_string(k), std::to_string(at.size()),
         fmt_real(a.mean), fmt_real(a.lo), fmt_real(a.hi), fmt_real(h.mean), fmt_real(h.lo), fmt_real(h.hi)});
}

std::string pass_at_k_csv(const std::vector<Cell>& cells, std::size_t most, const BootstrapSettings& bs) {
  CsvTable t({"condition", "blue_policy", "red_policy", "event", "k", "n", "pass_at_k", "pass_at_k_lo", "pass_at_k_hi",
              "pass_hat_k", "pass_hat_k_lo", "pass_hat_k_hi"});
  for (const auto& name : conditions_in_order(cells)) {
    std::vector<const Cell*> cond;
    for (const auto& c : cells)
      if (c.condition == name) cond.push_back(&c);
    for (int e = 0; e < 2; ++e)
      for (std::size_t k : ks_up_to(most)) add_pass_rows(t, cond, e, k, bs);
  }
  return t.to_string();
}

/// flaky.csv (each scenario whose samples disagree on an event) and flakiness.csv (their share per condition).
std::pair<std::string, std::string> flaky_csvs(const std::vector<Cell>& cells) {
  CsvTable flaky({"condition", "event", "scenario_id", "trials", "events", "share"});
  CsvTable share({"condition", "blue_policy", "red_policy", "event", "scenarios", "flaky", "flaky_share"});
  for (const auto& name : conditions_in_order(cells))
    for (int e = 0; e < 2; ++e) {
      std::size_t scenarios = 0, n_flaky = 0;
      const Cell* first = nullptr;
      for (const auto& c : cells) {
        if (c.condition != name || c.trials[e] < 2) continue;
        first = first ? first : &c;
        ++scenarios;
        if (c.events[e] == 0 || c.events[e] == c.trials[e]) continue;
        ++n_flaky;
        flaky.add({name, kEvents[e], c.scenario, std::to_string(c.trials[e]), std::to_string(c.events[e]),
                   fmt_real(static_cast<double>(c.events[e]) / static_cast<double>(c.trials[e]))});
      }
      if (first)
        share.add({name, first->blue, first->red, kEvents[e], std::to_string(scenarios), std::to_string(n_flaky),
                   fmt_real(static_cast<double>(n_flaky) / static_cast<double>(scenarios))});
    }
  return {flaky.to_string(), share.to_string()};
}

class SampleReducerObserver final : public RunObserver {
 public:
  std::string name() const override { return "samples"; }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& a) override {
    const auto path = std::filesystem::path(a.run.dir) / "per_scenario.csv";
    return sample_reducer_files(CsvTable::read(path.string()), a.bootstrap);
  }
};

}  // namespace

std::vector<std::pair<std::string, std::string>> sample_reducer_files(const CsvTable& per, const BootstrapSettings& bs) {
  if (!per.has_col("sample")) return {};
  std::size_t most = 0;
  const auto cells = cells_of(per, most);
  if (most < 2) return {};
  auto [flaky, share] = flaky_csvs(cells);
  return {{"samples/reducers.csv", reducers_csv(cells)},
          {"samples/pass_at_k.csv", pass_at_k_csv(cells, most, bs)},
          {"samples/flaky.csv", std::move(flaky)},
          {"samples/flakiness.csv", std::move(share)}};
}

std::shared_ptr<RunObserver> make_sample_reducer_observer() { return std::make_shared<SampleReducerObserver>(); }

}  // namespace advplan
