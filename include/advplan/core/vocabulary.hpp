#pragma once
// The closed vocabularies of DESIGN.md §2: sides, action categories, RED pressure categories, framings.
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

/// The pressure a RED action of this category exerts (DESIGN.md §3 "Pressure"); nullopt for categories that
/// exert none (protection, command, civil).
std::optional<Pressure> pressure_of(Category c);

}  // namespace advplan
