"""The figures of a run's main conditions: the response-budget curve (Table 4), the quality-coherence frontier
of one scenario, BLUE advantage by template (Table 5) and the council's rounds (beside Table 6)."""

import math

from .common import (BLUE, BUDGET_AXIS_LABEL, CONDITION_COLOURS, GREY, RED, ROUND_COLOURS, InputError, _np,
                     budget_axis, interval_band, k_of, mark_picks, note_same_pick, numbers, save, strings)

SIZE_BUDGET = (14.0, 4.2)
SIZE_FRONTIER = (7.2, 6.2)
SIZE_TEMPLATE = (10.0, 4.8)
SIZE_COUNCIL = (11.0, 4.6)


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
        interval_band(ax, k, y, lo, hi, colour, 0.2, band_label="95% bootstrap interval", label="mean over scenarios",
                      linewidth=1.8)
        budget_axis(ax, k)
        if k.size > 1:
            ax.set_xlim(k[0] / 1.25, k[-1] * 1.25)
        ax.set_xlabel(BUDGET_AXIS_LABEL)
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
    mark_picks(ax, q, d, greedy, constraint, handles, 190, 420)
    note_same_pick(ax, greedy, constraint)
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




def plot_extrapolation(plt, extra, out_dir, written, budget=None, sweep_blue="the BLUE plan"):
    """The budget curve extrapolated past the largest k run (extrapolation.csv, docs/METRICS.md "Budget
    extrapolation"): per panel, the observed means (with budget_curve.csv's 95% band when given), the
    tail-fit prediction with its 95% joint-bootstrap band over every k of the file, the bounded-tail limit as a
    dashed line with its band, and on the advantage panel the level and k*."""
    np = _np()
    stat = strings(extra, "statistic")
    kcol = strings(extra, "k")
    est, lo, hi = numbers(extra, "estimate"), numbers(extra, "ci_lo"), numbers(extra, "ci_hi")
    obs = numbers(extra, "observed")
    panels = [("advantage", "BLUE advantage", BLUE), ("red_quality", "RED quality (best of k)", RED)]
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.4), constrained_layout=True)
    for ax, (name, label, colour) in zip(axes, panels):
        rows = [i for i in range(len(stat)) if stat[i] == name and kcol[i] != "limit"]
        if not rows:
            raise InputError(f"{extra['__path__']}: no {name} rows")
        k = np.array([float(kcol[i]) for i in rows])
        order = np.argsort(k, kind="stable")
        idx = np.array(rows)[order]
        k = k[order]
        interval_band(ax, k, est[idx], lo[idx], hi[idx], colour, 0.15, band_label="extrapolation, 95% bootstrap band",
                      label="extrapolation (GPD tail fit)", linewidth=1.4)
        seen = ~np.isnan(obs[idx])
        if budget is not None and name in budget:
            bk = numbers(budget, "k")
            bo = np.argsort(bk, kind="stable")
            ax.fill_between(bk[bo], numbers(budget, name + "_lo")[bo], numbers(budget, name + "_hi")[bo],
                            color=GREY, alpha=0.25, linewidth=0, label="observed, 95% bootstrap band")
        ax.plot(k[seen], obs[idx][seen], color="black", marker="s", linestyle="-", linewidth=1.2,
                label="observed (greedy@k run)")
        limit = [i for i in range(len(stat)) if stat[i] == name and kcol[i] == "limit"]
        if limit:
            i = limit[0]
            ax.axhline(est[i], color=colour, linestyle="--", linewidth=1.0, label="limit k \u2192 \u221e")
            ax.axhspan(lo[i], hi[i], color=colour, alpha=0.07, linewidth=0)
        if name == "advantage":
            star = [i for i in range(len(stat)) if stat[i] == "k_star"]
            if star:
                level = numbers(extra, "level")[star[0]]
                ax.axhline(level, color=GREY, linestyle=":", linewidth=1.0, label=f"level {level:g}")
                if not math.isnan(est[star[0]]):
                    ax.axvline(est[star[0]], color=GREY, linestyle="-.", linewidth=1.0,
                               label=f"k* = {int(est[star[0]])}")
        budget_axis(ax, k)
        ax.set_xlabel(BUDGET_AXIS_LABEL)
        ax.set_ylabel(label)
        ax.set_title(f"{label} vs RED budget, extrapolated")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    fig.suptitle(f"Budget extrapolation (BLUE {sweep_blue} vs greedy@k; a GPD tail fit per scenario)")
    save(fig, out_dir, "extrapolation", written)
    plt.close(fig)
