#pragma once
// The action graph on Boost.Graph (docs/ARCHITECTURE.md "Data model"): one vertex per action, sequence edges along the chain and
// inside each option, a branch edge from `at` to the first action of each option, and a rejoin edge from the
// last action of each option to the chain step after `at`.
#include <boost/graph/adjacency_list.hpp>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"

namespace advplan {

enum class EdgeKind { sequence, branch, rejoin };

struct EdgeInfo {
  EdgeKind kind = EdgeKind::sequence;
};

using ActionGraphBase =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, EdgeInfo>;

struct ActionGraph {
  ActionGraphBase graph;
  std::vector<std::string> ids;  ///< vertex -> action id (index into plan.actions)
};

/// Builds the graph over plan.actions; references to unknown ids are skipped (validation reports them).
ActionGraph build_action_graph(const Plan& plan);

/// Vertices on some cycle (empty when acyclic).
std::vector<std::size_t> cycle_vertices(const ActionGraph& g);
/// Vertices not reachable from `root`.
std::vector<std::size_t> unreachable_from(const ActionGraph& g, std::size_t root);
/// A topological order, or empty when the graph has a cycle.
std::vector<std::size_t> topological_order(const ActionGraph& g);

}  // namespace advplan
