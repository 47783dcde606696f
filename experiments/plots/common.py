"""What every family of figures shares: the program name and exit helpers, reading advplan's CSVs, the run's
MANIFEST check (through `advplan check`), matplotlib's deterministic settings, the common axis, interval-band and
selector-pick helpers, and saving a figure as PNG and SVG."""

import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

PROG = "plot.py"

# Fixed figure geometry, so reruns give identical files (each family's own sizes are in its module).
DPI = 150

# Colours (matplotlib's tab10, fixed per role so every figure agrees).
BLUE = "#1f77b4"
RED = "#d62728"
GREY = "#7f7f7f"
CONDITION_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
ROUND_COLOURS = {1: "#1f77b4", 2: "#ff7f0e"}

BUDGET_AXIS_LABEL = "RED response budget k (greedy best-of-k, log2 scale)"

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


def check_numbers(checks):
    """Parses every listed numeric column of [(table, [column, ...])] (a table of None is skipped), so that a
    malformed number is named before any figure is written."""
    for table, columns in checks:
        if table is not None:
            for c in columns:
                numbers(table, c)


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


# --------------------------------------------------------------------------------------------------- the run's MANIFEST

# The repository root: experiments/plots/ is two levels below it.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_HINT = "build it with `bash scripts/setup.sh` (it writes build/advplan) or set ADVPLAN to the advplan binary"


def advplan_binary():
    """The advplan CLI: $ADVPLAN when set, else build/advplan of this repository, else `advplan` on PATH. Fails
    with one sentence when none exists."""
    env = os.environ.get("ADVPLAN", "")
    if env:
        found = shutil.which(env)
        if found is None:
            fail(f"ADVPLAN={env}: not found or not executable; {BUILD_HINT}")
        return found
    built = os.path.join(REPO_ROOT, "build", "advplan")
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    found = shutil.which("advplan")
    if found is None:
        fail(f"the advplan binary is needed to check the run's MANIFEST and was found neither at {built} nor on "
             f"PATH; {BUILD_HINT}")
    return found


def check_run(run_dir):
    """Refuses a directory that is not one complete run, with the check every reader of a run makes
    (`advplan check RUN_DIR`, docs/TRACES.md "Run directory and MANIFEST"). Returns the CLI's error sentence
    (without its `advplan: ` prefix), or None when the MANIFEST holds."""
    binary = advplan_binary()
    env = dict(os.environ)
    env.pop("ADVPLAN_PLUGINS", None)  # the check needs no policy plug-in, and a broken one must not fail it
    try:
        r = subprocess.run([binary, "check", "--", run_dir], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env)
    except OSError as e:
        fail(f"{binary}: cannot be run ({e.strerror}); {BUILD_HINT}")
    if r.returncode == 0:
        return None
    lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
    last = lines[-1].strip() if lines else ""
    if r.returncode == 1 and last.startswith("advplan: "):  # the check's one sentence
        return last[len("advplan: "):]
    fail(f"`{binary} check {run_dir}` failed with exit status {r.returncode} ({last or 'no message'}); if that "
         "advplan predates the check command, rebuild it with `bash scripts/setup.sh` or set ADVPLAN to a newer one")


# --------------------------------------------------------------------------------------------------- figures


def load_matplotlib():
    """matplotlib.pyplot on the Agg backend with fixed settings, so every figure is deterministic. Exits with
    status 2 when matplotlib or numpy is missing."""
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
    return plt


def make_out_dir(out_dir, check_writable=False):
    """Creates the output directory (and its parents); fails with one sentence when it cannot."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        fail(f"{out_dir}: output directory cannot be created ({e.strerror})")
    if check_writable and not os.access(out_dir, os.W_OK):
        fail(f"{out_dir}: output directory is not writable")


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


def budget_axis(ax, ks, minor_ticks=False):
    """A log2 x axis with a tick and an integer label at each budget k (minor ticks off unless asked)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks)
    ax.set_xticklabels([f"{int(v)}" if float(v).is_integer() else f"{v:g}" for v in ks])
    if not minor_ticks:
        ax.minorticks_off()


def interval_band(ax, x, y, lo, hi, colour, alpha, band_label=None, label=None, linewidth=None):
    """A mean curve with markers over its shaded interval band [lo, hi]."""
    band = {} if band_label is None else {"label": band_label}
    ax.fill_between(x, lo, hi, color=colour, alpha=alpha, linewidth=0, **band)
    line = {} if linewidth is None else {"linewidth": linewidth}
    ax.plot(x, y, color=colour, marker="o", label=label, **line)


def mark_picks(ax, q, d, greedy, constraint, handles, greedy_size, constraint_size):
    """The quality-greedy and the constraint-aware pick as open markers of different shapes (so both, and the point
    under them, stay visible when they coincide), with legend proxies of one size appended to `handles`."""
    from matplotlib.lines import Line2D

    if greedy.any():
        ax.scatter(q[greedy], d[greedy], s=greedy_size, facecolors="none", edgecolors="black", linewidths=1.6,
                   marker="s", zorder=5)
        handles.append(Line2D([], [], linestyle="none", marker="s", markersize=11, markerfacecolor="none",
                              markeredgecolor="black", markeredgewidth=1.6, label="quality-greedy pick (max q)"))
    if constraint.any():
        ax.scatter(q[constraint], d[constraint], s=constraint_size, facecolors="none", edgecolors="#2ca02c",
                   linewidths=1.8, marker="D", zorder=6)
        handles.append(Line2D([], [], linestyle="none", marker="D", markersize=11, markerfacecolor="none",
                              markeredgecolor="#2ca02c", markeredgewidth=1.8,
                              label="constraint-aware pick (max \u03bbq + (1\u2212\u03bb)D)"))


def note_same_pick(ax, greedy, constraint):
    """A note in the upper left corner when both selectors pick the same candidate."""
    np = _np()
    if greedy.any() and constraint.any() and np.array_equal(np.flatnonzero(greedy), np.flatnonzero(constraint)):
        ax.text(0.02, 0.98, "both selectors pick the same candidate", transform=ax.transAxes, ha="left", va="top",
                fontsize="small", color="#333333")
