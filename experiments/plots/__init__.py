"""Figures of an advplan run, built from its trace CSVs; the package behind experiments/plot.py.

    /usr/bin/python3 experiments/plot.py RUN_DIR [--out DIR] [--scenario ID]
    /usr/bin/python3 experiments/plot.py RUN_DIR --metagame [--out DIR]
    /usr/bin/python3 experiments/plot.py frontier RUN_DIR [--frontier DIR] [--out DIR] [--scenario ID]
                                         [--condition C] [--k K]
    /usr/bin/python3 experiments/plot.py map FILE.geojson [--out DIR]

Writes PNG and SVG of each figure to DIR (default RUN_DIR/figures) and prints every path it writes. Before it
reads a run's CSVs, `plot.py RUN_DIR` checks the run against its MANIFEST with `advplan check RUN_DIR` (the
binary: $ADVPLAN, else build/advplan of this repository, else `advplan` on PATH) and refuses it with the CLI's
sentence when the check fails.

  budget_curve          BLUE advantage and RED quality against the RED response budget k, with 95% bootstrap
                        bands (budget_curve.csv; the data of Table 4).
  extrapolation         the budget curve past the largest k run: observed means, the GPD tail-fit prediction
                        with its 95% joint-bootstrap band, the bounded-tail limit and k* (extrapolation.csv).
  frontier_<ID>         the quality-coherence candidate set of one scenario under greedy@8 (or the largest-k
                        greedy condition present): the Pareto frontier, the quality-greedy pick and the
                        constraint-aware pick (candidates.csv).
  template_slice        BLUE advantage by template for each condition of group main, with 95% bootstrap
                        intervals (per_scenario.csv and bootstrap_summary.csv; the data of Table 5).
  robustness            advantage and win rate of every BLUE policy against greedy@k, with 95% bands.
  forest, scorecard     the paired verdicts and the six-axis scorecard of `advplan evaluate` (evaluation/).
  rubric_scores, judge_agreement, agreement_panel
                        the rubric layer's score decomposition and judge agreement (rubric/).
  sweep                 a run with `sweep:` (tables/sweep.csv): each metric against a one-setting sweep with its
                        95% joint-bootstrap band, the reference and the argmax marked; a heat map per metric for
                        two settings; a curve over the points in grid order for more.
  attribution           the waterfall of the attribution study (studies/attribution.csv): from all parts off,
                        each part's Shapley value with its 95% interval, to all parts on.
  council               first-round against revised council candidates: adjudicator score against RED pressure,
                        and the score distribution per round (council_candidates.csv; beside Table 6). Skipped
                        with a note when the run has no council_candidates.csv.

With --metagame, only the figures of the meta-game are drawn, from RUN_DIR/metagame (written by
`advplan metagame RUN_DIR`), into RUN_DIR/metagame/figures unless --out is given:

  metagame_payoff            the BLUE x RED payoff heat map, equilibrium supports marked (payoff_matrix.csv,
                             equilibrium.json).
  metagame_exploitability    exploitability of each pure policy and of the equilibrium mixtures with 95% bootstrap
                             intervals, per side (exploitability.csv).
  metagame_response_graph    the best-response graph: BLUE and RED policies in two columns, an arrow for each
                             profile's best reply, weighted by how many profiles it answers (response_graph.csv).

`plot.py frontier RUN_DIR` draws the figures of `advplan frontier RUN_DIR` (run it first; it writes
RUN_DIR/frontier/, or pass --frontier DIR) into the same directory:

  frontier_cloud_<ID>_<C>  the candidate set of scenario ID under condition C in the (q, D) plane, coloured by
                        non-domination rank (staircases when the ranks are on (q, D)), both selectors' picks and
                        the lambda iso-line through the constraint-aware pick. Default C: greedy@8 (--k K: greedy@K);
                        default ID: the scenario where the two picks lie furthest apart.
  frontier_attainment   the 10%, 50% and 90% attainment surfaces of each condition (attainment.csv).
  frontier_hypervolume  mean hypervolume and front size against k, with 95% bands (hypervolume_summary.csv).
  frontier_eaf_diff     the EAF difference of each comparison on its grid (eaf_diff.csv).

`plot.py map FILE.geojson` draws a map of `advplan map` (docs/GEO.md) as map_<name>, beside the file unless --out
is given.

Modules: cli (the argument dispatch and the reading of each command's inputs), common (CSV reading, the MANIFEST
check, matplotlib's settings, axis, band and pick helpers, saving PNG and SVG), run (budget curve, frontier,
template slice, council), evaluation (robustness, forest, scorecard), rubric (rubric scores, judge agreement,
agreement panel), metagame, frontier, map.

Only numpy and matplotlib (Debian's python3-numpy and python3-matplotlib) are used. Output is deterministic:
rerunning on the same run directory gives byte-identical SVG and PNG files.
Exit status: 0 on success, 1 on a missing or malformed input, a run that fails its MANIFEST check, an unknown
--scenario or a missing advplan binary, 2 when matplotlib or numpy is not installed.
"""
