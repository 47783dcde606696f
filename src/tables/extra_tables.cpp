// Table 6 (council), when the council's trace is in the run.
#include <fmt/format.h>

#include <cmath>
#include <set>
#include <tuple>

#include "advplan/tables/tables.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/stats/statistics.hpp"
#include "stats/joint_columns.hpp"

namespace advplan {
using io::CsvTable;

namespace {

/// The conditions Table 6 compares, found in the data: the council's condition is the one whose rows carry the
/// council trace's selected (BLUE, RED) plans; its baseline is the first condition with the same RED policy and
/// another BLUE policy, looking in group main, then reference, then evaluate. Either is empty when absent.
std::pair<std::string, std::string> council_conditions(const CsvTable& per, const CsvTable& trace) {
  std::set<std::tuple<std::string, std::string, std::string>> selected;
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace.at(i, "status") == "ok")
      selected.emplace(trace.at(i, "scenario_id"), trace.at(i, "selected_blue_id"), trace.at(i, "selected_red_id"));
  std::string council, red, blue;
  for (std::size_t i = 0; i < per.size() && council.empty(); ++i)
    if (selected.contains({per.at(i, "scenario_id"), per.at(i, "blue_plan_id"), per.at(i, "red_plan_id")})) {
      council = per.at(i, "condition");
      red = per.at(i, "red_policy");
      blue = per.at(i, "blue_policy");
    }
  if (council.empty()) return {};
  for (const char* group : {"main", "reference", "evaluate"})
    for (std::size_t i = 0; i < per.size(); ++i)
      if (per.at(i, "condition_group") == group && per.at(i, "red_policy") == red && per.at(i, "blue_policy") != blue)
        return {per.at(i, "condition"), council};
  return {"", council};
}

/// The council's BLUE advantage and win rate beside its baseline's, the revised share and the repair diagnostics.
TextTable table6(const CsvTable& per, const CsvTable& trace, const SummaryIntervals& iv, const BootstrapSettings& bs) {
  TextTable t{"table6_council", "Table 6: multi-agent council (selected council plan against the same RED baseline)",
              {"Quantity", "n", "Value [95% CI]"}, {}};
  const auto [baseline, council] = council_conditions(per, trace);
  for (const std::string& cond : {baseline, council}) {
    if (cond.empty()) continue;
    const auto a = iv.get("all", cond, "advantage");
    if (a.n == 0) continue;
    const auto w = iv.get("all", cond, "blue_win_rate");
    t.rows.push_back({fmt::format("BLUE advantage ({})", cond), std::to_string(a.n), interval_cell(a)});
    t.rows.push_back({fmt::format("BLUE win rate ({})", cond), std::to_string(w.n), interval_cell(w)});
  }
  CsvTable ok(trace.header());
  for (const auto& r : trace.rows())
    if (r[trace.col("status")] == "ok") ok.add(r);
  // The council's own diagnostics: one joint bootstrap over the ok trace rows (scope "council"), each column its
  // present values (an empty cell is absent).
  detail::JointColumns cols(ok.size());
  std::vector<double> revised;
  for (std::size_t i = 0; i < ok.size(); ++i) revised.push_back(ok.at(i, "selected_round") == "2" ? 1.0 : 0.0);
  cols.add(std::move(revised));
  const std::vector<std::pair<std::string, std::string>> diagnostics{
      {"council_diversity", "Council (first-round) diversity"},
      {"revised_diversity", "Revised-candidate diversity"},
      {"robustness_margin", "Robustness margin"},
      {"pressure_reduction", "Pressure reduction"},
      {"consensus_gap", "Consensus gap"},
      {"adversarial_pressure", "Adversarial pressure on the selected plan"}};
  for (const auto& [col, label] : diagnostics) {
    std::vector<double> v(ok.size());
    for (std::size_t i = 0; i < ok.size(); ++i) v[i] = ok.real(i, col);
    cols.add(std::move(v));
  }
  const std::vector<Interval> iv6 = cols.intervals(bs, "council");
  t.rows.push_back({"Final plan from the revised set (share)", std::to_string(iv6[0].n), interval_cell(iv6[0])});
  for (std::size_t k = 0; k < diagnostics.size(); ++k)
    t.rows.push_back({diagnostics[k].second, std::to_string(iv6[k + 1].n), interval_cell(iv6[k + 1])});
  return t;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_extra_tables(const std::optional<CsvTable>& council_trace,
                                                                    const CsvTable& per,
                                                                    const SummaryIntervals& iv,
                                                                    const BootstrapSettings& bs) {
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const TextTable& t) {
    files.emplace_back(t.name + ".md", t.markdown());
    files.emplace_back(t.name + ".tex", t.latex());
  };
  if (council_trace && council_trace->size() > 0) emit(table6(per, *council_trace, iv, bs));
  return files;
}

}  // namespace advplan
