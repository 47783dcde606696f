#include "advplan/policy/exec_policy.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/policy/replan.hpp"

namespace advplan {

using nlohmann::json;

namespace {

/// A failure reason names at most this many plan violations, so a trace cell stays readable.
constexpr std::size_t kMaxViolationsShown = 5;

std::string join_violations(const std::vector<Violation>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < kMaxViolationsShown; ++i) out += (i ? "; " : "") + untrusted::excerpt(v[i].str());
  if (v.size() > kMaxViolationsShown) out += fmt::format("; and {} more", v.size() - kMaxViolationsShown);
  return out;
}

/// nlohmann's parse message without its "[json.exception.parse_error.101] " tag.
std::string json_error(const std::string& text) {
  try {
    const auto unused = json::parse(text);
    (void)unused;
  } catch (const json::exception& e) {
    std::string m = e.what();
    if (const auto p = m.find("] "); m.starts_with("[json.exception") && p != std::string::npos)
      m.erase(0, p + 2);
    return untrusted::excerpt(m);
  }
  return "not a JSON value";
}

}  // namespace

std::string check_exec_envelope(const std::string& line, std::uint64_t id, json& out) {
  if (const std::string deep = untrusted::json_depth_error(line); !deep.empty()) return "invalid JSON in response: " + deep;
  out = json::parse(line, nullptr, false);
  if (out.is_discarded())
    return fmt::format("invalid JSON in response: {}; the line began \"{}\"", json_error(line), untrusted::excerpt(line, 60));
  if (!out.is_object()) return fmt::format("response must be a JSON object, got {}", out.type_name());
  const auto it = out.find("request_id");
  if (it == out.end()) return fmt::format("response has no request_id (sent {})", id);
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() != id)
    return fmt::format("request_id mismatch: sent {}, got {}", id, untrusted::json_excerpt(*it, 40));
  return "";
}

namespace {

/// The plan of a response that passed check_exec_envelope, validated as a plan of `side`; nullopt and `failure` set
/// ("exec: ...") otherwise. Shared by the BLUE and the RED exec policy.
std::optional<Plan> exec_plan_of(const json& response, const Scenario& sc, Side side, std::string& failure) {
  // The stream is in step from here on: a bad plan is this scenario's failure, not a reason to restart.
  if (const auto err = response.find("error"); err != response.end() && !response.contains("plan")) {
    failure = "exec: policy reported an error: " +
              (err->is_string() ? untrusted::excerpt(err->get<std::string>()) : untrusted::json_excerpt(*err));
    return std::nullopt;
  }
  const auto pj = response.find("plan");
  if (pj == response.end()) {
    failure = "exec: response has no \"plan\" field";
    return std::nullopt;
  }
  std::vector<Violation> violations;
  auto plan = plan_from_json(*pj, violations);
  if (plan && violations.empty()) violations = validate_plan(*plan, sc, side);
  if (!plan || !violations.empty()) {
    failure = "exec: plan invalid: " + join_violations(violations);
    return std::nullopt;
  }
  return plan;
}

/// The request or reply of an exchange as its transcript records it: without the request_id, which numbers the
/// policy's requests in the order the threads reach it (not a function of the scenario).
std::string transcript_text(json j) {
  if (j.is_object()) j.erase("request_id");
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// One request to an exec: policy's program and its plan: the envelope checked (request_id `id`), then the plan
/// validated as a plan of `side`; nullopt and `failure` set ("exec: ...") otherwise. The exchange is recorded in
/// `transcript`: the request as a "user" message, the reply line as the reply.
std::optional<Plan> exec_exchange(ProcessPool& pool, const json& request, std::uint64_t id, const Scenario& sc,
                                  Side side, std::string& failure, Transcript& transcript) {
  json response;
  const PoolReply reply =
      pool.request(request.dump(-1, ' ', false, json::error_handler_t::replace),
                   [&](const std::string& line) { return check_exec_envelope(line, id, response); });
  transcript.messages.push_back({"user", transcript_text(request)});
  Transcript::Call& call = transcript.calls.emplace_back();
  call.messages_sent = 1;
  if (!reply.ok()) {
    failure = "exec: " + reply.error;
    call.reply.error = failure;
    return std::nullopt;
  }
  call.reply.ok = true;
  call.reply.text = transcript_text(response);
  auto plan = exec_plan_of(response, sc, side, failure);
  call.accepted = plan.has_value();
  return plan;
}

/// A replan request to an exec: policy's program (docs/POLICIES.md "6. Replanning"), the reply's plan validated as
/// a plan of `side`. Its request_id is the first 52 bits of the request's sha256, not a counter: the failure reasons
/// that quote a reply line then read the same at any thread count (only the reply of one exchange is ever read
/// against it; a worker that failed is restarted before its next request).
ReplanResult exec_replan(ProcessPool& pool, json request, const Scenario& sc, Side side) {
  const std::uint64_t id =
      std::stoull(io::sha256_hex(request.dump(-1, ' ', false, json::error_handler_t::replace)).substr(0, 13), nullptr, 16);
  request["request_id"] = id;
  ReplanResult r;
  r.plan = exec_exchange(pool, request, id, sc, side, r.failure, r.transcript);
  return r;
}

/// The process pool of an exec: policy. Replanning's pool (`replanning`) has no restart limit: a cell stops
/// replanning after its first failed exchange (run/scenario_eval.cpp), so a broken program costs each cell one
/// failure, whichever order the threads reach the cells in.
std::unique_ptr<ProcessPool> exec_pool(const std::string& spec_text, const ExecConfig& cfg, bool replanning = false) {
  ProcessPoolOptions opt;
  opt.command = exec_command_of(spec_text);
  opt.workers = cfg.workers;
  opt.timeout_s = cfg.timeout_s;
  opt.max_response_bytes = cfg.max_response_bytes;
  opt.max_restarts = replanning ? (1 << 30) : cfg.max_restarts;
  opt.withheld_env = cfg.withheld_env;
  return std::make_unique<ProcessPool>(std::move(opt));
}

/// The replanning pool of an exec: policy whose parameters switch replanning on, else none.
std::unique_ptr<ProcessPool> replan_pool(const std::string& spec_text, const ExecConfig& cfg, const Params& params) {
  return replans_enabled(params) ? exec_pool(spec_text, cfg, true) : nullptr;
}

ReplanResult no_replan_pool(const std::string& label) {
  ReplanResult r;
  r.failure = fmt::format("{} does not replan (replans is not true)", label);
  return r;
}

}  // namespace

ExecSession::ExecSession(const std::string& spec_text, const ExecConfig& cfg) : pool_(exec_pool(spec_text, cfg)) {}
ExecSession::~ExecSession() = default;

std::optional<Plan> ExecSession::exchange(json request, const Scenario& sc, Side side, std::string& failure,
                                          Transcript& transcript) const {
  const std::uint64_t id = next_request_id_.fetch_add(1);
  request["request_id"] = id;
  return exec_exchange(*pool_, request, id, sc, side, failure, transcript);
}

BluePlanResult exec_plan_from_response(const json& response, const Scenario& sc) {
  BluePlanResult r;
  r.plan = exec_plan_of(response, sc, Side::Blue, r.failure);
  (r.plan ? r.contract.parsed : r.contract.failed) = 1;
  return r;
}

std::string exec_command_of(const std::string& spec_text) {
  const auto colon = spec_text.find(':');
  std::string cmd = colon == std::string::npos ? "" : spec_text.substr(colon + 1);
  const auto b = cmd.find_first_not_of(" \t");
  const auto e = cmd.find_last_not_of(" \t");
  cmd = b == std::string::npos ? "" : cmd.substr(b, e - b + 1);
  if (cmd.size() >= 2 && (cmd.front() == '\'' || cmd.front() == '"') && cmd.back() == cmd.front())
    cmd = cmd.substr(1, cmd.size() - 2);
  return cmd;
}

PolicyInfo ExecPolicy::static_info() {
  PolicyInfo info;
  info.short_name = "exec";
  info.side = Side::Blue;
  info.thread_safety = ThreadSafety::constant;
  info.description = "an external program speaking JSON lines on stdin/stdout (docs/POLICIES.md)";
  info.argument = "COMMAND";
  info.external = true;
  info.params = {replans_param()};
  return info;
}

ExecPolicy::ExecPolicy(std::string spec_text, Params params, const ExecConfig& cfg)
    : BluePolicy(static_info(), std::move(params)), spec_(std::move(spec_text)), pool_(exec_pool(spec_, cfg)),
      replan_pool_(replan_pool(spec_, cfg, this->params())) {}

BluePlanResult ExecPolicy::do_plan(const Scenario& sc, Rng& rng) const {
  const std::uint64_t id = next_request_id_.fetch_add(1);
  // rng_seed: 53 bits of this (run seed, scenario, policy) stream, exact in any JSON reader.
  const json request = {
      {"request_id", id}, {"side", "BLUE"}, {"rng_seed", rng.next_u64() >> 11}, {"scenario", to_json(sc)}};
  BluePlanResult r;
  r.plan = exec_exchange(*pool_, request, id, sc, Side::Blue, r.failure, r.transcript);
  (r.plan ? r.contract.parsed : r.contract.failed) = 1;
  return r;
}

ReplanResult ExecPolicy::do_replan(const Scenario& sc, const json& request) const {
  if (!replan_pool_) return no_replan_pool(label());
  return exec_replan(*replan_pool_, request, sc, Side::Blue);
}

namespace {

/// `red: "exec:CMD"`: the same process protocol as the BLUE exec policy, with the BLUE plan in the request
/// ({"request_id", "side": "RED", "rng_seed", "scenario", "blue_plan"}); the reply's plan is validated as a RED plan
/// and scored against the BLUE plan like any RED candidate.
class ExecRedPolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info;
    info.short_name = "exec";
    info.side = Side::Red;
    info.thread_safety = ThreadSafety::constant;
    info.description = "an external program answering the BLUE plan in JSON lines on stdin/stdout (docs/POLICIES.md)";
    info.argument = "COMMAND";
    info.external = true;
    info.params = {replans_param()};
    return info;
  }
  ExecRedPolicy(std::string spec_text, Params params, const ExecConfig& cfg)
      : RedPolicy(static_info(), 1, std::move(params)), spec_(std::move(spec_text)), pool_(exec_pool(spec_, cfg)),
        replan_pool_(replan_pool(spec_, cfg, this->params())) {}
  std::string label() const override { return spec_; }

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    const Scenario& sc = *req.scenario;
    RedResponse r;
    const std::uint64_t id = next_request_id_.fetch_add(1);
    const std::uint64_t seed = Rng::keyed(req.run_seed, sc.id, sample_stream("red/exec", req.sample)).next_u64() >> 11;
    const json request = {{"request_id", id},         {"side", "RED"},
                          {"rng_seed", seed},         {"scenario", to_json(sc)},
                          {"blue_plan", to_json(*req.blue)}};
    auto plan = exec_exchange(*pool_, request, id, sc, Side::Red, r.failure, r.transcript);
    if (!plan) {
      r.contract.failed = 1;
      return r;
    }
    r.candidates.push_back(score_red_plan(std::move(*plan), sc, vulnerability(layout_plan(*req.blue, sc)), req.weights, 0));
    r.selected = 0;
    r.contract.parsed = 1;
    return r;
  }
  ReplanResult do_replan(const Scenario& sc, const json& request) const override {
    if (!replan_pool_) return no_replan_pool(label());
    return exec_replan(*replan_pool_, request, sc, Side::Red);
  }

 private:
  std::string spec_;
  std::unique_ptr<ProcessPool> pool_;
  mutable std::atomic<std::uint64_t> next_request_id_{1};
  std::unique_ptr<ProcessPool> replan_pool_;  ///< as ExecPolicy's
};

}  // namespace

ADVPLAN_REGISTER_RED_POLICY(ExecRedPolicy::static_info(),
                            [](const PolicySpec& spec, const Params& p,
                               const PolicyContext& ctx) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<ExecRedPolicy>(spec.text, p, ctx.get<ExecConfig>());
                            })

ADVPLAN_REGISTER_BLUE_POLICY(ExecPolicy::static_info(),
                             [](const PolicySpec& spec, const Params& p,
                                const PolicyContext& ctx) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<ExecPolicy>(spec.text, p, ctx.get<ExecConfig>());
                             })

}  // namespace advplan
