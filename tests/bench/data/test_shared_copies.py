"""The shared offline copies, read by their loaders and checked against their README's figures."""
from __future__ import annotations

import pytest
import torch

from bench.data import DATASETS
from bench.data.autodetect import OFFLINE_COPIES

SHARED = OFFLINE_COPIES[0]


def _shared(folder: str):
    return pytest.mark.skipif(not (SHARED / folder).is_dir(), reason=f"no shared {folder} copy")


@_shared("fashion-mnist")
def test_fashion_mnist() -> None:
    ds = DATASETS.get("fashion-mnist")(SHARED)
    assert len(ds.train) == 60_000 and len(ds.test) == 10_000
    assert torch.bincount(ds.test.y).tolist() == [1000] * 10
    assert abs(float(ds.test.x.mean()) - 0.2868) < 5e-4 and abs(float(ds.train.x.mean()) - 0.2860) < 5e-4


@_shared("cifar10-jpeg")
def test_cifar10_jpeg() -> None:
    ds = DATASETS.get("cifar10-jpeg")(SHARED)
    assert ds.train is None and ds.test.x.shape == (10_000, 3, 32, 32)
    assert torch.bincount(ds.test.y).tolist() == [1000] * 10
    means = ds.test.x.mean(dim=(0, 2, 3)).tolist()
    assert means == pytest.approx([0.4941, 0.4851, 0.4504], abs=5e-4)
    assert "lossy" in ds.source


@_shared("gtsrb")
def test_gtsrb() -> None:
    ds = DATASETS.get("gtsrb")(SHARED)
    assert ds.train is None and ds.test.x.shape == (12_630, 3, 32, 32)
    counts = torch.bincount(ds.test.y, minlength=43)
    assert int(counts.min()) == 60 and int(counts.max()) == 750
    assert "already resized" in ds.source


@_shared("hapt")
def test_hapt() -> None:
    ds = DATASETS.get("hapt")(SHARED)
    # UCI HAR, cut from the same recordings, publishes 7,352 + 2,947 windows
    assert (len(ds.train), len(ds.test)) == (7_415, 2_996)
    assert torch.unique(torch.cat([ds.train.groups, ds.test.groups])).tolist() == list(range(1, 31))
    assert set(torch.unique(ds.test.groups).tolist()).isdisjoint(torch.unique(ds.train.groups).tolist())
