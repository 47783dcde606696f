"""The figures of the rubric layer (RUN_DIR/rubric/, docs/RUBRIC.md): the score decomposed by tier and severity,
Cohen's kappa between every pair of judges, and the panel's agreement statistics."""

import math

from .common import CONDITION_COLOURS, _np, numbers, save


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

