"""Data faults: a file that cannot be decoded is named in one line at load time by every image loader,
``bench run`` stops on it before anything is written, and ``bench list --check`` names every broken file."""
import csv
import gzip
import io
import pickle

import numpy as np
import pytest
from PIL import Image

from bench.data import DATASETS
from tests.bench.cli.runner import run_cli
from tests.bench.run.faults import SMOKE, one_error_line, records


def _image(fmt: str, size=(32, 32), seed=0) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (*size[::-1], 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format=fmt)
    return buffer.getvalue()


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _cifar_jpeg(root):
    """Three JPEGs of class cat, the second cut short; returns the broken file."""
    folder = root / "cifar10-jpeg" / "test" / "cat"
    folder.mkdir(parents=True)
    for i in range(3):
        (folder / f"{i}.jpg").write_bytes(_image("JPEG", seed=i))
    (folder / "1.jpg").write_bytes(_cut(_image("JPEG", seed=1)))
    return folder / "1.jpg"


def _imagenet(root):
    folder = root / "imagenet" / "val" / "n01440764"
    folder.mkdir(parents=True)
    (folder / "a.JPEG").write_bytes(_image("JPEG", size=(80, 70)))
    (folder / "b.JPEG").write_bytes(_cut(_image("JPEG", size=(80, 70), seed=1)))
    return folder / "b.JPEG"


def _gtsrb(root):
    base = root / "gtsrb"
    images = base / "GTSRB" / "Final_Test" / "Images"
    images.mkdir(parents=True)
    (images / "00000.ppm").write_bytes(_image("PPM", size=(40, 40)))
    (images / "00001.ppm").write_bytes(_cut(_image("PPM", size=(40, 40), seed=1)))
    with (base / "GT-final_test.csv").open("w", newline="") as f:
        writer = csv.writer(f, delimiter=";")
        writer.writerows([["Filename", "ClassId"], ["00000.ppm", 1], ["00001.ppm", 2]])
    return images / "00001.ppm"


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return gzip.compress(header + array.astype(np.uint8).tobytes())


def _mnist(root):
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "t10k-images-idx3-ubyte.gz").write_bytes(_cut(_idx(np.zeros((4, 28, 28)))))
    (raw / "t10k-labels-idx1-ubyte.gz").write_bytes(_idx(np.arange(4)))
    return raw / "t10k-images-idx3-ubyte.gz"


def _cifar10(root):
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    batch = {b"data": np.zeros((4, 3072), dtype=np.uint8), b"labels": [0, 1, 2, 3]}
    (folder / "test_batch").write_bytes(_cut(pickle.dumps(batch)))
    return folder / "test_batch"


@pytest.mark.parametrize("dataset,make", [("cifar10-jpeg", _cifar_jpeg), ("imagenet", _imagenet), ("gtsrb", _gtsrb),
                                          ("mnist", _mnist), ("cifar10", _cifar10)])
def test_every_image_loader_names_a_file_it_cannot_decode_in_one_line(tmp_path, dataset, make):
    broken = make(tmp_path)
    with pytest.raises(ValueError) as caught:  # bench.data.files.DataFileError
        DATASETS.get(dataset)(tmp_path, download=False)
    message = str(caught.value)
    assert message.startswith(f"{broken} cannot be read: ") and "\n" not in message
    assert message.endswith("replace it with a good copy or remove it, then rerun")
    assert [path for path, _ in caught.value.problems] == [broken]


def test_a_loader_names_every_broken_file_of_every_split(tmp_path):
    broken = _cifar_jpeg(tmp_path)
    train = tmp_path / "cifar10-jpeg" / "train" / "dog"
    train.mkdir(parents=True)
    (train / "0.jpg").write_bytes(b"not an image")
    with pytest.raises(ValueError) as caught:
        DATASETS.get("cifar10-jpeg")(tmp_path)
    assert [path for path, _ in caught.value.problems] == [broken, train / "0.jpg"]
    assert "(and 1 more file: bench list --check lists them)" in str(caught.value)


def test_run_stops_on_a_broken_file_before_anything_is_written(capsys, out, tmp_path):
    broken = _cifar_jpeg(tmp_path / "data")
    before = records(out)
    args = ["run", *SMOKE, "--dataset", "digits,cifar10-jpeg", "--data-root", str(tmp_path / "data"), "--defense", "raw",
            "--seeds", "0,1", "--out", str(out)]
    code, stdout, stderr = run_cli(capsys, args)
    line = one_error_line(stderr)
    assert code == 2 and stdout == ""
    assert line.startswith(f"error: {broken} cannot be read: ") and "Truncated" in line
    assert records(out) == before and not (out / "recovered").exists()


def test_list_check_reads_every_file_and_names_the_broken_ones(capsys, tmp_path, monkeypatch):
    from bench.data import autodetect

    monkeypatch.setattr(autodetect, "OFFLINE_COPIES", ())  # only the data root given
    broken = _cifar_jpeg(tmp_path)
    fine = tmp_path / "mnist-root"
    (fine / "MNIST" / "raw").mkdir(parents=True)
    code, stdout, stderr = run_cli(capsys, ["list", "--data-root", str(tmp_path), "--check"])
    assert code == 1
    assert one_error_line(stderr) == "error: 1 data file cannot be read (listed above as broken)"
    lines = [line.strip() for line in stdout.splitlines()]
    at = lines.index(f"cifar10-jpeg   found in {tmp_path / 'cifar10-jpeg'}")
    assert lines[at + 1] == "checked: 1 broken"
    assert lines[at + 2].startswith(f"broken: {broken}: OSError: ") and "Truncated" in lines[at + 2]
    assert sum(line.startswith("broken: ") for line in lines) == 1
    code, stdout, _ = run_cli(capsys, ["list", "--data-root", str(tmp_path)])  # without --check nothing is read
    assert code == 0 and "broken: " not in stdout and "checked: " not in stdout
