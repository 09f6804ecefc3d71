"""Profiles: every size and budget of a run, so one flag scales the whole grid.

``smoke`` runs a cell in seconds (tests), ``cpu`` in minutes on a 2-core laptop (the default),
``paper`` uses the published settings and is meant for GPUs and clusters.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Profile:
    """Sizes and budgets of one profile.

    Attributes:
        name: profile name, recorded on every result row.
        members: client training images (the attacked members); ``None`` takes all available.
        nonmembers: attacker auxiliary images, disjoint from members and test.
        test: held-out test images for utility.
        epochs: victim training epochs.
        batch_size: training batch size per client step.
        lr: Adam learning rate of every party.
        eval_batch_size: batch size for evaluation passes.
        targets: members attacked per cell (attacks may take a subset within their own budget).
    """

    name: str
    members: int | None
    nonmembers: int | None
    test: int | None
    epochs: int
    batch_size: int
    lr: float = 1e-3
    eval_batch_size: int = 500
    targets: int = 1000

    def __post_init__(self) -> None:
        for field in ("members", "nonmembers", "test"):
            value = getattr(self, field)
            if value is not None and value < 1:
                raise ValueError(f"profile {self.name}: {field} must be >= 1")
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0 or self.targets < 1:
            raise ValueError(f"profile {self.name}: epochs, batch_size and lr must be positive")

    def as_dict(self) -> dict:
        return asdict(self)


PROFILES: dict[str, Profile] = {
    "smoke": Profile(name="smoke", members=256, nonmembers=128, test=256, epochs=1, batch_size=64, targets=64),
    # The offline MNIST test split holds 10,000 images: 6k members, 2k non-members, 2k test.
    "cpu": Profile(name="cpu", members=6000, nonmembers=2000, test=2000, epochs=10, batch_size=64),
    # UnSplit's released schedule (App. B-C3): 20 epochs, batch 64, Adam 1e-3.
    "paper": Profile(name="paper", members=None, nonmembers=None, test=None, epochs=20, batch_size=64),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile '{name}' (known: {', '.join(PROFILES)})") from None
