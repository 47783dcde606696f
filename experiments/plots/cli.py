"""The command line of plot.py: `RUN_DIR` (the run figures), `RUN_DIR --metagame`, `frontier RUN_DIR` and
`map FILE.geojson`. Each reads and checks every input before it writes anything."""

import argparse
import os
import sys

from .common import PROG, InputError, check_numbers, check_run, fail, load_matplotlib, make_out_dir, read_csv, save
from .evaluation import plot_forest, plot_robustness, plot_scorecard
from .sweep import plot_sweep, sweep_settings
from .attribution import plot_attribution
from .frontier import (frontier_default_condition, frontier_disagreement, frontier_lambda, plot_frontier_attainment,
                       plot_frontier_cloud, plot_frontier_eaf_diff, plot_frontier_hypervolume)
from .map import draw_map, read_map
from .metagame import plot_metagame_exploitability, plot_metagame_payoff, plot_metagame_response_graph, read_metagame
from .rubric import plot_agreement_panel, plot_judge_agreement, plot_rubric_scores
from .run import (frontier_condition, plot_budget_curve, plot_council, plot_extrapolation, plot_frontier,
                  plot_template_slice)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Figures of an advplan run (PNG and SVG), built from its trace CSVs alone.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory written by `advplan run`")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: RUN_DIR/figures)")
    parser.add_argument("--scenario", metavar="ID", default="urban-100",
                        help="scenario of the frontier figure (default: urban-100)")
    parser.add_argument("--metagame", action="store_true",
                        help="draw only the meta-game figures, from RUN_DIR/metagame (`advplan metagame RUN_DIR`)")
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "frontier":
        return frontier_main(argv[1:])
    if argv and argv[0] == "map":
        return map_main(argv[1:])
    args = parser.parse_args(argv)
    plt = load_matplotlib()

    run_dir = args.run_dir
    if not os.path.isdir(run_dir):
        fail(f"{run_dir}: no such run directory (write one with `advplan run --out {run_dir}`)")
    if args.metagame:  # figures of metagame/, which `advplan metagame` derived from checked runs
        return metagame_main(plt, run_dir, args.out)
    problem = check_run(run_dir)
    if problem:
        fail(problem)
    return run_main(plt, run_dir, args.out if args.out else os.path.join(run_dir, "figures"), args.scenario)


def run_main(plt, run_dir, out_dir, scenario):
    """The figures of one run: budget curve, frontier of `scenario`, template slice, robustness, and those of the
    evaluation, rubric and council files the run has."""
    # Read and check every input before writing anything.
    p = lambda name: os.path.join(run_dir, name)  # noqa: E731
    try:
        budget = read_csv(p("budget_curve.csv"), ["k", "n", "advantage", "advantage_lo", "advantage_hi",
                                                  "red_quality", "red_quality_lo", "red_quality_hi"])
        cands = read_csv(p("candidates.csv"), ["scenario_id", "condition", "k", "quality", "coherence",
                                               "on_frontier", "selected_greedy", "selected_constraint"])
        per = read_csv(p("per_scenario.csv"), ["scenario_id", "template", "condition", "condition_group", "status",
                                               "advantage", "blue_policy", "red_policy"])
        boot = read_csv(p("bootstrap_summary.csv"), ["scope", "condition", "metric", "mean", "ci_lo", "ci_hi"])
        council = None
        if os.path.exists(p("council_candidates.csv")):
            council = read_csv(p("council_candidates.csv"), ["scenario_id", "round", "quality", "coherence",
                                                             "pressure", "score", "selected"])
        # Every numeric cell used below must parse: a malformed number is named now, before any file is written.
        check_numbers(((budget, ["k", "n", "advantage", "advantage_lo", "advantage_hi", "red_quality",
                                 "red_quality_lo", "red_quality_hi"]),
                       (cands, ["quality", "coherence", "on_frontier", "selected_greedy", "selected_constraint"]),
                       (per, ["advantage"]),
                       (boot, ["mean", "ci_lo", "ci_hi"]),
                       (council, ["round", "pressure", "score", "selected"])))
        scenario_ids = list(dict.fromkeys(cands["scenario_id"]))  # file order, without repeats
        if scenario not in scenario_ids:
            shown = ", ".join(scenario_ids[:6]) + (", ..." if len(scenario_ids) > 6 else "")
            fail(f"--scenario {scenario}: no such scenario in {p('candidates.csv')} "
                 f"({len(scenario_ids)} available: {shown or 'none'})")
        condition = frontier_condition(cands, scenario)
        rubric = {}
        for name, cols in (("decomposition", ["judge", "model", "dimension", "group", "mean_contribution"]),
                           ("agreement_pairs", ["judge_a", "judge_b", "kappa"]),
                           ("agreement_panel", ["statistic", "value", "lo", "hi"])):
            path = p(os.path.join("rubric", f"{name}.csv"))
            if os.path.exists(path):
                rubric[name] = read_csv(path, cols)
        check_numbers(((rubric.get("decomposition"), ["mean_contribution"]),
                       (rubric.get("agreement_pairs"), ["kappa"]),
                       (rubric.get("agreement_panel"), ["value", "lo", "hi"])))
        evaluation = {}
        for name, cols in (("verdicts", ["blue_policy", "reference", "red_policy", "metric", "difference", "ci_lo",
                                         "ci_hi", "verdict"]),
                           ("scorecard", ["axis", "quantity", "blue_policy", "value", "ci_lo", "ci_hi"])):
            path = p(os.path.join("evaluation", f"{name}.csv"))
            if os.path.exists(path):
                evaluation[name] = read_csv(path, cols)
        check_numbers(((evaluation.get("verdicts"), ["difference", "ci_lo", "ci_hi"]),
                       (evaluation.get("scorecard"), ["value", "ci_lo", "ci_hi"])))
        sweep = argmax = None  # a run with `sweep:` (tables/sweep.csv, tables/sweep_argmax.csv)
        if os.path.exists(p(os.path.join("tables", "sweep.csv"))):
            sweep = read_csv(p(os.path.join("tables", "sweep.csv")), ["point", "metric", "n", "mean", "ci_lo", "ci_hi",
                                                                      "reference"])
            argmax = read_csv(p(os.path.join("tables", "sweep_argmax.csv")), ["metric", "point"])
            check_numbers(((sweep, ["n", "mean", "ci_lo", "ci_hi"]),))
            settings = sweep_settings(sweep)
            if len(settings) == 1:
                check_numbers(((sweep, settings),))
        extra = None  # a run with a budget sweep (extrapolation.csv)
        if os.path.exists(p("extrapolation.csv")):
            extra = read_csv(p("extrapolation.csv"), ["statistic", "k", "level", "n", "observed", "estimate", "ci_lo",
                                                      "ci_hi"])
            check_numbers(((extra, ["level", "observed", "estimate", "ci_lo", "ci_hi"]),))
        attribution = None  # studies: {attribution: true} (studies/attribution.csv)
        if os.path.exists(p(os.path.join("studies", "attribution.csv"))):
            attribution = read_csv(p(os.path.join("studies", "attribution.csv")),
                                   ["metric", "kind", "part", "n", "value", "ci_lo", "ci_hi"])
            check_numbers(((attribution, ["n", "value", "ci_lo", "ci_hi"]),))
        sweep_blue = "the BLUE plan"
        if "blue_policy" in per:
            for g, b in zip(per["condition_group"], per["blue_policy"]):
                if g == "sweep":
                    sweep_blue = b
                    break

        make_out_dir(out_dir, check_writable=True)
        written = []
        if budget["__n__"] > 0:
            plot_budget_curve(plt, budget, out_dir, written, sweep_blue)
        else:
            print(f"{PROG}: note: {p('budget_curve.csv')} has no rows (no greedy@k sweep); skipping the budget "
                  "figure", file=sys.stderr)
        if extra is not None:
            plot_extrapolation(plt, extra, out_dir, written, budget if budget["__n__"] > 0 else None, sweep_blue)
        if condition is not None:
            plot_frontier(plt, cands, scenario, condition, out_dir, written)
        else:
            print(f"{PROG}: note: scenario {scenario} has no greedy@k candidate set; skipping the frontier "
                  "figure", file=sys.stderr)
        plot_template_slice(plt, per, boot, out_dir, written)
        plot_robustness(plt, per, boot, out_dir, written)
        if "verdicts" in evaluation:
            plot_forest(plt, evaluation["verdicts"], out_dir, written)
        if "scorecard" in evaluation:
            plot_scorecard(plt, evaluation["scorecard"], out_dir, written)
        if "decomposition" in rubric:
            plot_rubric_scores(plt, rubric["decomposition"], out_dir, written)
        if "agreement_pairs" in rubric:
            plot_judge_agreement(plt, rubric["agreement_pairs"], out_dir, written)
        if "agreement_panel" in rubric:
            plot_agreement_panel(plt, rubric["agreement_panel"], out_dir, written)
        if sweep is not None:
            plot_sweep(plt, sweep, argmax, out_dir, written)
        if attribution is not None:
            plot_attribution(plt, attribution, out_dir, written)
        if council is not None:
            plot_council(plt, council, out_dir, written)
        else:
            print(f"{PROG}: note: {p('council_candidates.csv')} is absent (no council condition in this run); "
                  "skipping the council figure", file=sys.stderr)
    except InputError as e:
        fail(str(e))
    return 0


def metagame_main(plt, run_dir, out):
    """The figures of RUN_DIR/metagame (`advplan metagame RUN_DIR`), into RUN_DIR/metagame/figures or `out`."""
    meta_dir = os.path.join(run_dir, "metagame")
    out_dir = out if out else os.path.join(meta_dir, "figures")
    try:
        matrix, reds, eq, exploit, graph = read_metagame(meta_dir)
        make_out_dir(out_dir)
        written = []
        plot_metagame_payoff(plt, matrix, reds, eq, out_dir, written)
        plot_metagame_exploitability(plt, exploit, out_dir, written)
        plot_metagame_response_graph(plt, graph, matrix, reds, out_dir, written)
    except InputError as e:
        fail(str(e))
    return 0


def frontier_main(argv):
    """`plot.py frontier RUN_DIR`: the figures of `advplan frontier` (docs/METRICS.md "Pareto frontier analysis"),
    read from candidates.csv and RUN_DIR/frontier/ (or --frontier DIR)."""
    parser = argparse.ArgumentParser(
        prog=f"{PROG} frontier",
        description="Figures of `advplan frontier`: the candidate cloud by rank, the attainment surfaces, "
                    "hypervolume against k and the EAF differences (PNG and SVG).")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory written by `advplan run`")
    parser.add_argument("--frontier", metavar="DIR", help="output of `advplan frontier` (default: RUN_DIR/frontier)")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: RUN_DIR/figures)")
    parser.add_argument("--scenario", metavar="ID",
                        help="scenario of the candidate cloud (default: where the two selectors' picks lie furthest "
                             "apart in (q, D))")
    parser.add_argument("--condition", metavar="C", help="condition of the candidate cloud (default: greedy@8)")
    parser.add_argument("--k", metavar="K", type=int, help="use the greedy@K condition (or another with that k)")
    args = parser.parse_args(argv)
    plt = load_matplotlib()

    run_dir = args.run_dir
    if not os.path.isdir(run_dir):
        fail(f"{run_dir}: no such run directory (write one with `advplan run --out {run_dir}`)")
    fdir = args.frontier if args.frontier else os.path.join(run_dir, "frontier")
    out_dir = args.out if args.out else os.path.join(run_dir, "figures")
    p = lambda name: os.path.join(fdir, name)  # noqa: E731
    try:
        cands = read_csv(os.path.join(run_dir, "candidates.csv"),
                         ["scenario_id", "condition", "k", "index", "quality", "coherence", "selected_greedy",
                          "selected_constraint"])
        if not os.path.isfile(p("ranks.csv")):
            fail(f"{p('ranks.csv')}: missing (run `advplan frontier {run_dir}` first)")
        ranks = read_csv(p("ranks.csv"), ["scenario_id", "condition", "index", "rank"])
        objectives = read_csv(p("objectives.csv"), ["column", "direction"])
        att = read_csv(p("attainment.csv"), ["condition", "level", "runs", "obj1", "obj2"])
        hv = read_csv(p("hypervolume_summary.csv"), ["condition", "k", "hypervolume", "hypervolume_lo",
                                                     "hypervolume_hi", "front_size", "front_size_lo",
                                                     "front_size_hi"])
        diff = read_csv(p("eaf_diff.csv"), ["a", "b", "obj1", "obj2", "difference"])
        check_numbers(((cands, ["quality", "coherence", "selected_greedy", "selected_constraint"]),
                       (ranks, ["rank"]), (att, ["obj1", "obj2"]),
                       (hv, ["k", "hypervolume", "hypervolume_lo", "hypervolume_hi", "front_size", "front_size_lo",
                             "front_size_hi"]),
                       (diff, ["obj1", "obj2", "difference"])))
        conditions = list(dict.fromkeys(cands["condition"]))
        if args.condition is not None:
            if args.condition not in conditions:
                fail(f"--condition {args.condition}: no such condition in {cands['__path__']} "
                     f"(conditions: {', '.join(conditions)})")
            condition = args.condition
        else:
            condition = frontier_default_condition(cands, args.k)
            if condition is None:
                fail(f"--k {args.k}: no condition with that k in {cands['__path__']}")
        scenarios = [s for s, c in zip(cands["scenario_id"], cands["condition"]) if c == condition]
        if args.scenario is not None:
            if args.scenario not in scenarios:
                fail(f"--scenario {args.scenario}: scenario has no {condition} candidates in {cands['__path__']}")
            scenario = args.scenario
        else:
            apart = frontier_disagreement(cands, condition)
            best = max(apart, key=lambda t: t[1], default=(scenarios[0] if scenarios else None, 0.0))
            scenario = best[0]
            print(f"{PROG}: candidate cloud of {scenario} under {condition}: the selectors' picks are "
                  f"{best[1]:.3f} apart in (q, D), the most of any scenario", file=sys.stderr)
        make_out_dir(out_dir)
        written = []
        plot_frontier_cloud(plt, cands, ranks, objectives, scenario, condition, frontier_lambda(run_dir), out_dir,
                            written)
        plot_frontier_attainment(plt, att, objectives, out_dir, written)
        plot_frontier_hypervolume(plt, hv, objectives, out_dir, written)
        plot_frontier_eaf_diff(plt, diff, objectives, out_dir, written)
    except InputError as e:
        fail(str(e))
    return 0


def map_main(argv):
    """`plot.py map FILE.geojson [--out DIR]`: draws a map of `advplan map` or a run's maps/ (docs/GEO.md)."""
    parser = argparse.ArgumentParser(prog=f"{PROG} map",
                                     description="Draw a map written by `advplan map` (PNG and SVG).")
    parser.add_argument("geojson", metavar="FILE.geojson", help="a map from `advplan map` or RUN_DIR/maps/")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: the file's directory)")
    args = parser.parse_args(argv)
    fc, features = read_map(args.geojson)
    plt = load_matplotlib()
    fig = draw_map(plt, fc, features, args.geojson)
    out_dir = args.out if args.out else os.path.dirname(os.path.abspath(args.geojson))
    os.makedirs(out_dir, exist_ok=True)
    written = []
    name = os.path.splitext(os.path.basename(args.geojson))[0]
    save(fig, out_dir, f"map_{name}", written)
    plt.close(fig)
    return 0
