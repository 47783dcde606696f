// One map tool call, as an agent or a plan sends it: the first line names the tool, the rest is its arguments
// (docs/GEO.md "Tools"). Never throws; a failure is one line of valid UTF-8 of bounded length, and a success is
// a JSON object.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/tools.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  static const geo::GeoMap map = geo::generate_map(fuzz::scenario());
  const std::string input = fuzz::text(data, size);
  const auto nl = input.find('\n');
  const std::string name = nl == std::string::npos ? input : input.substr(0, nl);
  const std::string args = nl == std::string::npos ? std::string() : input.substr(nl + 1);
  const geo::ToolResult r = geo::call_tool(map, name, args);
  if (r.ok) {
    if (!nlohmann::json::parse(r.json, nullptr, false).is_object()) std::abort();
  } else if (r.error.empty() || !untrusted::valid_utf8(r.error) || r.error.size() > 1000 || r.error.find('\n') != std::string::npos) {
    std::abort();
  }
  return 0;
}
