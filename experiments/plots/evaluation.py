"""The figures of `advplan evaluate`: robustness curves of every BLUE policy against greedy@k, the forest plot of
the paired verdicts (evaluation/verdicts.csv) and the six-axis scorecard (evaluation/scorecard.csv)."""

import math

from .common import (BUDGET_AXIS_LABEL, CONDITION_COLOURS, GREY, RED, _np, budget_axis, interval_band, k_of, numbers,
                     save)

SIZE_ROBUSTNESS = (12.0, 4.4)
SIZE_FOREST = (9.0, 0.32)  # width, height per row
SIZE_SCORECARD = (13.0, 2.6)  # width, height per row of panels


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
            interval_band(ax, a[:, 0], a[:, offset], a[:, offset + 1], a[:, offset + 2], colour, 0.15, label=b,
                          linewidth=1.8)
        budget_axis(ax, sorted({p[0] for pts in curves.values() for p in pts}))
        ax.set_xlabel(BUDGET_AXIS_LABEL)
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

