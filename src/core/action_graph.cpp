#include "advplan/core/action_graph.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <unordered_map>

namespace advplan {

ActionGraph build_action_graph(const Plan& plan) {
  ActionGraph g;
  g.graph = ActionGraphBase(plan.actions.size());
  std::unordered_map<std::string, std::size_t> vertex;
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    g.ids.push_back(plan.actions[i].id);
    vertex.emplace(plan.actions[i].id, i);  // first definition wins; duplicates are a violation
  }
  auto v = [&](const std::string& id) -> long {
    auto it = vertex.find(id);
    return it == vertex.end() ? -1 : static_cast<long>(it->second);
  };
  auto add = [&](long a, long b, EdgeKind k) {
    if (a >= 0 && b >= 0) boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b), EdgeInfo{k}, g.graph);
  };
  for (std::size_t i = 0; i + 1 < plan.chain.size(); ++i) add(v(plan.chain[i]), v(plan.chain[i + 1]), EdgeKind::sequence);
  for (const auto& br : plan.branches) {
    long at = v(br.at);
    long after = -1;
    for (std::size_t i = 0; i < plan.chain.size(); ++i)
      if (plan.chain[i] == br.at && i + 1 < plan.chain.size()) after = v(plan.chain[i + 1]);
    for (const auto& opt : br.options) {
      if (opt.empty()) continue;
      add(at, v(opt.front()), EdgeKind::branch);
      for (std::size_t i = 0; i + 1 < opt.size(); ++i) add(v(opt[i]), v(opt[i + 1]), EdgeKind::sequence);
      add(v(opt.back()), after, EdgeKind::rejoin);
    }
  }
  return g;
}

std::vector<std::size_t> cycle_vertices(const ActionGraph& g) {
  const std::size_t n = boost::num_vertices(g.graph);
  std::vector<std::size_t> comp(n);
  const auto ncomp = boost::strong_components(
      g.graph, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g.graph)));
  std::vector<std::size_t> size(static_cast<std::size_t>(ncomp), 0);
  for (auto c : comp) ++size[c];
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    bool self_loop = boost::edge(i, i, g.graph).second;
    if (size[comp[i]] > 1 || self_loop) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> unreachable_from(const ActionGraph& g, std::size_t root) {
  const std::size_t n = boost::num_vertices(g.graph);
  std::vector<boost::default_color_type> color(n, boost::white_color);
  if (root < n) {
    boost::breadth_first_search(
        g.graph, root,
        boost::color_map(boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g.graph))));
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i)
    if (color[i] == boost::white_color) out.push_back(i);
  return out;
}

std::vector<std::size_t> topological_order(const ActionGraph& g) {
  std::vector<std::size_t> rev;
  try {
    boost::topological_sort(g.graph, std::back_inserter(rev));
  } catch (const boost::not_a_dag&) {
    return {};
  }
  return {rev.rbegin(), rev.rend()};
}

}  // namespace advplan
