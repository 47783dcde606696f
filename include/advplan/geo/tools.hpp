#pragma once
// The map tools (docs/GEO.md "Tools"): a registry of named tools with typed JSON arguments and results. A call
// is (name, arguments as JSON text); a malformed call (bad JSON, unknown tool or argument, wrong type, unknown
// feature, oversized) is a failure with a one-sentence reason, never an exception.
#include <string>
#include <string_view>
#include <vector>

#include "advplan/geo/map.hpp"

namespace advplan::geo {

struct ToolParam {
  std::string name;
  std::string type;  ///< "string", "number" or "string[]"
  bool required = false;
  std::string description;
};

struct ToolSpec {
  std::string name;
  std::string description;
  std::vector<ToolParam> params;
};

/// Every tool, in a fixed order.
const std::vector<ToolSpec>& tool_specs();
const ToolSpec* find_tool(std::string_view name);
/// The registry as a JSON array of {name, description, parameters: JSON Schema object} (what agents see).
std::string tool_specs_json();

/// Arguments longer than this are refused before parsing.
inline constexpr std::size_t kMaxToolArgsBytes = 4096;
/// The most polygons one `avoid` list may name.
inline constexpr std::size_t kMaxAvoid = 64;

struct ToolResult {
  bool ok = false;
  std::string json;   ///< the result object, compact JSON (ok)
  std::string error;  ///< one sentence (not ok)
};

/// Executes one call on a map. Never throws on bad input.
ToolResult call_tool(const GeoMap& m, std::string_view name, std::string_view args_json);

/// The polygons an `avoid` entry names: a threat or obstacle id, or "RED"/"BLUE" for every threat zone of that
/// side. Empty with `error` set when the entry names nothing.
std::vector<const Feature*> resolve_avoid(const GeoMap& m, std::string_view entry, std::string& error);

/// Travel speed (km/h) of a mover starting at `from`: the network speed times the asset's mobility (at least
/// 0.1), or the network speed for a feature that is not an asset.
double travel_speed(const GeoMap& m, const Feature& from);

/// Length (km) of the polyline through `nodes` that lies inside the polygons, each edge capped at its length.
double exposure_km(const GeoMap& m, const std::vector<int>& nodes, const std::vector<Polygon>& zones);

}  // namespace advplan::geo
