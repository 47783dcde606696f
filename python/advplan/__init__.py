"""advplan from Python: configs, scenarios, plans and their metrics, RED candidates and selectors, the simulator,
runs, evaluations and tables, and BLUE and RED policies written in Python that run in-process.

    import advplan
    cfg = advplan.Config()                      # the built-in paper config
    sc = cfg.scenarios()[0]                     # a dict (the JSON of `advplan scenarios`)
    cfg.metrics(cfg.seed_plans(sc["id"])[0], sc["id"])   # {"q": ..., "D": ..., "D_parts": {...}, ...}
    run = advplan.run(cfg, out="runs/p", threads=2)
    per = run.trace("per_scenario")             # NumPy structured array, or a pandas DataFrame

See docs/PYTHON.md.
"""
import csv
import os

from ._advplan import (  # noqa: F401  (re-exported)
    ConfigError,
    Config,
    CsvError,
    Error,
    IoError,
    PlanError,
    PolicyError,
    __version__,
    advantage,
    blue_policies,
    nash_gap,
    pareto_front,
    red_policies,
    register_blue,
    register_red,
    select_constraint_aware,
    select_highest_pressure,
    select_quality_greedy,
)
from . import _advplan

__all__ = [
    "Config", "Run", "run", "evaluate", "tables", "blue_policy", "red_policy", "register_blue", "register_red",
    "load_csv", "Error", "ConfigError", "PlanError", "CsvError", "PolicyError", "IoError",
    "select_quality_greedy", "select_constraint_aware", "select_highest_pressure", "pareto_front", "advantage",
    "nash_gap", "blue_policies", "red_policies",
]


def _config(config):
    """A Config from a Config, a path, or None (the built-in paper config)."""
    if config is None:
        return Config()
    if isinstance(config, Config):
        return config
    if isinstance(config, (str, os.PathLike)):
        return Config.load(os.fspath(config))
    raise TypeError("config: expected an advplan.Config, a path or None, got %s" % type(config).__name__)


def _names(value, what):
    """A list of names from one name (a string is one name, never its characters) or an iterable of strings."""
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise ConfigError("%s: expected a name or a list of names, got %s" % (what, type(value).__name__)) from None
    for v in items:
        if not isinstance(v, str):
            raise ConfigError("%s: expected names (strings), got %s %r" % (what, type(v).__name__, v))
    return items


def _whole(value, what, lo, hi):
    """An int in lo..hi from an int (a bool or a fraction is refused), or ConfigError with one sentence."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError("%s: expected a whole number in %d..%d, got %r" % (what, lo, hi, value))
    if value < lo or value > hi:
        raise ConfigError("%s: %d is not in %d..%d" % (what, value, lo, hi))
    return value


def _policy_options(cls, thread_safe, description, params):
    if thread_safe is None:
        thread_safe = bool(getattr(cls, "thread_safe", False))
    if description is None:
        description = (cls.__doc__ or "").strip().split("\n")[0]
    if params is None:
        params = getattr(cls, "params", {}) or {}
    spec = {}
    for k, v in params.items():
        if isinstance(v, (int, float)):
            spec[k] = (float(v), float("-inf"), float("inf"))
        else:
            default, lo, hi = v
            spec[k] = (float(default), float(lo), float(hi))
    return thread_safe, description, spec


def blue_policy(name, thread_safe=None, description=None, params=None, override=False):
    """Class decorator: registers a BLUE policy class (a method plan(scenario) -> plan dict) under `name`.

    thread_safe (or the class attribute `thread_safe`): True lets the runner call one object from several
    threads at once; False (the default) serialises its calls. params: {name: default} or {name: (default, lo,
    hi)}, set per run from the config's `policies.<name>` section and passed to the constructor as keywords.
    A name already registered (built in, by a plug-in or earlier) raises advplan.PolicyError unless override=True."""
    def wrap(cls):
        ts, desc, spec = _policy_options(cls, thread_safe, description, params)
        register_blue(name, cls, ts, desc, spec, override)
        return cls
    return wrap


def red_policy(name, thread_safe=None, description=None, params=None, override=False):
    """Class decorator: registers a RED policy class (a method respond(scenario, blue_plan) -> plan dict).
    A name already registered raises advplan.PolicyError unless override=True."""
    def wrap(cls):
        ts, desc, spec = _policy_options(cls, thread_safe, description, params)
        register_red(name, cls, ts, desc, spec, override)
        return cls
    return wrap


# ------------------------------------------------------------------------------------------------ traces


def _convert_column(values):
    """(numpy dtype, converted values): int64 when every cell is an integer, float64 when every non-empty cell is
    a number (empty cells become NaN), else a string column."""
    nonempty = [v for v in values if v != ""]
    if nonempty and len(nonempty) == len(values):
        try:
            return "i8", [int(v) for v in values]
        except ValueError:
            pass
    if nonempty:
        try:
            return "f8", [float(v) if v != "" else float("nan") for v in values]
        except ValueError:
            pass
    width = max([len(v) for v in values] + [1])
    return "U%d" % width, values


def load_csv(path, pandas=None):
    """Reads a trace CSV as a NumPy structured array (one field per column, typed by content), or as a pandas
    DataFrame when pandas=True, or pandas=None and pandas is importable."""
    if pandas is None or pandas:
        try:
            import pandas as pd
        except ImportError:
            if pandas:
                raise
        else:
            try:
                return pd.read_csv(path, keep_default_na=False, na_values=[""], encoding="utf-8-sig")
            except UnicodeDecodeError as e:
                raise CsvError("%s: not UTF-8 text (byte %d)" % (path, e.start)) from None
            except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
                raise CsvError("%s: not a CSV file (%s)" % (path, str(e).strip().split("\n")[0])) from None
    import numpy as np
    # utf-8-sig: a byte-order mark (a spreadsheet's export) is not kept in the first column's name.
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except UnicodeDecodeError as e:
        raise CsvError("%s: not UTF-8 text (byte %d)" % (path, e.start)) from None
    except csv.Error as e:
        raise CsvError("%s: not a CSV file (%s)" % (path, e)) from None
    if not rows:
        raise CsvError("%s: empty file, expected a header row" % path)
    header, body = rows[0], rows[1:]
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise CsvError("%s: row %d has %d cells, the header has %d" % (path, i + 2, len(r), len(header)))
    columns = list(zip(*body)) if body else [()] * len(header)
    dtypes, data = [], []
    for name, col in zip(header, columns):
        dt, vals = _convert_column(list(col))
        dtypes.append((name, dt))
        data.append(vals)
    out = np.zeros(len(body), dtype=dtypes)
    for (name, _), vals in zip(dtypes, data):
        out[name] = vals
    return out


class Run:
    """A run directory written by advplan.run, advplan.evaluate or `advplan run`: its traces and tables."""

    def __init__(self, path, summary=None):
        self.path = os.fspath(path)
        self.summary = summary or {}

    def __repr__(self):
        return "advplan.Run(%r)" % self.path

    def files(self):
        """Every file of the run, relative to its directory, sorted."""
        out = []
        for root, _, names in os.walk(self.path):
            for n in names:
                out.append(os.path.relpath(os.path.join(root, n), self.path))
        return sorted(out)

    def trace_path(self, name):
        p = os.path.join(self.path, name if name.endswith(".csv") else name + ".csv")
        if not os.path.exists(p):
            raise IoError("%s: no such trace in run %s" % (name, self.path))
        return p

    def trace(self, name, pandas=None):
        """A trace CSV ("per_scenario", "candidates", "budget_curve", "evaluation/verdicts", ...) as a NumPy
        structured array, or a pandas DataFrame (pandas=True, or None when pandas is importable)."""
        return load_csv(self.trace_path(name), pandas=pandas)

    def table(self, name, fmt="md"):
        """A table's text, e.g. run.table("table4_response_budget")."""
        p = os.path.join(self.path, "tables", "%s.%s" % (name, fmt))
        if not os.path.exists(p):
            raise IoError("%s: no such table in run %s" % (name, self.path))
        with open(p, encoding="utf-8") as f:
            return f.read()

    def tables(self, out=None):
        """Rebuilds every table from the CSVs (as `advplan tables`); returns self."""
        _advplan._tables(self.path, os.fspath(out) if out else "")
        return self


def run(config=None, out=None, threads=0, conditions=None, studies=True, resume=False):
    """Runs an experiment as `advplan run CONFIG --out OUT --threads N` does and returns the Run.

    config: an advplan.Config, a path, or None for the built-in paper config. conditions (optional) replaces the
    config's: each a RED spec ("greedy@8", against the config's default BLUE policy) or a dict {red, blue, label,
    group}; one string or one dict is one condition. threads (0..1024): 0 uses every core; traces are byte-identical at any thread count. Ctrl-C stops the run at
    once and raises KeyboardInterrupt, leaving OUT resumable: run(..., resume=True) with the same arguments
    continues it (as `--resume` does)."""
    if out is None:
        raise ConfigError("run: out= names no run directory")
    cfg = _config(config)
    threads = _whole(threads, "run: threads", 0, 1024)
    if isinstance(conditions, (str, dict)):  # one condition, not a list of its characters or keys
        conditions = [conditions]
    summary = _advplan._run(cfg, os.fspath(out), threads, conditions, bool(studies), bool(resume))
    return Run(out, summary)


def evaluate(blue, config=None, out=None, reds=("single", "greedy@8", "constraint@8", "llm_offline"),
             references=("seed", "council"), budget=(1, 2, 4, 8, 16), threads=0, rerun=5):
    """Tests a BLUE policy as `advplan evaluate --blue BLUE` does (conditions, verdicts, robustness, scorecard,
    summary.md/json) and returns the Run. reds and references: a name or a list of names; budget: a k or a list of
    k in 1..1024; threads 0..1024 (0: every core); rerun 0..1000."""
    if out is None:
        raise ConfigError("evaluate: out= names no run directory")
    cfg = _config(config)
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        budget = [budget]
    budget = [_whole(k, "evaluate: budget", 1, 1024) for k in budget]
    summary = _advplan._evaluate(cfg, blue, os.fspath(out), _names(reds, "evaluate: reds"),
                                 _names(references, "evaluate: references"), budget,
                                 _whole(threads, "evaluate: threads", 0, 1024), _whole(rerun, "evaluate: rerun", 0, 1000))
    return Run(out, summary)


def tables(run_dir, out=None):
    """Rebuilds every table of a run directory from its CSVs alone (as `advplan tables RUN`); returns the Run."""
    return Run(run_dir).tables(out)
