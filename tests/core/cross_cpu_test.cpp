// The same run on different CPUs (docs/DECISIONS.md "Same bits on every CPU"): the CLI runs the built-in paper
// config natively and under QEMU's user-mode emulator as a baseline x86-64 CPU (qemu64: no SSE4, AVX or FMA, so the
// library's target clones take their default paths and glibc's libm its SSE2 builds) and as a Haswell (AVX2 and FMA:
// the AVX2 clones and libm's FMA builds); every file of the three runs is byte-identical. With glibc's exp, log and
// cos instead of src/core/det_math.hpp the baseline run's offline-LLM prompts differed in the last bit of a
// requirement weight, and with it per_scenario.csv. The scenario corpus is compared at full precision too.
// Also: the deterministic functions against glibc's, within their documented error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstring>
#include <functional>
#include <numbers>
#include <vector>
#include <set>
#include <sstream>
#include <limits>

#include <Eigen/Core>
#include <Eigen/LU>

#include "advplan/core/random.hpp"
#include "core/det_math.hpp"
#include "sim/scaled_exp.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using testing::TempDir;
using testing::quote;
using testing::kBinary;

/// "" when qemu-x86_64 can run the CLI; else why not.
std::string qemu_skip_reason(const TempDir& dir) {
  if (testing::run_command("command -v qemu-x86_64", dir).status != 0)
    return "qemu-x86_64 is not installed (Debian qemu-user; scripts/setup.sh installs it)";
  return "";
}

std::string under(const std::string& cpu) { return cpu.empty() ? "" : "qemu-x86_64 -cpu " + cpu + " "; }

/// `advplan run ARGS --out DIR --threads 2` natively, as a baseline x86-64 (qemu64) and as a Haswell; every file of
/// the emulated runs must be the native run's.
void expect_the_same_run_on_every_cpu(const std::string& args, const TempDir& dir) {
  std::string reference;
  for (const std::string cpu : {"", "qemu64", "Haswell"}) {
    const std::string label = cpu.empty() ? "native" : cpu, out = dir / ("run-" + label);
    const auto x = testing::run_command(under(cpu) + quote(kBinary) + " run " + args + " --out " + quote(out) +
                                            " --threads 2",
                                        dir);
    ASSERT_EQ(x.status, 0) << label << ": " << x.err;
    if (reference.empty())
      reference = out;
    else
      EXPECT_EQ(testing::compare_runs(reference, out), "") << "run " << args << " on " << label
                                                           << " differs from the native one";
  }
}

// ctest: slow
TEST(CrossCpu, ThePaperRunIsByteIdenticalOnABaselineAnAvx2AndThisCpu) {
  TempDir dir("cross-cpu");
  if (const auto why = qemu_skip_reason(dir); !why.empty()) GTEST_SKIP() << why;
  expect_the_same_run_on_every_cpu("", dir);  // the built-in paper config
}

// The paths the paper config leaves out: maps and map geometry (terrain: geo), an odd number of replications (the
// simulator's last rate), the applied framing. 30 scenarios.
// ctest: slow
TEST(CrossCpu, AGeoRunWithAnOddReplicationCountAndAppliedFramingIsByteIdenticalToo) {
  TempDir dir("cross-cpu-geo");
  if (const auto why = qemu_skip_reason(dir); !why.empty()) GTEST_SKIP() << why;
  const std::string source = ADVPLAN_SOURCE_DIR, config = dir / "geo.yaml";
  testing::write_file(config, testing::edited_text(source + "/configs/experiments/geo.yaml",
                                                   {{"seeds: [100, 129]", "seeds: [100, 105]"},
                                                    {"replications: 200", "replications: 33"},
                                                    {"framing_mode: metadata", "framing_mode: applied"}}));
  expect_the_same_run_on_every_cpu(quote(config), dir);
}

TEST(CrossCpu, TheCorpusAtFullPrecisionIsTheSameOnABaselineCpu) {
  TempDir dir("cross-cpu-corpus");
  if (const auto why = qemu_skip_reason(dir); !why.empty()) GTEST_SKIP() << why;
  const auto native = testing::run_command(quote(kBinary) + " scenarios", dir);
  ASSERT_EQ(native.status, 0) << native.err;
  const auto baseline = testing::run_command(under("qemu64") + quote(kBinary) + " scenarios", dir);
  ASSERT_EQ(baseline.status, 0) << baseline.err;
  ASSERT_GT(native.out.size(), 100000u);
  EXPECT_TRUE(native.out == baseline.out) << "the generated corpus differs between this CPU and a baseline x86-64";
}

/// The distance of two finite doubles in units in the last place.
double ulps(double a, double b) {
  if (a == b) return 0;
  const double scale = std::nextafter(std::abs(b), std::numeric_limits<double>::infinity()) - std::abs(b);
  return std::abs(a - b) / scale;
}

TEST(DetMath, AgreesWithTheCLibraryWithinTheirErrorsAndKeepsSpecialValues) {
  // SLEEF's u10 functions are within 1 ulp of the exact value, glibc's within about 1 ulp as well.
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x = -30.0 + 60.0 * i / 20000.0 + 1e-7 * (i % 7);
    worst = std::max(worst, ulps(det::exp(x), std::exp(x)));
    worst = std::max(worst, ulps(det::cos(x), std::cos(x)) * (std::abs(std::cos(x)) > 1e-3));
    worst = std::max(worst, ulps(det::sin(x), std::sin(x)) * (std::abs(std::sin(x)) > 1e-3));
    const double p = std::abs(x) + 1e-3;
    worst = std::max(worst, ulps(det::log(p), std::log(p)) * (std::abs(p - 1.0) > 1e-3));
    worst = std::max(worst, ulps(det::log2(p), std::log2(p)) * (std::abs(p - 1.0) > 1e-3));
    worst = std::max(worst, ulps(det::log1p(p), std::log1p(p)));
    worst = std::max(worst, ulps(det::expm1(x / 10), std::expm1(x / 10)));
    worst = std::max(worst, ulps(det::hypot(x, p), std::hypot(x, p)));
    const double u = std::sin(x);
    worst = std::max(worst, ulps(det::asin(u), std::asin(u)) * (std::abs(u) > 1e-3));
  }
  EXPECT_LE(worst, 2.0);
  double worst35 = 0;  // the 3.5-ulp pair of Rng::normal
  for (int i = 1; i <= 20000; ++i) {
    const double u = i / 20001.0;
    worst35 = std::max(worst35, ulps(det::log_u35(u), std::log(u)) * (std::abs(u - 1.0) > 1e-3));
    const double a = 2.0 * M_PI * u;
    worst35 = std::max(worst35, ulps(det::cos_u35(a), std::cos(a)) * (std::abs(std::cos(a)) > 1e-3));
  }
  EXPECT_LE(worst35, 4.5);
  EXPECT_EQ(det::exp(0.0), 1.0);
  EXPECT_EQ(det::log(1.0), 0.0);
  EXPECT_EQ(det::log2(8.0), 3.0);
  EXPECT_EQ(det::cos(0.0), 1.0);
  EXPECT_EQ(det::hypot(3.0, 4.0), 5.0);
  EXPECT_EQ(det::exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(det::log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(det::log(-1.0)));
  EXPECT_EQ(det::expm1(0.0), 0.0);
  EXPECT_EQ(det::log1p(0.0), 0.0);
}

/// One vector path of a det:: function against the scalar results `want` (want[i] for element i): all elements at
/// once, then every tail length 0..11 from many offsets (a tail is computed apart from the full vectors), with a
/// sentinel past the end. `run(at, n, out)` computes elements at .. at + n - 1 into out.
void expect_the_scalar_bits_at_every_length(const char* name, const std::vector<double>& want,
                                            const std::function<void(std::size_t, std::size_t, double*)>& run) {
  auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  std::vector<double> out(want.size());
  run(0, want.size(), out.data());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < want.size(); ++i) differ += same_bits(out[i], want[i]) ? 0 : 1;
  EXPECT_EQ(differ, 0u) << name;
  std::size_t tail_differ = 0, overrun = 0;
  for (std::size_t at = 0; at + 12 < 40000; at += 13)
    for (std::size_t n = 0; n <= 11; ++n) {
      double o[16];
      std::fill(std::begin(o), std::end(o), 42.0);
      run(at, n, o);
      for (std::size_t i = 0; i < n; ++i) tail_differ += same_bits(o[i], want[at + i]) ? 0 : 1;
      for (std::size_t i = n; i < 16; ++i) overrun += o[i] == 42.0 ? 0 : 1;
    }
  EXPECT_EQ(tail_differ, 0u) << name;
  EXPECT_EQ(overrun, 0u) << name;
}

// The sampler's jitter factors come from det::exp_n, four or two at a time: SLEEF's cinz functions give the same
// bits in every vector width, so each path must equal det::exp element for element, at every length (the tails).
TEST(DetMath, ExpNIsExpBitForBitOnEveryPath) {
  std::vector<double> x;
  Rng rng(17);
  for (int i = 0; i < 200000; ++i) x.push_back(rng.uniform(-6.0, 6.0));  // the sampler's 0.6 * N(0, 1) and more
  for (int i = 0; i < 20000; ++i) x.push_back(rng.uniform(-750.0, 720.0));  // underflow to overflow
  for (double v : {0.0, -0.0, 1e-300, -1e-300, 709.78, 709.79, -745.13, -745.14, std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
    x.push_back(v);
  using Path = void (*)(const double*, std::size_t, double*);
  std::vector<std::pair<const char*, Path>> paths{{"dispatch", &det::exp_n}};
#if defined(__x86_64__)
  paths.emplace_back("sse2", &det::detail::exp_n_sse2);
  if (__builtin_cpu_supports("avx")) paths.emplace_back("avx", &det::detail::exp_n_avx);
#endif
  std::vector<double> want;
  for (double v : x) want.push_back(det::exp(v));
  for (const auto& [name, path] : paths)
    expect_the_scalar_bits_at_every_length(name, want, [&, path = path](std::size_t at, std::size_t n, double* out) {
      path(x.data() + at, n, out);
    });
}

TEST(DetMath, BoxMullerNIsRngNormalBitForBitOnEveryPath) {
  // The sampler draws its jitter normals' uniforms in Rng::normal's order and transforms them together
  // (det::box_muller_n): each path must give Rng::normal's bits, from the same stream, at every length and offset.
  std::vector<double> u1, u2, want;
  {
    Rng draw(23), replay(23);
    for (int i = 0; i < 200000; ++i) {
      double a = 0, b = 0;
      draw.normal_uniforms(a, b);
      u1.push_back(a);
      u2.push_back(b);
      want.push_back(replay.normal());
    }
  }
  // Uniforms at the ends of (0, 1): log near 0 and near its largest argument, cos at the period's ends.
  for (double a : {0x1.0p-53, 1e-300, 0.5, 1.0 - 0x1.0p-53})
    for (double b : {0.0, 0x1.0p-53, 0.25, 0.5, 0.75, 1.0 - 0x1.0p-53}) {
      u1.push_back(a);
      u2.push_back(b);
      want.push_back(std::sqrt(-2.0 * det::log_u35(a)) * det::cos_u35(2.0 * std::numbers::pi * b));
    }
  using Path = void (*)(const double*, const double*, std::size_t, double*);
  std::vector<std::pair<const char*, Path>> paths{{"dispatch", &det::box_muller_n}};
#if defined(__x86_64__)
  paths.emplace_back("sse2", &det::detail::box_muller_n_sse2);
  if (__builtin_cpu_supports("avx")) paths.emplace_back("avx", &det::detail::box_muller_n_avx);
#endif
  for (const auto& [name, path] : paths)
    expect_the_scalar_bits_at_every_length(name, want, [&, path = path](std::size_t at, std::size_t n, double* out) {
      path(u1.data() + at, u2.data() + at, n, out);
    });
}

// The simulator's exp(noise * z): Eigen's vectorised exp is compiled once, so it is the same on every CPU, but Eigen
// hands an element past the last whole packet to the C library's exp, which is not. Every element, at every length,
// must equal Eigen's packet function; and the check must be able to tell that from the C library's exp.
TEST(DetMath, TheSimulatorsExpTakesEigensPacketPathForEveryElement) {
  using Packet = Eigen::internal::packet_traits<double>::type;
  auto packet_exp = [](double x) {
    return Eigen::internal::pfirst(Eigen::internal::pexp(Eigen::internal::pset1<Packet>(x)));
  };
  Rng rng = Rng::keyed(1, "cross-cpu", "scaled-exp");
  std::size_t tails_unlike_libm = 0;
  for (int n = 1; n <= 257; n += 2) {  // odd lengths: each has an element past the last whole packet
    Eigen::ArrayXd z(n);
    for (auto& v : z) v = 3.0 * rng.normal();
    const double s = 0.15;
    const Eigen::ArrayXd e = detail::scaled_exp(z, s);
    ASSERT_EQ(e.size(), n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(e[i], packet_exp(s * z[i])) << "length " << n << ", element " << i;
    tails_unlike_libm += e[n - 1] != std::exp(s * z[n - 1]);
  }
  EXPECT_GT(tails_unlike_libm, 0u) << "no tail value where Eigen's exp and the C library's differ: the check is blind";
}

// The guard against a future call to the C library's CPU-dependent functions: neither libadvplan.so nor the CLI (with
// the statically linked meta-game solvers) imports any of libm's elementary functions; only the exact ones (sqrt,
// floor, ldexp, ...) may remain. A run-level comparison catches such a call only when a printed byte moves.
TEST(DetMath, TheLibraryAndTheCliImportNoCpuDependentLibmFunction) {
  TempDir dir("det-math-imports");
  // In a subshell: run_command's </dev/null would otherwise replace awk's pipe.
  const auto lib = testing::run_command("(ldd " + quote(kBinary) + " | awk '/libadvplan[.]so/ {print $3}')", dir);
  ASSERT_EQ(lib.status, 0) << lib.err;
  std::string lib_path = lib.out.substr(0, lib.out.find('\n'));
  ASSERT_FALSE(lib_path.empty()) << "ldd found no libadvplan.so for " << kBinary;
  static const std::set<std::string> kForbidden = {
      "exp",  "exp2",  "exp10", "expm1", "log",  "log2",  "log10", "log1p",  "pow",    "sin",   "cos",
      "tan",  "sincos", "asin", "acos",  "atan", "atan2", "sinh",  "cosh",   "tanh",   "asinh", "acosh",
      "atanh", "cbrt", "hypot", "erf",   "erfc", "lgamma", "tgamma", "expf", "logf",  "powf",  "sinf", "cosf"};
  for (const std::string& file : {lib_path, kBinary}) {
    const auto nm = testing::run_command("nm -D --undefined-only " + quote(file), dir);
    ASSERT_EQ(nm.status, 0) << nm.err;
    std::istringstream lines(nm.out);
    std::size_t imports = 0;
    for (std::string line; std::getline(lines, line);) {
      std::string name = line.substr(line.find_last_of(' ') + 1);
      name = name.substr(0, name.find('@'));
      ++imports;
      EXPECT_FALSE(kForbidden.contains(name)) << file << " imports " << name
                                              << " from the C library, whose result depends on the CPU: use "
                                                 "src/core/det_math.hpp";
    }
    EXPECT_GT(imports, 10u) << file;
  }
}

// Eigen blocks its products and solves by the cache sizes CPUID reports, so a large LU solve (alpha-Rank's) rounded
// differently under qemu64, Haswell and this CPU (a review measured it from 13 x 13 games up). advplan builds with
// EIGEN_NO_CPUID (public on the library target): Eigen's fixed defaults on every CPU.
TEST(DetMath, EigenBlocksByFixedCacheSizesNotTheCpus) {
  EXPECT_EQ(Eigen::l1CacheSize(), Eigen::internal::defaultL1CacheSize);
  EXPECT_EQ(Eigen::l2CacheSize(), Eigen::internal::defaultL2CacheSize);
  EXPECT_EQ(Eigen::l3CacheSize(), Eigen::internal::defaultL3CacheSize);
}

}  // namespace
}  // namespace advplan
