#!/usr/bin/env bash
# Regenerate every committed table and figure from the stored results alone (no training, no cell runs).
# Each results folder holds the grid file that made its cells; to rerun (or finish) a folder's cells
# instead, run its grid file from the repository root (stored cells are skipped), e.g.
#   OMP_NUM_THREADS=1 bench run --config results/issue12-reproduction/grid.toml
#
# With folders as arguments (results/<name>), only those folders' tables, figures and claims are
# regenerated (benchmarks/device/kit.py collect does this for the folders it merged cells into).
set -euo pipefail
cd "$(dirname "$0")/.."
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(results/*/)
# Every results folder made by a grid file and keeping tables/ or tables-measured/ (the others keep only
# their cells and tidy table): its tables, figures and claim list.
for dir in "${folders[@]}"; do
  dir=${dir%/}
  [ -f "$dir/grid.toml" ] || continue
  [ -d "$dir/cells" ] || continue
  # A grid run at budget = "measured" (each attack at its budget table's budget): its tables and claims
  # read each attack at that budget.
  if [ -d "$dir/tables-measured" ]; then
    for fmt in markdown csv; do bench report --results "$dir" --attack-budget measured --format $fmt --out "$dir/tables-measured"; done
    bench report --results "$dir" --attack-budget measured --format latex --standalone --out "$dir/tables-measured"
    bench verify --results "$dir" --attack-budget measured > "$dir/claims-measured.txt"
  fi
  [ -d "$dir/tables" ] || continue
  bench report --results "$dir" --format markdown --out "$dir/tables"
  bench report --results "$dir" --format latex --standalone --out "$dir/tables"
  bench report --results "$dir" --format csv --out "$dir/tables"
  bench figures --results "$dir" --out "$dir/figures" >/dev/null
  bench verify --results "$dir" > "$dir/claims.txt"
  # Where an attack converged only at N times its budget (tables-xN/), the tables and claims with the
  # attack columns at that budget.
  for larger in "$dir"/tables-x*; do
    [ -d "$larger" ] || continue
    n=${larger##*-x}
    for fmt in markdown csv; do bench report --results "$dir" --attack-budget "$n" --format $fmt --out "$larger"; done
    bench report --results "$dir" --attack-budget "$n" --format latex --standalone --out "$larger"
    bench verify --results "$dir" --attack-budget "$n" > "$dir/claims-x$n.txt"
  done
done
[ $# -eq 0 ] || exit 0
# The paper's tables from the cpu-profile reproduction (it holds the cells of issues 3 and 4 too).
mkdir -p results/tables
for fmt in markdown csv; do bench report --results results/issue6-reproduction --format $fmt --out results/tables >/dev/null; done
bench report --results results/issue6-reproduction --format latex --standalone --out results/tables >/dev/null
# Issue 42's label-leakage and attack-free tables, the worst case over every image attack stored for the same rows.
bench report --results results/issue42-mnist --results results/issue39-mnist-table3 --results results/issue41-mnist \
  --table LABELS,LEAKAGE,LEAKAGE-RANK --out results/issue42-mnist/leakage-tables.md >/dev/null
bench report --results results/issue42-cifar10 --results results/issue13-cifar10-jpeg --results results/issue41-cifar10 \
  --results results/issue39-sdar-cifar --table LABELS,LEAKAGE,LEAKAGE-RANK --out results/issue42-cifar10/leakage-tables.md >/dev/null
# Issue 12's convergence table and figure.
python benchmarks/convergence.py results/issue12-convergence >/dev/null
# The one-screen summary opening results/README.md, from a site built of every committed folder.
site=$(mktemp -d)
bench site $(git ls-files 'results/*/results.parquet' | xargs -n1 dirname | sed 's/^/--results /') --out "$site/site" >/dev/null
python -m bench.site.front_page --site "$site/site" --readme results/README.md
rm -rf "$site"
