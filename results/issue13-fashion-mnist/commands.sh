#!/usr/bin/env bash
# Issue 13, Fashion-MNIST (official train + test idx files): UnSplit rows of Table III and Table XIV on
# MnistNet split-2 (UnSplit's released victim), U-shaped, one client; then SimpleCNN utility.
# Priority order: seed 0 at CR 8, then seeds 1-2 at CR 8, then CR 16/32 (Table XIV), then utility.
# Resumable: stored cells are skipped, so rerunning finishes what is missing.
set -uo pipefail   # a failed cell is recorded and exits 1; the next command still runs
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1   # on 2 cores, one thread per worker is far faster than two under load
COMMON="--data-root ../shared/data --dataset fashion-mnist --profile cpu --jobs 2 --quiet --out results/issue13-fashion-mnist"
ROWS="raw,learned-1x1,topk,lightsplit-f"
bench run $COMMON --victim mnistnet --attack prior,unsplit --defense $ROWS --cr 8 --seeds 0
bench run $COMMON --victim mnistnet --attack prior,unsplit --defense $ROWS --cr 8 --seeds 1,2
bench run $COMMON --victim mnistnet --attack unsplit --defense $ROWS --cr 16,32 --seeds 0,1,2
bench run $COMMON --victim simplecnn --defense $ROWS --cr 8,16,32 --seeds 0,1,2
