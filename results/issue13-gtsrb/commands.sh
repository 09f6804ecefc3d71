#!/usr/bin/env bash
# Issue 13, GTSRB (test split only, every image already resized to 32x32 by the copy's maker): the
# utility column of Table II on MicronNet at its default L1H cut, U-shaped, one client, cpu profile
# (6,000 members, 2,000 non-members, 2,000 test images carved from the 12,630 test images).
# Resumable: stored cells are skipped, so rerunning finishes what is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
for SEED in ${SEEDS:-0 1 2}; do
  bench run --data-root ../shared/data --dataset gtsrb --profile cpu --jobs 2 --quiet --seeds $SEED --out results/issue13-gtsrb \
    --defense raw,learned-1x1,topk,lightsplit-f,lightsplit-l --cr 8,16,32
done
