// `advplan schema NAME [--scenario ID --side blue|red --config CFG] [--strict]` (docs/LLM.md "Schemas"): prints a
// JSON Schema of what models write, the one the prompts quote and structured output sends.
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/vocabulary.hpp"
#include "advplan/llm/schemas.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "commands.hpp"

namespace advplan::cli {

namespace {

struct SchemaFlags {
  std::string name, scenario, side = "blue", config;
  bool strict = false;
};

nlohmann::json scenario_schema(const SchemaFlags& f) {
  if (f.name != "plan" && f.name != "blue_plan" && f.name != "red_plan")
    throw ConfigError(fmt::format("schema: --scenario applies to plan schemas only, not to '{}'", f.name));
  std::optional<Side> side = f.side == "blue" ? Side::Blue : f.side == "red" ? Side::Red : std::optional<Side>();
  if (f.name != "plan") side = f.name == "red_plan" ? Side::Red : Side::Blue;
  if (!side) throw ConfigError(fmt::format("schema: --side must be blue or red, not '{}'", f.side));
  const ExperimentConfig cfg = f.config.empty() ? default_experiment_config() : load_experiment_config(f.config);
  return llm::scenario_plan_schema(find_scenario(cfg, f.scenario), *side);
}

int print_schema(const SchemaFlags& f) {
  if (f.name == "list") {
    for (const auto& n : llm::schema_names()) std::cout << n << '\n';
    return 0;
  }
  std::optional<nlohmann::json> s = f.scenario.empty() ? llm::named_schema(f.name) : scenario_schema(f);
  if (!s)
    throw ConfigError(fmt::format("schema: no schema is called '{}' (advplan schema list names them)", f.name));
  std::cout << (f.strict ? llm::strict_subset(*s) : *s).dump(2) << '\n';
  return 0;
}

}  // namespace

void add_schema_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("schema", "Print the JSON Schema of a plan, a judge's verdict or a quiz reply");
  auto f = std::make_shared<SchemaFlags>();
  cmd->add_option("NAME", f->name, "plan, blue_plan, red_plan, judge_verdict, quiz_reply, or list")->required();
  cmd->add_option("--scenario", f->scenario, "the per-scenario plan schema of this scenario (e.g. urban-100)");
  cmd->add_option("--side", f->side, "with --scenario and NAME plan: blue or red")->capture_default_str();
  cmd->add_option("--config", f->config, "with --scenario: the experiment config (default: the built-in one)");
  cmd->add_flag("--strict", f->strict, "OpenAI's strict subset of the schema (docs/LLM.md \"Structured output\")");
  cmd->callback([&run, f] { run = [f] { return print_schema(*f); }; });
}

}  // namespace advplan::cli
