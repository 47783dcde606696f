#pragma once
// Plans on the map (`terrain: geo`, docs/GEO.md "Plans on the map"): each movement action of a surface asset
// binds to a route tool call (the plan's own route/travel_time call for that asset and target, else a route
// that avoids the other side's threat zones), the plan's other map tool calls are executed, and the moves'
// length, time and exposure adjust e, r and the simulator's readiness (docs/METRICS.md "Geospatial terms").
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/sim/engagement.hpp"

namespace advplan {
namespace geo {
struct GeoMap;
}

/// The trace file of the moves (docs/TRACES.md "geo_moves.csv").
inline constexpr const char* kGeoMovesFile = "geo_moves.csv";
/// The engagement wargame's trace files (docs/TRACES.md).
inline constexpr const char* kEngagementsFile = "engagements.csv";
inline constexpr const char* kReplicationsFile = "replications.csv";
inline constexpr const char* kReplansFile = "replans.csv";  ///< replanning calls (docs/POLICIES.md "6. Replanning")

struct GeoMove {
  std::string action_id, asset, target;
  std::string tool;    ///< "route (plan)", "travel_time (plan)", "route (bound)", or a map tool a plan called
  std::string status;  ///< ok, infeasible (no route avoids the threats), unbound (target not on the map), failed
  double length_km = -1, hours = -1, exposure = -1;  ///< -1: not applicable
  std::string reason;
};

struct GeoPlanEffect {
  std::vector<GeoMove> moves;  ///< movements, then the plan's other map tool calls
  int bound = 0;               ///< movements bound to a route (ok or infeasible)
  int infeasible = 0;
  double mean_exposure = 0;    ///< x: mean share of a bound move's route inside the other side's threat zones
  double mean_delay = 0;       ///< d: mean of min(1, hours / time window) over bound moves
  double readiness = 1;        ///< 1 - 0.3 d
};

GeoPlanEffect geo_plan_effect(const geo::GeoMap& m, const Plan& p, Side side);
/// e' = e (1 - .5 f), f = infeasible / bound; r' = r + .5 x (1 - r); q' = q + w_e (e' - e) - w_r (r' - r).
QualityParts apply_geo(const QualityParts& q, const GeoPlanEffect& g, const QualityWeights& w);
/// The bound moves (ok or infeasible) as the engagement wargame takes them: each route's hours (< 0 when no route
/// reaches the target) and exposure, within the map's time window (docs/METRICS.md "Engagement wargame").
PlanOnMap plan_on_map(const geo::GeoMap& m, const GeoPlanEffect& g);
/// Rows of geo_moves.csv (schema::geo_moves()).
void append_geo_rows(std::vector<std::vector<std::string>>& rows, const std::string& scenario_id,
                     const std::string& condition, Side side, const std::string& plan_id, const GeoPlanEffect& g);
/// maps/<scenario>.geojson for every scenario of the corpus, into `run_dir`.
struct ExperimentConfig;
void write_run_maps(const ExperimentConfig& cfg, const std::string& run_dir);

}  // namespace advplan
