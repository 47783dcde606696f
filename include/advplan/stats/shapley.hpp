#pragma once
// Shapley values and pairwise interaction indices of a game of m players (m <= kMaxShapleyPlayers), the game given
// as its value on every coalition: v[S] for the bitmask S (bit i set when player i is in), v.size() == 2^m
// (docs/METRICS.md "Attribution"). Computed exactly, in rational arithmetic from the doubles' exact values, then
// written to a decimal grid so that the written values keep efficiency exactly: the m values on the grid sum to the
// total effect v[N] - v[{}] on the grid, digit for digit.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace advplan {

inline constexpr std::size_t kMaxShapleyPlayers = 6;

/// phi_i = sum over S not holding i of |S|! (m - |S| - 1)! / m! * (v[S + i] - v[S]), in double (each term's weight
/// exact, the sum in coalition order). Throws std::invalid_argument when v.size() != 2^m or m is out of range.
std::vector<double> shapley_values(std::span<const double> v, std::size_t m);

/// The Shapley interaction index of each pair i < j (pairs in the order (0,1), (0,2), ..., (m-2,m-1)):
/// I_ij = sum over S holding neither of |S|! (m - |S| - 2)! / (m - 1)! * (v[S+i+j] - v[S+i] - v[S+j] + v[S]).
std::vector<double> shapley_interactions(std::span<const double> v, std::size_t m);

/// The games of several units (a scenario each; `games` is units x 2^m, row-major) averaged: the mean over units of
/// each player's Shapley value and of the total effect v[N] - v[{}], computed exactly (rationals), then put on the
/// grid of `decimals` decimals (1 to 12): the total rounded to the nearest (halves away from zero), each value
/// floored, and the difference given one unit at a time to the values with the largest remainders (ties to the
/// lower player index). So the values written sum to the total written exactly, and each is within one grid unit
/// of its exact value. Returned as integers of 10^-decimals: [phi_0 .. phi_{m-1}, total]. `units` 0 gives zeros.
std::vector<std::int64_t> shapley_on_grid(std::span<const double> games, std::size_t units, std::size_t m, int decimals);

/// An integer of 10^-decimals as decimal text, e.g. (-1234, 3) -> "-1.234".
std::string grid_text(std::int64_t value, int decimals);

}  // namespace advplan
