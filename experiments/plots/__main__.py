"""`python3 -m plots ...` (from experiments/) or `python3 experiments/plots ...`: the same as experiments/plot.py."""

import os
import sys

if __package__ in (None, ""):  # run as a directory: put experiments/ on sys.path and import the package
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from plots.cli import main
else:
    from .cli import main

if __name__ == "__main__":
    sys.exit(main())
