// The PSRO loop (docs/METRICS.md "PSRO"): runs/000 plays the starting populations' matrix, and each iteration
// solves the pooled meta-game of runs/000..i exactly, asks the oracles for a BLUE and a RED plan set against the
// equilibrium mixtures (policies/), and plays their new row and column in runs/<i+1> on the same keyed streams
// (common random numbers), so no earlier cell is played again. Everything but the runs and the plan sets is
// recomputed from them, so a resumed PSRO writes the bytes an uninterrupted one writes.
#include "advplan/metagame/psro.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/policy/exec_policy.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"

namespace advplan::metagame {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kMarker = "psro.json";

std::string run_name(int i) { return fmt::format("runs/{:03d}", i); }
std::string blue_set_name(int i) { return fmt::format("policies/blue_{:03d}.jsonl", i); }
std::string red_set_name(int i) { return fmt::format("policies/red_{:03d}.jsonl", i); }
std::string oracle_name(int i) { return fmt::format("policies/oracle_{:03d}.json", i); }

const char* payoff_name(Payoff p) { return p == Payoff::win_rate ? "win_rate" : "advantage"; }

/// What a resumed PSRO must share with the one that wrote the directory.
json marker(const ExperimentConfig& cfg, const PsroOptions& opt, const fs::path& out) {
  json j;
  j["kind"] = "advplan psro";
  // The plan sets' specs name their absolute paths, so a copy of the directory elsewhere would play the original's.
  j["out_dir"] = out.string();
  j["config_sha256"] = io::sha256_hex(cfg.text);
  std::string tpls;
  for (const auto& [src, text] : cfg.template_texts) tpls += io::sha256_hex(text) + "\n";
  j["templates_sha256"] = io::sha256_hex(tpls);
  j["seed"] = cfg.seed;
  j["payoff"] = payoff_name(opt.payoff);
  j["blue_budget"] = opt.blue_budget;
  j["red_k"] = opt.red_k;
  j["blue_oracle"] = opt.blue_oracle;
  j["red_oracle"] = opt.red_oracle;
  j["resamples"] = opt.resamples;
  j["bootstrap_seed"] = cfg.bootstrap.seed;
  return j;
}

/// psro.json as read back (its fields checked against `want`).
json check_marker(const fs::path& dir, const json& want) {
  const std::string path = (dir / kMarker).string();
  if (!fs::exists(fs::symlink_status(path)))
    throw IoError(fmt::format("{}: missing, so {} holds no PSRO this command wrote; --resume continues one (use another "
                              "--out, or --force on a PSRO directory)",
                              path, dir.string()));
  json got;
  if (const std::string e = untrusted::parse_json_bounded(io::read_text_file(path, io::kMaxDocumentBytes), got, 4);
      !e.empty())
    throw IoError(fmt::format("{}: {}", path, e));
  if (!got.is_object()) throw IoError(fmt::format("{}: not a JSON object", path));
  for (const auto& [k, v] : want.items()) {
    const auto it = got.find(k);
    if (it == got.end() || *it != v)
      throw ConfigError(fmt::format("{}: '{}' is {}, while this PSRO has {}; --resume continues only the PSRO made with "
                                    "the same config and options (use another --out, or --force to start again)",
                                    path, k, it == got.end() ? std::string("missing") : untrusted::excerpt(it->dump(), 80),
                                    v.dump()));
  }
  return got;
}

/// The sha256 of each plan set and oracle record the PSRO wrote, by path relative to its directory: psro.json's
/// "files" (docs/TRACES.md "PSRO"). A resume replays only these bytes.
using Ledger = std::map<std::string, std::string>;

Ledger read_ledger(const fs::path& dir, const json& marker) {
  Ledger l;
  const auto files = marker.find("files");
  if (files == marker.end()) return l;
  const std::string path = (dir / kMarker).string();
  if (!files->is_object()) throw IoError(fmt::format("{}: 'files' is not an object", path));
  for (const auto& [name, sum] : files->items()) {
    if (!sum.is_string() || sum.get<std::string>().size() != 64)
      throw IoError(fmt::format("{}: files.{}: not a sha256", path, untrusted::excerpt(name, 80)));
    l[name] = sum.get<std::string>();
  }
  return l;
}

void write_marker(const fs::path& out, json marker, const Ledger& ledger) {
  marker["files"] = json::object();
  for (const auto& [name, sum] : ledger) marker["files"][name] = sum;
  io::write_files(out.string(), {{kMarker, marker.dump(1) + "\n"}});
}

/// Whether iteration `it`'s plan sets and oracle record are all present and recorded, so that the oracles need not
/// run again. A present file whose bytes differ from its recorded sha256 is refused by name: it was edited after the
/// PSRO wrote it, and its runs played the recorded bytes.
bool recorded_outputs(const fs::path& out, int it, const Ledger& ledger) {
  bool all = true;
  for (const std::string& name : {blue_set_name(it + 1), red_set_name(it + 1), oracle_name(it + 1)}) {
    const fs::path p = out / name;
    const auto rec = ledger.find(name);
    if (!fs::is_regular_file(fs::symlink_status(p)) || rec == ledger.end()) {
      all = false;
      continue;
    }
    if (io::sha256_file(p.string()) != rec->second)
      throw IoError(fmt::format("{}: does not match its sha256 in {} (the file changed after the PSRO wrote it); "
                                "--resume replays only the plan sets it recorded (restore the file, or --force to "
                                "start again)",
                                p.string(), (out / kMarker).string()));
  }
  return all;
}

/// Writes the oracles' files and records their sha256 in psro.json. A file already recorded (lost, and made again
/// by the oracles) must come out as the recorded bytes: its runs played them.
void record_outputs(const fs::path& out, const std::vector<std::pair<std::string, std::string>>& files, Ledger& ledger,
                    const json& marker) {
  for (const auto& [name, text] : files)
    if (const auto rec = ledger.find(name); rec != ledger.end() && io::sha256_hex(text) != rec->second)
      throw IoError(fmt::format("{}: made again, it differs from the sha256 {} recorded for it (its oracle does not "
                                "answer twice alike); --force starts the PSRO again",
                                (out / name).string(), (out / kMarker).string()));
  io::write_files(out.string(), files);
  for (const auto& [name, text] : files) ledger[name] = io::sha256_hex(text);
  write_marker(out, marker, ledger);
}

/// The starting populations: the distinct BLUE and RED specs of the config's main conditions, in order.
std::pair<std::vector<std::string>, std::vector<std::string>> start_populations(const ExperimentConfig& cfg) {
  std::vector<std::string> b, r;
  for (const Condition& c : cfg.conditions) {
    if (c.group != "main") continue;
    if (std::find(b.begin(), b.end(), c.blue) == b.end()) b.push_back(c.blue);
    if (std::find(r.begin(), r.end(), c.red) == r.end()) r.push_back(c.red);
  }
  if (b.empty() || r.empty())
    throw ConfigError(fmt::format("{}: PSRO starts from the config's BLUE and RED policies, and it lists none (give a "
                                  "`matrix:` or `conditions:`)",
                                  cfg.source));
  return {b, r};
}

/// Refuses a folder of the PSRO directory that is a symbolic link (a run or plan set would be written through it).
void refuse_link(const fs::path& p) {
  if (fs::is_symlink(fs::symlink_status(p)))
    throw IoError(fmt::format("{}: a symbolic link; PSRO writes its runs and plan sets only inside its directory", p.string()));
}

/// Plays `pairs` into dir (resuming it when a kill left it incomplete; nothing when it is complete).
void play(const ExperimentConfig& base, const std::vector<std::pair<std::string, std::string>>& pairs,
          const fs::path& dir, const PsroOptions& opt) {
  refuse_link(dir.parent_path());
  refuse_link(dir);
  ExperimentConfig cfg = base;
  cfg.conditions.clear();
  for (const auto& [b, r] : pairs) cfg.conditions.push_back({default_condition_label(base, b, r), b, r, "main", {}});
  cfg.budget_ks.clear();
  cfg.sweep = {};
  cfg.plans = true;  // the RED oracle reads BLUE's support plans from plans.jsonl
  cfg.candidate_plans = false;
  const RunPlan plan = prepare_run(cfg, cfg.conditions);
  RunOptions ro;
  ro.out_dir = dir.string();
  ro.threads = opt.threads;
  ro.progress_mode = opt.progress_mode;
  ro.progress = opt.progress_mode != "none";
  ro.studies = false;
  ro.command = "psro";
  // A run of an earlier invocation is resumed, or when complete, checked as `run --resume` checks one: its recorded
  // key (the plan sets it replayed by sha256 among it) and its traces as its MANIFEST lists them.
  ro.resume = fs::exists(fs::symlink_status(dir));
  run_experiment(plan, ro);
}

std::vector<std::string> run_dirs(const fs::path& out, int last) {
  std::vector<std::string> d;
  for (int i = 0; i <= last; ++i) d.push_back((out / run_name(i)).string());
  return d;
}

/// Each BLUE policy's plan per scenario, by (scenario, policy spec): the first run that played it.
using BluePlans = std::map<std::pair<std::string, std::string>, Plan>;

/// Adds the BLUE plans of run `dir`'s plans.jsonl that no earlier run gave (the runs are added in order, each once,
/// so an iteration reads only its newest run).
void add_blue_plans(BluePlans& out, const fs::path& dir) {
  for (auto& p : read_played_plans((dir / "plans.jsonl").string()))
    if (p.side == Side::Blue && p.plan) out.try_emplace({p.scenario_id, p.policy}, std::move(*p.plan));
}

struct OracleOutcome {
  double blue_value = 0, red_value = 0;  ///< the oracles' mean value over the scenarios they answered
  std::size_t blue_failed = 0, red_failed = 0;
  std::vector<std::pair<std::string, std::string>> files;  ///< the plan sets and the record, for record_outputs
};

bool is_llm_oracle(const std::string& s) { return s == "llm" || s == "llm_offline" || s.rfind("llm:", 0) == 0; }

/// A language model as an oracle (docs/METRICS.md "PSRO"): the plan prompt of its side (for RED, answering the most
/// probable BLUE support plan) with the opponent mixture appended to the user message as one JSON section, through
/// the plan contract (parser, validator, re-asks). `llm_offline` is the offline deterministic client, for tests.
class LlmOracle {
 public:
  LlmOracle(const std::string& spec, const PolicyContext& ctx)
      : max_repairs_(ctx.get<LlmConfig>().max_repairs), generation_(ctx.get<LlmConfig>().generation_for("llm")) {
    if (spec == "llm_offline") {
      client_ = std::make_unique<OfflineCompletionClient>();
    } else {
      const auto colon = spec.find(':');
      client_ = make_live_client(
          resolve_llm_settings(ctx.get<LlmConfig>(), colon == std::string::npos ? "" : spec.substr(colon + 1), spec), ctx);
    }
  }
  std::optional<Plan> ask(const Scenario& sc, Side side, const json& mixture, const Plan* blue, std::uint64_t seed,
                          const std::string& plan_id, std::string& failure) const {
    CompletionRequest req = side == Side::Blue ? build_blue_prompt(sc) : build_red_prompt(sc, *blue);
    req.seed = seed & 0x7fffffffULL;
    apply_generation(req, generation_);
    attach_plan_schema(req, sc, side);
    for (auto& m : req.messages)
      if (m.role == "user") {
        m.content += std::string("\nPSRO ORACLE: the opponent plays the mixture of policies below (probabilities ") +
                     (side == Side::Red ? "and their BLUE plans" : "by policy") +
                     "). Answer with the one plan that does best in expectation against it.\nOPPONENT MIXTURE:\n" +
                     mixture.dump(-1, ' ', false, json::error_handler_t::replace) + "\nEND OPPONENT MIXTURE\n";
        break;
      }
    ContractResult res = run_contract(*client_, std::move(req), sc, side, max_repairs_, plan_id);
    if (!res.plan) failure = "llm oracle: " + res.failure;
    return std::move(res.plan);
  }

 private:
  std::unique_ptr<CompletionClient> client_;
  int max_repairs_;
  GenerationSettings generation_;
};

/// Both oracles on every scenario of the corpus; gives the two plan sets and the oracle record to write.
/// The opponent mixture an exec: oracle receives: each support policy's spec and probability (exact and as a number),
/// and for BLUE's support, its plan in the scenario.
json oracle_mixture(const std::vector<std::string>& specs, const std::vector<Fraction>& p,
                    const std::vector<const Plan*>* plans_of) {
  json m = json::array();
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (!(p[k].value > 0)) continue;
    json e{{"policy", specs[k]}, {"probability", p[k].value}, {"probability_exact", p[k].str()}};
    if (plans_of != nullptr) e["plan"] = (*plans_of)[k] ? to_json(*(*plans_of)[k]) : json();
    m.push_back(std::move(e));
  }
  return m;
}

/// The oracles' answers of iteration it as the new plan sets and the oracle record; an oracle that answered no
/// scenario is an error.
OracleOutcome collect_oracle_outcome(const fs::path& out, int it, const std::vector<std::string>& ids,
                                     const std::vector<BlueResponse>& br, const std::vector<RedResponseChoice>& rr) {
  const std::size_t n = ids.size();
  std::string blue_text, red_text;
  OracleOutcome o;
  std::size_t nb = 0, nr = 0;
  const std::string blue_spec = "plans:" + (out / blue_set_name(it + 1)).string();
  const std::string red_spec = "plans:" + (out / red_set_name(it + 1)).string();
  for (std::size_t i = 0; i < n; ++i) {
    if (br[i].failure.empty()) {
      blue_text += played_plan_line(ids[i], "", 0, Side::Blue, blue_spec, &br[i].plan, "") + "\n";
      o.blue_value += br[i].value;
      ++nb;
    } else {
      ++o.blue_failed;
    }
    if (rr[i].failure.empty()) {
      red_text += played_plan_line(ids[i], "", 0, Side::Red, red_spec, &rr[i].plan, "") + "\n";
      o.red_value += rr[i].value;
      ++nr;
    } else {
      ++o.red_failed;
    }
  }
  if (nb == 0 || nr == 0)
    throw Error(fmt::format("psro iteration {}: the {} oracle answered no scenario (first: {})", it + 1,
                            nb == 0 ? "BLUE" : "RED", nb == 0 ? br.front().failure : rr.front().failure));
  o.blue_value /= static_cast<double>(nb);
  o.red_value /= static_cast<double>(nr);
  json rec;
  rec["iteration"] = it + 1;
  rec["blue_value"] = o.blue_value;
  rec["red_value"] = o.red_value;
  rec["blue_failed"] = o.blue_failed;
  rec["red_failed"] = o.red_failed;
  o.files = {{blue_set_name(it + 1), blue_text}, {red_set_name(it + 1), red_text},
             {oracle_name(it + 1), rec.dump(1) + "\n"}};
  return o;
}

OracleOutcome run_oracles(const ExperimentConfig& cfg, const fs::path& out, int it, const MetaGameData& data,
                          const GameSolution& g, const PsroOptions& opt, const BluePlans& plans) {
  const PolicyContext ctx = policy_context(cfg);
  OracleSettings s;
  s.payoff = opt.payoff;
  s.run_seed = cfg.seed;
  s.quality = cfg.quality;
  s.sim = cfg.sim;
  s.ctx = &ctx;
  s.iteration = it + 1;
  s.blue_budget = opt.blue_budget;
  s.red_k = opt.red_k;
  std::vector<double> x, y;
  for (const auto& f : g.blue) x.push_back(f.value);
  for (const auto& f : g.red) y.push_back(f.value);
  std::vector<std::unique_ptr<RedPolicy>> owned;
  std::vector<const RedPolicy*> reds(data.red.size(), nullptr);
  bool parallel = true;
  for (std::size_t j = 0; j < data.red.size(); ++j) {
    if (!(y[j] > 0)) continue;
    owned.push_back(make_red_policy(data.red[j], ctx));
    reds[j] = owned.back().get();
    if (reds[j]->info().thread_safety != ThreadSafety::constant) parallel = false;
  }
  std::unique_ptr<ExecSession> blue_exec, red_exec;
  std::unique_ptr<LlmOracle> blue_llm, red_llm;
  if (is_llm_oracle(opt.blue_oracle)) blue_llm = std::make_unique<LlmOracle>(opt.blue_oracle, ctx);
  if (is_llm_oracle(opt.red_oracle)) red_llm = std::make_unique<LlmOracle>(opt.red_oracle, ctx);
  if (opt.blue_oracle.rfind("exec:", 0) == 0) blue_exec = std::make_unique<ExecSession>(opt.blue_oracle, ctx.get<ExecConfig>());
  if (opt.red_oracle.rfind("exec:", 0) == 0) red_exec = std::make_unique<ExecSession>(opt.red_oracle, ctx.get<ExecConfig>());
  const auto mixture = oracle_mixture;
  const std::size_t n = corpus_size(cfg);
  std::vector<BlueResponse> br(n);
  std::vector<RedResponseChoice> rr(n);
  std::vector<std::string> ids(n);
  auto one = [&](std::size_t i) {
    const Scenario sc = corpus_scenario(cfg, i);
    ids[i] = sc.id;
    std::optional<SimNoise> noise;
    if (opt.payoff == Payoff::win_rate) noise = draw_noise(cfg.seed, sc.id, cfg.sim);
    const SimNoise* nz = noise ? &*noise : nullptr;
    std::vector<const Plan*> support(data.blue.size(), nullptr);
    for (std::size_t b = 0; b < data.blue.size(); ++b)
      if (const auto p = plans.find({sc.id, data.blue[b]}); p != plans.end()) support[b] = &p->second;
    auto request = [&](const char* side, json opponents) {
      return json{{"side", side},
                  {"oracle", "psro"},
                  {"iteration", it + 1},
                  {"rng_seed", Rng::keyed(cfg.seed, sc.id, fmt::format("psro/{}/exec/{}", side, it + 1)).next_u64() >> 11},
                  {"scenario", to_json(sc)},
                  {"opponent_mixture", std::move(opponents)}};
    };
    const std::uint64_t llm_seed = Rng::keyed(cfg.seed, sc.id, fmt::format("psro/llm/{}", it + 1)).next_u64();
    if (blue_exec || blue_llm) {
      Transcript t;
      auto plan = blue_exec ? blue_exec->exchange(request("BLUE", mixture(data.red, g.red, nullptr)), sc, Side::Blue,
                                                  br[i].failure, t)
                            : blue_llm->ask(sc, Side::Blue, mixture(data.red, g.red, nullptr), nullptr, llm_seed,
                                            fmt::format("{}/blue/psro/{}", sc.id, it + 1), br[i].failure);
      if (plan) {
        plan->plan_id = fmt::format("{}/blue/psro/{}", sc.id, it + 1);
        const ScoredBlue sb = score_blue(std::move(*plan), sc, s.quality);
        br[i].value = blue_value(sb, sc, reds, y, s, nz);
        br[i].plan = sb.plan;
        br[i].evaluations = 1;
        if (!std::isfinite(br[i].value))
          br[i].failure = fmt::format("scenario {}: some RED policy of the mixture answers no plan to the oracle's", sc.id);
      }
    } else {
      br[i] = blue_best_response(sc, reds, y, s, nz);
    }
    if (red_exec || red_llm) {
      Transcript t;
      // The LLM's prompt answers the most probable BLUE support plan (the first of the largest).
      const Plan* likely = nullptr;
      double best = -1;
      for (std::size_t b = 0; b < support.size(); ++b)
        if (support[b] != nullptr && g.blue[b].value > best) {
          best = g.blue[b].value;
          likely = support[b];
        }
      std::optional<Plan> plan;
      if (red_exec)
        plan = red_exec->exchange(request("RED", mixture(data.blue, g.blue, &support)), sc, Side::Red, rr[i].failure, t);
      else if (likely == nullptr)
        rr[i].failure = fmt::format("scenario {}: no plan of BLUE's support", sc.id);
      else
        plan = red_llm->ask(sc, Side::Red, mixture(data.blue, g.blue, &support), likely, llm_seed + 1,
                            fmt::format("{}/red/psro/{}", sc.id, it + 1), rr[i].failure);
      if (plan) {
        plan->plan_id = fmt::format("{}/red/psro/{}", sc.id, it + 1);
        rr[i].value = red_value(*plan, sc, support, x, s, nz);
        rr[i].plan = std::move(*plan);
        rr[i].candidates = 1;
      }
    } else {
      rr[i] = red_best_response(sc, support, x, s, nz);
    }
  };
  if (parallel)
    tbb::parallel_for(std::size_t{0}, n, one);
  else
    for (std::size_t i = 0; i < n; ++i) one(i);
  return collect_oracle_outcome(out, it, ids, br, rr);
}

OracleOutcome read_oracle_record(const fs::path& path) {
  json j;
  if (const std::string e = untrusted::parse_json_bounded(io::read_text_file(path.string(), io::kMaxDocumentBytes), j, 4);
      !e.empty() || !j.is_object())
    throw IoError(fmt::format("{}: {}", path.string(), e.empty() ? "not a JSON object" : e));
  OracleOutcome o;
  auto real = [&](const char* k) {
    const auto it = j.find(k);
    if (it == j.end() || !it->is_number()) throw IoError(fmt::format("{}: '{}' is missing or not a number", path.string(), k));
    return it->get<double>();
  };
  o.blue_value = real("blue_value");
  o.red_value = real("red_value");
  o.blue_failed = untrusted::count_member(j, "blue_failed");
  o.red_failed = untrusted::count_member(j, "red_failed");
  return o;
}

std::pair<double, double> percentile(std::vector<double> v) {
  if (v.empty()) return {NAN, NAN};
  std::sort(v.begin(), v.end());
  const std::size_t b = v.size();
  const std::size_t lo = std::min(static_cast<std::size_t>(std::floor(0.025 * static_cast<double>(b))), b - 1);
  const auto h = static_cast<std::size_t>(std::ceil(0.975 * static_cast<double>(b)));
  return {v[lo], v[h == 0 ? 0 : std::min(h - 1, b - 1)]};
}

std::string num(double v) { return std::isnan(v) ? "" : fmt::format("{:.6f}", v); }

struct PopulationRow {
  int iteration;
  std::string side, policy;
  Fraction p;
};

void write_outputs(const fs::path& out, const std::vector<PsroRow>& rows, const std::vector<PopulationRow>& pop) {
  io::CsvTable t({"iteration", "blue_policies", "red_policies", "scenarios", "value", "value_exact", "exploitability",
                  "ci_lo", "ci_hi", "blue_gain", "red_gain", "blue_added", "red_added", "blue_oracle_value",
                  "red_oracle_value"});
  std::string md = "# PSRO\n\n| iteration | population | value | exploitability [95% CI] | BLUE gain | RED gain |\n"
                   "|---:|---:|---:|---|---:|---:|\n";
  for (const auto& r : rows) {
    t.add({std::to_string(r.iteration), std::to_string(r.blue_size), std::to_string(r.red_size),
           std::to_string(r.scenarios), num(r.value.value), r.value.str(), num(r.exploitability), num(r.lo), num(r.hi),
           num(r.blue_gain), num(r.red_gain), r.blue_added, r.red_added, num(r.blue_predicted), num(r.red_predicted)});
    md += fmt::format("| {} | {} x {} | {:.4f} | {:.4f} {} | {:.4f} | {:.4f} |\n", r.iteration, r.blue_size, r.red_size,
                      r.value.value, r.exploitability, interval_text(r.lo, r.hi), r.blue_gain, r.red_gain);
  }
  io::CsvTable p({"iteration", "side", "policy", "probability", "probability_exact"});
  for (const auto& r : pop) p.add({std::to_string(r.iteration), r.side, r.policy, num(r.p.value), r.p.str()});
  io::write_files(out.string(), {{"psro.csv", t.to_string()}, {"population.csv", p.to_string()}, {"psro.md", md}});
}

}  // namespace

std::string interval_text(double lo, double hi) {
  return std::isnan(lo) || std::isnan(hi) ? std::string("[n/a]") : fmt::format("[{:.4f}, {:.4f}]", lo, hi);
}

namespace {

/// The options and config PSRO refuses, each with one sentence.
void check_psro_options(const ExperimentConfig& cfg, const PsroOptions& opt) {
  if (opt.iterations < 1) throw ConfigError("psro: --iterations must be at least 1");
  if (cfg.terrain_geo)
    throw ConfigError(fmt::format("{}: terrain: geo: PSRO's oracles score plans without the map (docs/METRICS.md "
                                  "\"PSRO\"), so it refuses a geo config",
                                  cfg.source));
  if (cfg.samples != 1)
    throw ConfigError(fmt::format("{}: samples: {}: PSRO plays one sample per cell", cfg.source, cfg.samples));
  if (opt.blue_budget < 1 || opt.red_k < 1) throw ConfigError("psro: --blue-budget and --red-k must be at least 1");
  for (const auto& [flag, value, builtin] : {std::tuple{"--blue-oracle", &opt.blue_oracle, "local"},
                                             std::tuple{"--red-oracle", &opt.red_oracle, "greedy"}})
    if (*value != builtin && value->rfind("exec:", 0) != 0 && !is_llm_oracle(*value))
      throw ConfigError(fmt::format("psro: {} {}: accepted values are {}, exec:COMMAND, llm:MODEL and llm_offline", flag,
                                    untrusted::excerpt(*value, 60), builtin));
}

}  // namespace

std::vector<PsroRow> run_psro(const ExperimentConfig& cfg, const PsroOptions& opt) {
  check_psro_options(cfg, opt);
  fs::path out = fs::absolute(opt.out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  const json want = marker(cfg, opt, out);
  // What --force must never clear: the config, its templates and the plan sets its conditions replay.
  std::vector<std::string> inputs{cfg.source};
  for (const auto& [src, text] : cfg.template_texts) inputs.push_back(src);
  for (const Condition& c : cfg.conditions)
    for (const std::string* spec : {&c.blue, &c.red})
      if (spec->rfind("plans:", 0) == 0) inputs.push_back(spec->substr(6));
  const io::PreparedDirectory prepared = io::prepare_run_directory(
      out.string(), opt.resume ? io::DirMode::resume : opt.force ? io::DirMode::force : io::DirMode::fresh, inputs);
  Ledger ledger;
  if (prepared.had_files)
    ledger = read_ledger(out, check_marker(out, want));
  else
    write_marker(out, want, ledger);
  refuse_link(out / "runs");
  refuse_link(out / "policies");
  std::optional<tbb::global_control> limit;
  if (opt.threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opt.threads));

  auto [blues, reds] = start_populations(cfg);
  {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& b : blues)
      for (const auto& r : reds) pairs.emplace_back(b, r);
    play(cfg, pairs, out / run_name(0), opt);
  }
  std::vector<PsroRow> rows;
  std::vector<PopulationRow> pop;
  auto record_population = [&](int it, const MetaGameData& d, const GameSolution& g) {
    for (std::size_t i = 0; i < d.blue.size(); ++i) pop.push_back({it, "blue", d.blue[i], g.blue[i]});
    for (std::size_t j = 0; j < d.red.size(); ++j) pop.push_back({it, "red", d.red[j], g.red[j]});
  };
  BluePlans plans;  // of runs 0..plans_read-1
  int plans_read = 0;
  for (int it = 0; it < opt.iterations; ++it) {
    const MetaGameData data = read_metagame_data(run_dirs(out, it), opt.payoff);
    const GameSolution g = solve_game(data.matrix(), false);
    record_population(it, data, g);
    OracleOutcome o;
    if (recorded_outputs(out, it, ledger)) {
      o = read_oracle_record(out / oracle_name(it + 1));
    } else {
      for (; plans_read <= it; ++plans_read) add_blue_plans(plans, out / run_name(plans_read));
      o = run_oracles(cfg, out, it, data, g, opt, plans);
      record_outputs(out, o.files, ledger, want);
    }
    const std::string nb = "plans:" + (out / blue_set_name(it + 1)).string();
    const std::string nr = "plans:" + (out / red_set_name(it + 1)).string();
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& r : data.red) pairs.emplace_back(nb, r);
    pairs.emplace_back(nb, nr);
    for (const auto& b : data.blue) pairs.emplace_back(b, nr);
    play(cfg, pairs, out / run_name(it + 1), opt);

    // The equilibrium of the old population, zero-padded, against the grown matrix.
    const MetaGameData grown = read_metagame_data(run_dirs(out, it + 1), opt.payoff);
    std::vector<double> x(grown.blue.size(), 0.0), y(grown.red.size(), 0.0);
    for (std::size_t i = 0; i < data.blue.size(); ++i) x[i] = g.blue[i].value;
    for (std::size_t j = 0; j < data.red.size(); ++j) y[j] = g.red[j].value;
    const IntMatrix a = grown.matrix();
    PsroRow row;
    row.iteration = it;
    row.blue_size = data.blue.size();
    row.red_size = data.red.size();
    row.scenarios = grown.scenarios.size();
    row.value = g.value;
    row.exploitability = nash_conv(a, x, y);
    double xay = 0, best_row = -INFINITY, worst_col = INFINITY;
    for (std::size_t i = 0; i < a.rows; ++i) {
      double v = 0;
      for (std::size_t j = 0; j < a.cols; ++j) v += a.value(i, j) * y[j];
      xay += x[i] * v;
      best_row = std::max(best_row, v);
    }
    for (std::size_t j = 0; j < a.cols; ++j) {
      double v = 0;
      for (std::size_t i = 0; i < a.rows; ++i) v += a.value(i, j) * x[i];
      worst_col = std::min(worst_col, v);
    }
    row.blue_gain = best_row - xay;
    row.red_gain = xay - worst_col;
    std::vector<double> boot;
    if (grown.scenarios.size() > 1) {
      Rng rng = Rng::keyed(cfg.bootstrap.seed, "bootstrap", fmt::format("psro/{}/{}", payoff_name(opt.payoff), it));
      std::vector<std::size_t> idx(grown.scenarios.size());
      for (int b = 0; b < opt.resamples; ++b) {
        for (auto& k : idx) k = rng.pick_index(idx.size());
        boot.push_back(nash_conv(grown.matrix(idx), x, y));
      }
    }
    std::tie(row.lo, row.hi) = percentile(boot);
    row.blue_added = nb;
    row.red_added = nr;
    row.blue_predicted = o.blue_value;
    row.red_predicted = o.red_value;
    rows.push_back(row);
    const bool done = (opt.epsilon >= 0 && row.exploitability <= opt.epsilon) || it + 1 == opt.iterations;
    if (done) {
      const GameSolution last = solve_game(a, false);
      record_population(it + 1, grown, last);
    }
    write_outputs(out, rows, pop);
    if (opt.progress_mode != "none")
      fmt::print(stderr, "advplan: psro iteration {}/{}: exploitability {:.4f} {}, population {} x {}\n", it + 1,
                 opt.iterations, row.exploitability, interval_text(row.lo, row.hi), grown.blue.size(), grown.red.size());
    if (done) break;
  }
  return rows;
}

}  // namespace advplan::metagame
