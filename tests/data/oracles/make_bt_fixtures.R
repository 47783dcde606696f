#!/usr/bin/Rscript
# Oracle values for the Bradley-Terry fit (tests/stats/ratings_test.cpp), computed once and stored with their inputs
# in tests/data/oracles/bt_fixtures.json. Re-run only to add cases (CI has no R; the test reads the JSON):
#
#     Rscript tests/data/oracles/make_bt_fixtures.R > tests/data/oracles/bt_fixtures.json
#
# Source of each value: BradleyTerry2::BTm (Debian/CRAN BradleyTerry2 1.1-2), the binomial logit model
# P(i beats j) = plogis(lambda_i - lambda_j) fitted by glm's IRLS with epsilon = 1e-14 and maxit = 100, the first
# player as the reference; the abilities (BTabilities) are then centred to mean 0, the convention of
# advplan::bradley_terry_mm. Each case is a matrix of whole-number scores (wins) and game counts.
suppressPackageStartupMessages(library(BradleyTerry2))

fit_case <- function(name, wins) {
  n <- nrow(wins)
  lev <- sprintf("p%02d", seq_len(n))
  rows <- list()
  for (i in 1:(n - 1)) for (j in (i + 1):n) {
    if (wins[i, j] + wins[j, i] > 0)
      rows[[length(rows) + 1]] <- data.frame(p1 = lev[i], p2 = lev[j], w1 = wins[i, j], w2 = wins[j, i])
  }
  d <- do.call(rbind, rows)
  d$p1 <- factor(d$p1, levels = lev)
  d$p2 <- factor(d$p2, levels = lev)
  m <- BTm(cbind(w1, w2), p1, p2, data = d, refcat = lev[1], control = glm.control(epsilon = 1e-14, maxit = 100))
  ab <- BTabilities(m)[, "ability"]
  theta <- as.numeric(ab - mean(ab))
  games <- wins + t(wins)
  list(name = name, players = n, score = wins, games = games, theta = theta, converged = m$converged)
}

set.seed(20261207)
cases <- list()
# A round robin of five players, 20 games a pair.
rr <- matrix(0, 5, 5)
for (i in 1:4) for (j in (i + 1):5) {
  w <- rbinom(1, 20, plogis((j - i) * 0.4))
  rr[i, j] <- w
  rr[j, i] <- 20 - w
}
cases[[1]] <- fit_case("round_robin_5", rr)
# The meta-game's shape: 3 BLUE policies (players 1-3) against 4 RED (4-7), 10 replications in each of 6 scenarios.
bp <- matrix(0, 7, 7)
for (i in 1:3) for (j in 4:7) {
  w <- rbinom(1, 60, plogis(0.5 * i - 0.3 * (j - 4)))
  bp[i, j] <- w
  bp[j, i] <- 60 - w
}
cases[[2]] <- fit_case("bipartite_3x4", bp)
# Uneven game counts and one lopsided pair (still Hunter's condition: every split has a win across it).
uv <- matrix(c(0, 9, 1, 0,
               1, 0, 3, 2,
               2, 4, 0, 7,
               5, 1, 1, 0), 4, 4, byrow = TRUE)
cases[[3]] <- fit_case("uneven_4", uv)

out <- list(source = "BradleyTerry2::BTm 1.1-2, glm.control(epsilon = 1e-14, maxit = 100), abilities centred to mean 0",
            cases = cases)
cat(jsonlite::toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), "\n")
