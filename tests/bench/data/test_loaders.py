"""Every on-disk loader run on a tiny fixture written in its real format under ``tmp_path``."""
from __future__ import annotations

import gzip
import pickle
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from bench.data import DATASETS, INPUT_SHAPES, cifar, gtsrb, har, mnist
from bench.data.root import MissingDataError, find_dataset_dir, resolve_data_root

SHARED_MNIST = Path("/work/shared/data/mnist")


# ---------------------------------------------------------------- fixture writers


def _write_idx(path: Path, array: np.ndarray, *, gz: bool) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, dtype=">i4").tobytes()
    payload = header + array.astype(np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(payload))
    else:
        path.write_bytes(payload)


def _write_mnist(
    raw: Path, n: int, *, gz: bool, train: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[0, 0, 0], images[0, 0, 1] = 0, 255
    labels = np.arange(n, dtype=np.uint8) % 10
    prefixes = ["t10k", "train"] if train else ["t10k"]
    for prefix in prefixes:
        _write_idx(raw / f"{prefix}-images-idx3-ubyte", images, gz=gz)
        _write_idx(raw / f"{prefix}-labels-idx1-ubyte", labels, gz=gz)
    return images, labels


def _write_cifar_batch(path: Path, n: int, label_key: bytes, first_label: int) -> None:
    data = np.full((n, 3072), 51, dtype=np.uint8)
    data[:, 1024:2048] = 255  # green channel
    batch = {b"data": data, label_key: [first_label + i for i in range(n)]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(batch))


def _write_image(path: Path, size: tuple[int, int], color: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def _write_har_split(
    folder: Path, split: str, labels: list[int], subjects: list[int]
) -> np.ndarray:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(len(labels), 561)).astype(np.float32)
    (folder / split).mkdir(parents=True, exist_ok=True)
    np.savetxt(folder / split / f"X_{split}.txt", x, fmt="%.7e")
    (folder / split / f"y_{split}.txt").write_text("".join(f"{v}\n" for v in labels))
    (folder / split / f"subject_{split}.txt").write_text("".join(f"{v}\n" for v in subjects))
    return x


def _assert_one_line_naming(error: pytest.ExceptionInfo, *names: str) -> None:
    message = str(error.value)
    assert "\n" not in message and "--data-root" in message
    for name in names:
        assert name in message


# ---------------------------------------------------------------- root resolution


def test_resolve_data_root_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_DATA_ROOT", str(tmp_path / "env"))
    assert resolve_data_root(str(tmp_path / "cli")) == tmp_path / "cli"
    assert resolve_data_root(None) == tmp_path / "env"
    monkeypatch.delenv("BENCH_DATA_ROOT")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_data_root(None) == tmp_path / "xdg" / "splitbench" / "data"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert resolve_data_root(None) == Path.home() / ".cache" / "splitbench" / "data"


def test_find_dataset_dir_both_conventions(tmp_path: Path) -> None:
    (tmp_path / "mnist" / "MNIST" / "raw").mkdir(parents=True)
    (tmp_path / "mnist" / "MNIST" / "raw" / "f.gz").touch()
    cands = ["MNIST/raw", "mnist/MNIST/raw"]
    assert find_dataset_dir(tmp_path, cands) == tmp_path / "mnist" / "MNIST" / "raw"
    assert find_dataset_dir(tmp_path / "mnist", cands) == tmp_path / "mnist" / "MNIST" / "raw"
    assert find_dataset_dir(tmp_path, cands, must_contain=["f*"]) is not None
    assert find_dataset_dir(tmp_path, cands, must_contain=["g*"]) is None


def test_missing_data_error_is_one_line_and_picklable(tmp_path: Path) -> None:
    err = MissingDataError("x", tmp_path, ["a"], tmp_path / "X", reason="download failed:\nboom")
    assert "\n" not in str(err) and isinstance(err, FileNotFoundError)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


def test_registry_has_every_loader() -> None:
    expected = {
        "mnist", "fashion-mnist", "cifar10", "cifar100", "cifar10-jpeg", "gtsrb", "imagenet", "har", "hapt", "digits"
    }
    assert expected <= set(DATASETS.names())


# ---------------------------------------------------------------- MNIST / Fashion-MNIST


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_test_only(tmp_path: Path, gz: bool) -> None:
    images, labels = _write_mnist(tmp_path / "MNIST" / "raw", 12, gz=gz)
    ds = DATASETS.get("mnist")(tmp_path)
    assert ds.train is None and ds.num_classes == 10 and ds.kind == "image"
    assert ds.test.x.shape == (12, 1, 28, 28) and ds.test.x.dtype == torch.float32
    assert ds.input_shape == INPUT_SHAPES.get("mnist")
    assert ds.test.y.dtype == torch.int64 and ds.test.y.tolist() == labels.tolist()
    assert ds.test.x.min() == 0.0 and ds.test.x.max() == 1.0
    torch.testing.assert_close(ds.test.x[:, 0] * 255, torch.from_numpy(images).float())


def test_mnist_with_train_and_parent_root(tmp_path: Path) -> None:
    _write_mnist(tmp_path / "mnist" / "MNIST" / "raw", 5, gz=True, train=True)
    for root in (tmp_path, tmp_path / "mnist"):
        ds = DATASETS.get("mnist")(root)
        assert ds.train is not None and len(ds.train) == 5 and len(ds.test) == 5


def test_fashion_mnist(tmp_path: Path) -> None:
    _write_mnist(tmp_path / "fashion-mnist" / "FashionMNIST" / "raw", 4, gz=False, train=True)
    ds = DATASETS.get("fashion-mnist")(tmp_path)
    assert ds.name == "fashion-mnist" and ds.test.x.shape == (4, 1, 28, 28)
    assert ds.input_shape == INPUT_SHAPES.get("fashion-mnist")
    assert ds.class_names[9] == "Ankle boot"


def test_mnist_missing(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("mnist")(tmp_path)
    _assert_one_line_naming(err, "mnist", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
                            str(tmp_path / "MNIST" / "raw"))


@pytest.mark.skipif(not (SHARED_MNIST / "MNIST" / "raw").is_dir(), reason="no shared MNIST copy")
def test_shared_mnist_copy() -> None:
    ds = DATASETS.get("mnist")(SHARED_MNIST)
    assert ds.train is None and len(ds.test) == 10_000
    counts = torch.bincount(ds.test.y, minlength=10).tolist()
    assert counts == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


# ---------------------------------------------------------------- CIFAR


def test_cifar10(tmp_path: Path) -> None:
    folder = tmp_path / "cifar-10-batches-py"
    for i in range(1, 6):
        _write_cifar_batch(folder / f"data_batch_{i}", 2, b"labels", i)
    _write_cifar_batch(folder / "test_batch", 3, b"labels", 0)
    (folder / "batches.meta").write_bytes(pickle.dumps({b"label_names": [b"plane", b"car"]}))
    ds = DATASETS.get("cifar10")(tmp_path)
    assert ds.test.x.shape == (3, 3, 32, 32) and ds.test.x.dtype == torch.float32
    assert ds.train is not None and ds.train.x.shape == (10, 3, 32, 32)
    assert ds.train.y.tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6] and ds.test.y.tolist() == [0, 1, 2]
    assert torch.allclose(ds.test.x[:, 0], torch.tensor(0.2)) and bool((ds.test.x[:, 1] == 1).all())
    assert ds.num_classes == 10 and ds.class_names == ("plane", "car")
    assert ds.input_shape == INPUT_SHAPES.get("cifar10")


def test_cifar100_parent_root_and_test_only(tmp_path: Path) -> None:
    folder = tmp_path / "cifar100" / "cifar-100-python"
    _write_cifar_batch(folder / "test", 4, b"fine_labels", 96)
    ds = DATASETS.get("cifar100")(tmp_path)
    assert ds.train is None and ds.num_classes == 100 and ds.test.y.tolist() == [96, 97, 98, 99]
    assert ds.input_shape == INPUT_SHAPES.get("cifar100")
    _write_cifar_batch(folder / "train", 2, b"fine_labels", 0)
    assert DATASETS.get("cifar100")(tmp_path / "cifar100").train is not None


def test_cifar_missing_and_incomplete(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("cifar10")(tmp_path)
    _assert_one_line_naming(err, "cifar10", "test_batch", "cifar-10-batches-py")
    folder = tmp_path / "cifar-10-batches-py"
    _write_cifar_batch(folder / "test_batch", 1, b"labels", 0)
    _write_cifar_batch(folder / "data_batch_1", 1, b"labels", 0)
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("cifar10")(tmp_path)
    _assert_one_line_naming(err, "data_batch_5")


# ---------------------------------------------------------------- GTSRB


def _write_gtsrb(base: Path) -> None:
    _write_image(base / "GTSRB/Training/00000/00000_00000.ppm", (40, 35), (255, 0, 0))
    _write_image(base / "GTSRB/Training/00042/00000_00000.ppm", (20, 50), (0, 0, 255))
    _write_image(base / "GTSRB/Training/00042/00000_00001.ppm", (30, 30), (0, 0, 255))
    (base / "GTSRB/Training/00042/GT-00042.csv").write_text("ignored")
    _write_image(base / "GTSRB/Final_Test/Images/00000.ppm", (53, 54), (0, 255, 0))
    _write_image(base / "GTSRB/Final_Test/Images/00001.ppm", (29, 31), (255, 0, 0))
    (base / "GT-final_test.csv").write_text(
        "Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n"
        "00000.ppm;53;54;5;6;48;49;16\n00001.ppm;29;31;5;5;24;26;1\n"
    )


@pytest.mark.parametrize("layout", ["gtsrb", "gtsrb/gtsrb", "."])
def test_gtsrb(tmp_path: Path, layout: str) -> None:
    _write_gtsrb(tmp_path / "data" / layout)
    ds = DATASETS.get("gtsrb")(tmp_path / "data")
    assert ds.num_classes == 43 and ds.test.x.shape == (2, 3, 32, 32)
    assert ds.input_shape == INPUT_SHAPES.get("gtsrb")
    assert ds.test.y.tolist() == [16, 1]
    assert bool((ds.test.x[0, 1] == 1).all()) and float(ds.test.x[0, 0].max()) == 0.0
    assert ds.train is not None and ds.train.x.shape == (3, 3, 32, 32)
    assert ds.train.y.tolist() == [0, 42, 42]
    assert float(ds.train.x.min()) >= 0.0 and float(ds.train.x.max()) <= 1.0
    assert "resized here" in ds.source


def test_gtsrb_says_when_the_copy_was_already_resized(tmp_path: Path) -> None:
    base = tmp_path / "gtsrb"
    _write_image(base / "GTSRB/Final_Test/Images/00000.ppm", (32, 32), (0, 255, 0))
    (base / "GT-final_test.csv").write_text("Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n00000.ppm;53;54;5;6;48;49;16\n")
    assert "already resized to 32x32" in DATASETS.get("gtsrb")(tmp_path).source


def test_gtsrb_missing(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("gtsrb")(tmp_path)
    _assert_one_line_naming(err, "gtsrb", "GT-final_test.csv", "Final_Test/Images")


# ---------------------------------------------------------------- ImageNet


def test_imagenet(tmp_path: Path) -> None:
    base = tmp_path / "imagenet"
    _write_image(base / "train/n02/a.JPEG", (100, 80), (0, 0, 255))
    _write_image(base / "train/n02/b.png", (64, 64), (0, 0, 255))
    _write_image(base / "train/n02/c.jpg", (80, 120), (0, 0, 255))
    _write_image(base / "train/n01/a.png", (90, 70), (255, 0, 0))
    (base / "train/n01/notes.txt").write_text("not an image")
    _write_image(base / "val/n02/v.png", (70, 200), (0, 255, 0))
    ds = DATASETS.get("imagenet")(tmp_path, max_per_class=2)
    assert ds.class_names == ("n01", "n02") and ds.num_classes == 2
    assert ds.train is not None and ds.train.x.shape == (3, 3, 64, 64)
    assert ds.train.y.tolist() == [0, 1, 1]
    assert ds.test.x.shape == (1, 3, 64, 64) and ds.test.y.tolist() == [1]
    assert ds.input_shape == INPUT_SHAPES.get("imagenet")
    assert bool((ds.test.x[0, 1] == 1).all()) and ds.test.x.dtype == torch.float32
    assert len(DATASETS.get("imagenet")(base).train) == 4  # root is the imagenet folder itself


def test_imagenet_val_only_nested(tmp_path: Path) -> None:
    _write_image(tmp_path / "imagenet/imagenet/val/n05/a.png", (64, 64), (9, 9, 9))
    _write_image(tmp_path / "imagenet/imagenet/val/n03/a.png", (64, 64), (9, 9, 9))
    ds = DATASETS.get("imagenet")(tmp_path)
    assert ds.train is None and ds.class_names == ("n03", "n05") and ds.test.y.tolist() == [0, 1]


def test_imagenet_never_downloads(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("imagenet")(tmp_path, download=True)
    _assert_one_line_naming(err, "imagenet", "val/<wnid>", "never downloaded")


# ---------------------------------------------------------------- UCI HAR


@pytest.mark.parametrize("sub", ["UCI HAR Dataset", "har/UCI HAR Dataset"])
def test_har(tmp_path: Path, sub: str) -> None:
    folder = tmp_path / sub
    x_test = _write_har_split(folder, "test", [1, 6], [2, 9])
    _write_har_split(folder, "train", [3, 4, 5], [1, 1, 3])
    (folder / "activity_labels.txt").write_text(
        "1 WALKING\n2 WALKING_UPSTAIRS\n3 WALKING_DOWNSTAIRS\n4 SITTING\n5 STANDING\n6 LAYING\n"
    )
    ds = DATASETS.get("har")(tmp_path)
    assert ds.kind == "tabular" and ds.num_classes == 6 and ds.input_shape == (561,)
    assert ds.test.x.dtype == torch.float32 and ds.test.y.tolist() == [0, 5]
    assert ds.test.groups is not None and ds.test.groups.tolist() == [2, 9]
    torch.testing.assert_close(ds.test.x, torch.from_numpy(x_test))
    assert ds.train is not None and ds.train.y.tolist() == [2, 3, 4]
    assert ds.train.groups is not None and ds.train.groups.tolist() == [1, 1, 3]
    assert ds.class_names[0] == "WALKING" and ds.class_names[5] == "LAYING"


def test_har_test_only_and_missing(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("har")(tmp_path)
    _assert_one_line_naming(err, "har", "test/X_test.txt", "test/y_test.txt", "UCI HAR Dataset")
    _write_har_split(tmp_path / "UCI HAR Dataset", "test", [2], [7])
    ds = DATASETS.get("har")(tmp_path)
    assert ds.train is None and ds.class_names == () and ds.test.x.shape == (1, 561)


# ---------------------------------------------------------------- digits


def test_digits() -> None:
    ds = DATASETS.get("digits")(Path("/nonexistent"))
    assert ds.train is None and ds.num_classes == 10
    assert ds.test.x.shape == (1797, 1, 28, 28) and ds.test.x.dtype == torch.float32
    assert ds.input_shape == INPUT_SHAPES.get("digits")
    assert float(ds.test.x.min()) >= 0.0 and float(ds.test.x.max()) <= 1.0
    assert sorted(set(ds.test.y.tolist())) == list(range(10))


# ---------------------------------------------------------------- downloads without network


@pytest.mark.parametrize(
    "name, module, download_args",
    [("mnist", mnist, 2), ("fashion-mnist", mnist, 2), ("cifar10", cifar, 2),
     ("cifar100", cifar, 2), ("gtsrb", gtsrb, 1), ("har", har, 1)],
)
def test_download_failure_is_missing_data_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, module: object, download_args: int
) -> None:
    def offline(*args: object) -> None:
        assert len(args) == download_args
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(module, "_download", offline)
    with pytest.raises(MissingDataError) as err:
        DATASETS.get(name)(tmp_path, download=True)
    _assert_one_line_naming(err, name, "download failed", "no network")


@pytest.mark.parametrize("name", ["mnist", "cifar10", "gtsrb", "har"])
def test_real_downloader_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The real torchvision / urllib download path, with every connection refused."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise urllib.error.URLError("network disabled in tests")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr("socket.socket.connect", lambda *a, **k: refuse())
    with pytest.raises(MissingDataError) as err:
        DATASETS.get(name)(tmp_path / "root", download=True)
    _assert_one_line_naming(err, name, "download failed")
