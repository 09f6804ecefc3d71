#!/usr/bin/env bash
# Issue 13, CIFAR-10 (JPEG copy, lossy: never compare with the lossless release) in the paper's regime:
# SimpleCNN at its L2H cut, 64x8x8 (d = 4096), U-shaped, one client, cpu profile (6,000 members,
# 2,000 non-members, 2,000 test images carved from the 10,000 test JPEGs).
# Priority order: Table II at CR 8 under the floor and the converged reference decoder, then SDAR and
# FORA, then the x4 convergence check of those three on raw and LightSplit-F, then CR 16/32, then the
# projection-aware decoder z; then seeds 1-2.
# Resumable: stored cells are skipped, so rerunning finishes what is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
ROWS="raw,learned-1x1,topk,lightsplit-f,lightsplit-l"
for SEED in ${SEEDS:-0 1 2}; do   # SEEDS="0" runs one seed
  COMMON="--data-root ../shared/data --dataset cifar10-jpeg --profile cpu --jobs 2 --quiet --seeds $SEED --out results/issue13-cifar10-jpeg"
  bench run $COMMON --defense $ROWS --cr 8 --attack prior,decoder-ref
  bench run $COMMON --defense $ROWS --cr 8 --attack sdar,fora
  [ "$SEED" = 0 ] && bench run $COMMON --defense raw,lightsplit-f --cr 8 --attack decoder-ref,sdar,fora --attack-budget 4
  bench run $COMMON --defense $ROWS --cr 16,32 --attack prior,decoder-ref,sdar,fora
  bench run $COMMON --defense $ROWS --cr 8,16,32 --attack decoder-z
done
