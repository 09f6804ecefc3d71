#!/usr/bin/env bash
# Regenerate every committed table and figure from the stored results alone (no training).
set -euo pipefail
cd "$(dirname "$0")/.."
for dir in results/issue2-utility results/issue3-attacks results/issue4-attacks \
           results/issue6-reproduction results/issue6-structured-projection results/issue12-reproduction; do
  [ -d "$dir/cells" ] || continue
  mkdir -p "$dir/tables"
  bench report --results "$dir" --format markdown --out "$dir/tables"
  bench report --results "$dir" --format latex --standalone --out "$dir/tables"
  bench report --results "$dir" --format csv --out "$dir/tables"
  bench figures --results "$dir" --out "$dir/figures" >/dev/null
  bench verify --results "$dir" > "$dir/claims.txt"
done
# The paper's tables from the cpu-profile reproduction (it holds the cells of issues 3 and 4 too).
mkdir -p results/tables
for fmt in markdown csv; do bench report --results results/issue6-reproduction --format $fmt --out results/tables >/dev/null; done
bench report --results results/issue6-reproduction --format latex --standalone --out results/tables >/dev/null
# Issue 12's convergence table and figure.
python benchmarks/convergence.py results/issue12-convergence >/dev/null
