// The engagement wargame against its oracle: tests/sim/engagement_oracle.py, a re-implementation written from docs/
// alone (docs/METRICS.md and docs/TRACES.md, without reading the code), replays every cell of an engagement run of
// the paper's conditions and budget sweep from the run's plans.jsonl and `advplan scenarios`, and must print the
// same replications.csv and engagements.csv rows and per_scenario.csv win rates and final strengths, to every
// printed digit (tolerance: none beyond the traces' 6 decimals). So the docs stay enough to rebuild a replication.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(EngagementOracle, ADocsOnlyReimplementationReproducesEveryCell) {
  TempDir tmp("engagement-oracle");
  const std::string config = tmp / "engagement.yaml";
  testing::write_file(
      config, testing::edited_text(testing::kSource + "/configs/experiments/engagement.yaml",
                                   {{"  seeds: [100, 129]",
                                     "  seeds: [100, 105]\n  template_dir: " + testing::kSource + "/configs/templates"},
                                    {"  attribution: true", "  attribution: false"}}) +
                  "traces: {plans: true}\n");
  const std::string run = tmp / "run", scenarios = tmp / "scenarios.jsonl";
  auto r = testing::advplan("run " + testing::quote(config) + " --progress none --out " + testing::quote(run), tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  r = testing::advplan("scenarios " + testing::quote(config) + " --out " + testing::quote(scenarios), tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  // Standard library only: any python3 will do.
  r = testing::run_command(testing::quote(testing::python()) + " " +
                               testing::quote(testing::kSource + "/tests/sim/engagement_oracle.py") + " " +
                               testing::quote(run) + " " + testing::quote(scenarios),
                           tmp);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // 30 scenarios x (5 conditions + greedy@1, @2, @4, @16 of the budget sweep).
  EXPECT_THAT(r.out, HasSubstr("engagement oracle: 270 of 270 cells identical")) << r.out << r.err;
}

}  // namespace
}  // namespace advplan
