"""Shared helpers of the Python tests (run by ctest with PYTHONPATH=build/python and ADVPLAN_BINARY set)."""
import os
import shutil
import subprocess
import tempfile

import advplan

BINARY = os.environ.get("ADVPLAN_BINARY", "build/advplan")
SOURCE_DIR = os.environ.get("ADVPLAN_SOURCE_DIR", os.getcwd())

# A small config: two templates, three seeds, greedy@k against the seed plan, a short simulator.
SMALL_YAML = """name: python-small
seed: 11
corpus: {templates: [urban, maritime], seeds: [100, 102]}
conditions:
  - single
  - greedy@4
budget_sweep: {blue: seed, ks: [1, 2, 4]}
simulator: {replications: 20}
bootstrap: {resamples: 50}
studies: {rubric: false, framing: false, components: false}
"""


def small_config():
    return advplan.Config.from_yaml(SMALL_YAML, "python-small.yaml")


class TempDir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="advplan-py-")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def cli(*args, check=True):
    return subprocess.run([BINARY, *args], check=check, capture_output=True, text=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def csv_files(run_dir):
    out = []
    for root, _, names in os.walk(run_dir):
        for n in names:
            if n.endswith(".csv"):
                out.append(os.path.relpath(os.path.join(root, n), run_dir))
    return sorted(out)


def column(path, name):
    import csv
    with open(path, newline="") as f:
        return [row[name] for row in csv.DictReader(f)]
