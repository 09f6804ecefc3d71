#!/usr/bin/env bash
# Regenerate every committed table and figure from the stored results alone (no training).
set -euo pipefail
cd "$(dirname "$0")/.."
for dir in results/issue2-utility results/issue3-attacks results/issue4-attacks; do
  [ -d "$dir/cells" ] || continue
  mkdir -p "$dir/tables"
  bench report --results "$dir" --format markdown --out "$dir/tables"
  bench report --results "$dir" --format latex --standalone --out "$dir/tables"
  bench report --results "$dir" --format csv --out "$dir/tables"
  bench figures --results "$dir" --out "$dir/figures" >/dev/null
  bench verify --results "$dir" > "$dir/claims.txt"
done
# The paper's tables over every committed cpu-profile result together.
ALL="--results results/issue2-utility --results results/issue3-attacks --results results/issue4-attacks"
mkdir -p results/tables
for fmt in markdown csv; do bench report $ALL --format $fmt --out results/tables >/dev/null; done
bench report $ALL --format latex --standalone --out results/tables >/dev/null
