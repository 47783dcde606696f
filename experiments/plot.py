#!/usr/bin/python3
"""Figures of an advplan run: the entry point of the package experiments/plots/ (commands and figures in its
__init__.py, the layout in experiments/README.md "Figures")."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree, as the single-file script did
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
