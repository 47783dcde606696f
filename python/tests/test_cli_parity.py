"""A run and its tables from Python are byte-identical to the CLI's: the paper run (whose budget sweep is
Table 4) and a small sweep config, and advplan.tables rebuilds the same tables as `advplan tables`."""
import os
import unittest

import advplan
from common import SMALL_YAML, SOURCE_DIR, TempDir, cli, read


def all_files(run_dir):
    out = []
    for root, _, names in os.walk(run_dir):
        for n in names:
            if n != "run_metadata.json":
                out.append(os.path.relpath(os.path.join(root, n), run_dir))
    return sorted(out)


class CliParity(unittest.TestCase):
    def assertSameRun(self, a, b):
        files = all_files(a)
        self.assertEqual(files, all_files(b))
        self.assertIn("budget_curve.csv", files)
        for f in files:
            self.assertEqual(read(os.path.join(a, f)), read(os.path.join(b, f)), f)

    def test_paper_run_matches_the_cli(self):
        with TempDir() as d:
            cli("run", "--out", os.path.join(d, "cli"), "--threads", "2")
            r = advplan.run(out=os.path.join(d, "py"), threads=2)
            self.assertEqual(r.summary["scenarios"], 150)
            self.assertSameRun(os.path.join(d, "cli"), r.path)

    def test_small_sweep_from_a_config_file_matches_the_cli(self):
        with TempDir() as d:
            cfg = os.path.join(d, "small.yaml")
            with open(cfg, "w") as f:
                # a file's templates are read relative to it: point at the tree's
                f.write(SMALL_YAML.replace("seeds: [100, 102]}", "seeds: [100, 102], template_dir: %s}"
                                           % os.path.join(SOURCE_DIR, "configs", "templates")))
            cli("run", cfg, "--out", os.path.join(d, "cli"), "--threads", "1")
            r = advplan.run(cfg, out=os.path.join(d, "py"), threads=2)
            self.assertSameRun(os.path.join(d, "cli"), r.path)
            # tables rebuilt from the CSVs, from Python and from the CLI
            advplan.tables(r.path, out=os.path.join(d, "t-py"))
            cli("tables", r.path, "--out", os.path.join(d, "t-cli"))
            for f in sorted(os.listdir(os.path.join(d, "t-cli"))):
                self.assertEqual(read(os.path.join(d, "t-cli", f)), read(os.path.join(d, "t-py", f)), f)
            self.assertIn("Table 4", r.table("table4_response_budget"))

    def test_traces_load_as_structured_arrays(self):
        with TempDir() as d:
            r = advplan.run(advplan.Config.from_yaml(SMALL_YAML, "small.yaml"), out=d, threads=2)
            per = r.trace("per_scenario", pandas=False)
            self.assertEqual(per.dtype["advantage"].kind, "f")
            self.assertEqual(per.dtype["k"].kind, "i")
            self.assertEqual(per.dtype["scenario_id"].kind, "U")
            curve = r.trace("budget_curve", pandas=False)
            self.assertEqual(list(curve["k"]), [1, 2, 4])
            try:
                import pandas  # noqa: F401
            except ImportError:
                return
            df = r.trace("per_scenario")
            self.assertEqual(len(df), len(per))
            self.assertEqual(list(df["advantage"]), list(per["advantage"]))


if __name__ == "__main__":
    unittest.main()
