#!/usr/bin/env bash
# Structured (SRHT) vs dense projection on MnistNet split-2: accuracy and reference-decoder leakage.
# The raw and dense lightsplit-f cells were copied from results/issue6-reproduction (same victims and
# code), so only the SRHT cells ran here; on a fresh machine this command runs all of them.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
bench run --data-root ../shared/data --dataset mnist --seeds 0,1,2 --profile cpu --quiet \
  --out results/issue6-structured-projection --attack decoder-ref --defense raw,lightsplit-f,lightsplit-f-srht --cr 8,16,32
