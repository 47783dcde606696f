#include "advplan/rubric/mabench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/io/text_lines.hpp"
#include "rubric/jsonl_reader.hpp"

namespace advplan::rubric {
namespace detail {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_bounded(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw IoError(fmt::format("{}: cannot read ({})", path, ec.message()));
  if (size > kMaxJsonlBytes)
    throw IoError(fmt::format("{}: the file has {} bytes, more than the limit of {}", path, size, kMaxJsonlBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open", path));
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::size_t>(in.gcount()) != size) throw IoError(fmt::format("{}: short read", path));
  return text;
}

void for_each_record(const std::string& text, const std::string& source, const std::function<void(const json&, std::size_t)>& fn) {
  if (!untrusted::valid_utf8(text))
    throw Error(fmt::format("{}: byte {} is not valid UTF-8", source, untrusted::first_invalid_utf8(text)));
  std::size_t records = 0;
  io::for_each_text_line(text, [&](std::string_view line, std::size_t line_no) {
    if (line.size() > kMaxJsonlLine)
      throw Error(fmt::format("{} line {}: the line has {} bytes, more than the limit of {}", source, line_no,
                              line.size(), kMaxJsonlLine));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    if (++records > kMaxJsonlRecords)
      throw Error(fmt::format("{} line {}: more than {} records", source, line_no, kMaxJsonlRecords));
    json j;
    if (const auto err = untrusted::parse_json_bounded(line, j); !err.empty())
      throw Error(fmt::format("{} line {}: {}", source, line_no, err));
    if (!j.is_object()) throw Error(fmt::format("{} line {}: the record is not a JSON object", source, line_no));
    fn(j, line_no);
  });
}

std::string where(const std::string& source, std::size_t line, std::string_view field) {
  return fmt::format("{} line {}, field '{}'", source, line, field);
}

std::string id_field(const json& j, std::string_view field, const std::string& source, std::size_t line,
                     bool number_ok) {
  const auto it = j.find(field);
  if (it == j.end()) throw Error(fmt::format("{}: missing", where(source, line, field)));
  std::string s;
  if (it->is_string()) s = it->get<std::string>();
  else if (number_ok && it->is_number_integer()) s = std::to_string(it->get<long long>());
  else throw Error(fmt::format("{}: expected a string, got {}", where(source, line, field), untrusted::json_excerpt(*it, 40)));
  if (s.empty()) throw Error(fmt::format("{}: is empty", where(source, line, field)));
  if (s.size() > kMaxIdBytes)
    throw Error(fmt::format("{}: longer than {} bytes", where(source, line, field), kMaxIdBytes));
  return s;
}

std::string text_field(const json& j, std::string_view field, const std::string& source, std::size_t line) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw Error(fmt::format("{}: expected a string", where(source, line, field)));
  return it->get<std::string>();
}

void read_item_grading(const json& j, const std::string& source, std::size_t line, RubricItem& it) {
  const auto tier = j.find("tier");
  if (tier == j.end() || !tier->is_number_integer() || tier->get<long long>() < 1 || tier->get<long long>() > 3)
    throw Error(fmt::format("{}: expected an integer 1, 2 or 3", where(source, line, "tier")));
  it.tier = static_cast<int>(tier->get<long long>());
  const std::string sev = id_field(j, "severity", source, line);
  const auto s = parse_severity(sev);
  if (!s) throw Error(fmt::format("{}: '{}' is not one of CI, I, SI, D, CD", where(source, line, "severity"), untrusted::excerpt(sev, 40)));
  it.severity = *s;
  if (const auto p = j.find("polarity"); p != j.end()) {
    const std::string want = it.negative() ? "negative" : "positive";
    if (!p->is_string() || p->get<std::string>() != want)
      throw Error(fmt::format("{}: severity {} needs polarity '{}'", where(source, line, "polarity"), sev, want));
  }
  if (const auto w = j.find("weight"); w != j.end()) {
    if (!w->is_number() || w->get<double>() != it.weight())
      throw Error(fmt::format("{}: severity {} has weight {}, while {} was given", where(source, line, "weight"), sev,
                              it.weight(), w->is_number() ? fmt::format("{}", w->get<double>()) : untrusted::json_excerpt(*w, 40)));
  }
  it.question = text_field(j, "question", source, line);
  it.pass_condition = text_field(j, "pass_condition", source, line);
  it.fail_condition = text_field(j, "fail_condition", source, line);
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using detail::for_each_record;
using detail::id_field;
using detail::read_bounded;
using detail::text_field;
using detail::where;

std::vector<std::string> id_list(const json& j, std::string_view field, const std::string& source, std::size_t line,
                                 bool required) {
  const auto it = j.find(field);
  if (it == j.end() || (!required && it->is_null())) {
    if (required) throw Error(fmt::format("{}: missing", where(source, line, field)));
    return {};
  }
  if (!it->is_array()) throw Error(fmt::format("{}: expected an array of strings", where(source, line, field)));
  if (it->size() > kMaxListEntries)
    throw Error(fmt::format("{}: {} entries, more than the limit of {}", where(source, line, field), it->size(),
                            kMaxListEntries));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const auto& e = (*it)[i];
    if (!e.is_string() || e.get<std::string>().size() > kMaxIdBytes)
      throw Error(fmt::format("{}: entry {} is not a string of at most {} bytes", where(source, line, field), i,
                              kMaxIdBytes));
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

RubricSet parse_rubric_items(const std::string& text, const std::string& source) {
  RubricSet set;
  std::map<std::string, std::set<std::string>> seen;
  for_each_record(text, source, [&](const json& j, std::size_t line) {
    RubricItem it;
    it.case_id = id_field(j, "case_id", source, line);
    it.item_id = id_field(j, "item_id", source, line);
    it.step = id_field(j, "step", source, line, /*number_ok=*/true);
    detail::read_item_grading(j, source, line, it);
    if (!seen[it.case_id].insert(it.item_id).second)
      throw Error(fmt::format("{}: '{}' is repeated in case '{}'", where(source, line, "item_id"), it.item_id, it.case_id));
    set[it.case_id].push_back(std::move(it));
  });
  if (set.empty()) throw Error(fmt::format("{}: no rubric items", source));
  return set;
}

RubricSet read_rubric_items(const std::string& path) { return parse_rubric_items(read_bounded(path), path); }

std::vector<Verdict> parse_verdicts(const std::string& text, const std::string& source) {
  std::vector<Verdict> out;
  for_each_record(text, source, [&](const json& j, std::size_t line) {
    Verdict v;
    v.brief_id = id_field(j, "brief_id", source, line);
    v.judge = id_field(j, "judge", source, line);
    v.case_id = id_field(j, "case_id", source, line);
    v.model = j.contains("model") ? id_field(j, "model", source, line) : "all";
    v.group = j.contains("group") ? id_field(j, "group", source, line) : v.case_id;
    v.failed_items = id_list(j, "failed_items", source, line, true);
    v.unknown_ids = id_list(j, "unknown_ids", source, line, false);
    if (const auto f = j.find("failures"); f != j.end() && !f->is_null()) {
      if (!f->is_array() || f->size() > kMaxListEntries)
        throw Error(fmt::format("{}: expected an array of at most {} objects", where(source, line, "failures"),
                                kMaxListEntries));
    }
    (void)text_field(j, "overall_rationale", source, line);
    if (const auto e = j.find("error"); e != j.end() && !e->is_null()) {
      if (!e->is_boolean()) throw Error(fmt::format("{}: expected true or false", where(source, line, "error")));
      v.error = e->get<bool>();
    }
    out.push_back(std::move(v));
  });
  return out;
}

std::vector<Verdict> read_verdicts(const std::string& path) { return parse_verdicts(read_bounded(path), path); }

std::map<std::string, BriefInfo> parse_briefs(const std::string& text, const std::string& source) {
  std::map<std::string, BriefInfo> out;
  for_each_record(text, source, [&](const json& j, std::size_t line) {
    BriefInfo b;
    b.brief_id = id_field(j, "brief_id", source, line, /*number_ok=*/true);
    b.model = id_field(j, "model", source, line);
    b.case_id = id_field(j, j.contains("case_id") ? "case_id" : "case", source, line, /*number_ok=*/true);
    b.model_slug = text_field(j, "model_slug", source, line);
    b.condition = j.contains("condition") && !j["condition"].is_null() ? id_field(j, "condition", source, line) : "default";
    b.seed = j.contains("seed") && !j["seed"].is_null() ? id_field(j, "seed", source, line, /*number_ok=*/true) : "";
    b.text = j.contains("text") ? text_field(j, "text", source, line) : text_field(j, "brief", source, line);
    b.has_text = (j.contains("text") && !j["text"].is_null()) || (j.contains("brief") && !j["brief"].is_null());
    const std::string id = b.brief_id;
    if (!out.emplace(id, std::move(b)).second)
      throw Error(fmt::format("{}: '{}' is repeated", where(source, line, "brief_id"), id));
  });
  return out;
}

std::map<std::string, BriefInfo> read_briefs(const std::string& path) { return parse_briefs(read_bounded(path), path); }

void attach_briefs(std::vector<Verdict>& verdicts, const std::map<std::string, BriefInfo>& briefs) {
  for (auto& v : verdicts) {
    const auto it = briefs.find(v.brief_id);
    if (it == briefs.end())
      throw Error(fmt::format("verdict on brief '{}' by judge '{}': the brief is not in briefs.jsonl", v.brief_id, v.judge));
    const BriefInfo& b = it->second;
    if (b.case_id != v.case_id)
      throw Error(fmt::format("verdict on brief '{}' by judge '{}': case '{}', while briefs.jsonl has case '{}'",
                              v.brief_id, v.judge, v.case_id, b.case_id));
    if (v.model != "all" && v.model != b.model)
      throw Error(fmt::format("verdict on brief '{}' by judge '{}': model '{}', while briefs.jsonl has model '{}'",
                              v.brief_id, v.judge, v.model, b.model));
    v.model = b.model;
    v.condition = b.condition;
  }
}

std::size_t check_manifest(const std::string& dir, const std::vector<std::string>& files) {
  const fs::path manifest = fs::path(dir) / "MANIFEST.json";
  if (!fs::exists(manifest)) return 0;
  const std::string source = manifest.string();
  json j;
  if (const auto err = untrusted::parse_json_bounded(read_bounded(source), j); !err.empty())
    throw Error(fmt::format("{}: {}", source, err));
  std::map<std::string, std::string> hashes;
  auto add = [&](const std::string& name, const json& h) {
    if (!h.is_string() || h.get<std::string>().size() != 64)
      throw Error(fmt::format("{}: the hash of '{}' is not a 64-digit hex sha256", source, untrusted::excerpt(name, 80)));
    const fs::path p(name);
    if (name.empty() || p.is_absolute() || std::any_of(p.begin(), p.end(), [](const fs::path& c) { return c == ".."; }))
      throw Error(fmt::format("{}: '{}' is not a relative path inside the directory", source, untrusted::excerpt(name, 80)));
    std::string hex = h.get<std::string>();
    std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    hashes[p.lexically_normal().string()] = hex;
  };
  const json* files_node = j.is_object() && j.contains("files") ? &j["files"] : &j;
  if (files_node->is_object()) {
    for (const auto& [k, h] : files_node->items()) add(k, h);
  } else if (files_node->is_array()) {
    for (const auto& e : *files_node) {
      if (!e.is_object() || !e.contains("path") || !e["path"].is_string() || !e.contains("sha256"))
        throw Error(fmt::format("{}: field 'files': each entry needs 'path' and 'sha256'", source));
      add(e["path"].get<std::string>(), e["sha256"]);
    }
  } else {
    throw Error(fmt::format("{}: expected an object of file hashes", source));
  }
  for (const auto& f : files) {
    const std::string rel = fs::path(f).lexically_relative(dir).lexically_normal().string();
    if (!hashes.count(rel))
      throw Error(fmt::format("{}: '{}' is not listed, so its hash cannot be checked", source, rel));
  }
  for (const auto& [name, hash] : hashes) {
    const std::string path = (fs::path(dir) / name).string();
    if (!fs::exists(path)) throw Error(fmt::format("{}: listed file '{}' does not exist", source, name));
    const std::string got = io::sha256_hex(read_bounded(path));
    if (got != hash)
      throw Error(fmt::format("{}: the sha256 of '{}' is {}, the manifest says {}", source, name, got, hash));
  }
  return hashes.size();
}

}  // namespace advplan::rubric
