#!/usr/bin/python3
"""Figures of an advplan run, built from its trace CSVs alone.

    /usr/bin/python3 experiments/plot.py RUN_DIR [--out DIR] [--scenario ID]

Writes PNG and SVG of each figure to DIR (default RUN_DIR/figures) and prints every path it writes:

  budget_curve          BLUE advantage and RED quality against the RED response budget k, with 95% bootstrap
                        bands (budget_curve.csv; the data of Table 4).
  frontier_<ID>         the quality-coherence candidate set of one scenario under greedy@8 (or the largest-k
                        greedy condition present): the Pareto frontier, the quality-greedy pick and the
                        constraint-aware pick (candidates.csv).
  template_slice        BLUE advantage by template for each condition of group main, with 95% bootstrap
                        intervals (per_scenario.csv and bootstrap_summary.csv; the data of Table 5).
  council               first-round against revised council candidates: adjudicator score against RED pressure,
                        and the score distribution per round (council_candidates.csv; beside Table 6). Skipped
                        with a note when the run has no council_candidates.csv.

Only numpy and matplotlib (Debian's python3-numpy and python3-matplotlib) are used. Output is deterministic:
rerunning on the same run directory gives byte-identical SVG and PNG files.
Exit status: 0 on success, 1 on a missing or malformed input or an unknown --scenario, 2 when matplotlib or
numpy is not installed.
"""

import argparse
import csv
import math
import os
import sys
import tempfile

PROG = "plot.py"

# Fixed figure geometry, so reruns give identical files.
DPI = 150
SIZE_BUDGET = (10.0, 4.2)
SIZE_FRONTIER = (7.2, 6.2)
SIZE_TEMPLATE = (10.0, 4.8)
SIZE_COUNCIL = (11.0, 4.6)

# Colours (matplotlib's tab10, fixed per role so every figure agrees).
BLUE = "#1f77b4"
RED = "#d62728"
GREY = "#7f7f7f"
CONDITION_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
ROUND_COLOURS = {1: "#1f77b4", 2: "#ff7f0e"}


UMASK = os.umask(0)
os.umask(UMASK)


class InputError(Exception):
    """A missing or malformed input: the message is one sentence naming the file."""


def fail(message, status=1):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(status)


# --------------------------------------------------------------------------------------------------- reading


def read_csv(path, required_columns):
    """Reads a CSV written by advplan into {column: list of str}; checks the header has `required_columns`."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing (a run directory written by `advplan run` has it)")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{path}: cannot be read ({e})") from None
    if not rows or not rows[0]:
        raise InputError(f"{path}: empty file, expected a header line")
    header = rows[0]
    missing = [c for c in required_columns if c not in header]
    if missing:
        raise InputError(f"{path}: no column '{missing[0]}' in the header")
    data = {c: [] for c in header}
    for line_no, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(f"{path}: line {line_no} has {len(row)} fields, the header has {len(header)}")
        for c, v in zip(header, row):
            data[c].append(v)
    data["__path__"] = path
    data["__n__"] = len(data[header[0]])
    return data


def numbers(table, column):
    """The column as a float array; empty cells (advplan's NaN) become nan."""
    np = _np()
    out = np.empty(table["__n__"], dtype=float)
    for i, s in enumerate(table[column]):
        if s == "":
            out[i] = math.nan
            continue
        try:
            out[i] = float(s)
        except ValueError:
            raise InputError(f"{table['__path__']}: line {i + 2}: column '{column}' is not a number: '{s}'") from None
    return out


def strings(table, column):
    np = _np()
    return np.array(table[column], dtype=object)


def _np():
    import numpy

    return numpy


def k_of(condition):
    """k of a greedy@k condition label, or None."""
    if not condition.startswith("greedy@"):
        return None
    try:
        return int(condition[len("greedy@"):])
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------------- figures


def save(fig, out_dir, name, written):
    """Writes NAME.png and NAME.svg atomically (temporary name, then rename) and records their paths."""
    for ext in ("png", "svg"):
        final = os.path.join(out_dir, f"{name}.{ext}")
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".{ext}", dir=out_dir)
        os.close(fd)
        try:
            if ext == "svg":
                fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
            else:
                fig.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})
            os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp creates 0600; give the file the usual permissions
            os.replace(tmp, final)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        print(final)
        written.append(final)


def plot_budget_curve(plt, budget, out_dir, written):
    np = _np()
    k = numbers(budget, "k")
    order = np.argsort(k, kind="stable")
    k = k[order]
    if k.size == 0:
        raise InputError(f"{budget['__path__']}: no rows (the run has no response-budget sweep)")
    fig, axes = plt.subplots(1, 2, figsize=SIZE_BUDGET, constrained_layout=True)
    panels = [
        ("advantage", "BLUE advantage", BLUE, "BLUE advantage vs RED budget"),
        ("red_quality", "RED quality", RED, "RED quality vs RED budget"),
    ]
    for ax, (col, label, colour, title) in zip(axes, panels):
        y = numbers(budget, col)[order]
        lo = numbers(budget, col + "_lo")[order]
        hi = numbers(budget, col + "_hi")[order]
        ax.fill_between(k, lo, hi, color=colour, alpha=0.2, linewidth=0, label="95% bootstrap interval")
        ax.plot(k, y, color=colour, marker="o", linewidth=1.8, label="mean over scenarios")
        ax.set_xscale("log", base=2)
        ax.set_xticks(k)
        ax.set_xticklabels([f"{int(v)}" if float(v).is_integer() else f"{v:g}" for v in k])
        ax.minorticks_off()
        if k.size > 1:
            ax.set_xlim(k[0] / 1.25, k[-1] * 1.25)
        ax.set_xlabel("RED response budget k (greedy best-of-k, log2 scale)")
        ax.set_ylabel(label)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    n = numbers(budget, "n")
    if n.size and np.all(n == n[0]):
        fig.suptitle(f"Response-budget sweep (BLUE seed plan vs greedy@k, n = {int(n[0])} scenarios)")
    else:
        fig.suptitle("Response-budget sweep (BLUE seed plan vs greedy@k)")
    save(fig, out_dir, "budget_curve", written)
    plt.close(fig)


def frontier_condition(cands, scenario):
    """greedy@8 if the scenario has it, else the largest-k greedy condition it has, else None."""
    conds = [c for s, c in zip(cands["scenario_id"], cands["condition"]) if s == scenario]
    if "greedy@8" in conds:
        return "greedy@8"
    greedy = sorted({c for c in conds if k_of(c) is not None}, key=k_of)
    return greedy[-1] if greedy else None


def plot_frontier(plt, cands, scenario, condition, out_dir, written):
    np = _np()
    sid = strings(cands, "scenario_id")
    cond = strings(cands, "condition")
    mask = (sid == scenario) & (cond == condition)
    q = numbers(cands, "quality")[mask]
    d = numbers(cands, "coherence")[mask]
    front = numbers(cands, "on_frontier")[mask] == 1
    greedy = numbers(cands, "selected_greedy")[mask] == 1
    constraint = numbers(cands, "selected_constraint")[mask] == 1
    valid = ~(np.isnan(q) | np.isnan(d))

    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=SIZE_FRONTIER, constrained_layout=True)
    # Legend entries are proxies of one size, so the large pick markers do not crowd the legend.
    handles = []
    rest = valid & ~front
    ax.scatter(q[rest], d[rest], s=40, color=GREY, alpha=0.8, zorder=2)
    handles.append(Line2D([], [], linestyle="none", marker="o", markersize=7, color=GREY, alpha=0.8,
                          label=f"dominated candidate ({int(rest.sum())})"))
    fq, fd = q[front & valid], d[front & valid]
    if fq.size:
        o = np.lexsort((-fd, fq))  # quality ascending (coherence then descends along the frontier)
        fq, fd = fq[o], fd[o]
        # The attainment boundary of a maximisation frontier: drop to the next point's coherence, then move right.
        ax.step(fq, fd, where="pre", color=RED, linewidth=1.5, zorder=3)
        ax.scatter(fq, fd, s=55, color=RED, zorder=4)
        handles.append(Line2D([], [], color=RED, linewidth=1.5, marker="o", markersize=7,
                              label=f"Pareto-optimal ({fq.size} of {int(valid.sum())})"))
    # Open markers of different shapes, so both picks (and the point under them) stay visible when they coincide.
    if greedy.any():
        ax.scatter(q[greedy], d[greedy], s=190, facecolors="none", edgecolors="black", linewidths=1.6, marker="s",
                   zorder=5)
        handles.append(Line2D([], [], linestyle="none", marker="s", markersize=11, markerfacecolor="none",
                              markeredgecolor="black", markeredgewidth=1.6, label="quality-greedy pick (max q)"))
    if constraint.any():
        ax.scatter(q[constraint], d[constraint], s=420, facecolors="none", edgecolors="#2ca02c", linewidths=1.8,
                   marker="D", zorder=6)
        handles.append(Line2D([], [], linestyle="none", marker="D", markersize=11, markerfacecolor="none",
                              markeredgecolor="#2ca02c", markeredgewidth=1.8,
                              label="constraint-aware pick (max \u03bbq + (1\u2212\u03bb)D)"))
    if greedy.any() and constraint.any() and np.array_equal(np.flatnonzero(greedy), np.flatnonzero(constraint)):
        ax.text(0.02, 0.98, "both selectors pick the same candidate", transform=ax.transAxes, ha="left", va="top",
                fontsize="small", color="#333333")
    ax.set_xlabel("RED candidate quality q")
    ax.set_ylabel("RED candidate coherence D")
    ax.set_title(f"RED candidate frontier, {scenario} ({condition})")
    ax.grid(True, alpha=0.3)
    if valid.any():
        span_q = max(np.nanmax(q) - np.nanmin(q), 0.05)
        span_d = max(np.nanmax(d) - np.nanmin(d), 0.05)
        ax.set_xlim(np.nanmin(q) - 0.08 * span_q, np.nanmax(q) + 0.08 * span_q)
        ax.set_ylim(np.nanmin(d) - 0.08 * span_d, np.nanmax(d) + 0.12 * span_d)
    else:
        ax.text(0.5, 0.5, "no valid candidate", transform=ax.transAxes, ha="center", va="center")
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize="small",
              frameon=False)
    save(fig, out_dir, f"frontier_{scenario}", written)
    plt.close(fig)


def plot_template_slice(plt, per, boot, out_dir, written):
    np = _np()
    status = strings(per, "status")
    group = strings(per, "condition_group")
    cond = strings(per, "condition")
    tpl = strings(per, "template")
    adv = numbers(per, "advantage")
    ok = (status == "ok") & ~np.isnan(adv)

    def ordered(values):
        seen = []
        for v in values:
            if v not in seen:
                seen.append(v)
        return seen

    conditions = ordered(cond[group == "main"])
    group_note = "group main"
    if not conditions:  # a run without the paper's main group: plot every condition it has
        conditions = ordered(cond)
        group_note = "all conditions"
    templates = ordered(tpl)

    # Bootstrap intervals recorded by the run, keyed by (template, condition).
    intervals = {}
    b_scope, b_cond, b_metric = boot["scope"], boot["condition"], boot["metric"]
    b_mean, b_lo, b_hi = numbers(boot, "mean"), numbers(boot, "ci_lo"), numbers(boot, "ci_hi")
    for i in range(boot["__n__"]):
        if b_metric[i] == "advantage" and b_scope[i].startswith("template="):
            intervals[(b_scope[i][len("template="):], b_cond[i])] = (b_mean[i], b_lo[i], b_hi[i])

    fig, ax = plt.subplots(figsize=SIZE_TEMPLATE, constrained_layout=True)
    x = np.arange(len(templates), dtype=float)
    width = 0.8 / max(len(conditions), 1)
    lows = []
    highs = []
    for j, c in enumerate(conditions):
        means = np.full(len(templates), math.nan)
        err = np.zeros((2, len(templates)))
        for i, t in enumerate(templates):
            sel = ok & (cond == c) & (tpl == t)
            if sel.any():
                means[i] = float(np.mean(adv[sel]))
            if (t, c) in intervals:
                _, lo, hi = intervals[(t, c)]
                if not (math.isnan(lo) or math.isnan(hi) or math.isnan(means[i])):
                    err[0, i] = max(means[i] - lo, 0.0)
                    err[1, i] = max(hi - means[i], 0.0)
                    lows.append(lo)
                    highs.append(hi)
        if not np.isnan(means).all():
            lows.append(np.nanmin(means))
            highs.append(np.nanmax(means))
        colour = CONDITION_COLOURS[j % len(CONDITION_COLOURS)]
        ax.bar(x + (j - (len(conditions) - 1) / 2) * width, np.nan_to_num(means), width * 0.95, yerr=err,
               color=colour, label=c, error_kw={"elinewidth": 1.0, "capsize": 2.5, "ecolor": "black"})
    ax.set_xticks(x)
    ax.set_xticklabels(templates)
    ax.set_xlabel("Scenario template")
    ax.set_ylabel("BLUE advantage (mean, 95% bootstrap CI)")
    ax.set_title(f"BLUE advantage by template and RED condition ({group_note})")
    if lows:
        lo, hi = min(lows), max(highs)
        pad = max(hi - lo, 0.02) * 0.15
        ax.set_ylim(max(lo - pad, 0.0) if lo >= 0 else lo - pad, hi + pad)
    ax.axhline(0.5, color=GREY, linewidth=0.8, linestyle="--", zorder=0, label="parity (A = 0.5)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(title="Condition", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    save(fig, out_dir, "template_slice", written)
    plt.close(fig)


def plot_council(plt, council, out_dir, written):
    np = _np()
    rnd = numbers(council, "round")
    score = numbers(council, "score")
    pressure = numbers(council, "pressure")
    selected = numbers(council, "selected") == 1
    valid = ~(np.isnan(score) | np.isnan(pressure) | np.isnan(rnd))
    rounds = sorted(int(r) for r in set(rnd[valid].tolist()))
    n_scen = len(set(council["scenario_id"]))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=SIZE_COUNCIL, constrained_layout=True,
                                   gridspec_kw={"width_ratios": [1.6, 1.0]})
    names = {1: "round 1 (first proposals)", 2: "round 2 (revised)"}
    for r in rounds:
        m = valid & (rnd == r)
        ax1.scatter(pressure[m], score[m], s=14, alpha=0.55, color=ROUND_COLOURS.get(r, GREY), linewidths=0,
                    label=f"{names.get(r, f'round {r}')}, n = {int(m.sum())}")
    m = valid & selected
    if m.any():
        ax1.scatter(pressure[m], score[m], s=46, facecolors="none", edgecolors="black", linewidths=1.0,
                    label=f"selected plan, n = {int(m.sum())}")
    ax1.set_xlabel("RED pressure on the candidate (highest-pressure response)")
    ax1.set_ylabel("Adjudicator score")
    ax1.set_title("Council candidates: score vs RED pressure")
    ax1.grid(True, alpha=0.3)
    ax1.legend(loc="best", fontsize="small", markerscale=1.3)

    data = [score[valid & (rnd == r)] for r in rounds]
    if data:
        positions = list(range(1, len(rounds) + 1))
        bp = ax2.boxplot(data, positions=positions, widths=0.5, patch_artist=True, showmeans=True,
                         medianprops={"color": "black"},
                         meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black",
                                    "markersize": 5},
                         flierprops={"marker": ".", "markersize": 4, "alpha": 0.5})
        for patch, r in zip(bp["boxes"], rounds):
            patch.set_facecolor(ROUND_COLOURS.get(r, GREY))
            patch.set_alpha(0.6)
        # Selected plans' scores beside each round's box.
        labelled = False
        for pos, r in zip(positions, rounds):
            s = score[valid & selected & (rnd == r)]
            if s.size:
                ax2.scatter(np.full(s.size, pos + 0.35), s, s=10, color="black", alpha=0.6, linewidths=0,
                            label=None if labelled else "selected plan")
                labelled = True
        ax2.set_xticks(positions)
        ax2.set_xticklabels([("round 1\nfirst proposals" if r == 1 else "round 2\nrevised" if r == 2 else f"round {r}")
                             + f"\n(n = {d.size})" for r, d in zip(rounds, data)])
        ax2.set_xlim(0.5, len(rounds) + 0.75)
        if ax2.get_legend_handles_labels()[0]:
            ax2.legend(loc="best", fontsize="small")
    ax2.set_ylabel("Adjudicator score")
    ax2.set_title("Score by round (box: quartiles, \u25c7: mean)")
    ax2.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"Multi-agent council: first-round vs revised candidates ({n_scen} scenarios)")
    save(fig, out_dir, "council", written)
    plt.close(fig)


# --------------------------------------------------------------------------------------------------- main


def verify_run_manifest(run_dir):
    """Refuses a directory that is not one complete run, as `advplan tables` does (docs/TRACES.md "Run directory
    and MANIFEST"): MANIFEST present, every listed file outside tables/ and figures/ present with its sha256,
    and no unlisted file outside them. Returns an error sentence naming the file, or None."""
    import hashlib
    manifest = os.path.join(run_dir, "MANIFEST")
    if not os.path.isfile(manifest):
        return f"{manifest}: missing, so {run_dir} is not a complete run (interrupted, or not written by advplan run)"
    listed = {}
    with open(manifest, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if len(line) < 67 or line[64:66] != "  ":
                return f"{manifest}: line {n}: expected '<sha256>  <file>'"
            listed[line[66:]] = line[:64]
    derived = lambda rel: rel.startswith("tables/") or rel.startswith("figures/")  # noqa: E731
    for rel, digest in listed.items():
        if derived(rel):
            continue
        path = os.path.join(run_dir, rel)
        if not os.path.isfile(path):
            return f"{path}: listed in MANIFEST but missing, so the run is incomplete"
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 16), b""):
                h.update(block)
        if h.hexdigest() != digest:
            return f"{path}: does not match its sha256 in MANIFEST (the file changed after the run)"
    for root, dirs, files in os.walk(run_dir):
        rel_root = os.path.relpath(root, run_dir)
        if rel_root == ".":
            dirs[:] = [d for d in dirs if d not in ("tables", "figures")]
        for name in files:
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            if rel in ("MANIFEST", "run_metadata.json") or rel in listed:
                continue
            return (f"{os.path.join(run_dir, rel)}: not listed in MANIFEST (a leftover of another run or of an "
                    "interrupted write); this directory does not hold one run")
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Figures of an advplan run (PNG and SVG), built from its trace CSVs alone.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory written by `advplan run`")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: RUN_DIR/figures)")
    parser.add_argument("--scenario", metavar="ID", default="urban-100",
                        help="scenario of the frontier figure (default: urban-100)")
    args = parser.parse_args(argv)

    try:
        import matplotlib
    except ImportError:
        fail("matplotlib is not installed (apt-get install python3-matplotlib)", 2)
    try:
        import numpy  # noqa: F401
    except ImportError:
        fail("numpy is not installed (apt-get install python3-numpy)", 2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update({
        "svg.hashsalt": "advplan",
        "svg.fonttype": "path",
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "font.size": 10,
        "axes.titlesize": 11,
        "path.simplify": False,
    })
    if "svg.id" in matplotlib.rcParams:  # matplotlib >= 3.7: fixed id of the SVG root element
        matplotlib.rcParams["svg.id"] = "advplan"

    run_dir = args.run_dir
    if not os.path.isdir(run_dir):
        fail(f"{run_dir}: no such run directory (write one with `advplan run --out {run_dir}`)")
    problem = verify_run_manifest(run_dir)
    if problem:
        fail(problem)
    out_dir = args.out if args.out else os.path.join(run_dir, "figures")

    # Read and check every input before writing anything.
    p = lambda name: os.path.join(run_dir, name)  # noqa: E731
    try:
        budget = read_csv(p("budget_curve.csv"), ["k", "n", "advantage", "advantage_lo", "advantage_hi",
                                                  "red_quality", "red_quality_lo", "red_quality_hi"])
        cands = read_csv(p("candidates.csv"), ["scenario_id", "condition", "k", "quality", "coherence",
                                               "on_frontier", "selected_greedy", "selected_constraint"])
        per = read_csv(p("per_scenario.csv"), ["scenario_id", "template", "condition", "condition_group", "status",
                                               "advantage"])
        boot = read_csv(p("bootstrap_summary.csv"), ["scope", "condition", "metric", "mean", "ci_lo", "ci_hi"])
        council = None
        if os.path.exists(p("council_candidates.csv")):
            council = read_csv(p("council_candidates.csv"), ["scenario_id", "round", "quality", "coherence",
                                                             "pressure", "score", "selected"])
        # Every numeric cell used below must parse: a malformed number is named now, before any file is written.
        for table, columns in ((budget, ["k", "n", "advantage", "advantage_lo", "advantage_hi", "red_quality",
                                         "red_quality_lo", "red_quality_hi"]),
                               (cands, ["quality", "coherence", "on_frontier", "selected_greedy",
                                        "selected_constraint"]),
                               (per, ["advantage"]),
                               (boot, ["mean", "ci_lo", "ci_hi"]),
                               (council, ["round", "pressure", "score", "selected"])):
            if table is not None:
                for c in columns:
                    numbers(table, c)
        scenario_ids = list(dict.fromkeys(cands["scenario_id"]))  # file order, without repeats
        if args.scenario not in scenario_ids:
            shown = ", ".join(scenario_ids[:6]) + (", ..." if len(scenario_ids) > 6 else "")
            fail(f"--scenario {args.scenario}: no such scenario in {p('candidates.csv')} "
                 f"({len(scenario_ids)} available: {shown or 'none'})")
        condition = frontier_condition(cands, args.scenario)
        if condition is None:
            fail(f"{p('candidates.csv')}: scenario {args.scenario} has no greedy@k candidate set to plot")

        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            fail(f"{out_dir}: output directory cannot be created ({e.strerror})")
        if not os.access(out_dir, os.W_OK):
            fail(f"{out_dir}: output directory is not writable")

        written = []
        plot_budget_curve(plt, budget, out_dir, written)
        plot_frontier(plt, cands, args.scenario, condition, out_dir, written)
        plot_template_slice(plt, per, boot, out_dir, written)
        if council is not None:
            plot_council(plt, council, out_dir, written)
        else:
            print(f"{PROG}: note: {p('council_candidates.csv')} is absent (no council condition in this run); "
                  "skipping the council figure", file=sys.stderr)
    except InputError as e:
        fail(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
