"""UCI HAPT raw smartphone signals, cut into UCI HAR's windows.

Layout (the official ``RawData`` folder; each file plain or gzipped)::

    <root>/hapt/HAPT Data Set/RawData/acc_expEE_userUU.txt[.gz]     x y z per line, in g, 50 Hz
    <root>/hapt/HAPT Data Set/RawData/gyro_expEE_userUU.txt[.gz]    x y z per line, in rad/s
    <root>/hapt/HAPT Data Set/RawData/labels.txt                    exp user activity start end

``<root>/HAPT Data Set/RawData`` and ``<root>/RawData`` are accepted too. Choices, following how UCI
HAR was cut from these same recordings:

* **Windows** of 2.56 s (128 samples) with 50 % overlap (a stride of 64), cut inside each labelled
  segment of activities 1–6 (walking, upstairs, downstairs, sitting, standing, laying), never across
  a segment boundary; a segment's tail shorter than a window is dropped. The postural transitions
  (7–12) are not used. ``labels.txt`` bounds are 1-based and inclusive.
* **Six channels**, unfiltered and in their recorded units: accelerometer x, y, z then gyroscope x,
  y, z. A window is flattened channel-major into 768 features (``x[:, c * 128 + t]``), so the
  tabular victims and the HAR probes read it as UCI HAR's 561 features are read.
* **Subjects are groups**: ``ArraySplit.groups`` holds the volunteer id (1–30).
* **Train/test by volunteer**, as UCI HAR: volunteers 2, 4, 9, 10, 12, 13, 18, 20, 24 (UCI HAR's
  published test subjects) form ``test``, the other 21 ``train``.

Labels 1–6 become 0–5.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import torch

from bench.data.registry import DATASETS, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError
from bench.data.types import ArraySplit, RawDataset

WINDOW = 128
STRIDE = 64
CHANNELS = 6
ACTIVITIES = ("walking", "walking_upstairs", "walking_downstairs", "sitting", "standing", "laying")
TEST_SUBJECTS = frozenset({2, 4, 9, 10, 12, 13, 18, 20, 24})
_RAW = "RawData"
LAYOUT = LAYOUTS.register("hapt")(DatasetLayout(
    (f"hapt/HAPT Data Set/{_RAW}", f"HAPT Data Set/{_RAW}", _RAW, f"hapt/{_RAW}"),
    ("labels.txt", "acc_exp*_user*.txt*"),
))


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode()


def _signal_file(folder: Path, sensor: str, exp: int, user: int) -> Path:
    stem = f"{sensor}_exp{exp:02d}_user{user:02d}.txt"
    for name in (stem, f"{stem}.gz"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"hapt: {folder / stem}[.gz] is missing but labels.txt names it")


def _read_signal(path: Path) -> np.ndarray:
    values = np.array(_read_text(path).split(), dtype=np.float32)
    if values.size % 3:
        raise ValueError(f"{path}: {values.size} numbers, not rows of x y z")
    return values.reshape(-1, 3)


def _read_labels(folder: Path) -> np.ndarray:
    rows = [line.split() for line in _read_text(folder / "labels.txt").splitlines() if line.strip()]
    if any(len(r) != 5 for r in rows):
        raise ValueError(f"{folder / 'labels.txt'}: every line must hold exp user activity start end")
    return np.array(rows, dtype=np.int64).reshape(-1, 5)


def _windows(recording: np.ndarray, start: int, end: int) -> np.ndarray:
    """The full windows inside samples ``start..end`` (1-based, inclusive), as ``(n, 6, 128)``."""
    segment = recording[start - 1 : end]
    starts = range(0, len(segment) - WINDOW + 1, STRIDE)
    return np.stack([segment[s : s + WINDOW].T for s in starts]) if len(starts) else np.zeros((0, CHANNELS, WINDOW), np.float32)


def _cut(folder: Path) -> tuple[ArraySplit, ArraySplit]:
    labels = _read_labels(folder)
    xs: dict[bool, list[np.ndarray]] = {True: [], False: []}
    ys: dict[bool, list[np.ndarray]] = {True: [], False: []}
    gs: dict[bool, list[np.ndarray]] = {True: [], False: []}
    for exp, user in sorted({(int(e), int(u)) for e, u in labels[:, :2]}):
        acc = _read_signal(_signal_file(folder, "acc", exp, user))
        gyro = _read_signal(_signal_file(folder, "gyro", exp, user))
        if len(acc) != len(gyro):
            raise ValueError(f"hapt: exp {exp} user {user} has {len(acc)} accelerometer but {len(gyro)} gyroscope samples")
        recording = np.concatenate([acc, gyro], axis=1)
        for _, _, activity, start, end in labels[(labels[:, 0] == exp) & (labels[:, 1] == user)]:
            if not 1 <= activity <= len(ACTIVITIES):
                continue
            if not 1 <= start <= end <= len(recording):
                raise ValueError(f"hapt: segment {start}..{end} of exp {exp} lies outside its {len(recording)} samples")
            windows = _windows(recording, int(start), int(end))
            is_test = user in TEST_SUBJECTS
            xs[is_test].append(windows)
            ys[is_test].append(np.full(len(windows), activity - 1, dtype=np.int64))
            gs[is_test].append(np.full(len(windows), user, dtype=np.int64))

    def split(is_test: bool) -> ArraySplit:
        x = np.concatenate(xs[is_test]) if xs[is_test] else np.zeros((0, CHANNELS, WINDOW), np.float32)
        y = np.concatenate(ys[is_test]) if ys[is_test] else np.zeros(0, np.int64)
        g = np.concatenate(gs[is_test]) if gs[is_test] else np.zeros(0, np.int64)
        return ArraySplit(torch.from_numpy(x.reshape(len(x), -1).copy()), torch.from_numpy(y), torch.from_numpy(g))

    return split(False), split(True)


@DATASETS.register("hapt")
def load(root: Path, *, download: bool = False) -> RawDataset:
    """HAPT windows as float32 ``(N, 768)`` (6 channels × 128 samples), labels 0–5, volunteers as groups.

    Args:
        root: the data root.
        download: ignored: the raw recordings are never fetched (UCI serves them only as one zip
            with the feature files); place ``RawData`` under the data root.

    Raises:
        MissingDataError: when ``labels.txt`` or the recordings are not there.
        FileNotFoundError: when ``labels.txt`` names a recording whose file is missing.
        ValueError: on a malformed file.
    """
    root = Path(root)
    folder = LAYOUT.find(root)
    if folder is None:
        raise MissingDataError(
            "hapt", root, ["labels.txt", "acc_expEE_userUU.txt[.gz]", "gyro_expEE_userUU.txt[.gz]"],
            root / LAYOUT.candidates[0], reason="the raw recordings are never downloaded" if download else "",
        )
    train, test = _cut(folder)
    if not len(test):
        raise ValueError(f"hapt: no windows of volunteers {sorted(TEST_SUBJECTS)} under {folder}")
    return RawDataset(
        name="hapt",
        num_classes=len(ACTIVITIES),
        kind="tabular",
        test=test,
        train=train if len(train) else None,
        class_names=ACTIVITIES,
        source=f"UCI HAPT RawData, 128-sample windows at 50% overlap (train {len(train):,} + test {len(test):,})",
    )
