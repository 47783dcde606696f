#include "advplan/core/random.hpp"

#include <cmath>
#include <numbers>

namespace advplan {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

namespace {
std::uint64_t mix_u64(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffU;
    h *= 0x100000001b3ULL;
  }
  return h;
}
}  // namespace

Rng::Rng(std::uint64_t seed) : key_(seed) {
  std::uint64_t st = seed;
  for (auto& s : s_) s = splitmix64(st);
}

std::uint64_t Rng::key_prefix(std::uint64_t seed, std::string_view scenario, std::string_view purpose) {
  std::uint64_t h = mix_u64(0xcbf29ce484222325ULL, seed);
  h = fnv1a(scenario, h);
  h = fnv1a("\x1f", h);  // separator so ("ab","c") != ("a","bc")
  return fnv1a(purpose, h);
}

Rng Rng::keyed_at(std::uint64_t prefix, std::uint64_t index) { return Rng(mix_u64(prefix, index)); }

Rng Rng::keyed(std::uint64_t seed, std::string_view scenario, std::string_view purpose, std::uint64_t index) {
  return keyed_at(key_prefix(seed, scenario, purpose), index);
}

Rng Rng::child(std::string_view purpose, std::uint64_t index) const {
  std::uint64_t h = mix_u64(0x84222325cbf29ce4ULL, key_);
  h = fnv1a(purpose, h);
  h = mix_u64(h, index);
  return Rng(h);
}

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::size_t Rng::weighted_index(std::span<const double> weights) {
  if (weights.empty()) return 0;
  double total = 0;
  for (double w : weights) total += (w > 0 ? w : 0);
  if (!(total > 0)) return pick_index(weights.size());
  double x = uniform() * total;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i] > 0 ? weights[i] : 0;
    if (x < w) return i;
    x -= w;
  }
  // Floating-point remainder: the last positive weight.
  for (std::size_t i = weights.size(); i-- > 0;)
    if (weights[i] > 0) return i;
  return 0;
}

}  // namespace advplan
