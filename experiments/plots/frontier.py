"""The figures of `advplan frontier RUN_DIR` (docs/METRICS.md "Pareto frontier analysis"), read from
candidates.csv and RUN_DIR/frontier/ (or --frontier DIR): the candidate cloud by non-domination rank, the
attainment surfaces, hypervolume and front size against k, and the EAF differences."""

import json
import math
import os

from .common import (CONDITION_COLOURS, RED, _np, budget_axis, interval_band, k_of, mark_picks, note_same_pick,
                     numbers, save, strings)

SIZE_CLOUD = (7.6, 6.4)
SIZE_HV = (10.0, 4.2)
RANK_COLOURS = ["#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#17becf", "#1f77b4", "#9467bd"]
LEVEL_STYLES = {"10": ("#9ecae1", "--"), "50": ("#08519c", "-"), "90": ("#6baed6", ":")}


def frontier_lambda(run_dir):
    """The constraint-aware selector's lambda recorded in run_metadata.json (0.7, the default, when absent)."""
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
    on_qd = list(objectives["column"]) == ["quality", "coherence"] and list(objectives["direction"]) == ["max", "max"]
    obj_text = ", ".join(objective_names(objectives))

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
    mark_picks(ax, q, d, greedy, constraint, handles, 200, 430)
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
    note_same_pick(ax, greedy, constraint)
    ax.set_xlabel("RED candidate quality q")
    ax.set_ylabel("RED candidate coherence D")
    ax.set_title(f"RED candidates by non-domination rank on ({obj_text})\n{scenario}, {condition}")
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2, fontsize="small",
              frameon=False)
    save(fig, out_dir, f"frontier_cloud_{scenario}_{condition}", written)
    plt.close(fig)


def objective_names(objectives):
    """Each objective's column, with a minus sign when it is minimised (objectives.csv)."""
    return [("\u2212" if dr == "min" else "") + c for c, dr in zip(objectives["column"], objectives["direction"])]


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
    names = objective_names(objectives)
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
    names = ", ".join(objective_names(objectives))
    fig, axes = plt.subplots(1, 2, figsize=SIZE_HV, constrained_layout=True)
    greedy = np.array([k_of(c) is not None for c in cond])
    others = [i for i, c in enumerate(cond) if not greedy[i]]
    for ax, metric, label in ((axes[0], "hypervolume", "hypervolume"), (axes[1], "front_size", "front size")):
        y, lo, hi = numbers(hv, metric), numbers(hv, metric + "_lo"), numbers(hv, metric + "_hi")
        if greedy.any():
            o = np.argsort(k[greedy], kind="stable")
            gk, gy, glo, ghi = k[greedy][o], y[greedy][o], lo[greedy][o], hi[greedy][o]
            interval_band(ax, gk, gy, glo, ghi, RED, 0.2, label="greedy@k (95% band)")
        for n, i in enumerate(others):
            colour = CONDITION_COLOURS[(n + 2) % len(CONDITION_COLOURS)]
            x = k[i] * (1.0 + 0.06 * (n + 1))  # offset so the intervals at one k stay apart (log axis)
            ax.errorbar([x], [y[i]], yerr=[[y[i] - lo[i]], [hi[i] - y[i]]], color=colour, marker="s", markersize=5,
                        linestyle="none", capsize=3, label=cond[i])
        budget_axis(ax, sorted(set(k.tolist())), minor_ticks=True)
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
    names = objective_names(objectives)
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

