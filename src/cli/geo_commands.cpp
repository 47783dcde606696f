// `advplan map`, `advplan tool`, `advplan questions` and `advplan quiz` (docs/GEO.md).
#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/progress.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/questions.hpp"
#include "advplan/geo/quiz.hpp"
#include "advplan/geo/user_map.hpp"
#include "advplan/geo/quiz_grader.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/run/transcripts.hpp"
#include "advplan/policy/policy_settings.hpp"
#include "commands.hpp"
#include "output_paths.hpp"

namespace advplan::cli {
namespace {

ExperimentConfig config_or_default(const std::string& path) {
  return path.empty() ? default_experiment_config() : load_experiment_config(path);
}

void write_or_print(const std::string& out, const std::string& text) {
  if (out.empty() || out == "-") std::cout << text;
  else io::write_file_atomic(out, text);
}

/// llm:MODEL: the transcript becomes chat messages; the model must reply with one JSON object. The request carries
/// policies.quiz.generation (over llm.generation), and goes through the completion cache when the config has one.
class LlmQuizAgent final : public geo::QuizAgent {
 public:
  LlmQuizAgent(const LlmSettings& s, const ExperimentConfig& cfg)
      : client_(make_live_client(s, policy_context(cfg))), model_(s.model), generation_(cfg.llm.generation_for("quiz")) {}
  std::string name() const override { return "llm:" + model_; }
  geo::AgentReply step(const std::string& request) override {
    const auto req = nlohmann::json::parse(request);
    CompletionRequest cr;
    cr.messages.push_back(
        {"system",
         "You answer questions about a military map by calling tools, one per reply. Reply with exactly one JSON "
         "object and nothing else: either {\"tool_call\": {\"id\": \"c1\", \"name\": TOOL, \"arguments\": {...}}} or "
         "{\"answer\": \"... \\\\boxed{ANSWER}\"}. Answer numbers without units; answer unsolvable when the task "
         "cannot be achieved. Tools: " + req["tools"].dump()});
    cr.messages.push_back({"user", fmt::format("Question: {}\nYou have {} tool calls left.", req["question"].get<std::string>(),
                                               req["steps_left"].get<int>())});
    for (const auto& s : req["steps"]) {
      cr.messages.push_back({"assistant", nlohmann::json{{"tool_call", s["call"]}}.dump()});
      cr.messages.push_back({"user", fmt::format("Observation for call {}: {}", s["observation"]["call_id"].dump(),
                                                 s["observation"].dump())});
    }
    apply_generation(cr, generation_);
    attach_named_schema(cr, "quiz_reply");
    const Completion c = client_->complete(cr);
    last_ = Transcript{cr.messages, {{cr.messages.size(), c, c.ok}}};
    if (!c.ok) return {"", c.error};
    // The model may wrap its object in prose or a fence: keep the outermost {...}.
    const auto a = c.text.find('{'), b = c.text.rfind('}');
    if (a == std::string::npos || b == std::string::npos || b < a) return {c.text, ""};
    return {c.text.substr(a, b - a + 1), ""};
  }
  /// The last step's call: the messages sent and the reply.
  const Transcript& last_call() const { return last_; }

 private:
  std::unique_ptr<CompletionClient> client_;
  std::string model_;
  GenerationSettings generation_;
  Transcript last_;
};

/// Records every step of an agent on one question as lines of the quiz's transcripts (--transcripts FILE,
/// docs/GEO.md): for llm: the chat messages sent and the reply with its tokens; for the other agents the request
/// and the reply line.
class TranscribedAgent final : public geo::QuizAgent {
 public:
  TranscribedAgent(geo::QuizAgent& inner, std::string spec, TranscriptsMode mode)
      : inner_(inner), spec_(std::move(spec)), mode_(mode) {}
  std::string name() const override { return inner_.name(); }
  geo::AgentReply step(const std::string& request) override {
    geo::AgentReply r = inner_.step(request);
    const auto req = nlohmann::json::parse(request, nullptr, false);
    const std::string question = req.is_object() ? req.value("question_id", "") : "";
    if (question != question_) attempt_ = 0;
    question_ = question;
    Transcript t;
    if (const auto* llm = dynamic_cast<const LlmQuizAgent*>(&inner_)) {
      t = llm->last_call();
    } else {
      Completion c;
      c.ok = r.error.empty();
      c.text = r.line;
      c.error = r.error;
      t = Transcript{{{"request", request}}, {{1, c, c.ok}}};
    }
    std::vector<std::string> lines;
    const std::string none;
    transcript_lines(lines, t, mode_, {"quiz", spec_, question, none, 0}, !r.error.empty());
    for (auto& line : lines) {
      // The step within the question, not the attempt within one call (every step is one call).
      auto j = nlohmann::ordered_json::parse(line);
      j["attempt"] = attempt_;
      text_ += j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    }
    ++attempt_;
    return r;
  }
  const std::string& text() const { return text_; }

 private:
  geo::QuizAgent& inner_;
  std::string spec_;
  TranscriptsMode mode_;
  std::string question_, text_;
  std::size_t attempt_ = 0;
};

std::unique_ptr<geo::QuizAgent> make_agent(const std::string& spec, const ExperimentConfig& cfg,
                                           const std::vector<geo::Question>& qs, double timeout_s) {
  if (spec.starts_with("exec:"))
    return geo::make_exec_agent(spec.substr(5), timeout_s, cfg.exec.withheld_env);  // in process_sandbox()
  if (spec.starts_with("llm:"))
    return std::make_unique<LlmQuizAgent>(resolve_llm_settings(cfg.llm, spec.substr(4), spec), cfg);
  if (spec == "scripted" || spec.starts_with("scripted:")) {
    try {
      return geo::make_scripted_agent(qs, spec == "scripted" ? "oracle" : spec.substr(9));
    } catch (const std::invalid_argument& e) {
      throw ConfigError(fmt::format("--agent {}", e.what()));
    }
  }
  throw ConfigError(fmt::format("--agent {}: expected exec:COMMAND, llm:MODEL or scripted[:MODE]", untrusted::excerpt(spec, 80)));
}

/// --grader: llm:MODEL (a live model), llm (the config's llm.model) or llm_offline (the offline stand-in). A live
/// grader's requests carry llm.generation and go through the completion cache, as the llm: agent's do.
geo::GraderTransport make_grader(const std::string& spec, const ExperimentConfig& cfg) {
  if (spec == "llm_offline") return geo::offline_grader_reply;
  if (spec != "llm" && !spec.starts_with("llm:"))
    throw ConfigError(fmt::format("--grader {}: expected llm:MODEL, llm (the config's llm.model) or llm_offline",
                                  untrusted::excerpt(spec, 80)));
  std::shared_ptr<CompletionClient> client = make_live_client(
      resolve_llm_settings(cfg.llm, spec == "llm" ? "" : spec.substr(4), "--grader " + spec), policy_context(cfg));
  return [client, generation = cfg.llm.generation](const std::vector<geo::GraderMessage>& messages) {
    CompletionRequest cr;
    for (const auto& m : messages) cr.messages.push_back({m.role, m.content});
    apply_generation(cr, generation);
    const Completion c = client->complete(cr);
    return geo::GraderCall{c.ok, c.text, c.error};
  };
}

/// The questions of a JSON-lines file, bounded in size before it is read, and per line; an Error when it holds
/// none.
std::vector<geo::Question> read_questions(const std::string& path) {
  std::vector<geo::Question> qs;
  // A question file is input: bounded in size before it is read, and per line.
  constexpr std::uintmax_t kMaxQuestionFile = 256u << 20;
  constexpr std::size_t kMaxQuestionLine = 1u << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw ConfigError(fmt::format("{}: not a regular file (--questions takes a JSON-lines file)", path));
  const auto bytes = std::filesystem::file_size(path, ec);
  if (!ec && bytes > kMaxQuestionFile)
    throw ConfigError(fmt::format("{}: {} bytes, over the {} MiB a question file may have", path, bytes,
                                  kMaxQuestionFile >> 20));
  const std::string text = io::read_text_file(path, io::kMaxListBytes);
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    ++line_no;
    if (nl - pos > kMaxQuestionLine)
      throw ConfigError(fmt::format("{}:{}: the line is over {} KiB, longer than any question", path,
                                    line_no, kMaxQuestionLine >> 10));
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    qs.push_back(geo::question_from_json(line, fmt::format("{}:{}", path, line_no)));
  }
  if (qs.empty())
    throw ConfigError(fmt::format("{}: holds no question, so there is nothing to grade (write one with `advplan "
                                  "questions CONFIG --out FILE`)",
                                  path));
  return qs;
}

/// `advplan map SCENARIO`: the scenario's map as GeoJSON.
void add_map_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("map", "Write a scenario's map as GeoJSON (RFC 7946)");
  auto id = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("SCENARIO", *id, "scenario id, e.g. urban-100")->required();
  cmd->add_option("--config", *config, "experiment config (default: the built-in paper config)");
  cmd->add_option("--out", *out, "output file (default: stdout)");
  cmd->callback([&run, id, config, out] {
    run = [id, config, out] {
      check_output_file(*out, "--out");
      const auto cfg = config_or_default(*config);
      write_or_print(*out, geo::to_geojson(scenario_map(cfg, find_scenario(cfg, *id))));
      return 0;
    };
  });
}

/// `advplan tool NAME --scenario ID`: one map tool's JSON result.
void add_tool_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("tool", "Call one map tool on a scenario's map and print its JSON result");
  auto name = std::make_shared<std::string>();
  auto id = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto args = std::make_shared<std::string>("{}");
  cmd->add_option("NAME", *name, "list_features, feature, distance, area, route, travel_time, within, line_of_sight, order")
      ->required();
  cmd->add_option("--scenario", *id, "scenario id, e.g. urban-100")->required();
  cmd->add_option("--args", *args, "arguments as a JSON object (default {})");
  cmd->add_option("--config", *config, "experiment config (default: the built-in paper config)");
  cmd->callback([&run, name, id, config, args] {
    run = [name, id, config, args] {
      const auto cfg = config_or_default(*config);
      const auto m = scenario_map(cfg, find_scenario(cfg, *id));
      const auto r = geo::call_tool(m, *name, *args);
      if (!r.ok) {
        fmt::print("{}\n", nlohmann::json{{"tool", untrusted::excerpt(*name, 40)}, {"ok", false}, {"error", r.error}}.dump());
        fmt::print(stderr, "advplan tool: {}\n", r.error);
        return 1;
      }
      nlohmann::ordered_json j{{"tool", *name}, {"ok", true}};
      j["result"] = nlohmann::ordered_json::parse(r.json);
      fmt::print("{}\n", j.dump());
      return 0;
    };
  });
}

/// `advplan questions [CONFIG]`: tiered questions with reference answers, streamed a scenario at a time.
void add_questions_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("questions", "Generate tiered map questions with reference answers as JSON lines");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto map = std::make_shared<std::string>();
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in paper config)");
  cmd->add_option("--out", *out, "output file (default: stdout)");
  cmd->add_option("--map", *map, "a user's GeoJSON map: the questions of that map alone (docs/GEO.md \"Bring your own map\")");
  cmd->callback([&run, config, out, map] {
    run = [config, out, map] {
      check_output_file(*out, "--out");
      if (!map->empty()) {
        if (!config->empty()) throw ConfigError("--map and CONFIG: the questions are of the map or of the config's corpus; give one");
        std::string text;
        const auto qs = geo::generate_questions(geo::read_user_map(*map));
        if (qs.empty())
          throw ConfigError(fmt::format("--map {}: no questions: the map needs at least one place and one BLUE asset", *map));
        for (const auto& q : qs) text += geo::question_to_json(q) + "\n";
        write_or_print(*out, text);
        return 0;
      }
      const auto cfg = config_or_default(*config);
      const std::size_t n = corpus_size(cfg);
      // Streamed, a scenario at a time: memory does not grow with the corpus (20,000 scenarios once held 199 MB
      // until the end). A file is written atomically all the same (a temporary beside it, renamed at the end).
      std::optional<io::AtomicWriter> file;
      if (!out->empty() && *out != "-") file.emplace(*out);
      std::ostream& os = file ? file->stream() : std::cout;
      Progress progress("advplan questions", n, ProgressMode::automatic);
      for (std::size_t i = 0; i < n; ++i) {
        for (const auto& q : geo::generate_questions(scenario_map(cfg, corpus_scenario(cfg, i))))
          os << geo::question_to_json(q) << '\n';
        progress.scenario_done(0);
      }
      if (file) file->commit();
      else std::cout.flush();
      return 0;
    };
  });
}

/// What `advplan quiz` takes besides the config, questions and agent.
struct QuizFlags {
  std::string out, summary, unsolvable, transcripts, transcripts_mode = "all", llm_cache;
  std::string grading = "strict", grader;
  std::string map;  ///< --map: the user's map the questions were made on
  int budget = 10, max_connections = 1;
  double timeout = 30.0;
  bool sandbox = false;  ///< --sandbox: an exec: agent in a bubblewrap sandbox
};

/// The quiz's questions run by `workers` threads (each with its own agent and grader), results kept in question
/// order: outcomes, per-question lines and transcripts do not depend on the number of workers.
struct QuizResults {
  std::vector<geo::QuizOutcome> outcomes;
  std::vector<std::string> transcripts;
};

QuizResults run_quiz(const ExperimentConfig& cfg, const std::vector<geo::Question>& qs, const std::string& agent,
                     const QuizFlags& f, std::optional<TranscriptsMode> transcripts, geo::Grading grading) {
  std::map<std::string, geo::GeoMap> maps;
  if (!f.map.empty()) {  // the questions of a user's map (advplan questions --map)
    geo::GeoMap m = geo::read_user_map(f.map);
    for (const auto& q : qs)
      if (q.scenario != m.scenario_id)
        throw ConfigError(fmt::format("--map {}: question {} is about '{}', not this map ('{}')", f.map,
                                      untrusted::excerpt(q.id, 80), untrusted::excerpt(q.scenario, 80), m.scenario_id));
    const std::string id = m.scenario_id;
    maps.emplace(id, std::move(m));
  }
  for (const auto& q : qs)
    if (!maps.contains(q.scenario)) maps.emplace(q.scenario, scenario_map(cfg, find_scenario(cfg, q.scenario)));
  const int workers = std::max(1, std::min<int>(f.max_connections, static_cast<int>(qs.size())));
  // Agents and graders are made before any thread starts: a bad spec is one error, before any call.
  std::vector<std::unique_ptr<geo::QuizAgent>> agents;
  std::vector<geo::GraderTransport> graders;
  for (int w = 0; w < workers; ++w) {
    agents.push_back(make_agent(agent, cfg, qs, f.timeout));
    if (!f.grader.empty()) graders.push_back(make_grader(f.grader, cfg));
  }
  QuizResults res;
  res.outcomes.resize(qs.size());
  res.transcripts.resize(qs.size());
  // Progress on stderr (an LLM agent can take hours): a redrawn line on a terminal, a line every 10 s otherwise.
  Progress progress("advplan quiz", qs.size(), ProgressMode::automatic, 0, 10.0, "questions", "incorrect");
  std::atomic<std::size_t> next{0};
  auto work = [&](int w) {
    for (std::size_t i; (i = next.fetch_add(1)) < qs.size();) {
      const geo::Question& q = qs[i];
      geo::QuizOutcome& o = res.outcomes[i];
      if (transcripts) {
        TranscribedAgent t(*agents[w], agent, *transcripts);
        o = geo::run_question(maps.at(q.scenario), q, t, f.budget);
        res.transcripts[i] = t.text();
      } else {
        o = geo::run_question(maps.at(q.scenario), q, *agents[w], f.budget);
      }
      if (!f.grader.empty() && o.answered) {
        const geo::LlmVerdict v = geo::grade_with_llm(graders[w], q, o.answer);
        if (v.ok) o.correct_llm = v.correct;
        o.says_unsolvable_llm = v.ok && v.says_unsolvable;
        o.grader_attempts = v.attempts;
        o.grader_reason = v.reason;
      }
      if (!f.grader.empty()) o.grader = f.grader;
      geo::choose_grading(o, grading);
      progress.scenario_done(o.correct ? 0 : 1);
    }
  };
  if (workers == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) threads.emplace_back(work, w);
    for (auto& t : threads) t.join();
  }
  progress.finish();
  return res;
}

/// `advplan quiz --questions FILE --agent SPEC`: an agent's answers graded, and its accuracy.
void add_quiz_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("quiz", "Run an agent on map questions (ReAct loop) and report its accuracy");
  auto config = std::make_shared<std::string>();
  auto questions = std::make_shared<std::string>();
  auto agent = std::make_shared<std::string>();
  auto f = std::make_shared<QuizFlags>();
  cmd->add_option("CONFIG", *config, "experiment config the questions came from (default: the built-in paper config)");
  cmd->add_option("--questions", *questions, "questions file (advplan questions)")->required();
  cmd->add_option("--map", f->map, "the user's GeoJSON map the questions were made on (advplan questions --map)");
  cmd->add_option("--agent", *agent, "exec:COMMAND, llm:MODEL or scripted[:MODE]")->required();
  cmd->add_option("--budget", f->budget, "tool calls per question (default 10)")->check(CLI::Range(1, 100));
  cmd->add_option("--timeout", f->timeout, "exec: seconds per reply (default 30)")->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--grading", f->grading, "strict, containment (Mil-SCORE's rule) or llm: the mode of 'correct'")
      ->capture_default_str();
  cmd->add_option("--grader", f->grader, "an LLM grader: llm:MODEL, llm (llm.model) or llm_offline (default with "
                                         "--grading llm: llm)");
  cmd->add_option("--out", f->out, "per-question results as JSON lines");
  cmd->add_option("--summary", f->summary, "accuracy table as CSV, a block of rows per grading mode (default: printed)");
  cmd->add_option("--unsolvable", f->unsolvable, "precision, recall and F1 of saying unsolvable, as CSV");
  cmd->add_option("--transcripts", f->transcripts, "every agent call as JSON lines (docs/GEO.md \"Quiz transcripts\")");
  cmd->add_option("--transcripts-mode", f->transcripts_mode, "with --transcripts: all or errors")->capture_default_str();
  cmd->add_option("--llm-cache", f->llm_cache, "the completion cache of an llm: agent and grader (overrides llm.cache_dir)");
  cmd->add_option("--max-connections", f->max_connections, "llm: agents: questions run at once (default 1)")
      ->check(CLI::Range(1, 1024));
  add_sandbox_flag(cmd, f->sandbox);
  cmd->callback([&run, config, questions, agent, f] {
    run = [config, questions, agent, f] {
      auto cfg = config_or_default(*config);
      prepare_sandbox(cfg, f->sandbox);
      if (!f->llm_cache.empty()) cfg.llm.cache_dir = f->llm_cache;
      const auto mode = parse_transcripts_mode(f->transcripts_mode);
      if (!mode || *mode == TranscriptsMode::none)
        throw ConfigError(fmt::format("--transcripts-mode {}: accepted values are all and errors",
                                      untrusted::excerpt(f->transcripts_mode, 40)));
      const auto grading = geo::parse_grading(f->grading);
      if (!grading)
        throw ConfigError(fmt::format("--grading {}: accepted values are strict, containment and llm",
                                      untrusted::excerpt(f->grading, 40)));
      if (*grading == geo::Grading::llm && f->grader.empty()) f->grader = "llm";
      if (f->max_connections > 1 && !agent->starts_with("llm:"))
        throw ConfigError(fmt::format("--max-connections {}: only llm: agents run questions at once", f->max_connections));
      if (f->max_connections > 1) cfg.llm.max_connections = std::max(cfg.llm.max_connections, f->max_connections);
      // The output files are checked before any agent call: a live model's answers are not wasted on a bad path.
      const std::vector<const std::string*> outputs{&f->out, &f->summary, &f->unsolvable, &f->transcripts};
      const char* flags[] = {"--out", "--summary", "--unsolvable", "--transcripts"};
      for (std::size_t i = 0; i < outputs.size(); ++i) check_output_file(*outputs[i], flags[i]);
      for (const std::string* p : outputs) {
        if (p->empty() || *p == "-") continue;
        std::error_code ec;
        const auto st = std::filesystem::symlink_status(*p, ec);
        if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && *p != "/dev/null")
          throw ConfigError(fmt::format("{}: exists and is not a regular file", *p));
      }
      for (const std::string* p : outputs) {
        std::error_code ec;
        if (!p->empty() && (*p == *questions || std::filesystem::equivalent(*p, *questions, ec)))
          throw ConfigError(fmt::format("{}: is the --questions file, which an output would overwrite", *p));
      }
      for (std::size_t a = 0; a < outputs.size(); ++a)
        for (std::size_t b = a + 1; b < outputs.size(); ++b)
          if (!outputs[a]->empty() && *outputs[a] != "-" && *outputs[a] != "/dev/null" && *outputs[a] == *outputs[b])
            throw ConfigError(fmt::format("{}: given to two of --out, --summary, --unsolvable and --transcripts",
                                          *outputs[a]));
      const std::vector<geo::Question> qs = read_questions(*questions);
      const QuizResults res =
          run_quiz(cfg, qs, *agent, *f, f->transcripts.empty() ? std::nullopt : mode, *grading);
      std::string lines, transcript_text;
      for (std::size_t i = 0; i < qs.size(); ++i) {
        lines += geo::outcome_to_json(res.outcomes[i]) + "\n";
        transcript_text += res.transcripts[i];
      }
      if (!f->out.empty()) io::write_file_atomic(f->out, lines);
      if (!f->transcripts.empty()) io::write_file_atomic(f->transcripts, transcript_text);
      // Every mode the run can report, in a fixed order whatever --grading is: the gap between them shows.
      std::vector<geo::Grading> modes{geo::Grading::strict, geo::Grading::containment};
      if (!f->grader.empty()) modes.push_back(geo::Grading::llm);
      std::string csv = "grading,group,n,correct,accuracy,ci_low,ci_high,mean_steps,budget_exhausted,grader_prompt_sha256\n";
      for (const geo::Grading g : modes) {
        const std::string sha = g == geo::Grading::llm ? geo::quiz_grader_prompt_sha256() : "";
        for (const auto& r : geo::summarise(res.outcomes, g))
          csv += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.4f},{:.3f},{},{}\n", geo::grading_name(g), r.group, r.n,
                             r.correct, r.accuracy, r.lo, r.hi, r.mean_steps, r.exhausted, sha);
      }
      if (!f->unsolvable.empty()) {
        std::string u = "grading,metric,value,ci_low,ci_high,k,n\n";
        for (const auto& r : geo::unsolvable_scores(res.outcomes, modes))
          u += fmt::format("{},{},{:.4f},{:.4f},{:.4f},{},{}\n", geo::grading_name(r.grading), r.metric, r.value, r.lo,
                           r.hi, r.k, r.n);
        write_or_print(f->unsolvable, u);
      }
      write_or_print(f->summary, csv);
      return 0;
    };
  });
}

}  // namespace

void add_geo_commands(CLI::App& app, Action& run) {
  add_map_command(app, run);
  add_tool_command(app, run);
  add_questions_command(app, run);
  add_quiz_command(app, run);
}

}  // namespace advplan::cli
