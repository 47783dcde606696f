#include "advplan/metrics/coherence.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "advplan/metrics/quality.hpp"
#include "core/thread_buffer.hpp"
#include "core/det_math.hpp"

namespace advplan {

std::string_view to_string(CoherencePart p) {
  switch (p) {
    case CoherencePart::objective_clarity: return "objective_clarity";
    case CoherencePart::information_preparation: return "information_preparation";
    case CoherencePart::resource_balance: return "resource_balance";
    case CoherencePart::sustainment: return "sustainment";
    case CoherencePart::risk_mitigation: return "risk_mitigation";
    case CoherencePart::tempo_sequencing: return "tempo_sequencing";
  }
  return "?";
}

namespace {

/// ASCII case folding (what std::tolower does in the "C" locale advplan runs in), inline and locale-free, so an
/// embedding process's locale (Python sets LC_CTYPE) cannot change a score.
char lower_char(char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; }

/// Whether `needle` occurs in `haystack`, ASCII case-insensitively, without building lowered copies.
bool contains_icase(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > haystack.size()) return false;
  // Candidate starts are found by the first byte in either case (two comparisons per position); the rest is
  // compared only there.
  const char lo = lower_char(needle[0]);
  const char up = lo >= 'a' && lo <= 'z' ? static_cast<char>(lo - 'a' + 'A') : lo;
  auto match_at = [&](std::size_t i) {
    std::size_t k = 1;
    while (k < needle.size() && lower_char(haystack[i + k]) == lower_char(needle[k])) ++k;
    return k == needle.size();
  };
  const std::size_t starts = haystack.size() - needle.size() + 1;  // candidate starts 0 .. starts - 1
  std::size_t i = 0;
#if defined(__SSE2__)
  // Sixteen candidate starts per step: the positions holding the first byte in either case, as a bit mask.
  const __m128i vlo = _mm_set1_epi8(lo), vup = _mm_set1_epi8(up);
  for (; i + 16 <= starts; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(haystack.data() + i));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, vlo), _mm_cmpeq_epi8(v, vup))));
    for (; mask != 0; mask &= mask - 1)
      if (match_at(i + static_cast<std::size_t>(__builtin_ctz(mask)))) return true;
  }
#endif
  for (; i < starts; ++i)
    if ((haystack[i] == lo || haystack[i] == up) && match_at(i)) return true;
  return false;
}

/// Whitespace-separated words (as `istream >> std::string` counts them).
std::size_t word_count(std::string_view s) {
  std::size_t words = 0;
  bool in_word = false;
  for (char ch : s) {
    // The "C" locale's white space (what `>>` splits on in the classic locale), independent of any locale.
    const bool space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

/// Whether two placed actions use the same asset: a pointer comparison when both assets are known (find_asset
/// is a function of the id, so equal pointers are equal ids), the ids otherwise.
bool same_asset(const PlacedAction& x, const PlacedAction& y) {
  return x.asset && y.asset ? x.asset == y.asset : x.action->asset == y.action->asset;
}

/// (length in 4..30 words ? 1 : .5 when non-empty : 0) + (names the target of some action) + (share of used
/// assets with a role), over 3. No allocation: targets and assets are deduplicated by a scan (plans are short).
double objective_clarity(const Plan& plan, const std::vector<PlacedAction>& layout) {
  const std::size_t words = word_count(plan.objective);
  const double len_ok = words == 0 ? 0.0 : (words >= 4 && words <= 30 ? 1.0 : 0.5);
  double names_target = 0;
  for (std::size_t i = 0; i < layout.size() && names_target == 0; ++i) {
    const std::string& t = layout[i].action->target;
    if (t.empty()) continue;
    bool tried = false;  // each distinct target is looked for once
    for (std::size_t j = 0; j < i && !tried; ++j) tried = layout[j].action->target == t;
    if (!tried && contains_icase(plan.objective, t)) names_target = 1;
  }
  double used = 0, with_role = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) seen = same_asset(layout[j], layout[i]);
    if (seen) continue;
    used += 1;
    auto it = plan.roles.find(layout[i].action->asset);
    with_role += it != plan.roles.end() && !it->second.empty() ? 1.0 : 0.0;
  }
  const double role_cover = used == 0 ? 0.0 : with_role / used;
  return (len_ok + names_target + role_cover) / 3.0;
}

/// Share of fires and movement actions with an information action strictly earlier; 1 when there are none.
double information_preparation(const std::vector<PlacedAction>& layout) {
  double first_info = INFINITY;
  for (const auto& a : layout)
    if (a.action->category == Category::information) first_info = std::min(first_info, a.position);
  std::size_t exec = 0, prepared = 0;
  for (const auto& a : layout) {
    if (a.action->category != Category::fires && a.action->category != Category::movement) continue;
    ++exec;
    if (first_info < a.position) ++prepared;
  }
  return exec == 0 ? 1.0 : static_cast<double>(prepared) / static_cast<double>(exec);
}

/// Normalised entropy of the load (expected actions) per asset, over ln(min(#actions, #side assets));
/// 1 when that minimum is 1.
double resource_balance(const Plan& plan, const std::vector<PlacedAction>& layout, const Scenario& sc) {
  // Load per asset in layout order; the entropy is summed in asset-id order (as a std::map would iterate), so
  // the bits are those of the map-based formula, from a per-thread buffer instead of map nodes.
  thread_local std::vector<std::pair<const PlacedAction*, double>> tls_load;
  auto& load = detail::bound(tls_load);  // first action of each asset, load (src/core/thread_buffer.hpp)
  load.clear();
  double total = 0;
  for (const auto& a : layout) {
    auto it = std::find_if(load.begin(), load.end(), [&](const auto& e) { return same_asset(*e.first, a); });
    if (it == load.end()) load.emplace_back(&a, a.weight);
    else it->second += a.weight;
    total += a.weight;
  }
  std::size_t side_assets = 0;
  for (const auto& as : sc.assets) side_assets += as.side == plan.side ? 1 : 0;
  const std::size_t n = std::min(layout.size(), side_assets);
  if (n <= 1 || total <= 0) return 1.0;
  std::sort(load.begin(), load.end(),
            [](const auto& x, const auto& y) { return x.first->action->asset < y.first->action->asset; });
  double h = 0;
  for (const auto& [k, l] : load) {
    const double p = l / total;
    if (p > 0) h -= p * det::log(p);
  }
  return std::clamp(h / det::log(static_cast<double>(n)), 0.0, 1.0);
}

/// min(1, sustainment actions / ceil(actions / 4)).
double sustainment(const std::vector<PlacedAction>& layout) {
  if (layout.empty()) return 0.0;
  std::size_t s = 0;
  for (const auto& a : layout) s += a.action->category == Category::sustainment ? 1 : 0;
  const double need = std::ceil(static_cast<double>(layout.size()) / 4.0);
  return std::min(1.0, static_cast<double>(s) / need);
}

/// Mean coverage of the exposed actions (is_exposed); 1 when none is exposed.
double risk_mitigation(const std::vector<PlacedAction>& layout, const Scenario& sc, std::span<const double> cov) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (!is_exposed(layout[i].action->category, sc)) continue;
    sum += cov[i];
    ++n;
  }
  return n == 0 ? 1.0 : sum / static_cast<double>(n);
}

/// Phase 0 (start verb or information/command), 2 (end verb), 1 otherwise; share of adjacent chain pairs whose
/// phase does not decrease; 1 for a one-step chain.
int phase(const Action& a) {
  if (is_end_verb(a.verb)) return 2;
  if (is_start_verb(a.verb) || a.category == Category::information || a.category == Category::command) return 0;
  return 1;
}
/// Over the chain's steps that name an action: the layout's chain entries, which it lists first, in chain order.
double tempo_sequencing(const std::vector<PlacedAction>& layout) {
  std::size_t steps = 0, ok = 0;
  int prev = 0;
  for (const auto& a : layout) {
    if (!a.in_chain) break;
    const int ph = phase(*a.action);
    if (steps > 0 && prev <= ph) ++ok;
    prev = ph;
    ++steps;
  }
  if (steps <= 1) return 1.0;
  return static_cast<double>(ok) / static_cast<double>(steps - 1);
}

}  // namespace

CoherenceParts coherence(const Plan& plan, const std::vector<PlacedAction>& layout, const Scenario& sc) {
  thread_local std::vector<double> tls_cov;
  std::vector<double>& cov = detail::bound(tls_cov);
  coverage_into(layout, cov);
  return coherence(plan, layout, sc, cov);
}

CoherenceParts coherence(const Plan& plan, const std::vector<PlacedAction>& layout, const Scenario& sc,
                         std::span<const double> cov) {
  CoherenceParts c;
  c.part[0] = objective_clarity(plan, layout);
  c.part[1] = information_preparation(layout);
  c.part[2] = resource_balance(plan, layout, sc);
  c.part[3] = sustainment(layout);
  c.part[4] = risk_mitigation(layout, sc, cov);
  c.part[5] = tempo_sequencing(layout);
  double s = 0;
  for (double v : c.part) s += v;
  c.D = s / static_cast<double>(kNumCoherenceParts);
  return c;
}

CoherenceParts coherence(const Plan& plan, const Scenario& sc) { return coherence(plan, layout_plan(plan, sc), sc); }

double weighted_coherence(const CoherenceParts& parts, const std::array<double, kNumCoherenceParts>& w) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < kNumCoherenceParts; ++i) {
    num += w[i] * parts.part[i];
    den += w[i];
  }
  return den > 0 ? num / den : 0.0;
}

}  // namespace advplan
