// The engagement wargame against its oracle: tests/sim/engagement_oracle.py, a re-implementation written from docs/
// alone (docs/METRICS.md and docs/TRACES.md, without reading the code), replays every cell of an engagement run of
// the paper's conditions and budget sweep from the run's plans.jsonl and `advplan scenarios`, and must print the
// same replications.csv and engagements.csv rows and per_scenario.csv win rates and final strengths, to every
// printed digit (tolerance: none beyond the traces' 6 decimals; on maps 2e-6, since the routes it reads from
// geo_moves.csv are printed to 6 decimals). So the docs stay enough to rebuild a replication.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

/// Runs configs/experiments/engagement.yaml on 30 scenarios (attribution off, plans traced, `extra` appended),
/// then the oracle on it; its stdout, or the step that failed.
std::string oracle_on(const TempDir& tmp, const std::string& extra) {
  const std::string config = tmp / "engagement.yaml";
  testing::write_file(
      config, testing::edited_text(testing::kSource + "/configs/experiments/engagement.yaml",
                                   {{"  seeds: [100, 129]",
                                     "  seeds: [100, 105]\n  template_dir: " + testing::kSource + "/configs/templates"},
                                    {"  attribution: true", "  attribution: false"}}) +
                  "traces: {plans: true}\n" + extra);
  const std::string run = tmp / "run", scenarios = tmp / "scenarios.jsonl";
  auto r = testing::advplan("run " + testing::quote(config) + " --progress none --out " + testing::quote(run), tmp);
  if (r.status != 0) return "advplan run failed: " + r.err;
  r = testing::advplan("scenarios " + testing::quote(config) + " --out " + testing::quote(scenarios), tmp);
  if (r.status != 0) return "advplan scenarios failed: " + r.err;
  // Standard library only: any python3 will do.
  r = testing::run_command(testing::quote(testing::python()) + " " +
                               testing::quote(testing::kSource + "/tests/sim/engagement_oracle.py") + " " +
                               testing::quote(run) + " " + testing::quote(scenarios),
                           tmp);
  return r.out + r.err + (r.status == 0 ? "" : "exit status " + std::to_string(r.status));
}

TEST(EngagementOracle, ADocsOnlyReimplementationReproducesEveryCell) {
  // 30 scenarios x (5 conditions + greedy@1, @2, @4, @16 of the budget sweep).
  TempDir tmp("engagement-oracle");
  const std::string out = oracle_on(tmp, "");
  EXPECT_THAT(out, HasSubstr("engagement oracle: 270 of 270 cells identical\n")) << out;
}

TEST(EngagementOracle, OnMapsTheRoutesTimesAndExposureAreTheDocumentedOnes) {
  // The same on maps: the route steps, the exposure fire and the geospatial q terms (docs/METRICS.md "Moves on the
  // map", "Geospatial terms"). geo_moves.csv prints the routes' hours and exposure to 6 decimals, so numbers may
  // differ by 2e-6; counts, bits, steps and texts must be identical. (A 5% larger BLUE exposure fire in the engine
  // changed 19 of the 270 cells.)
  TempDir tmp("engagement-oracle-geo");
  const std::string out = oracle_on(tmp, "terrain: geo\n");
  EXPECT_THAT(out, HasSubstr("engagement oracle: 270 of 270 cells identical within 2e-06\n")) << out;
}

}  // namespace
}  // namespace advplan
