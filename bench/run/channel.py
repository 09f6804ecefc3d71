"""The channel between client and server: counts the bytes of every tensor that crosses it."""
from __future__ import annotations

from collections import defaultdict

from torch import Tensor

from defenses.payload import nbytes

UP, DOWN = "up", "down"


class Channel:
    """Byte counter per (link, direction).

    Links: ``"cut"`` (head ↔ backbone: payload up, its gradient down) and ``"tail"`` (backbone ↔
    tail in U-shaped SL: backbone output down, its gradient up).
    """

    def __init__(self) -> None:
        self.bytes: dict[tuple[str, str], int] = defaultdict(int)
        self.samples = 0

    def send(self, link: str, direction: str, *tensors: Tensor) -> None:
        self.bytes[(link, direction)] += nbytes(tensors)

    def count_samples(self, n: int) -> None:
        self.samples += n

    def per_sample(self, link: str, direction: str) -> float:
        return self.bytes[(link, direction)] / max(self.samples, 1)

    def wire_metrics(self) -> dict[str, float]:
        """Bytes per sample on both links and in both directions, named as the result rows name them."""
        return {
            "bytes_up_per_sample": self.per_sample("cut", UP),
            "bytes_down_per_sample": self.per_sample("cut", DOWN),
            "tail_bytes_up_per_sample": self.per_sample("tail", UP),
            "tail_bytes_down_per_sample": self.per_sample("tail", DOWN),
        }

    def reset(self) -> None:
        self.bytes.clear()
        self.samples = 0
