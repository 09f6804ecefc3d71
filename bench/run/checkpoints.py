"""Cached trained victims: tensors and plain data only, checksummed, keyed by the victim part of the
cell and by the code that shapes a victim, so a damaged, foreign or stale checkpoint is never used."""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import torch
from torch import Tensor

from bench.data import DATASETS
from bench.run.cell import Cell
from bench.run.engine import SplitModel
from bench.run.warn import warn
from victims import VICTIMS

# The code that shapes a trained victim and the measures recorded with it (relative to the repository
# root): a change to any of these files, or to a plugin's module a model is built from, retrains every
# cached victim.
VICTIM_CODE = (
    "victims", "defenses", "bench/data", "bench/profiles.py", "bench/leakage",
    "bench/run/engine.py", "bench/run/training.py", "bench/run/channel.py", "bench/run/checkpoints.py",
)
_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.cache
def code_files(names: tuple[str, ...]) -> frozenset[Path]:
    """Every ``.py`` file under the named folders and files (relative to the repository root)."""
    found = set()
    for name in names:
        path = _ROOT / name
        found.update(path.rglob("*.py") if path.is_dir() else [path] if path.exists() else [])
    return frozenset(p.resolve() for p in found)


def source_files(objects: Iterable[object]) -> set[Path]:
    """Files the classes (with their bases) and functions are defined in, outside torch and the standard
    library (so a plugin's defense, victim, dataset or attack counts too)."""
    files = set()
    for obj in {base for cls in objects for base in getattr(cls, "__mro__", (cls,))}:
        if str(getattr(obj, "__module__", "")).partition(".")[0] in sys.stdlib_module_names | {"builtins", "torch"}:
            continue
        try:
            source = inspect.getsourcefile(obj)
        except TypeError:  # no source file (a builtin)
            continue
        if source and Path(source).is_file():
            files.add(Path(source).resolve())
    return files


def code_digest(files: Iterable[Path]) -> str:
    """sha256 over the files' names (relative to the repository root) and contents, in name order."""
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        name = path.relative_to(_ROOT) if path.is_relative_to(_ROOT) else path.name
        digest.update(f"{name}\0{_file_digest(path)}\0".encode())
    return digest.hexdigest()


def victim_code_hash(model: SplitModel, cell: Cell) -> str:
    """A short hash of the source code that shapes the cell's trained victim: :data:`VICTIM_CODE` and
    the files of every class the model, its victim and its dataset are built from."""
    classes = {type(module) for module in model.modules()} | {VICTIMS.get(cell.victim), DATASETS.get(cell.dataset)}
    return code_digest(code_files(VICTIM_CODE) | source_files(classes))[:12]


def checkpoint_path(cell: Cell, model: SplitModel, cache_dir: Path) -> Path:
    """``cache_dir/<victim_key>-<code hash>.pt``: a victim trained by other code is never reused; nor one
    trained on another kind of device (``-cuda`` before the suffix: its weights differ in the low bits)."""
    kind = next(iter(model.parameters())).device.type
    return Path(cache_dir) / f"{cell.victim_key}-{victim_code_hash(model, cell)}{'' if kind == 'cpu' else '-' + kind}.pt"


def _checkpoint_checksum(state: dict[str, Tensor], metrics: dict, cell: dict) -> str:
    """sha256 over every tensor (name, dtype, shape, bytes, in key order), the metrics and the cell."""
    digest = hashlib.sha256()
    for name, tensor in state.items():
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    digest.update(json.dumps([metrics, cell], sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def save_checkpoint(path: Path, *, model: SplitModel, metrics: dict, cell: Cell) -> None:
    """Tensors and plain data only (loadable with ``weights_only=True``), with their checksum."""
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    plain_metrics = {k: v if v is None or type(v) is int else float(v) for k, v in metrics.items()}
    plain_cell = json.loads(json.dumps(cell.as_dict()))
    checksum = _checkpoint_checksum(state, plain_metrics, plain_cell)
    atomic_torch_save({"state": state, "metrics": plain_metrics, "cell": plain_cell, "checksum": checksum}, path)


def load_checkpoint(path: Path, model: SplitModel) -> dict[str, float] | None:
    """Load a checkpoint into ``model`` and return its metrics; a checkpoint that does not load, fails
    its checksum or does not fit the model is deleted with one warning line (None: train again)."""
    try:
        saved = torch.load(path, weights_only=True, map_location="cpu")
        state, metrics = saved["state"], saved["metrics"]
        if saved["checksum"] != _checkpoint_checksum(state, metrics, saved["cell"]):
            raise ValueError("checksum mismatch")
        check_fits(state, model)
        model.load_state_dict(state)
    except Exception as err:  # any damage: the checkpoint is only a cache
        path.unlink(missing_ok=True)
        warn(f"checkpoint {path} is unusable ({failure_reason(err)}); deleted, the victim trains again")
        return None
    return metrics


def check_fits(state: dict[str, Tensor], model: torch.nn.Module) -> None:
    """Raise ``ValueError`` unless ``state`` has exactly the model's tensor names, shapes and dtypes."""
    expected = {k: (v.shape, v.dtype) for k, v in model.state_dict().items()}
    if {k: (v.shape, v.dtype) for k, v in state.items()} != expected:
        raise ValueError("its tensors do not fit the model")


def failure_reason(err: Exception) -> str:
    """Why a checkpoint or snapshot did not load or save, in a few words."""
    if isinstance(err, KeyError):
        return f"no {err}"
    if isinstance(err, pickle.UnpicklingError):
        return "it holds more than tensors and plain data"
    lines = str(err).strip().splitlines()
    return lines[0].split(". ")[0] if lines else type(err).__name__


def atomic_torch_save(obj: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

