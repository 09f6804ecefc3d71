"""UCI HAR (Human Activity Recognition Using Smartphones) from the UCI archive layout.

Layout (also accepted under ``<root>/har/``)::

    <root>/UCI HAR Dataset/test/X_test.txt, y_test.txt, subject_test.txt
    <root>/UCI HAR Dataset/train/X_train.txt, y_train.txt, subject_train.txt    (optional)
    <root>/UCI HAR Dataset/activity_labels.txt                                  (optional)

Each ``X`` row holds 561 whitespace-separated features, already scaled to [-1, 1] by the dataset's
authors and kept as given (float32 ``(N, 561)``). Labels 1..6 become 0..5; the subject ids are kept
as ``groups`` so that partitions can be split by person.
"""
from __future__ import annotations

import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import torch

from bench.data.registry import DATASETS, LAYOUTS
from bench.data.root import DOWNLOAD_TIMEOUT_S, DatasetLayout, MissingDataError, try_download
from bench.data.types import ArraySplit, RawDataset

NUM_FEATURES = 561
NUM_CLASSES = 6
FOLDER = "UCI HAR Dataset"
URL = (
    "https://archive.ics.uci.edu/static/public/240/"
    "human+activity+recognition+using+smartphones.zip"
)


def _split_files(split: str) -> list[str]:
    return [f"{split}/X_{split}.txt", f"{split}/y_{split}.txt", f"{split}/subject_{split}.txt"]


LAYOUT = LAYOUTS.register("har")(DatasetLayout((FOLDER, f"har/{FOLDER}"), tuple(_split_files("test"))))


def _read_split(folder: Path, split: str) -> ArraySplit:
    x_path, y_path, subject_path = (folder / name for name in _split_files(split))
    x = np.loadtxt(x_path, dtype=np.float32, ndmin=2)
    y = np.loadtxt(y_path, dtype=np.int64, ndmin=1)
    subjects = np.loadtxt(subject_path, dtype=np.int64, ndmin=1)
    if x.shape[1] != NUM_FEATURES:
        raise ValueError(f"{x_path}: {x.shape[1]} features per row, expected {NUM_FEATURES}")
    if y.size and (y.min() < 1 or y.max() > NUM_CLASSES):
        raise ValueError(f"{y_path}: labels must lie in 1..{NUM_CLASSES}")
    return ArraySplit(torch.from_numpy(x), torch.from_numpy(y - 1), torch.from_numpy(subjects))


def _activity_names(folder: Path) -> tuple[str, ...]:
    path = folder / "activity_labels.txt"
    if not path.is_file():
        return ()
    names: dict[int, str] = {}
    for line in path.read_text().splitlines():
        parts = line.split(maxsplit=1)
        if len(parts) == 2:
            names[int(parts[0])] = parts[1].strip()
    return tuple(names.get(i, str(i)) for i in range(1, NUM_CLASSES + 1))


def _extract(archive: zipfile.ZipFile, dest: Path) -> None:
    archive.extractall(dest)
    # The current UCI download wraps the original "UCI HAR Dataset.zip" in an outer zip.
    inner = dest / f"{FOLDER}.zip"
    if not (dest / FOLDER).is_dir() and inner.is_file():
        with zipfile.ZipFile(inner) as nested:
            nested.extractall(dest)


def _download(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(URL, timeout=DOWNLOAD_TIMEOUT_S) as response:
        with tempfile.TemporaryFile() as buffer:
            shutil.copyfileobj(response, buffer)
            buffer.seek(0)
            with zipfile.ZipFile(buffer) as archive:
                _extract(archive, root)


@DATASETS.register("har")
def load(root: Path, *, download: bool = False) -> RawDataset:
    """UCI HAR as float32 ``(N, 561)`` features, labels 0..5 and subject ids as ``groups``.

    Args:
        root: the data root.
        download: fetch the UCI archive (10 s socket timeout) when the test files are missing.

    Raises:
        MissingDataError: when the test files are not there (and could not be downloaded).
        ValueError: on a malformed file (wrong feature count, labels outside 1..6).
    """
    root = Path(root)
    required = _split_files("test")
    folder = LAYOUT.find(root)
    reason = ""
    if folder is None and download:
        reason = try_download(lambda: _download(root)) or ""
        folder = LAYOUT.find(root)
    if folder is None:
        raise MissingDataError(
            "har", root, required, root / FOLDER,
            optional="the train/ files and activity_labels.txt", reason=reason,
        )
    has_train = all((folder / name).is_file() for name in _split_files("train"))
    return RawDataset(
        name="har",
        num_classes=NUM_CLASSES,
        kind="tabular",
        test=_read_split(folder, "test"),
        train=_read_split(folder, "train") if has_train else None,
        class_names=_activity_names(folder),
        source="UCI HAR 561-feature files" + (" (train + test)" if has_train else " (test only)"),
    )
