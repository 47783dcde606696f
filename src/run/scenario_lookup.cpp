#include "advplan/run/scenario_lookup.hpp"

#include <fmt/format.h>

#include <charconv>

#include "advplan/core/error.hpp"

namespace advplan {

Scenario find_scenario(const ExperimentConfig& cfg, const std::string& id) {
  const auto dash = id.rfind('-');
  if (dash != std::string::npos) {
    const std::string tpl = id.substr(0, dash);
    std::uint64_t seed = 0;
    const char* b = id.data() + dash + 1;
    const char* e = id.data() + id.size();
    auto [ptr, ec] = std::from_chars(b, e, seed);
    if (ec == std::errc() && ptr == e && seed >= cfg.seed_from && seed <= cfg.seed_to)
      for (const auto& t : cfg.templates)
        if (t.id == tpl) return generate_scenario(t, seed, GeneratorOptions{cfg.framing_mode, std::nullopt});
  }
  std::string templates;
  for (const auto& t : cfg.templates) templates += (templates.empty() ? "" : ", ") + t.id;
  throw ConfigError(fmt::format("{}: scenario '{}' is not in the corpus (ids are <template>-<seed> with template in "
                                "{{{}}} and seed in {}..{})",
                                cfg.source, id, templates, cfg.seed_from, cfg.seed_to));
}

}  // namespace advplan
