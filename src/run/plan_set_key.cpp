#include "plan_set_key.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/sha256.hpp"

namespace advplan::detail {

namespace {

constexpr const char* kPlansPrefix = "plans:";

std::string key_safe(const std::string& file) {
  std::string out;
  for (const char c : file) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '%' || c == '=' || u < 0x20 || u == 0x7f)
      out += fmt::format("%{:02X}", u);
    else
      out += c;
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> plan_set_key_fields(const std::vector<Condition>& conditions) {
  std::vector<std::string> files;
  for (const Condition& c : conditions)
    for (const std::string* spec : {&c.blue, &c.red})
      if (spec->rfind(kPlansPrefix, 0) == 0) {
        const std::string file = spec->substr(std::char_traits<char>::length(kPlansPrefix));
        if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
      }
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& f : files)
    out.emplace_back(kPlanSetKeyPrefix + key_safe(f), io::sha256_hex(io::read_text_file(f, io::kMaxListBytes)));
  return out;
}

void refuse_plan_set_change(const std::string& where, const char* what, const std::string& field,
                            const std::string& was, const std::string& now) {
  const std::string prefix = kPlanSetKeyPrefix;
  if (field.rfind(prefix, 0) != 0) return;
  throw ConfigError(fmt::format("{}: --resume: this plan set is not the one the {} run recorded in {} played (its "
                                "sha256 was {}, now {}); restore the file, or pass --force to start over",
                                untrusted::excerpt(field.substr(prefix.size()), 300), what, where,
                                was.empty() ? "not recorded" : untrusted::excerpt(was, 80), now));
}

}  // namespace advplan::detail
