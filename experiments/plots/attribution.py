"""The attribution waterfall (studies/attribution.csv, docs/METRICS.md "Attribution"): per metric, the baseline
(all parts off), each part's Shapley value as a step up or down with its 95% interval, and the full pipeline
(all parts on), which the steps reach exactly (efficiency)."""

from .common import InputError, numbers, save, strings


def plot_attribution(plt, attribution, out_dir, written):
    kind = strings(attribution, "kind")
    metric = strings(attribution, "metric")
    part = strings(attribution, "part")
    value, lo, hi = (numbers(attribution, c) for c in ("value", "ci_lo", "ci_hi"))
    metrics = [m for m in dict.fromkeys(metric)]
    if not metrics:
        raise InputError(f"{attribution['__path__']}: no rows")
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.8), constrained_layout=True, squeeze=False)
    for ax, m in zip(axes[0], metrics):
        rows = [i for i in range(len(kind)) if metric[i] == m]
        base = [i for i in rows if kind[i] == "baseline"]
        full = [i for i in rows if kind[i] == "full"]
        steps = [i for i in rows if kind[i] == "shapley"]
        if not base or not full:
            raise InputError(f"{attribution['__path__']}: metric {m} has no baseline or full row")
        level = value[base[0]]
        reach = [level, value[full[0]]]  # every height the bars and intervals touch, for the axis
        labels = ["all off"]
        ax.bar(0, level, color="#7f7f7f", width=0.6)
        for x, i in enumerate(steps, start=1):
            colour = "#2ca02c" if value[i] >= 0 else "#d62728"
            ax.bar(x, value[i], bottom=level, color=colour, width=0.6)
            ax.errorbar(x, level + value[i], yerr=[[value[i] - lo[i]], [hi[i] - value[i]]], color="black",
                        capsize=3, linewidth=1)
            ax.plot([x - 1 + 0.3, x - 0.3], [level, level], color="black", linewidth=0.6)
            reach += [level + lo[i], level + hi[i], level + value[i]]
            level += value[i]
            labels.append(part[i].replace("_", "\n"))
        ax.bar(len(steps) + 1, value[full[0]], color="#1f77b4", width=0.6)
        labels.append("all on")
        ax.set_xticks(range(len(labels)), labels, fontsize="small")
        top, bottom = max(reach), min(reach)
        pad = 0.08 * (top - bottom) + 1e-3
        ax.set_ylim(bottom - pad, top + pad)
        ax.set_ylabel(m.replace("_", " "))
        ax.set_title(f"{m}: Shapley values of the parts (95% CI)")
        ax.grid(True, axis="y", alpha=0.3)
    n = numbers(attribution, "n")
    fig.suptitle(f"Attribution of the pipeline's effect (n = {int(n[0])} scenarios)" if n.size else "Attribution")
    save(fig, out_dir, "attribution", written)
    plt.close(fig)
