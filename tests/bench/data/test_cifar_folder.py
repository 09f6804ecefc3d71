"""``cifar10-jpeg``: CIFAR-10 from class folders of image files, on fixtures written as JPEG and PNG."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bench.data import DATASETS, INPUT_SHAPES
from bench.data.cifar_folder import CLASSES
from bench.data.root import MissingDataError


def _write(path: Path, color: tuple[int, int, int], size: tuple[int, int] = (32, 32)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def test_labels_follow_cifar_order_not_folder_listing(tmp_path: Path) -> None:
    base = tmp_path / "cifar10-jpeg"
    _write(base / "test/truck/0001.png", (255, 0, 0))
    _write(base / "test/truck/0000.png", (0, 0, 255))
    _write(base / "test/airplane/0000.png", (0, 255, 0))
    ds = DATASETS.get("cifar10-jpeg")(tmp_path)
    assert ds.test.y.tolist() == [0, 9, 9] and ds.train is None and ds.num_classes == 10
    assert ds.test.x.shape == (3, 3, 32, 32) and ds.input_shape == INPUT_SHAPES.get("cifar10-jpeg")
    # PNG is lossless: the colours come back exactly, files in sorted name order
    assert ds.test.x[0, 1].eq(1).all() and ds.test.x[1, 2].eq(1).all() and ds.test.x[2, 0].eq(1).all()
    assert "lossy" not in ds.source and "PNG" in ds.source and "test 3 only" in ds.source


def test_jpeg_is_recorded_as_lossy_and_train_is_read(tmp_path: Path) -> None:
    for split in ("train", "test"):
        for name in ("cat", "dog"):
            _write(tmp_path / split / name / "0.jpg", (200, 100, 50))
    ds = DATASETS.get("cifar10-jpeg")(tmp_path)  # the data root may be the dataset folder itself
    assert ds.train is not None and ds.train.y.tolist() == [CLASSES.index("cat"), CLASSES.index("dog")]
    assert "JPEG" in ds.source and "lossy" in ds.source
    assert np.allclose(ds.test.x[0, :, 5, 5].numpy(), [200 / 255, 100 / 255, 50 / 255], atol=0.03)


@pytest.mark.parametrize(
    ("folder", "size", "message"),
    [("cat", (28, 28), "28x28 pixels, expected 32x32"), ("cats", (32, 32), "'cats' is not a CIFAR-10 class")],
)
def test_bad_images_name_the_problem(tmp_path: Path, folder: str, size: tuple[int, int], message: str) -> None:
    _write(tmp_path / "cifar10-jpeg/test" / folder / "0.jpg", (0, 0, 0), size)
    with pytest.raises(ValueError, match=message):
        DATASETS.get("cifar10-jpeg")(tmp_path)


def test_missing_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("cifar10-jpeg")(tmp_path, download=True)
    assert "\n" not in str(err.value) and "test/<class>/*.jpg" in str(err.value) and "never downloaded" in str(err.value)
