#pragma once
// The closed vocabularies (docs/ARCHITECTURE.md "Data model"): sides, action categories, RED pressure categories, framings.
#include <array>
#include <optional>
#include <string_view>

namespace advplan {

enum class Side { Blue, Red };
inline constexpr std::array<Side, 2> kSides{Side::Blue, Side::Red};

enum class Category {
  movement,
  fires,
  information,
  cyber,
  sustainment,
  protection,
  command,
  public_information,
  deception,
  civil
};
inline constexpr std::size_t kNumCategories = 10;

enum class Pressure { direct, cyber, logistics, information_gathering, public_information };
inline constexpr std::size_t kNumPressures = 5;

enum class Framing { neutral, blue_favorable, red_favorable };
inline constexpr std::size_t kNumFramings = 3;

std::string_view to_string(Side s);
std::string_view to_string(Category c);
std::string_view to_string(Pressure p);
std::string_view to_string(Framing f);

std::optional<Side> parse_side(std::string_view s);
std::optional<Category> parse_category(std::string_view s);
std::optional<Pressure> parse_pressure(std::string_view s);
std::optional<Framing> parse_framing(std::string_view s);

/// "movement, fires, ..." for error messages.
std::string_view category_names();
std::string_view pressure_names();

inline constexpr std::size_t index(Category c) { return static_cast<std::size_t>(c); }
inline constexpr std::size_t index(Pressure p) { return static_cast<std::size_t>(p); }
inline constexpr std::size_t index(Side s) { return static_cast<std::size_t>(s); }
inline constexpr Side other(Side s) { return s == Side::Blue ? Side::Red : Side::Blue; }

/// One row of the pressure <-> category table (docs/METRICS.md "Pressure category of an action").
struct PressureCategories {
  Pressure pressure;
  Category main_effort;             ///< RED: the category a main effort exerting this pressure uses
  std::optional<Category> also_by;  ///< RED: the other category whose actions exert it, if any
  Category counter;                 ///< BLUE: the category that counters it (vulnerability, mitigation)
};
/// The one pressure <-> category table, a row per pressure in enum order. Every mapping between the two
/// vocabularies (pressure_of, the BLUE vulnerability, the council's mitigations, the offline LLM client's main
/// effort) reads it.
inline constexpr std::array<PressureCategories, kNumPressures> kPressureTable{{
    {Pressure::direct, Category::fires, Category::movement, Category::protection},
    {Pressure::cyber, Category::cyber, std::nullopt, Category::cyber},
    {Pressure::logistics, Category::sustainment, std::nullopt, Category::sustainment},
    {Pressure::information_gathering, Category::information, Category::deception, Category::deception},
    {Pressure::public_information, Category::public_information, std::nullopt, Category::public_information},
}};
inline constexpr const PressureCategories& pressure_categories(Pressure p) { return kPressureTable[index(p)]; }

/// The pressure a RED action of this category exerts (docs/METRICS.md "RED candidates and pressure"); nullopt for categories that
/// exert none (protection, command, civil).
std::optional<Pressure> pressure_of(Category c);

}  // namespace advplan
