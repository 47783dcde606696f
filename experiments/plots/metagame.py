"""The figures of `advplan metagame RUN_DIR` (RUN_DIR/metagame/, docs/METRICS.md): the payoff heat map, the
exploitability of each policy, and the best-response graph."""

import json
import os

from .common import BLUE, GREY, RED, InputError, _np, numbers, read_csv, save, strings

SIZE_META_PAYOFF = (9.0, 6.4)
SIZE_META_EXPLOIT = (11.0, 4.8)
SIZE_META_GRAPH = (8.0, 6.4)


def read_metagame(meta_dir):
    """The meta-game files of `advplan metagame`: matrix, equilibrium, exploitability, response graph."""
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
