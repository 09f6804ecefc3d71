"""What GPT-2's 50,257-token output layer costs a cpu-profile language-model step, against a
4,096-token BPE (the cpu profile's choice), for the two cpu sizes, through the split engine (raw).

Interleaved repeats, median per variant, printed as ratios and as a share of the float32 matmul
ceiling (87 GFLOP/s per core; 6 FLOPs per parameter per token for a training step, attention and
embedding lookups left out).

    OMP_NUM_THREADS=1 python benchmarks/lm_vocab_cost.py [--batch 8 --repeats 3 --steps 3]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from bench.run.engine import SplitModel, SplitTrainer
from defenses import build_defense
from victims import VICTIMS

CEILING_GFLOPS = 87.0
TOKENS = 256


def step_fn(cut: str, vocab: int, batch: int):
    torch.manual_seed(0)
    victim = VICTIMS.get("gpt2")()
    d = victim.cuts[cut][1]
    model = SplitModel(victim=victim, cut=cut, num_classes=vocab, input_shape=(TOKENS,),
                       defense=build_defense("raw", cut_shape=(TOKENS, d), seed=0, per_token=True),
                       protocol="ushaped", heads="sch", clients=1)
    trainer = SplitTrainer(model=model, lr=1e-3)
    x = torch.randint(0, vocab, (batch, TOKENS))
    y = torch.randint(0, vocab, (batch, TOKENS))
    params = sum(p.numel() for name, p in model.named_parameters() if "wte" not in name and "wpe" not in name)
    return (lambda: trainer.step(0, x, y)), 6 * params * batch * TOKENS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    variants = {(cut, vocab): step_fn(cut, vocab, args.batch) for cut in ("cpu-s", "cpu-m") for vocab in (50_257, 4096)}
    times: dict[tuple, list[float]] = {key: [] for key in variants}
    for fn, _ in variants.values():
        fn()  # warm-up
    for _ in range(args.repeats):
        for key, (fn, _) in variants.items():
            started = time.perf_counter()
            for _ in range(args.steps):
                fn()
            times[key].append((time.perf_counter() - started) / args.steps)
    print(f"batch {args.batch} x {TOKENS} tokens, one thread, median of {args.repeats} x {args.steps} steps")
    for (cut, vocab), (_, flops) in variants.items():
        t = statistics.median(times[(cut, vocab)])
        print(f"{cut:6s} vocab {vocab:6,d}: {t:6.3f} s/step  {flops / t / 1e9:5.1f} GFLOP/s "
              f"({100 * flops / t / 1e9 / CEILING_GFLOPS:.0f}% of {CEILING_GFLOPS:g})")
    for cut in ("cpu-s", "cpu-m"):
        ratio = statistics.median(times[(cut, 50_257)]) / statistics.median(times[(cut, 4096)])
        print(f"{cut}: GPT-2's vocabulary costs {ratio:.1f}x the 4,096-token BPE's step")


if __name__ == "__main__":
    main()
