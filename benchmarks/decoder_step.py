"""One training step of the supervised image decoder (FORA's reference decoder, cpu-profile width),
in float32 and bfloat16 autocast, NCHW and channels_last, interleaved in one run, as ratios.

    python benchmarks/decoder_step.py [--threads 1 --batch 64 --width 64 --repeats 5 --steps 20]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.nn import functional as F

from attacks.decoders import image_decoder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, y = torch.randn(args.batch, 8, 12, 12), torch.rand(args.batch, 1, 28, 28)  # MnistNet split-2 → MNIST

    def variant(bf16: bool, nhwc: bool):
        model = image_decoder((8, 12, 12), (1, 28, 28), args.width)
        if nhwc:
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        inputs = x.contiguous(memory_format=torch.channels_last) if nhwc else x

        def step() -> None:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = F.mse_loss(model(inputs).float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        return step

    steps = {(bf16, nhwc): variant(bf16, nhwc) for bf16 in (False, True) for nhwc in (False, True)}
    times: dict = {k: [] for k in steps}
    for _ in range(args.repeats):
        for key, step in steps.items():
            for _ in range(3):
                step()
            started = time.perf_counter()
            for _ in range(args.steps):
                step()
            times[key].append((time.perf_counter() - started) / args.steps)
    base = statistics.median(times[(False, False)])
    for (bf16, nhwc), runs in times.items():
        median = statistics.median(runs)
        print(f"{'bfloat16' if bf16 else 'float32 ':8} {'channels_last' if nhwc else 'NCHW         '} "
              f"{1e3 * median:7.1f} ms/step  {base / median:.2f}× the float32 NCHW step")


if __name__ == "__main__":
    main()
