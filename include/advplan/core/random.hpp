#pragma once
// Keyed random streams (docs/ARCHITECTURE.md "Determinism"). Every draw comes from a stream derived from
// (run seed, scenario id, purpose, index) by SplitMix64 over an FNV-1a hash; no generator is shared or global.
// The generator is xoshiro256**; distributions are written here, not taken from <random>, so the same key gives
// the same numbers with any standard library.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace advplan {

std::uint64_t splitmix64(std::uint64_t& state);
/// FNV-1a over bytes, continued from `h`.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL);

/// The purpose of sample `sample`'s stream (config `samples`): `purpose` itself for sample 0, so a run of one
/// sample draws what it always drew, else "<purpose>/sample/<s>" (docs/ARCHITECTURE.md "Determinism").
std::string sample_stream(std::string_view purpose, int sample);

/// A per-task generator. Copyable on purpose (a copy replays the same stream); never share one across tasks.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  /// The stream for (seed, scenario, purpose, index).
  static Rng keyed(std::uint64_t seed, std::string_view scenario, std::string_view purpose, std::uint64_t index = 0);
  /// keyed() in two steps, for loops over the index: the hash of (seed, scenario, purpose) once, then
  /// keyed_at(prefix, i) == keyed(seed, scenario, purpose, i) for each i, without hashing the strings again.
  static std::uint64_t key_prefix(std::uint64_t seed, std::string_view scenario, std::string_view purpose);
  static Rng keyed_at(std::uint64_t prefix, std::uint64_t index);
  /// A child stream, keyed on this stream's identity and not on how much of it was consumed.
  Rng child(std::string_view purpose, std::uint64_t index = 0) const;

  /// xoshiro256** (inline: the bootstrap and the samplers draw millions of numbers).
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [lo, hi] (inclusive), unbiased: Lemire's nearly divisionless method, one
  /// multiplication in the common case.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<std::int64_t>(next_u64());
    __extension__ using u128 = unsigned __int128;
    u128 m = static_cast<u128>(next_u64()) * range;
    auto low = static_cast<std::uint64_t>(m);
    if (low < range) {
      const std::uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        m = static_cast<u128>(next_u64()) * range;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return lo + static_cast<std::int64_t>(m >> 64);
  }
  /// Eight streams in lockstep: out[8 * i + l] = lanes[l].uniform() for i in [0, n), each lane left where n of its
  /// own uniform() calls would leave it, bit for bit (the simulator's noise: one stream per replication, eight
  /// consecutive replications drawn in vector lanes).
  static void uniforms_x8(Rng (&lanes)[8], std::size_t n, double* out);
  /// Standard normal (Box-Muller, no caching so a copy replays exactly).
  double normal();
  /// The two uniforms normal() transforms, drawn as it draws them (u1 in (0, 1), u2 in [0, 1)): a caller that
  /// transforms several at once (det::box_muller_n) draws them here, in the same order.
  void normal_uniforms(double& u1, double& u2);
  bool bernoulli(double p) { return uniform() < p; }
  /// Index drawn with probability proportional to weights (all >= 0; uniform when they sum to 0).
  std::size_t weighted_index(std::span<const double> weights);
  /// Index of a uniformly drawn element of a sequence of n > 0 elements: exactly one uniform_int(0, n - 1).
  std::size_t pick_index(std::size_t n) {
    if (n == 0) throw std::out_of_range("Rng::pick_index: cannot pick from an empty sequence");
    return static_cast<std::size_t>(uniform_int(0, static_cast<std::int64_t>(n) - 1));
  }
  /// A uniformly drawn element of a non-empty indexable container (vector, array, span), by reference; one
  /// pick_index draw. Every "random element of" in the library goes through here, so each consumes the stream
  /// the same way.
  template <typename Container>
  auto& pick(Container& c) {
    return c[pick_index(c.size())];
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  std::uint64_t key_;
};

}  // namespace advplan
