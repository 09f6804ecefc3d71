"""``python -m tests.mutants [--jobs N]``: every mutant against its targets; exit 1 if any survives."""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

MUTANTS = ("mean_image", "zero_payload", "mean_label")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__)
    parser.add_argument("--jobs", default="auto", help="pytest-xdist workers for a mutant that runs in parallel ('0': none)")
    parser.add_argument("mutants", nargs="*", metavar="MUTANT", help=f"any of {', '.join(MUTANTS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.mutants) - set(MUTANTS))
    if unknown:
        parser.error(f"unknown mutant {', '.join(unknown)} (known: {', '.join(MUTANTS)})")
    args.mutants = args.mutants or list(MUTANTS)
    survived = []
    for name in args.mutants:
        mutant = importlib.import_module(f"tests.mutants.{name}")
        command = [sys.executable, "-m", "pytest", "-p", f"tests.mutants.{name}", "-p", "no:cacheprovider", "-q",
                   "--no-header", "-rN", "--tb=line", "-n", args.jobs if mutant.PARALLEL else "0", "--dist", "worksteal", *mutant.TARGETS]
        print(f"mutant {name}: {len(mutant.TARGETS)} targets", flush=True)
        if subprocess.run(command).returncode != 0:
            survived.append(name)
    if survived:
        print(f"mutants not killed: {', '.join(survived)}", file=sys.stderr)
        return 1
    print(f"every mutant killed ({', '.join(args.mutants)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
