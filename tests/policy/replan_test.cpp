// The replanning contract's checks (docs/POLICIES.md "6. Replanning", src/policy/replan.cpp): whatever a policy's
// do_replan throws is the call's failure, and a failure's reason is one bounded line however many violations or
// however long a text it comes from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "advplan/policy/replan.hpp"
#include "advplan/run/config.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;

TEST(ReplanContract, AnythingThrownIsTheCallsFailureInOneBoundedLine) {
  const Scenario sc = corpus_scenario(default_experiment_config(), 0);
  const auto thrown = checked_replan([]() -> ReplanResult { throw std::runtime_error("plugin\nboom"); }, sc, Side::Blue,
                                     "hostile");
  EXPECT_FALSE(thrown.plan);
  EXPECT_EQ(thrown.failure, "hostile: plugin boom");
  const nlohmann::json request = nlohmann::json::object();
  const auto json_throw = checked_replan(
      [&]() -> ReplanResult {
        (void)request.at("nope");  // nlohmann::json::out_of_range, not an advplan::Error
        return {};
      },
      sc, Side::Blue, "hostile");
  EXPECT_FALSE(json_throw.plan);
  EXPECT_THAT(json_throw.failure, HasSubstr("hostile: [json.exception.out_of_range"));

  // 1000 actions on an unknown asset: the first five violations, a count of the rest, at most kReasonChars bytes.
  Plan bad = sc.blue_seed_plans.front();
  bad.actions.clear();
  bad.chain.clear();
  for (int i = 0; i < 1000; ++i) {
    const std::string n = std::to_string(i);  // an lvalue: GCC 12 warns (-Wrestrict) on "x" + std::to_string(i)
    bad.actions.push_back({"x" + n, "no-such-asset-" + n, "strike", Category::fires, "t", 3, {}});
    bad.chain.push_back(bad.actions.back().id);
  }
  const auto invalid = checked_replan([&] { return ReplanResult{bad, "", {}}; }, sc, Side::Blue, "hostile");
  EXPECT_FALSE(invalid.plan);
  EXPECT_LE(invalid.failure.size(), kReasonChars + 3);
  EXPECT_EQ(invalid.failure.find('\n'), std::string::npos);
  EXPECT_THAT(invalid.failure, HasSubstr("hostile returned an invalid revised plan: actions[0].asset"));

  // A long, multi-line failure text of the policy's own.
  const auto own = checked_replan([] { return ReplanResult{std::nullopt, std::string(5000, 'y') + "\nz", {}}; }, sc,
                                  Side::Blue, "hostile");
  EXPECT_LE(own.failure.size(), kReasonChars + 3);
  EXPECT_EQ(own.failure.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace advplan
