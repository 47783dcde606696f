// A user's GeoJSON map (docs/GEO.md "Bring your own map"): parse_user_map, then, for a map it accepts, the
// questions on it and a scenario overlaid on it. Only advplan::Error (the one-sentence errors) may be thrown.
#include "advplan/core/error.hpp"
#include "advplan/geo/questions.hpp"
#include "advplan/geo/user_map.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  try {
    const geo::GeoMap m = geo::parse_user_map(fuzz::text(data, size), "fuzz.geojson");
    (void)geo::generate_questions(m);
    if (m.net.num_nodes() > 0) (void)geo::generate_questions(geo::overlay_scenario(fuzz::scenario(), m));
  } catch (const Error&) {
  }
  return 0;
}
