#include "advplan/core/random.hpp"

#include <cmath>
#include <numbers>
#include "core/det_math.hpp"

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

namespace {
using U4 = std::uint64_t __attribute__((vector_size(32)));
using D4 = double __attribute__((vector_size(32)));

/// next_u64's xoshiro256** step and uniform()'s conversion on eight lanes, as two vectors of four whose independent
/// dependency chains hide each other's latency. The multiplications by 5 and 9 are written as shifts and adds (the
/// same values modulo 2^64). v = x >> 11 < 2^53 is converted exactly, as static_cast<double>(v) does: its high 27
/// and low 26 bits each through the exponent trick (the bits of 2^52 + h, minus 2^52, exact for h < 2^52), then
/// hi * 2^26 + lo, exact below 2^53. The scaling by 2^-53 is exact, so each lane's value is uniform()'s. The
/// x86-64-v4 clone (AVX-512) has one-instruction rotates; every clone gives the same bits.
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void uniforms_lanes(std::uint64_t (&st)[8][4], std::size_t n,
                                                                      double* out) {
  U4 s0[2], s1[2], s2[2], s3[2];
  for (int g = 0; g < 2; ++g)
    for (int l = 0; l < 4; ++l) {
      s0[g][l] = st[4 * g + l][0];
      s1[g][l] = st[4 * g + l][1];
      s2[g][l] = st[4 * g + l][2];
      s3[g][l] = st[4 * g + l][3];
    }
  const U4 exponent = {0x4330000000000000ULL, 0x4330000000000000ULL, 0x4330000000000000ULL, 0x4330000000000000ULL};
  const U4 low26 = {0x3ffffffULL, 0x3ffffffULL, 0x3ffffffULL, 0x3ffffffULL};
  const D4 two52 = {0x1.0p52, 0x1.0p52, 0x1.0p52, 0x1.0p52};
  const D4 two26 = {0x1.0p26, 0x1.0p26, 0x1.0p26, 0x1.0p26};
  const D4 scale = {0x1.0p-53, 0x1.0p-53, 0x1.0p-53, 0x1.0p-53};
  for (std::size_t i = 0; i < n; ++i)
    for (int g = 0; g < 2; ++g) {
      const U4 x5 = (s1[g] << 2) + s1[g];
      const U4 rot = (x5 << 7) | (x5 >> 57);
      const U4 result = (rot << 3) + rot;
      const U4 t = s1[g] << 17;
      s2[g] ^= s0[g];
      s3[g] ^= s1[g];
      s1[g] ^= s2[g];
      s0[g] ^= s3[g];
      s2[g] ^= t;
      s3[g] = (s3[g] << 45) | (s3[g] >> 19);
      const U4 v = result >> 11;
      const D4 hi = reinterpret_cast<D4>((v >> 26) | exponent) - two52;
      const D4 lo = reinterpret_cast<D4>((v & low26) | exponent) - two52;
      const D4 u = (hi * two26 + lo) * scale;
      __builtin_memcpy(out + 8 * i + 4 * g, &u, sizeof u);
    }
  for (int g = 0; g < 2; ++g)
    for (int l = 0; l < 4; ++l) {
      st[4 * g + l][0] = s0[g][l];
      st[4 * g + l][1] = s1[g][l];
      st[4 * g + l][2] = s2[g][l];
      st[4 * g + l][3] = s3[g][l];
    }
}
}  // namespace

void Rng::uniforms_x8(Rng (&lanes)[8], std::size_t n, double* out) {
  std::uint64_t st[8][4];
  for (int l = 0; l < 8; ++l)
    for (int k = 0; k < 4; ++k) st[l][k] = lanes[l].s_[k];
  uniforms_lanes(st, n, out);
  for (int l = 0; l < 8; ++l)
    for (int k = 0; k < 4; ++k) lanes[l].s_[k] = st[l][k];
}

void Rng::normal_uniforms(double& u1, double& u2) {
  u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  u2 = uniform();
}

double Rng::normal() {
  double u1 = 0, u2 = 0;
  normal_uniforms(u1, u2);
  return std::sqrt(-2.0 * det::log_u35(u1)) * det::cos_u35(2.0 * std::numbers::pi * u2);
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

std::string sample_stream(std::string_view purpose, int sample) {
  std::string s(purpose);
  if (sample != 0) s += "/sample/" + std::to_string(sample);
  return s;
}

}  // namespace advplan
