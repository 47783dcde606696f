"""`plot.py map FILE.geojson`: a scenario map of `advplan map` or a run's maps/ (docs/GEO.md), drawn in lon/lat:
sectors, threat zones by side, obstacles, the road or sea-lane network, places and assets."""

import json
import math
import os

from .common import fail


def read_map(path):
    """The FeatureCollection of FILE.geojson and its features; fails with one sentence naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            fc = json.load(f)
        features = fc["features"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a GeoJSON FeatureCollection ({e})")
    return fc, features


def draw_map(plt, fc, features, path):
    """The map of FILE.geojson (`path`) as a figure; the caller saves it as map_<file name>."""
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
        ax.fill([p[0] for p in ring], [p[1] for p in ring], facecolor=fill, edgecolor=edge,
                alpha=alpha if alpha else 1.0, linewidth=0.8, fill=alpha > 0)
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
    ax.set_title(f"{fc.get('name', os.path.basename(path))}: places (stars), assets (dots), threat zones")
    ax.set_aspect(1.0 / max(0.1, math.cos(math.radians(sum(ax.get_ylim()) / 2))))
    return fig
