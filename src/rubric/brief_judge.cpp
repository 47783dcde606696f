#include "advplan/rubric/brief_judge.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/run/transcripts.hpp"
#include "rubric/jsonl_reader.hpp"

namespace advplan::rubric {
namespace {

using nlohmann::json;
constexpr const char* kPromptPath = "configs/prompts/brief_judge.txt";
constexpr std::string_view kTaskBegin = "TASK:\n", kTaskEnd = "\nEND TASK\n";
constexpr std::string_view kItemsBegin = "ITEMS:\n", kItemsEnd = "\nEND ITEMS\n";
constexpr std::string_view kBriefBegin = "BRIEF:\n", kBriefEnd = "\nEND BRIEF\n";

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::string& brief_judge_prompt() {
  static const std::string text(io::embedded_text(kPromptPath));
  return text;
}

const std::string& brief_judge_prompt_sha256() {
  static const std::string sha = io::sha256_hex(brief_judge_prompt());
  return sha;
}

CappedText cap_words(std::string_view text, std::size_t cap) {
  CappedText out;
  std::size_t i = 0, end_of_kept = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    while (i < text.size() && !is_space(static_cast<unsigned char>(text[i]))) ++i;
    ++out.words;
    if (out.words <= cap) end_of_kept = i;
  }
  out.kept = std::min(out.words, cap);
  out.text = std::string(text.substr(0, end_of_kept));
  return out;
}

CompletionRequest build_brief_prompt(std::span<const RubricItem> items, const std::string& case_id,
                                     const std::string& task, const std::string& brief) {
  CompletionRequest r;
  r.messages.push_back({"system", brief_judge_prompt()});
  r.messages.push_back(
      {"user", fmt::format("CASE: {}\n{}{}{}{}{}{}{}{}{}List the items whose pass condition does not hold for the brief. "
                           "Reply with the JSON only.",
                           nlohmann::json(case_id).dump(-1, ' ', false, json::error_handler_t::replace), kTaskBegin,
                           nlohmann::json(task).dump(-1, ' ', false, json::error_handler_t::replace), kTaskEnd, kItemsBegin,
                           judge_items_json(items), kItemsEnd, kBriefBegin,
                           // as a JSON string: a brief that writes "END BRIEF" and instructions stays inside it
                           nlohmann::json(brief).dump(-1, ' ', false, json::error_handler_t::replace), kBriefEnd)});
  return r;
}

Completion OfflineBriefJudgeClient::complete(const CompletionRequest& req) const {
  Completion out;
  std::string first_user;
  int users = 0;
  for (const auto& m : req.messages)
    if (m.role == "user" && users++ == 0) first_user = m.content;
  // ITEMS comes before BRIEF, and the brief is the last section: a brief that writes a marker cannot move ITEMS.
  const auto ib = first_user.find(kItemsBegin), ie = first_user.find(kItemsEnd);
  const auto bb = first_user.find(kBriefBegin, ie == std::string::npos ? 0 : ie);
  const auto be = bb == std::string::npos ? std::string::npos : first_user.find(kBriefEnd, bb);
  if (ib == std::string::npos || ie == std::string::npos || bb == std::string::npos || be == std::string::npos || be < bb) {
    out.error = "offline brief judge: the prompt has no ITEMS or BRIEF section";
    return out;
  }
  const json brief_json = json::parse(first_user.substr(bb + kBriefBegin.size(), be - bb - kBriefBegin.size()), nullptr, false);
  const std::string brief = lower(brief_json.is_string() ? brief_json.get<std::string>() : std::string());
  json its = json::parse(first_user.substr(ib + kItemsBegin.size(), ie - ib - kItemsBegin.size()), nullptr, false);
  if (!its.is_array()) {
    out.error = "offline brief judge: ITEMS is not a JSON array";
    return out;
  }
  json fi = json::array();
  for (const auto& it : its) {
    const std::string id = it.value("item_id", "");
    if (brief.find(lower(id)) == std::string::npos)
      fi.push_back({{"item_id", id}, {"evidence", "the brief does not name it"}, {"rationale", "not stated in the brief"}});
  }
  std::string text = json{{"failed_items", fi}}.dump();
  if (users == 1) {  // first attempt: answer as real models sometimes do
    const std::uint64_t h = fnv1a(first_user) % 8;
    if (h == 0) text = "My verdict:\n" + text;  // prose before the JSON: malformed
    else if (h == 1) text = text.substr(0, text.size() / 2);  // truncated
    else if (h == 2) {
      json j = json::parse(text);
      j["failed_items"].push_back({{"item_id", "no_such_item"}, {"evidence", "-"}, {"rationale", "-"}});
      text = j.dump();  // an unknown item id
    }
  }
  out.ok = true;
  out.text = std::move(text);
  return out;
}

std::map<std::string, std::string> read_tasks(const std::string& path) {
  std::map<std::string, std::string> out;
  detail::for_each_record(detail::read_bounded(path), path, [&](const json& j, std::size_t line) {
    const std::string c = detail::id_field(j, j.contains("case_id") ? "case_id" : "case", path, line, true);
    const std::string t = detail::text_field(j, "task", path, line);
    if (t.empty()) throw Error(fmt::format("{}: missing or empty", detail::where(path, line, "task")));
    if (!out.emplace(c, t).second) throw Error(fmt::format("{}: case '{}' is repeated", detail::where(path, line, "case_id"), c));
  });
  return out;
}

BriefGrading grade_briefs(const RubricSet& items, const std::map<std::string, BriefInfo>& briefs,
                          const std::map<std::string, std::string>& tasks, const CompletionClient& client,
                          const BriefGradingOptions& options) {
  std::vector<const BriefInfo*> order;
  for (const auto& [id, b] : briefs) {
    const auto it = items.find(b.case_id);
    if (it == items.end() || it->second.empty())
      throw Error(fmt::format("brief '{}': case '{}' has no rubric items", id, b.case_id));
    if (!b.has_text)
      throw Error(fmt::format("brief '{}': the line has no `text` (or `brief`) field, so there is nothing to grade", id));
    order.push_back(&b);
  }
  std::vector<JudgeOutcome> outcomes(order.size());
  std::vector<CappedText> capped(order.size());
  tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t i) {
    const BriefInfo& b = *order[i];
    const auto& its = items.at(b.case_id);
    capped[i] = cap_words(b.text, options.word_cap);
    const auto t = tasks.find(b.case_id);
    auto req = build_brief_prompt(its, b.case_id, t != tasks.end() ? t->second : options.default_task, capped[i].text);
    outcomes[i] = run_judge_request(client, its, std::move(req), options.retries, options.generation,
                                    /*require_failure=*/capped[i].kept == 0);
  });
  BriefGrading out;
  std::string verdicts;
  std::vector<std::string> transcripts;
  io::CsvTable calls({"judge", "model", "condition", "case_id", "brief_id", "status", "attempts", "malformed",
                      "unknown_ids", "failed_items", "words", "words_graded", "prompt_sha256", "reason"});
  for (std::size_t i = 0; i < order.size(); ++i) {
    const BriefInfo& b = *order[i];
    const JudgeOutcome& o = outcomes[i];
    ++out.briefs;
    out.failed += o.ok ? 0 : 1;
    out.truncated += capped[i].kept < capped[i].words ? 1 : 0;
    nlohmann::ordered_json failed = nlohmann::ordered_json::array(), failures = nlohmann::ordered_json::array();
    for (const auto& f : o.failures) {
      failed.push_back(f.item_id);
      failures.push_back({{"item_id", f.item_id}, {"evidence", f.evidence}, {"rationale", f.rationale}});
    }
    nlohmann::ordered_json j{{"brief_id", b.brief_id}, {"judge", options.judge}, {"case_id", b.case_id}, {"model", b.model},
           {"condition", b.condition}, {"failed_items", failed}, {"failures", failures},
           {"unknown_ids", o.unknown_ids}, {"error", !o.ok}};
    if (!o.ok) j["reason"] = o.reason;
    verdicts += j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    calls.add({options.judge, b.model, b.condition, b.case_id, b.brief_id, o.ok ? "ok" : "failed",
               std::to_string(o.attempts), std::to_string(o.malformed), std::to_string(o.unknown_ids.size()),
               std::to_string(o.failures.size()), std::to_string(capped[i].words), std::to_string(capped[i].kept),
               brief_judge_prompt_sha256(), o.reason});
    if (options.judge != "llm_judge_offline") {
      std::vector<std::string> lines;
      transcript_lines(lines, o.transcript, options.transcripts,
                       {"judge", options.judge, b.case_id, b.condition, 0, &b.model}, !o.ok);
      for (const auto& l : lines) {  // the brief's id too: a case's seeds share its model and condition
        auto t = nlohmann::ordered_json::parse(l);
        t["brief_id"] = b.brief_id;
        transcripts.push_back(t.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      }
    }
  }
  std::string tx;
  for (const auto& l : transcripts) tx += l + "\n";
  out.files = {{"verdicts.jsonl", verdicts}, {"judge_calls.csv", calls.to_string()}, {"transcripts.jsonl", tx}};
  return out;
}

}  // namespace advplan::rubric
