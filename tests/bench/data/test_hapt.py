"""``hapt``: UCI HAPT ``RawData`` recordings cut into UCI HAR's windows, on fixtures in that layout."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from bench.data import DATASETS
from bench.data.hapt import STRIDE, WINDOW
from bench.data.root import MissingDataError

RAW = "hapt/HAPT Data Set/RawData"


def _write_recording(folder: Path, exp: int, user: int, n: int, *, gz: bool) -> np.ndarray:
    """Six channels whose value encodes (channel, sample), so every window can be checked exactly."""
    signal = np.stack([c * 1000.0 + np.arange(n) for c in range(6)], axis=1).astype(np.float32)
    for sensor, columns in (("acc", signal[:, :3]), ("gyro", signal[:, 3:])):
        text = "\n".join(" ".join(f"{v:.1f}" for v in row) for row in columns) + "\n"
        path = folder / f"{sensor}_exp{exp:02d}_user{user:02d}.txt"
        if gz:
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text)
    return signal


@pytest.fixture
def raw_data(tmp_path: Path) -> Path:
    folder = tmp_path / RAW
    folder.mkdir(parents=True)
    _write_recording(folder, 1, 1, 1000, gz=True)
    _write_recording(folder, 2, 2, 600, gz=False)  # volunteer 2 is one of UCI HAR's test subjects
    (folder / "labels.txt").write_text(
        "1 1 5 11 330\n"  # 320 samples: windows start at 10, 74, 138, 202 (a 5th would end past 330)
        "1 1 7 331 500\n"  # a postural transition: not used
        "1 1 1 501 627\n"  # 127 samples: shorter than one window, dropped
        "2 2 6 1 256\n"  # exactly 3 windows
    )
    return tmp_path


def test_windows_stay_inside_segments_and_keep_channels(raw_data: Path) -> None:
    ds = DATASETS.get("hapt")(raw_data)
    assert ds.kind == "tabular" and ds.num_classes == 6 and ds.input_shape == (6 * WINDOW,)
    train, test = ds.train, ds.test
    assert train.y.tolist() == [4] * 4 and train.groups.tolist() == [1] * 4
    assert test.y.tolist() == [5, 5, 5] and test.groups.tolist() == [2, 2, 2]
    windows = train.x.view(-1, 6, WINDOW)
    for i, start in enumerate(range(10, 203, STRIDE)):
        expected = np.stack([c * 1000.0 + np.arange(start, start + WINDOW) for c in range(6)])
        assert np.array_equal(windows[i].numpy(), expected), f"window {i}"
    assert "train 4 + test 3" in ds.source


def test_missing_recording_named_by_labels_is_an_error(raw_data: Path) -> None:
    (raw_data / RAW / "gyro_exp02_user02.txt").unlink()
    with pytest.raises(FileNotFoundError, match="gyro_exp02_user02.txt"):
        DATASETS.get("hapt")(raw_data)


def test_segment_outside_its_recording_is_an_error(raw_data: Path) -> None:
    (raw_data / RAW / "labels.txt").write_text("2 2 6 1 601\n")
    with pytest.raises(ValueError, match="outside its 600 samples"):
        DATASETS.get("hapt")(raw_data)


def test_missing_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("hapt")(tmp_path)
    assert "\n" not in str(err.value) and "labels.txt" in str(err.value)
