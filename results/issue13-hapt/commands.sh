#!/usr/bin/env bash
# Issue 13, UCI HAPT raw windows (6 channels x 128 samples, flattened to 768): the HAR columns of
# Table III on HAR-MLP (768->256->256 | 256->128 | 128->6, cut d = 256), U-shaped, one client, CR 8.
# Probes: window reconstruction (median per-feature R^2) and subject re-identification.
# Resumable: stored cells are skipped, so rerunning finishes what is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
bench run --data-root ../shared/data --dataset hapt --profile cpu --jobs 2 --quiet --out results/issue13-hapt \
  --defense raw,learned-1x1,topk,lightsplit-f,lightsplit-l --cr 8 --attack har-recon,har-reid --seeds 0,1,2
# The paper's WCC arm (lambda_WCC = 0.1, Table III), where its HAR claims are made.
bench run --data-root ../shared/data --dataset hapt --profile cpu --jobs 2 --quiet --out results/issue13-hapt \
  --defense lightsplit-f --lambda-wcc 0.1 --cr 8 --attack har-recon,har-reid --seeds 0,1,2
