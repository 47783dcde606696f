#!/usr/bin/python3
"""Figures of an advplan run, built from its trace CSVs alone.

    /usr/bin/python3 experiments/plot.py RUN_DIR [--out DIR] [--scenario ID]
    /usr/bin/python3 experiments/plot.py frontier RUN_DIR [--frontier DIR] [--out DIR] [--scenario ID]
                                         [--condition C] [--k K]

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
SIZE_BUDGET = (14.0, 4.2)
SIZE_ROBUSTNESS = (12.0, 4.4)
SIZE_FOREST = (9.0, 0.32)  # width, height per row
SIZE_SCORECARD = (13.0, 2.6)  # width, height per row of panels
SIZE_FRONTIER = (7.2, 6.2)
SIZE_TEMPLATE = (10.0, 4.8)
SIZE_COUNCIL = (11.0, 4.6)
SIZE_META_PAYOFF = (9.0, 6.4)
SIZE_META_EXPLOIT = (11.0, 4.8)
SIZE_META_GRAPH = (8.0, 6.4)

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


def plot_budget_curve(plt, budget, out_dir, written, sweep_blue="the BLUE plan"):
    np = _np()
    k = numbers(budget, "k")
    order = np.argsort(k, kind="stable")
    k = k[order]
    if k.size == 0:
        raise InputError(f"{budget['__path__']}: no rows (the run has no response-budget sweep)")
    panels = [
        ("advantage", "BLUE advantage", BLUE, "BLUE advantage vs RED budget"),
        ("blue_win_rate", "BLUE win rate", "#2ca02c", "BLUE win rate vs RED budget"),
        ("red_quality", "RED quality", RED, "RED quality vs RED budget"),
    ]
    panels = [p for p in panels if p[0] in budget]
    fig, axes = plt.subplots(1, len(panels), figsize=SIZE_BUDGET, constrained_layout=True)
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
        fig.suptitle(f"Response-budget sweep (BLUE {sweep_blue} vs greedy@k, n = {int(n[0])} scenarios)")
    else:
        fig.suptitle(f"Response-budget sweep (BLUE {sweep_blue} vs greedy@k)")
    save(fig, out_dir, "budget_curve", written)
    plt.close(fig)


def frontier_condition(cands, scenario):
    """The scenario's first condition against greedy@8 (labels `greedy@8` or `BLUE vs greedy@8`), else its
    largest-k greedy condition, else None."""
    conds = list(dict.fromkeys(c for s, c in zip(cands["scenario_id"], cands["condition"]) if s == scenario))
    red_k = lambda c: k_of(c.split(" vs ")[-1])  # noqa: E731
    for c in conds:
        if red_k(c) == 8:
            return c
    greedy = sorted((c for c in conds if red_k(c) is not None), key=red_k)
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
    if not conditions:  # a run without the paper's main group: the evaluate and reference conditions
        conditions = ordered(cond[(group == "evaluate") | (group == "reference")]) or ordered(cond)
        group_note = "evaluated policy and references"
    blue_of, red_of = {}, {}
    if "blue_policy" in per and "red_policy" in per:
        for c, b, r in zip(per["condition"], per["blue_policy"], per["red_policy"]):
            blue_of.setdefault(c, b)
            red_of.setdefault(c, r)
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
        # A dot plot (mean and interval), not bars: the axis need not start at zero.
        label = f"{c}: BLUE {blue_of[c]} vs RED {red_of[c]}" if c in blue_of else c
        keep = ~np.isnan(means)
        ax.errorbar((x + (j - (len(conditions) - 1) / 2) * width)[keep], means[keep], yerr=err[:, keep], fmt="o",
                    color=colour, label=label, elinewidth=1.0, capsize=2.5, markersize=5)
    ax.set_xticks(x)
    ax.set_xticklabels(templates)
    ax.set_xlabel("Scenario template")
    ax.set_ylabel("BLUE advantage (mean, 95% bootstrap CI)")
    ax.set_title(f"BLUE advantage by template and condition ({group_note})")
    if lows:
        lo, hi = min(lows), max(highs)
        pad = max(hi - lo, 0.02) * 0.15
        ax.set_ylim(max(lo - pad, 0.0) if lo >= 0 else lo - pad, hi + pad)
    ax.axhline(0.5, color=GREY, linewidth=0.8, linestyle="--", zorder=0, label="parity (A = 0.5)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(title="Condition (BLUE policy vs RED policy)", loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize="small")
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


def robustness_points(per, boot):
    """{BLUE policy: [(k, adv, lo, hi, win, lo, hi)]} for every BLUE policy with greedy@k rows, from the run's
    bootstrap_summary.csv intervals (scope all) of each (BLUE, greedy@k) condition."""
    conds = {}
    for c, b, r in zip(per["condition"], per["blue_policy"], per["red_policy"]):
        k = k_of(r)
        if k is not None:
            conds.setdefault(b, {}).setdefault(k, c)
    iv = {}
    b_mean, b_lo, b_hi = numbers(boot, "mean"), numbers(boot, "ci_lo"), numbers(boot, "ci_hi")
    for i in range(boot["__n__"]):
        if boot["scope"][i] == "all":
            iv[(boot["condition"][i], boot["metric"][i])] = (b_mean[i], b_lo[i], b_hi[i])
    out = {}
    for b, by_k in conds.items():
        pts = []
        for k in sorted(by_k):
            a = iv.get((by_k[k], "advantage"))
            w = iv.get((by_k[k], "blue_win_rate"))
            if a and w:
                pts.append((k,) + a + w)
        if pts:
            out[b] = pts
    return out


def plot_robustness(plt, per, boot, out_dir, written):
    """Advantage and win rate against RED's budget k for every BLUE policy of the run, with 95% bands."""
    np = _np()
    curves = robustness_points(per, boot)
    if not curves:
        return False
    fig, axes = plt.subplots(1, 2, figsize=SIZE_ROBUSTNESS, constrained_layout=True)
    for ax, (offset, label) in zip(axes, [(1, "BLUE advantage"), (4, "BLUE win rate")]):
        for j, (b, pts) in enumerate(curves.items()):
            a = np.array(pts, dtype=float)
            colour = CONDITION_COLOURS[j % len(CONDITION_COLOURS)]
            ax.fill_between(a[:, 0], a[:, offset + 1], a[:, offset + 2], color=colour, alpha=0.15, linewidth=0)
            ax.plot(a[:, 0], a[:, offset], marker="o", color=colour, linewidth=1.8, label=b)
        ks = sorted({p[0] for pts in curves.values() for p in pts})
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("RED response budget k (greedy best-of-k, log2 scale)")
        ax.set_ylabel(f"{label} (mean, 95% bootstrap band)")
        ax.set_title(f"{label} vs RED budget")
        ax.grid(True, alpha=0.3)
    axes[0].legend(title="BLUE policy", loc="best", fontsize="small")
    fig.suptitle("Robustness: each BLUE policy against greedy@k (common random numbers)")
    save(fig, out_dir, "robustness", written)
    plt.close(fig)
    return True


def plot_forest(plt, verdicts, out_dir, written):
    """Paired differences (policy minus reference) with 95% intervals, one row per comparison, by metric."""
    np = _np()
    n = verdicts["__n__"]
    if n == 0:
        return False
    diff, lo, hi = numbers(verdicts, "difference"), numbers(verdicts, "ci_lo"), numbers(verdicts, "ci_hi")
    metrics = list(dict.fromkeys(verdicts["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(SIZE_FOREST[0] * len(metrics) / 2,
                                                        max(2.5, SIZE_FOREST[1] * n / len(metrics) + 1.2)),
                             constrained_layout=True, sharey=True)
    axes = np.atleast_1d(axes)
    colours = {"better": "#2ca02c", "worse": RED, "no detectable difference": GREY}
    for ax, m in zip(axes, metrics):
        idx = [i for i in range(n) if verdicts["metric"][i] == m]
        y = np.arange(len(idx))[::-1]
        for yy, i in zip(y, idx):
            v = verdicts["verdict"][i]
            ax.errorbar([diff[i]], [yy], xerr=[[diff[i] - lo[i]], [hi[i] - diff[i]]], fmt="o",
                        color=colours.get(v, GREY), capsize=2.5, markersize=4)
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels([f"vs {verdicts['reference'][i]}, RED {verdicts['red_policy'][i]}" for i in idx])
        ax.set_title({"advantage": "BLUE advantage", "blue_win_rate": "BLUE win rate", "blue_quality": "BLUE quality q",
                      "blue_coherence": "BLUE coherence D"}.get(m, m))
        ax.set_xlabel("difference (policy - reference)")
        ax.grid(True, axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=c, label=v) for v, c in colours.items()]
    axes[0].legend(handles=handles, loc="best", fontsize="x-small", title="verdict")
    fig.suptitle(f"Paired verdicts for {verdicts['blue_policy'][0]} (95% paired bootstrap intervals; "
                 "colour: Holm-corrected verdict)")
    save(fig, out_dir, "forest", written)
    plt.close(fig)
    return True


def plot_scorecard(plt, card, out_dir, written):
    """The six-axis scorecard: one small dot plot per quantity, every policy with its interval."""
    np = _np()
    n = card["__n__"]
    value, lo, hi = numbers(card, "value"), numbers(card, "ci_lo"), numbers(card, "ci_hi")
    keys = list(dict.fromkeys((card["axis"][i], card["quantity"][i]) for i in range(n)
                              if not math.isnan(value[i]) and not card["quantity"][i].startswith("scenarios failed")))
    if not keys:
        return False
    policies = list(dict.fromkeys(card["blue_policy"]))
    cols = 4
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(SIZE_SCORECARD[0], SIZE_SCORECARD[1] * rows),
                             constrained_layout=True)
    axes = np.atleast_1d(axes).ravel()
    from matplotlib.ticker import MaxNLocator

    for ax, (axis, quantity) in zip(axes, keys):
        for j, pol in enumerate(policies):
            for i in range(n):
                if card["axis"][i] == axis and card["quantity"][i] == quantity and card["blue_policy"][i] == pol:
                    if math.isnan(value[i]):
                        continue
                    l = value[i] - lo[i] if not math.isnan(lo[i]) else 0.0
                    h = hi[i] - value[i] if not math.isnan(hi[i]) else 0.0
                    ax.errorbar([value[i]], [j], xerr=[[max(l, 0.0)], [max(h, 0.0)]], fmt="o",
                                color=CONDITION_COLOURS[j % len(CONDITION_COLOURS)], capsize=2.5, markersize=5)
        ax.set_yticks([])
        ax.set_ylim(-0.6, len(policies) - 0.4)
        ax.invert_yaxis()
        ax.margins(x=0.15)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.tick_params(axis="x", labelsize="x-small")
        ax.set_title(f"{axis}:\n{quantity}", fontsize="small")
        ax.grid(True, axis="x", alpha=0.3)
    for ax in axes[len(keys):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=CONDITION_COLOURS[j % len(CONDITION_COLOURS)],
                          label=pol if len(pol) <= 60 else pol[:57] + "...") for j, pol in enumerate(policies)]
    axes[len(keys) - 1 if len(keys) < len(axes) else 0].legend(handles=handles, title="BLUE policy", fontsize="small",
                                                                loc="best")
    if len(keys) < len(axes):  # the legend gets an empty panel of its own
        legend_ax = axes[len(keys)]
        legend_ax.legend(handles=handles, title="BLUE policy", fontsize="small", loc="center")
        axes[len(keys) - 1].get_legend().remove()
    fig.suptitle("Scorecard: the six AdvPlan-Bench axes (dots: value; bars: 95% bootstrap interval)")
    save(fig, out_dir, "scorecard", written)
    plt.close(fig)
    return True


def plot_rubric_scores(plt, deco, out_dir, written, judge="exact"):
    """Rubric score by tier and by severity (rubric/decomposition.csv): each policy's mean contribution of a group
    to its plan score, for one judge; the bars of a panel add up to the policy's mean weighted score."""
    np = _np()
    n = deco["__n__"]
    contribution = numbers(deco, "mean_contribution")
    judges = list(dict.fromkeys(deco["judge"]))
    if not judges:
        return False
    if judge not in judges:
        judge = judges[0]
    models = list(dict.fromkeys(deco["model"][i] for i in range(n) if deco["judge"][i] == judge))
    order = {"tier": ["1", "2", "3"], "severity": ["CI", "I", "SI", "D", "CD"]}
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6), constrained_layout=True)
    width = 0.8 / max(1, len(models))
    for ax, dim in zip(axes, ("tier", "severity")):
        groups = [g for g in order[dim] if any(deco["dimension"][i] == dim and deco["group"][i] == g
                                               for i in range(n))]
        for j, model in enumerate(models):
            values = []
            for g in groups:
                v = [contribution[i] for i in range(n) if deco["judge"][i] == judge and deco["model"][i] == model
                     and deco["dimension"][i] == dim and deco["group"][i] == g]
                values.append(v[0] if v else 0.0)
            ax.bar(np.arange(len(groups)) + (j - (len(models) - 1) / 2) * width, values, width,
                   color=CONDITION_COLOURS[j % len(CONDITION_COLOURS)], label=model)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(np.arange(len(groups)))
        ax.set_xticklabels([f"tier {g}" if dim == "tier" else g for g in groups])
        ax.set_ylabel("mean contribution to the score")
        ax.set_title(f"by {dim}")
        ax.grid(True, axis="y", alpha=0.3)
    axes[1].legend(title="BLUE policy", fontsize="small")
    fig.suptitle(f"Rubric score decomposed (judge: {judge}; negative bars: mistakes charged)")
    save(fig, out_dir, "rubric_scores", written)
    plt.close(fig)
    return True


def plot_agreement_panel(plt, panel, out_dir, written):
    """Each panel statistic (Fleiss' kappa, Krippendorff's alpha, ICC, Kendall's W) with its 95% bootstrap interval
    over cases (rubric/agreement_panel.csv): one dot and bar per statistic."""
    np = _np()
    n = panel["__n__"]
    if n == 0:
        return False
    value, lo, hi = numbers(panel, "value"), numbers(panel, "lo"), numbers(panel, "hi")
    names = list(panel["statistic"])
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * n + 1.4), constrained_layout=True)
    y = np.arange(n)[::-1]
    for i in range(n):
        if math.isnan(value[i]):
            continue
        if not (math.isnan(lo[i]) or math.isnan(hi[i])):
            ax.plot([lo[i], hi[i]], [y[i], y[i]], color="tab:blue", linewidth=2)
        ax.plot([value[i]], [y[i]], "o", color="tab:blue")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize="small")
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("agreement (95% bootstrap interval over cases)")
    ax.set_title("Agreement across all judges")
    save(fig, out_dir, "agreement_panel", written)
    plt.close(fig)
    return True


def plot_judge_agreement(plt, pairs, out_dir, written):
    """Heat map of Cohen's kappa between every pair of judges (rubric/agreement_pairs.csv)."""
    np = _np()
    n = pairs["__n__"]
    if n == 0:
        return False
    kappa = numbers(pairs, "kappa")
    # The 95% bootstrap interval of each pair's kappa, when the run wrote it (kappa_lo, kappa_hi).
    has_ci = "kappa_lo" in pairs and "kappa_hi" in pairs
    lo = numbers(pairs, "kappa_lo") if has_ci else None
    hi = numbers(pairs, "kappa_hi") if has_ci else None
    ci = {}
    judges = list(dict.fromkeys(list(pairs["judge_a"]) + list(pairs["judge_b"])))
    index = {j: i for i, j in enumerate(judges)}
    m = np.eye(len(judges))
    for i in range(n):
        a, b = index[pairs["judge_a"][i]], index[pairs["judge_b"][i]]
        m[a, b] = m[b, a] = kappa[i]
        if has_ci:
            ci[(min(a, b), max(a, b))] = (lo[i], hi[i])
    fig, ax = plt.subplots(figsize=(1.2 * len(judges) + 2.5, 1.0 * len(judges) + 1.5), constrained_layout=True)
    im = ax.imshow(m, vmin=0.0, vmax=1.0, cmap="viridis")
    ax.set_xticks(range(len(judges)))
    ax.set_yticks(range(len(judges)))
    ax.set_xticklabels(judges, rotation=30, ha="right")
    ax.set_yticklabels(judges)
    for a in range(len(judges)):
        for b in range(len(judges)):
            text = "n/a" if math.isnan(m[a, b]) else f"{m[a, b]:.2f}"
            bounds = ci.get((a, b)) if a < b else None  # the upper triangle carries the interval
            if bounds and not any(math.isnan(x) for x in bounds):
                text += f"\n[{bounds[0]:.2f}, {bounds[1]:.2f}]"
            ax.text(b, a, text, ha="center", va="center",
                    color="white" if not math.isnan(m[a, b]) and m[a, b] < 0.6 else "black", fontsize="x-small")
    fig.colorbar(im, ax=ax, label="Cohen's kappa on item verdicts (upper: 95% bootstrap interval)")
    ax.set_title("Judge agreement")
    save(fig, out_dir, "judge_agreement", written)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------------------------------- main


# --------------------------------------------------------------------------------------------------- meta-game


def read_metagame(meta_dir):
    """The meta-game files of `advplan metagame`: matrix, equilibrium, exploitability, response graph."""
    import json

    matrix = read_csv(os.path.join(meta_dir, "payoff_matrix.csv"), ["blue"])
    exploit = read_csv(os.path.join(meta_dir, "exploitability.csv"),
                       ["side", "policy", "exploitability", "ci_lo", "ci_hi", "best_reply"])
    graph = read_csv(os.path.join(meta_dir, "response_graph.csv"),
                     ["from_blue", "from_red", "to_blue", "to_red", "mover", "gain", "best_reply"])
    path = os.path.join(meta_dir, "equilibrium.json")
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing (write it with `advplan metagame RUN_DIR`)")
    try:
        with open(path, encoding="utf-8") as f:
            eq = json.load(f)
        eq["blue_mixture"], eq["red_mixture"], eq["payoff"]  # noqa: B018 (presence check)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not an equilibrium file of `advplan metagame` ({e})") from None
    reds = [c for c in matrix if not c.startswith("__") and c != "blue"]
    for c in reds:
        numbers(matrix, c)
    for c in ("exploitability", "ci_lo", "ci_hi"):
        numbers(exploit, c)
    return matrix, reds, eq, exploit, graph


def plot_metagame_payoff(plt, matrix, reds, eq, out_dir, written):
    np = _np()
    blues = list(matrix["blue"])
    a = np.array([numbers(matrix, r) for r in reds]).T
    fig, ax = plt.subplots(figsize=SIZE_META_PAYOFF, constrained_layout=True)
    im = ax.imshow(a, cmap="viridis", aspect="auto")
    fig.colorbar(im, ax=ax, label=f"BLUE {eq['payoff'].replace('_', ' ')} (mean over scenarios)")
    ax.set_xticks(range(len(reds)), reds, rotation=35, ha="right")
    ax.set_yticks(range(len(blues)), blues)
    mid = (np.nanmin(a) + np.nanmax(a)) / 2
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            ax.text(j, i, f"{a[i, j]:.3f}", ha="center", va="center", fontsize=7,
                    color="black" if a[i, j] > mid else "white")
    bsup = [float(m["value"]) > 0 for m in eq["blue_mixture"]]
    rsup = [float(m["value"]) > 0 for m in eq["red_mixture"]]
    for i, on in enumerate(bsup):
        if on:
            ax.get_yticklabels()[i].set_fontweight("bold")
    for j, on in enumerate(rsup):
        if on:
            ax.get_xticklabels()[j].set_fontweight("bold")
    ax.set_xlabel("RED policy (bold: in the equilibrium support)")
    ax.set_ylabel("BLUE policy (bold: in the equilibrium support)")
    ax.set_title(f"Meta-game payoff; value {eq['value']['value']:.4f}")
    save(fig, out_dir, "metagame_payoff", written)
    plt.close(fig)


def plot_metagame_exploitability(plt, exploit, out_dir, written):
    np = _np()
    side = strings(exploit, "side")
    policy = strings(exploit, "policy")
    e = numbers(exploit, "exploitability")
    lo = numbers(exploit, "ci_lo")
    hi = numbers(exploit, "ci_hi")
    fig, axes = plt.subplots(1, 2, figsize=SIZE_META_EXPLOIT, constrained_layout=True)
    for ax, which, colour in ((axes[0], "blue", BLUE), (axes[1], "red", RED)):
        idx = np.nonzero(side == which)[0]
        x = np.arange(idx.size)
        yerr = np.vstack([np.where(np.isnan(lo[idx]), 0, e[idx] - lo[idx]),
                          np.where(np.isnan(hi[idx]), 0, hi[idx] - e[idx])])
        yerr = np.clip(yerr, 0, None)
        colours = [GREY if policy[k] == "equilibrium" else colour for k in idx]
        ax.bar(x, e[idx], color=colours, yerr=yerr, capsize=3)
        ax.set_xticks(x, [policy[k] for k in idx], rotation=35, ha="right")
        ax.set_ylabel("exploitability (regret against the best reply)")
        ax.set_title(f"{which.upper()} policies (95% bootstrap intervals)")
    save(fig, out_dir, "metagame_exploitability", written)
    plt.close(fig)


def plot_metagame_response_graph(plt, graph, matrix, reds, out_dir, written):
    np = _np()
    blues = list(matrix["blue"])
    best = numbers(graph, "best_reply")
    mover = strings(graph, "mover")
    # Which policy answers which: for each best-reply edge, the mover's new policy beats its old one against the
    # opponent held fixed; count (old -> new) per side.
    counts = {}
    for k in range(graph["__n__"]):
        if best[k] != 1:
            continue
        if mover[k] == "blue":
            key = ("blue", graph["from_blue"][k], graph["to_blue"][k])
        else:
            key = ("red", graph["from_red"][k], graph["to_red"][k])
        counts[key] = counts.get(key, 0) + 1
    fig, ax = plt.subplots(figsize=SIZE_META_GRAPH, constrained_layout=True)
    yb = {b: len(blues) - 1 - i for i, b in enumerate(blues)}
    yr = {r: len(reds) - 1 - i for i, r in enumerate(reds)}
    for b, y in yb.items():
        ax.text(0, y, b, ha="right", va="center", color=BLUE, fontsize=9)
    for r, y in yr.items():
        ax.text(1, y, r, ha="left", va="center", color=RED, fontsize=9)
    top = max(counts.values()) if counts else 1
    for (which, old, new), c in sorted(counts.items()):
        if which == "blue":
            x, y0, y1, colour = -0.02, yb[old], yb[new], BLUE
        else:
            x, y0, y1, colour = 1.02, yr[old], yr[new], RED
        bend = 0.4 if which == "blue" else -0.4
        ax.annotate("", xy=(x, y1), xytext=(x, y0),
                    arrowprops=dict(arrowstyle="->", color=colour, lw=0.5 + 2.5 * c / top, alpha=0.7,
                                    connectionstyle=f"arc3,rad={bend}"))
    ax.set_xlim(-1.0, 2.0)
    ax.set_ylim(-1, max(len(blues), len(reds)))
    ax.axis("off")
    ax.set_title("Best-response graph: arrows from a policy to the one that replaces it\n"
                 "(width: number of opponent policies against which it is the best reply)")
    save(fig, out_dir, "metagame_response_graph", written)
    plt.close(fig)

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
    derived_dirs = ("tables", "figures", "frontier", "metagame")  # results derived from the traces
    derived = lambda rel: rel.split("/", 1)[0] in derived_dirs and "/" in rel  # noqa: E731
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
            dirs[:] = [d for d in dirs if d not in derived_dirs]
        for name in files:
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            if rel in ("MANIFEST", "run_metadata.json") or rel in listed:
                continue
            return (f"{os.path.join(run_dir, rel)}: not listed in MANIFEST (a leftover of another run or of an "
                    "interrupted write); this directory does not hold one run")
    return None


# --------------------------------------------------------------------------------------------------- frontier
# `plot.py frontier RUN_DIR`: the figures of `advplan frontier` (docs/METRICS.md "Pareto frontier analysis"), read
# from candidates.csv and RUN_DIR/frontier/ (or --frontier DIR).

SIZE_CLOUD = (7.6, 6.4)
SIZE_HV = (10.0, 4.2)
RANK_COLOURS = ["#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#17becf", "#1f77b4", "#9467bd"]
LEVEL_STYLES = {"10": ("#9ecae1", "--"), "50": ("#08519c", "-"), "90": ("#6baed6", ":")}


def frontier_lambda(run_dir):
    """The constraint-aware selector's lambda recorded in run_metadata.json (0.7, the default, when absent)."""
    import json

    try:
        with open(os.path.join(run_dir, "run_metadata.json"), encoding="utf-8") as f:
            meta = json.load(f)
        for spec, pol in meta.get("effective_policies", {}).items():
            if spec.startswith("constraint") and "lambda" in pol.get("params", {}):
                return float(pol["params"]["lambda"])
    except (OSError, ValueError, AttributeError):
        pass
    return 0.7


def frontier_default_condition(cands, k):
    """With --k: greedy@K, else the first condition with that k. Without: greedy@8, else the largest-k greedy
    condition, else the first condition."""
    conds = list(dict.fromkeys(cands["condition"]))
    ks = dict(zip(cands["condition"], cands["k"]))
    if k is not None:
        if f"greedy@{k}" in conds:
            return f"greedy@{k}"
        with_k = [c for c in conds if ks[c] == str(k)]
        return with_k[0] if with_k else None
    if "greedy@8" in conds:
        return "greedy@8"
    greedy = sorted((c for c in conds if k_of(c) is not None), key=k_of)
    return greedy[-1] if greedy else (conds[0] if conds else None)


def frontier_disagreement(cands, condition):
    """Per scenario of `condition`: the (q, D) distance between the quality-greedy and the constraint-aware pick.
    Returns [(scenario, distance)] in file order."""
    np = _np()
    mask = strings(cands, "condition") == condition
    sid = strings(cands, "scenario_id")[mask]
    q, d = numbers(cands, "quality")[mask], numbers(cands, "coherence")[mask]
    g = numbers(cands, "selected_greedy")[mask] == 1
    c = numbers(cands, "selected_constraint")[mask] == 1
    out = []
    for s in dict.fromkeys(sid):
        m = sid == s
        if g[m].any() and c[m].any():
            gq, gd = q[m][g[m]][0], d[m][g[m]][0]
            cq, cd = q[m][c[m]][0], d[m][c[m]][0]
            out.append((s, float(np.hypot(gq - cq, gd - cd))))
    return out


def plot_frontier_cloud(plt, cands, ranks, objectives, scenario, condition, lam, out_dir, written):
    """The candidate set of one (scenario, condition) in the (q, D) plane, coloured by non-domination rank, with
    both selectors' picks and the lambda iso-line through the constraint-aware pick."""
    np = _np()
    from matplotlib.lines import Line2D

    mask = (strings(cands, "scenario_id") == scenario) & (strings(cands, "condition") == condition)
    idx = strings(cands, "index")[mask]
    q, d = numbers(cands, "quality")[mask], numbers(cands, "coherence")[mask]
    greedy = numbers(cands, "selected_greedy")[mask] == 1
    constraint = numbers(cands, "selected_constraint")[mask] == 1
    rank_of = {}
    rmask = (strings(ranks, "scenario_id") == scenario) & (strings(ranks, "condition") == condition)
    for i, r in zip(strings(ranks, "index")[rmask], numbers(ranks, "rank")[rmask]):
        rank_of[i] = int(r)
    rank = np.array([rank_of.get(i, 0) for i in idx], dtype=int)
    cols = list(objectives["column"])
    dirs = list(objectives["direction"])
    on_qd = cols == ["quality", "coherence"] and dirs == ["max", "max"]
    obj_text = ", ".join(("\u2212" if dr == "min" else "") + c for c, dr in zip(cols, dirs))

    fig, ax = plt.subplots(figsize=SIZE_CLOUD, constrained_layout=True)
    handles = []
    for r in sorted(set(rank.tolist()) - {0}):
        m = rank == r
        colour = RANK_COLOURS[min(r - 1, len(RANK_COLOURS) - 1)]
        ax.scatter(q[m], d[m], s=48, color=colour, zorder=3, edgecolors="white", linewidths=0.5)
        if on_qd and m.sum() > 0:
            # The rank's staircase (its attainment boundary): sorted by q, each point's D holds until the next.
            o = np.lexsort((-d[m], q[m]))
            ax.step(q[m][o], d[m][o], where="pre", color=colour, linewidth=1.2, alpha=0.9, zorder=2)
        handles.append(Line2D([], [], color=colour, marker="o", linestyle="-" if on_qd else "none", markersize=7,
                              label=f"rank {r} ({int(m.sum())})"))
    if greedy.any():
        ax.scatter(q[greedy], d[greedy], s=200, facecolors="none", edgecolors="black", linewidths=1.6, marker="s",
                   zorder=5)
        handles.append(Line2D([], [], linestyle="none", marker="s", markersize=11, markerfacecolor="none",
                              markeredgecolor="black", markeredgewidth=1.6, label="quality-greedy pick (max q)"))
    if constraint.any():
        ax.scatter(q[constraint], d[constraint], s=430, facecolors="none", edgecolors="#2ca02c", linewidths=1.8,
                   marker="D", zorder=6)
        handles.append(Line2D([], [], linestyle="none", marker="D", markersize=11, markerfacecolor="none",
                              markeredgecolor="#2ca02c", markeredgewidth=1.8,
                              label="constraint-aware pick (max \u03bbq + (1\u2212\u03bb)D)"))
    valid = ~(np.isnan(q) | np.isnan(d))
    if valid.any():
        span_q = max(np.nanmax(q) - np.nanmin(q), 0.05)
        span_d = max(np.nanmax(d) - np.nanmin(d), 0.05)
        xlim = (np.nanmin(q) - 0.1 * span_q, np.nanmax(q) + 0.1 * span_q)
        ylim = (np.nanmin(d) - 0.1 * span_d, np.nanmax(d) + 0.15 * span_d)
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        if constraint.any():
            # The iso-line of the constraint-aware score through its pick: lambda q + (1 - lambda) D = c*.
            cq, cd = q[constraint][0], d[constraint][0]
            level = lam * cq + (1 - lam) * cd
            if lam < 1:
                xs = np.linspace(xlim[0], xlim[1], 50)
                ax.plot(xs, (level - lam * xs) / (1 - lam), color="#2ca02c", linestyle="--", linewidth=1.0, zorder=1)
            else:
                ax.axvline(cq, color="#2ca02c", linestyle="--", linewidth=1.0, zorder=1)
            handles.append(Line2D([], [], color="#2ca02c", linestyle="--", linewidth=1.0,
                                  label=f"\u03bbq + (1\u2212\u03bb)D = {level:.3f}  (\u03bb = {lam:g})"))
    else:
        ax.text(0.5, 0.5, "no valid candidate", transform=ax.transAxes, ha="center", va="center")
    if greedy.any() and constraint.any() and np.array_equal(np.flatnonzero(greedy), np.flatnonzero(constraint)):
        ax.text(0.02, 0.98, "both selectors pick the same candidate", transform=ax.transAxes, ha="left", va="top",
                fontsize="small", color="#333333")
    ax.set_xlabel("RED candidate quality q")
    ax.set_ylabel("RED candidate coherence D")
    ax.set_title(f"RED candidates by non-domination rank on ({obj_text})\n{scenario}, {condition}")
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2, fontsize="small",
              frameon=False)
    save(fig, out_dir, f"frontier_cloud_{scenario}_{condition}", written)
    plt.close(fig)


def staircase(xs, ys):
    """The boundary of the region a maximisation surface's corners (obj1 ascending, obj2 descending) dominate."""
    px, py = [0.0], [ys[0]]
    for i in range(len(xs)):
        px += [xs[i], xs[i]]
        py += [ys[i], ys[i + 1] if i + 1 < len(xs) else 0.0]
    return px, py


def plot_frontier_attainment(plt, att, objectives, out_dir, written):
    """The 10%, 50% and 90% attainment surfaces of each condition, one panel per condition."""
    np = _np()
    conds = list(dict.fromkeys(att["condition"]))
    if not conds:
        return
    cond_col, level_col = strings(att, "condition"), strings(att, "level")
    o1, o2 = numbers(att, "obj1"), numbers(att, "obj2")
    runs = dict(zip(att["condition"], att["runs"]))
    ncols = min(3, len(conds))
    nrows = (len(conds) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.3 * nrows + 0.6), sharex=True, sharey=True,
                             constrained_layout=True, squeeze=False)
    lo = min(np.nanmin(o1), np.nanmin(o2)) if o1.size else 0.0
    hi = max(np.nanmax(o1), np.nanmax(o2)) if o1.size else 1.0
    lo = max(0.0, math.floor(lo * 20) / 20 - 0.05)
    hi = min(1.0, math.ceil(hi * 20) / 20 + 0.05)
    names = [("\u2212" if dr == "min" else "") + c for c, dr in zip(objectives["column"], objectives["direction"])]
    for n, cond in enumerate(conds):
        ax = axes[n // ncols][n % ncols]
        for level in ("10", "50", "90"):
            m = (cond_col == cond) & (level_col == level)
            if not m.any():
                continue
            colour, style = LEVEL_STYLES[level]
            px, py = staircase(list(o1[m]), list(o2[m]))
            ax.plot(px, py, color=colour, linestyle=style, linewidth=1.6, label=f"{level}%")
        ax.set_title(f"{cond} (n = {runs[cond]})", fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        if n % ncols == 0:
            ax.set_ylabel(f"{names[1]} (normalised)")
        if n // ncols == nrows - 1:
            ax.set_xlabel(f"{names[0]} (normalised)")
    for n in range(len(conds), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    # Upper right: the surfaces bound lower-left regions, so that corner stays clear.
    axes[0][0].legend(title="attained in", fontsize="small", title_fontsize="small", loc="upper right")
    fig.suptitle("Empirical attainment surfaces over scenarios: the share of scenarios whose candidate set reaches "
                 "each point")
    save(fig, out_dir, "frontier_attainment", written)
    plt.close(fig)


def plot_frontier_hypervolume(plt, hv, objectives, out_dir, written):
    """Mean hypervolume and front size against k, with 95% bootstrap bands for the greedy@k sweep and intervals
    for the other conditions."""
    np = _np()
    cond = list(hv["condition"])
    k = numbers(hv, "k")
    names = ", ".join(("\u2212" if dr == "min" else "") + c for c, dr in zip(objectives["column"],
                                                                              objectives["direction"]))
    fig, axes = plt.subplots(1, 2, figsize=SIZE_HV, constrained_layout=True)
    greedy = np.array([k_of(c) is not None for c in cond])
    others = [i for i, c in enumerate(cond) if not greedy[i]]
    for ax, metric, label in ((axes[0], "hypervolume", "hypervolume"), (axes[1], "front_size", "front size")):
        y, lo, hi = numbers(hv, metric), numbers(hv, metric + "_lo"), numbers(hv, metric + "_hi")
        if greedy.any():
            o = np.argsort(k[greedy], kind="stable")
            gk, gy, glo, ghi = k[greedy][o], y[greedy][o], lo[greedy][o], hi[greedy][o]
            ax.fill_between(gk, glo, ghi, color=RED, alpha=0.2, linewidth=0)
            ax.plot(gk, gy, color=RED, marker="o", label="greedy@k (95% band)")
        for n, i in enumerate(others):
            colour = CONDITION_COLOURS[(n + 2) % len(CONDITION_COLOURS)]
            x = k[i] * (1.0 + 0.06 * (n + 1))  # offset so the intervals at one k stay apart (log axis)
            ax.errorbar([x], [y[i]], yerr=[[y[i] - lo[i]], [hi[i] - y[i]]], color=colour, marker="s", markersize=5,
                        linestyle="none", capsize=3, label=cond[i])
        ax.set_xscale("log", base=2)
        ks = sorted(set(k.tolist()))
        ax.set_xticks(ks)
        ax.set_xticklabels([f"{int(v)}" for v in ks])
        ax.set_xlabel("RED response budget k (candidates)")
        ax.set_ylabel(f"mean {label}")
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"Hypervolume on ({names}), reference at the worst values", fontsize="medium")
    axes[1].set_title("Candidates on the front", fontsize="medium")
    axes[1].legend(fontsize="small", loc="upper left")
    save(fig, out_dir, "frontier_hypervolume", written)
    plt.close(fig)


def plot_frontier_eaf_diff(plt, diff, objectives, out_dir, written):
    """The EAF difference A - B of each comparison on its grid, one panel per comparison."""
    np = _np()
    pairs = list(dict.fromkeys(zip(diff["a"], diff["b"])))
    if not pairs:
        return
    a_col, b_col = strings(diff, "a"), strings(diff, "b")
    x, y, v = numbers(diff, "obj1"), numbers(diff, "obj2"), numbers(diff, "difference")
    names = [("\u2212" if dr == "min" else "") + c for c, dr in zip(objectives["column"], objectives["direction"])]
    ncols = min(2, len(pairs))
    nrows = (len(pairs) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.9 * nrows + 0.5), constrained_layout=True,
                             squeeze=False)
    vmax = max(float(np.nanmax(np.abs(v))) if v.size else 0.0, 0.05)
    mesh = None
    for n, (a, b) in enumerate(pairs):
        ax = axes[n // ncols][n % ncols]
        m = (a_col == a) & (b_col == b)
        xs, ys = np.unique(x[m]), np.unique(y[m])
        grid = np.full((ys.size, xs.size), np.nan)
        xi, yi = np.searchsorted(xs, x[m]), np.searchsorted(ys, y[m])
        grid[yi, xi] = v[m]
        mesh = ax.pcolormesh(xs, ys, grid, cmap="RdBu_r", vmin=-vmax, vmax=vmax, shading="nearest")
        ax.set_title(f"{a} \u2212 {b}", fontsize="medium")
        ax.set_xlabel(f"{names[0]} (normalised)")
        ax.set_ylabel(f"{names[1]} (normalised)")
    for n in range(len(pairs), nrows * ncols):
        axes[n // ncols][n % ncols].set_visible(False)
    fig.colorbar(mesh, ax=axes, shrink=0.8, label="EAF difference (share of scenarios)")
    save(fig, out_dir, "frontier_eaf_diff", written)
    plt.close(fig)


def frontier_main(argv):
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
    plt = frontier_matplotlib()

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
        for table, columns in ((cands, ["quality", "coherence", "selected_greedy", "selected_constraint"]),
                               (ranks, ["rank"]), (att, ["obj1", "obj2"]),
                               (hv, ["k", "hypervolume", "hypervolume_lo", "hypervolume_hi", "front_size",
                                     "front_size_lo", "front_size_hi"]),
                               (diff, ["obj1", "obj2", "difference"])):
            for c in columns:
                numbers(table, c)
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
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            fail(f"{out_dir}: output directory cannot be created ({e.strerror})")
        written = []
        plot_frontier_cloud(plt, cands, ranks, objectives, scenario, condition, frontier_lambda(run_dir), out_dir,
                            written)
        plot_frontier_attainment(plt, att, objectives, out_dir, written)
        plot_frontier_hypervolume(plt, hv, objectives, out_dir, written)
        plot_frontier_eaf_diff(plt, diff, objectives, out_dir, written)
    except InputError as e:
        fail(str(e))
    return 0


def frontier_matplotlib():
    """matplotlib with the settings of main(), so the frontier figures are deterministic too."""
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

    matplotlib.rcParams.update({"svg.hashsalt": "advplan", "svg.fonttype": "path", "figure.dpi": DPI,
                                "savefig.dpi": DPI, "font.size": 10, "axes.titlesize": 11, "path.simplify": False})
    if "svg.id" in matplotlib.rcParams:
        matplotlib.rcParams["svg.id"] = "advplan"
    return plt



def map_main(argv):
    """`plot.py map FILE.geojson [--out DIR]`: a scenario map of `advplan map` or a run's maps/ (docs/GEO.md), drawn in
    lon/lat: sectors, threat zones by side, obstacles, the road or sea-lane network, places and assets."""
    parser = argparse.ArgumentParser(prog=f"{PROG} map", description="Draw a map written by `advplan map` (PNG and SVG).")
    parser.add_argument("geojson", metavar="FILE.geojson", help="a map from `advplan map` or RUN_DIR/maps/")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: the file's directory)")
    args = parser.parse_args(argv)
    import json
    try:
        with open(args.geojson, encoding="utf-8") as f:
            fc = json.load(f)
        features = fc["features"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{args.geojson}: not a GeoJSON FeatureCollection ({e})")
    plt = frontier_matplotlib()
    fig, ax = plt.subplots(figsize=(6.5, 6.5))
    style = {"boundary": ("none", "0.3", 0.0), "obstacle": ("0.55", "0.35", 0.6)}
    for f in features:  # areas first, then the network, then points on top
        g, pr = f.get("geometry") or {}, f.get("properties") or {}
        if g.get("type") != "Polygon":
            continue
        ring = g["coordinates"][0]
        kind = pr.get("kind")
        if kind == "threat":
            face = "tab:red" if pr.get("side") == "RED" else "tab:blue"
            fill, edge, alpha = face, face, 0.25
        else:
            fill, edge, alpha = style.get(kind, ("none", "0.5", 0.0))
        ax.fill([p[0] for p in ring], [p[1] for p in ring], facecolor=fill, edgecolor=edge, alpha=alpha if alpha else 1.0,
                linewidth=0.8, fill=alpha > 0)
        if kind in ("threat", "obstacle"):
            ax.text(sum(p[0] for p in ring[:-1]) / (len(ring) - 1), sum(p[1] for p in ring[:-1]) / (len(ring) - 1),
                    pr.get("id", ""), fontsize=6, ha="center", va="center")
    for f in features:
        g = f.get("geometry") or {}
        if g.get("type") == "LineString":
            xs, ys = zip(*g["coordinates"])
            ax.plot(xs, ys, color="0.6", linewidth=0.6, zorder=1)
    for f in features:
        g, pr = f.get("geometry") or {}, f.get("properties") or {}
        if g.get("type") != "Point":
            continue
        x, y = g["coordinates"]
        if pr.get("kind") == "place":
            ax.plot(x, y, marker="*", markersize=11, color="black", zorder=3)
            ax.annotate(pr.get("name", ""), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        else:
            ax.plot(x, y, marker="o", markersize=4, zorder=3,
                    color="tab:blue" if pr.get("side") == "BLUE" else "tab:red")
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_title(f"{fc.get('name', os.path.basename(args.geojson))}: places (stars), assets (dots), threat zones")
    ax.set_aspect(1.0 / max(0.1, math.cos(math.radians(sum(ax.get_ylim()) / 2))))
    out_dir = args.out if args.out else os.path.dirname(os.path.abspath(args.geojson))
    os.makedirs(out_dir, exist_ok=True)
    written = []
    name = os.path.splitext(os.path.basename(args.geojson))[0]
    save(fig, out_dir, f"map_{name}", written)
    plt.close(fig)
    return 0


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
    if args.metagame:  # figures of metagame/, which `advplan metagame` derived from checked runs
        return metagame_main(plt, run_dir, args.out)
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
                                               "advantage", "blue_policy", "red_policy"])
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
        rubric = {}
        for name, cols in (("decomposition", ["judge", "model", "dimension", "group", "mean_contribution"]),
                           ("agreement_pairs", ["judge_a", "judge_b", "kappa"]),
                           ("agreement_panel", ["statistic", "value", "lo", "hi"])):
            path = p(os.path.join("rubric", f"{name}.csv"))
            if os.path.exists(path):
                rubric[name] = read_csv(path, cols)
        for name, column in (("decomposition", "mean_contribution"), ("agreement_pairs", "kappa"),
                             ("agreement_panel", "value"), ("agreement_panel", "lo"), ("agreement_panel", "hi")):
            if name in rubric:
                numbers(rubric[name], column)
        evaluation = {}
        for name, cols in (("verdicts", ["blue_policy", "reference", "red_policy", "metric", "difference", "ci_lo",
                                         "ci_hi", "verdict"]),
                           ("scorecard", ["axis", "quantity", "blue_policy", "value", "ci_lo", "ci_hi"])):
            path = p(os.path.join("evaluation", f"{name}.csv"))
            if os.path.exists(path):
                evaluation[name] = read_csv(path, cols)
        for name, columns in (("verdicts", ["difference", "ci_lo", "ci_hi"]), ("scorecard", ["value", "ci_lo", "ci_hi"])):
            if name in evaluation:
                for c in columns:
                    numbers(evaluation[name], c)
        sweep_blue = "the BLUE plan"
        if "blue_policy" in per:
            for g, b in zip(per["condition_group"], per["blue_policy"]):
                if g == "sweep":
                    sweep_blue = b
                    break

        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            fail(f"{out_dir}: output directory cannot be created ({e.strerror})")
        if not os.access(out_dir, os.W_OK):
            fail(f"{out_dir}: output directory is not writable")

        written = []
        if budget["__n__"] > 0:
            plot_budget_curve(plt, budget, out_dir, written, sweep_blue)
        else:
            print(f"{PROG}: note: {p('budget_curve.csv')} has no rows (no greedy@k sweep); skipping the budget "
                  "figure", file=sys.stderr)
        if condition is not None:
            plot_frontier(plt, cands, args.scenario, condition, out_dir, written)
        else:
            print(f"{PROG}: note: scenario {args.scenario} has no greedy@k candidate set; skipping the frontier "
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
        if council is not None:
            plot_council(plt, council, out_dir, written)
        else:
            print(f"{PROG}: note: {p('council_candidates.csv')} is absent (no council condition in this run); "
                  "skipping the council figure", file=sys.stderr)
    except InputError as e:
        fail(str(e))
    return 0


def metagame_main(plt, run_dir, out):
    meta_dir = os.path.join(run_dir, "metagame")
    out_dir = out if out else os.path.join(meta_dir, "figures")
    try:
        matrix, reds, eq, exploit, graph = read_metagame(meta_dir)
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            fail(f"{out_dir}: output directory cannot be created ({e.strerror})")
        written = []
        plot_metagame_payoff(plt, matrix, reds, eq, out_dir, written)
        plot_metagame_exploitability(plt, exploit, out_dir, written)
        plot_metagame_response_graph(plt, graph, matrix, reds, out_dir, written)
    except InputError as e:
        fail(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
