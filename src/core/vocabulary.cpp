#include "advplan/core/vocabulary.hpp"

namespace advplan {
namespace {
constexpr std::array<std::string_view, kNumCategories> kCategoryNames{
    "movement",   "fires",   "information", "cyber",     "sustainment",
    "protection", "command", "public_information", "deception", "civil"};
constexpr std::array<std::string_view, kNumPressures> kPressureNames{
    "direct", "cyber", "logistics", "information_gathering", "public_information"};
constexpr std::array<std::string_view, kNumFramings> kFramingNames{"neutral", "blue_favorable",
                                                                   "red_favorable"};

template <typename E, std::size_t N>
std::optional<E> parse(std::string_view s, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}
}  // namespace

std::string_view to_string(Side s) { return s == Side::Blue ? "BLUE" : "RED"; }
std::string_view to_string(Category c) { return kCategoryNames[index(c)]; }
std::string_view to_string(Pressure p) { return kPressureNames[index(p)]; }
std::string_view to_string(Framing f) { return kFramingNames[static_cast<std::size_t>(f)]; }

std::optional<Side> parse_side(std::string_view s) {
  if (s == "BLUE") return Side::Blue;
  if (s == "RED") return Side::Red;
  return std::nullopt;
}
std::optional<Category> parse_category(std::string_view s) { return parse<Category>(s, kCategoryNames); }
std::optional<Pressure> parse_pressure(std::string_view s) { return parse<Pressure>(s, kPressureNames); }
std::optional<Framing> parse_framing(std::string_view s) { return parse<Framing>(s, kFramingNames); }

std::string_view category_names() {
  return "movement, fires, information, cyber, sustainment, protection, command, public_information, "
         "deception, civil";
}
std::string_view pressure_names() {
  return "direct, cyber, logistics, information_gathering, public_information";
}

static_assert([] {
  for (std::size_t p = 0; p < kNumPressures; ++p)
    if (index(kPressureTable[p].pressure) != p) return false;
  return true;
}(), "kPressureTable rows must follow the Pressure enum order");

std::optional<Pressure> pressure_of(Category c) {
  for (const auto& row : kPressureTable)
    if (row.main_effort == c || row.also_by == c) return row.pressure;
  return std::nullopt;
}

}  // namespace advplan
