// `advplan list [CONFIG] [--section policies|templates|conditions]`: what a run can name. The registered BLUE
// and RED policies with their parameters, the built-in templates, and the conditions a config runs.
#include <fmt/format.h>

#include "advplan/run/config.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace {

std::string describe_params(const PolicyInfo& info) {
  std::string out;
  for (const auto& p : info.params)
    out += fmt::format("\n      {} = {} in [{}, {}]: {}", p.name, p.default_value, p.lo, p.hi, p.description);
  return out;
}

template <typename Registry>
void list_policies(const Registry& reg, std::string_view side) {
  fmt::print("{} policies:\n", side);
  for (const auto& name : reg.names()) {
    const PolicyInfo& info = reg.info(name, side);
    std::string name_shown = info.samples_k ? fmt::format("{}@k (default k {})", name, info.default_k) : name;
    if (!info.argument.empty()) name_shown = name + ":" + info.argument;
    std::string traces;
    for (const auto& t : info.traces) traces += (traces.empty() ? "" : ", ") + t.name;
    fmt::print("  {}{}: {}{}{}\n", name_shown, info.thread_safety == ThreadSafety::none ? " [serialised]" : "",
               info.description, traces.empty() ? "" : fmt::format(" (writes {})", traces), describe_params(info));
  }
}

void list_templates() {
  fmt::print("built-in templates (configs/templates/*.yaml):\n");
  for (const auto& id : io::embedded_template_ids()) {
    const auto path = io::embedded_template_path(id);
    const ScenarioTemplate t = parse_template(std::string(*io::embedded_file(path)), "<built-in>/" + path);
    fmt::print("  {}: {} ({} domain, {} terrain families, {} places)\n", t.id, t.name, t.domain, t.terrains.size(),
               t.places.size());
  }
}

void list_conditions(const ExperimentConfig& cfg) {
  fmt::print("conditions of {} ({} scenarios):\n", cfg.source,
             cfg.templates.size() * static_cast<std::size_t>(cfg.seed_to - cfg.seed_from + 1));
  for (const auto& c : run_conditions(cfg))
    fmt::print("  {}: BLUE {} against RED {} [{}]\n", c.label, c.blue, c.red, c.group);
}

}  // namespace

void add_list_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("list", "List the registered policies, the built-in templates and a config's conditions");
  auto config = std::make_shared<std::string>();
  auto section = std::make_shared<std::string>("all");
  cmd->add_option("CONFIG", *config, "experiment config whose conditions to list (default: the built-in paper config)");
  cmd->add_option("--section", *section, "what to list")
      ->check(CLI::IsMember({"all", "policies", "templates", "conditions"}))
      ->capture_default_str();
  cmd->callback([&run, config, section] {
    run = [config, section] {
      const bool all = *section == "all";
      if (all || *section == "policies") {
        list_policies(BlueRegistry::instance(), "BLUE");
        list_policies(RedRegistry::instance(), "RED");
      }
      if (all || *section == "templates") list_templates();
      if (all || *section == "conditions")
        list_conditions(config->empty() ? default_experiment_config() : load_experiment_config(*config));
      return 0;
    };
  });
}

}  // namespace advplan::cli
