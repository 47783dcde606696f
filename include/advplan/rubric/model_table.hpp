#pragma once
// MA-Bench's model table from its released files (docs/RUBRIC.md "Per-model tables", docs/METRICS.md "Per-model
// rubric tables"): per judge, model and condition, the weighted score (seeds averaged within a case, then the mean
// over cases, with a bootstrap interval over cases), items correct, wrong moves per brief, critical omissions and
// critical wrong moves per brief, and the positive pass rate; the paired difference between two conditions of a
// model, paired by case; and the Spearman correlation of two judges' model rankings, with an interval.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "advplan/rubric/score.hpp"

namespace advplan::rubric {

struct ModelTables {
  /// scores_per_model.csv, condition_differences.csv, judge_rank_correlation.csv, scores_per_model.md
  std::vector<std::pair<std::string, std::string>> files;
  std::string markdown;
};

/// `verdicts` carry their brief's model and condition (attach_briefs). One verdict per (judge, brief).
ModelTables model_tables(const RubricSet& items, std::span<const Verdict> verdicts, int resamples = 1000,
                         std::uint64_t seed = 1);

}  // namespace advplan::rubric
