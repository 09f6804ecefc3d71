"""Member / non-member / test carving and client partitions (IID, Dirichlet(α)).

Carving depends only on the dataset and the profile (a fixed seed), never on the cell's seed, so
every seed and every defense sees the same members: differences between cells come from training,
not from data.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from bench.data.types import ArraySplit, RawDataset
from bench.profiles import Profile

CARVE_SEED = 0


@dataclass(frozen=True)
class CarvedData:
    """Disjoint splits of one dataset.

    Attributes:
        members: the clients' private training data (what attacks try to reconstruct).
        nonmembers: the attacker's auxiliary data, from the same distribution.
        test: held-out data for utility.
        black_background: as :attr:`RawDataset.black_background`.
        description: how the splits were made where the dataset's source does not say it (a text
            dataset's tokenizer); appended to every row's ``data_source``.
    """

    name: str
    num_classes: int
    kind: str
    members: ArraySplit
    nonmembers: ArraySplit
    test: ArraySplit
    black_background: bool = False
    description: str = ""

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.members.x.shape[1:])

    def nbytes(self) -> int:
        return self.members.nbytes() + self.nonmembers.nbytes() + self.test.nbytes()

    def to(self, device: torch.device | str) -> CarvedData:
        """Every split on ``device``."""
        return dataclasses.replace(
            self, members=self.members.to(device), nonmembers=self.nonmembers.to(device), test=self.test.to(device)
        )


NONMEMBER_SHARE = 0.1  # of a training split, the attacker's auxiliary data where a profile leaves it open


def _stratified_take(split: ArraySplit, sizes: list[int | None], seed: int) -> list[ArraySplit]:
    """Disjoint class-stratified subsets of ``split`` of the given sizes (``None``: all that is left)."""
    from sklearn.model_selection import train_test_split  # imported here: a stored grid never carves

    remaining = np.arange(len(split))
    labels = split.y.numpy()
    out = []
    for size in sizes:
        if size is None or size >= len(remaining):
            if size is not None and size > len(remaining):
                raise ValueError(f"asked for {size} samples but only {len(remaining)} remain")
            chosen, remaining = remaining, remaining[:0]
        else:
            strata = labels[remaining] if np.bincount(labels[remaining]).min() >= 2 else None
            chosen, remaining = train_test_split(
                remaining, train_size=size, random_state=seed, stratify=strata
            )
        out.append(split.take(torch.as_tensor(np.sort(chosen))))
    return out


def _scaled(sizes: list[int], available: int) -> list[int]:
    """``sizes`` shrunk by one factor so that they fit into ``available`` samples."""
    scale = available / sum(sizes)
    return [max(1, int(w * scale)) for w in sizes]


def carve(raw: RawDataset, profile: Profile) -> CarvedData:
    """Members, non-members and test data for ``profile``.

    With a training split on disk, members and non-members come from it and test data from the
    test split; where the profile leaves a size open (``paper``), the non-members are
    ``NONMEMBER_SHARE`` of the training split and the members the rest. With only a test split
    (the offline MNIST copy, sklearn digits), all three are carved from it, in that order of priority.
    """
    if raw.train is not None:
        sizes = [profile.members, profile.nonmembers]
        if None in sizes:
            n = len(raw.train)
            nonmembers = profile.nonmembers if profile.nonmembers is not None else int(NONMEMBER_SHARE * n)
            sizes = [profile.members if profile.members is not None else n - nonmembers, nonmembers]
        elif sum(sizes) > len(raw.train):  # a small training split (HAPT: 7,415 windows) keeps the ratio
            sizes = _scaled(sizes, len(raw.train))[:-1] + [None]
        members, nonmembers = _stratified_take(raw.train, sizes, CARVE_SEED)
        (test,) = _stratified_take(raw.test, [profile.test], CARVE_SEED)
    else:
        wanted = [profile.members, profile.nonmembers, profile.test]
        if None in wanted:
            n = len(raw.test)
            wanted = [int(0.6 * n), int(0.2 * n), None]
        elif sum(wanted) > len(raw.test):
            wanted = _scaled(wanted, len(raw.test))[:-1] + [None]
        members, nonmembers, test = _stratified_take(raw.test, wanted, CARVE_SEED)
    return CarvedData(raw.name, raw.num_classes, raw.kind, members, nonmembers, test, raw.black_background)


def partition(labels: torch.Tensor, *, clients: int, scheme: str, alpha: float | None, seed: int) -> list[torch.Tensor]:
    """Split sample indices over ``clients``.

    Args:
        labels: ``(N,)`` class labels.
        clients: number of clients ``n ≥ 1``.
        scheme: ``"iid"`` (a random equal split) or ``"dirichlet"`` (per class, client shares drawn
            from Dirichlet(α); redrawn until every client holds at least one sample).
        alpha: concentration α > 0 for ``dirichlet``.
        seed: partition seed.

    Returns:
        One sorted LongTensor of indices per client; together they cover every sample once.
    """
    if clients < 1:
        raise ValueError(f"clients must be >= 1, got {clients}")
    rng = np.random.default_rng(seed)
    n = len(labels)
    if scheme == "iid":
        parts = np.array_split(rng.permutation(n), clients)
    elif scheme == "dirichlet":
        if alpha is None or alpha <= 0:
            raise ValueError("dirichlet partition needs alpha > 0")
        y = labels.cpu().numpy()
        for _ in range(100):
            buckets: list[list[int]] = [[] for _ in range(clients)]
            for c in np.unique(y):
                idx = rng.permutation(np.flatnonzero(y == c))
                cuts = (np.cumsum(rng.dirichlet([alpha] * clients)) * len(idx)).astype(int)[:-1]
                for b, chunk in zip(buckets, np.split(idx, cuts)):
                    b.extend(chunk.tolist())
            if min(len(b) for b in buckets) > 0:
                break
        else:
            raise ValueError(f"dirichlet(alpha={alpha}) left a client empty in 100 draws; raise alpha")
        parts = [np.array(b) for b in buckets]
    else:
        raise ValueError(f"unknown partition '{scheme}' (known: iid, dirichlet)")
    return [torch.as_tensor(np.sort(p), dtype=torch.long) for p in parts]
