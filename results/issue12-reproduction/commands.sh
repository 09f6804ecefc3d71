#!/usr/bin/env bash
# Issue 12: Table III at CR 8 rerun under the strengthened attacks (one attacker per cut, adaptive
# attacker paths, held-out stopping, the prior's floor), MnistNet split-2, U-shaped, one client, offline
# MNIST. Seeds in priority order (seed 0 for every row first), so a partial run already fills the
# table. Resumable: stored cells are skipped, so rerunning finishes what is missing and changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1   # on 2 cores, one thread per worker is far faster than two under load
ATTACKS="prior,decoder-ref,sdar,fora,unsplit,fsha"
WHITEBOX="decoder,decoder-z,decoder-z-lift,decoder-z-grad,decoder-fused"
for SEED in 0 1 2; do
  COMMON="--data-root ../shared/data --dataset mnist --seeds $SEED --profile cpu --jobs 2 --quiet --out results/issue12-reproduction"
  bench run $COMMON --attack $ATTACKS --defense raw,lightsplit-f,topk,learned-1x1,lightsplit-l --cr 8
  bench run $COMMON --attack $ATTACKS --defense raw+dp,lightsplit-f+dp --cr 8
  bench run $COMMON --attack $ATTACKS --defense lightsplit-f --lambda-wcc 1e-3,1e-1 --cr 8
  bench run $COMMON --attack $WHITEBOX --defense raw,lightsplit-f,topk,learned-1x1,lightsplit-l --cr 8
  bench run $COMMON --attack $WHITEBOX --defense raw+dp,lightsplit-f+dp --cr 8
  bench run $COMMON --attack $WHITEBOX --defense lightsplit-f --lambda-wcc 1e-3,1e-1 --cr 8
done
