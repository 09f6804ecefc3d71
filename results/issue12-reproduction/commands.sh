#!/usr/bin/env bash
# Issue 12: Table III at CR 8 rerun under the strengthened attacks (one attacker per cut, adaptive
# attacker paths, held-out stopping, the prior's floor), MnistNet split-2, U-shaped, one client, offline
# MNIST. Priority order: for seed 0, every row under the six main attacks, then the white-box decoders
# strongest-first (decoder-z led every LightSplit-F row of issue 6); then seeds 1 and 2. A partial run
# already fills the table. Resumable: stored cells are skipped, so rerunning finishes what is missing.
set -uo pipefail   # a failed cell is recorded and exits 1; the next command still runs
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1   # on 2 cores, one thread per worker is far faster than two under load
ATTACKS="prior,decoder-ref,sdar,fora,unsplit,fsha"
ROWS="raw,lightsplit-f,topk,learned-1x1,lightsplit-l"
for SEED in 0 1 2; do
  COMMON="--data-root ../shared/data --dataset mnist --seeds $SEED --profile cpu --jobs 2 --quiet --out results/issue12-reproduction"
  for ATT in "$ATTACKS" decoder-z decoder-fused decoder decoder-z-lift decoder-z-grad; do
    bench run $COMMON --attack "$ATT" --defense $ROWS --cr 8
    bench run $COMMON --attack "$ATT" --defense raw+dp,lightsplit-f+dp --cr 8
    bench run $COMMON --attack "$ATT" --defense lightsplit-f --lambda-wcc 1e-3,1e-1 --cr 8
  done
done
