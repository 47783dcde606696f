"""The sweep figure (tables/sweep.csv, docs/METRICS.md "Parameter sweeps"): for a one-setting sweep, each metric
against the setting with its 95% joint-bootstrap band, the reference point and the argmax marked; for a sweep of
two settings, a heat map per metric (rows the first setting, columns the second); for more, a curve per metric
over the points in grid order."""

from .common import InputError, _np, numbers, save, strings

METRICS = [
    ("advantage", "BLUE advantage"),
    ("blue_win_rate", "BLUE win rate"),
    ("red_quality", "RED quality"),
    ("red_coherence", "RED coherence"),
    ("red_pressure", "RED pressure"),
    ("blue_quality", "BLUE quality"),
]
FIXED = ["point", "metric", "n", "mean", "ci_lo", "ci_hi", "reference"]


def sweep_settings(sweep):
    """The swept settings' columns of sweep.csv: the columns between `point` and `metric`."""
    header = [c for c in sweep if not c.startswith("__")]
    return header[header.index("point") + 1:header.index("metric")]


def plot_sweep(plt, sweep, argmax, out_dir, written):
    np = _np()
    settings = sweep_settings(sweep)
    if not settings:
        raise InputError(f"{sweep['__path__']}: no setting columns between 'point' and 'metric'")
    metric = strings(sweep, "metric")
    point = strings(sweep, "point")
    best = dict(zip(argmax["metric"], argmax["point"])) if argmax is not None else {}
    shown = [(m, label) for m, label in METRICS if (metric == m).any()]
    if len(settings) == 2:
        fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), constrained_layout=True)
        axes = axes.ravel()
        xs = list(dict.fromkeys(sweep[settings[0]]))
        ys = list(dict.fromkeys(sweep[settings[1]]))
        for ax, (m, label) in zip(axes, shown):
            rows = metric == m
            grid = np.full((len(xs), len(ys)), np.nan)
            for x, y, v in zip(strings(sweep, settings[0])[rows], strings(sweep, settings[1])[rows],
                               numbers(sweep, "mean")[rows]):
                grid[xs.index(x), ys.index(y)] = v
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(ys)), ys, rotation=45, fontsize="small")
            ax.set_yticks(range(len(xs)), xs, fontsize="small")
            ax.set_xlabel(settings[1])
            ax.set_ylabel(settings[0])
            ax.set_title(label)
            fig.colorbar(im, ax=ax, shrink=0.85)
            if m in best:
                b = (point[rows] == best[m]).nonzero()[0]
                if b.size:
                    i = b[0]
                    ax.plot(ys.index(strings(sweep, settings[1])[rows][i]), xs.index(strings(sweep, settings[0])[rows][i]),
                            marker="*", color="white", markersize=14, markeredgecolor="black")
        for ax in axes[len(shown):]:
            ax.set_visible(False)
    else:
        fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), constrained_layout=True)
        axes = axes.ravel()
        for ax, (m, label) in zip(axes, shown):
            rows = metric == m
            x = numbers(sweep, settings[0])[rows] if len(settings) == 1 else np.arange(rows.sum(), dtype=float)
            y, lo, hi = (numbers(sweep, c)[rows] for c in ("mean", "ci_lo", "ci_hi"))
            ref = strings(sweep, "reference")[rows] == "1"
            ax.fill_between(x, lo, hi, color="#1f77b4", alpha=0.2, linewidth=0, label="95% joint-bootstrap interval")
            ax.plot(x, y, color="#1f77b4", marker="o", markersize=3, linewidth=1.6, label="mean over scenarios")
            if ref.any():
                ax.plot(x[ref], y[ref], linestyle="none", marker="s", markersize=7, markerfacecolor="none",
                        markeredgecolor="black", label="reference")
            if m in best:
                b = point[rows] == best[m]
                ax.plot(x[b], y[b], linestyle="none", marker="*", markersize=12, color="#d62728", label="argmax")
            ax.set_xlabel(settings[0] if len(settings) == 1 else "point (grid order)")
            ax.set_ylabel(label)
            ax.set_title(label)
            ax.grid(True, alpha=0.3)
            ax.legend(loc="best", fontsize="x-small")
        for ax in axes[len(shown):]:
            ax.set_visible(False)
    n = numbers(sweep, "n")
    suffix = f", n = {int(n[0])} scenarios" if n.size and np.all(n == n[0]) else ""
    fig.suptitle(f"Sweep over {', '.join(settings)}{suffix}")
    save(fig, out_dir, "sweep", written)
    plt.close(fig)
