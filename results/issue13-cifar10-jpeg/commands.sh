#!/usr/bin/env bash
# Issue 13, CIFAR-10 (JPEG copy, lossy: never compare with the lossless release) in the paper's regime:
# SimpleCNN at its L2H cut, 64x8x8 (d = 4096), U-shaped, one client, cpu profile (6,000 members,
# 2,000 non-members, 2,000 test images carved from the 10,000 test JPEGs).
# Priority order, per seed. Phase a: every row at CR 8 under the floor and the converged reference
# decoder; SDAR on raw and LightSplit-F at CR 8/16/32 (the paper's headline); FORA and the other rows'
# SDAR at CR 8. Phase b: the other rows at CR 16/32 under the floor and the reference decoder. Phase c:
# the x4 convergence check (seed 0: raw and LightSplit-F at CR 8), SDAR and FORA on every row at CR
# 16/32, the projection-aware decoder z.
# PHASES="a" runs one phase; SEEDS="0" one seed. Resumable: stored cells are skipped.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
ROWS="raw,learned-1x1,topk,lightsplit-f,lightsplit-l"
for SEED in ${SEEDS:-0 1 2}; do
  COMMON="--data-root ../shared/data --dataset cifar10-jpeg --profile cpu --jobs 2 --quiet --seeds $SEED --out results/issue13-cifar10-jpeg"
  for PHASE in ${PHASES:-a b c}; do
    if [ "$PHASE" = a ]; then
      bench run $COMMON --defense $ROWS --cr 8 --attack prior,decoder-ref
      bench run $COMMON --defense raw,lightsplit-f --cr 8,16,32 --attack sdar,prior,decoder-ref
      bench run $COMMON --defense $ROWS --cr 8 --attack sdar,fora
    elif [ "$PHASE" = b ]; then
      bench run $COMMON --defense $ROWS --cr 16,32 --attack prior,decoder-ref
    else
      [ "$SEED" = 0 ] && bench run $COMMON --defense raw,lightsplit-f --cr 8 --attack decoder-ref,sdar,fora --attack-budget 4
      bench run $COMMON --defense $ROWS --cr 16,32 --attack sdar,fora
      bench run $COMMON --defense $ROWS --cr 8,16,32 --attack decoder-z
    fi
  done
done
