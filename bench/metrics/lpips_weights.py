"""LPIPS's AlexNet trunk: where its ImageNet weights come from, how they are read, and their fingerprint.

The trunk is read from one file, never downloaded: the file a user names (``bench run --lpips-weights
PATH``), else the shared trunk under the data root (:data:`SHARED_TRUNK`, which ``../shared/data``
holds; :func:`trunk_under`), else torchvision's own cached copy
(``torch.hub.get_dir()/checkpoints/alexnet-owt-7be5be79.pth``).
Either is a torchvision AlexNet ``state_dict``; only its ``features.*`` tensors are used. The
``lpips`` package's linear layers ship inside the package. Each result row records the file used and
its sha256 (:func:`weights_provenance`).
"""
from __future__ import annotations

import functools
import hashlib
import os
import warnings
from pathlib import Path

import torch

# torchvision's AlexNet_Weights.IMAGENET1K_V1 file name (its first 8 hex digits are of its sha256).
ALEXNET_FILE = "alexnet-owt-7be5be79.pth"
# The convolutions of torchvision's AlexNet ``features`` (index → weight shape): what LPIPS reads.
TRUNK_SHAPES = {0: (64, 3, 11, 11), 3: (192, 64, 5, 5), 6: (384, 192, 3, 3), 8: (256, 384, 3, 3), 10: (256, 256, 3, 3)}
ABSENT = "absent"
SHARED_TRUNK = Path("lpips") / "alexnet-features.pth"  # under a data root: LPIPS's AlexNet trunk


def trunk_under(data_root: str | os.PathLike | None) -> Path | None:
    """The shared LPIPS trunk under ``data_root`` (:data:`SHARED_TRUNK`), if it is there."""
    if data_root is None:
        return None
    path = Path(data_root) / SHARED_TRUNK
    return path.resolve() if path.is_file() else None


def cached_alexnet_path() -> Path:
    """Where torchvision keeps its AlexNet ImageNet weights (present or not)."""
    return Path(torch.hub.get_dir()) / "checkpoints" / ALEXNET_FILE


def resolve_weights(weights: str | os.PathLike | None = None) -> Path | None:
    """The trunk file LPIPS would read: ``weights`` if given (absolute, whether it exists or not),
    else torchvision's cached copy if it exists, else None."""
    if weights is not None:
        return Path(weights).expanduser().resolve()
    cached = cached_alexnet_path()
    return cached if cached.is_file() else None


def unavailable_reason(weights: str | os.PathLike | None = None) -> str | None:
    """One-line reason LPIPS (AlexNet) cannot run, or None when every file it needs is on disk.

    Args:
        weights: The trunk file named by the user; None means torchvision's cached copy.
    """
    try:
        import lpips
    except ImportError as err:
        return f"LPIPS unavailable: {err}"
    path = resolve_weights(weights)
    if path is None:
        return f"LPIPS unavailable: torchvision AlexNet weights not in {cached_alexnet_path()} (no network)"
    if not path.is_file():
        return f"LPIPS unavailable: AlexNet weights file {path} not found"
    linear = os.path.join(os.path.dirname(lpips.__file__), "weights", "v0.1", "alex.pth")
    if not os.path.isfile(linear):
        return f"LPIPS unavailable: lpips linear-layer weights not in {linear}"
    return None


def _load(path: str | os.PathLike) -> object:
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except RuntimeError:  # a file in torch's legacy (pre-zip) format cannot be memory-mapped
        return torch.load(path, map_location="cpu", weights_only=True)


def read_trunk(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """The trunk's tensors of an AlexNet ``state_dict`` file, keyed ``features.<i>.weight|bias``.

    Raises:
        ValueError: one line: no such file, not a PyTorch state dict, or a trunk tensor missing or
            of the wrong shape.
    """
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        state = _load(path)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user error
        raise ValueError(f"{path} is not a PyTorch state dict ({type(err).__name__})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path} holds a {type(state).__name__}, not an AlexNet state dict")
    trunk = {}
    for index, shape in TRUNK_SHAPES.items():
        for name, want in ((f"features.{index}.weight", shape), (f"features.{index}.bias", shape[:1])):
            tensor = state.get(name)
            if not isinstance(tensor, torch.Tensor) or tuple(tensor.shape) != want:
                got = "nothing" if tensor is None else f"shape {tuple(getattr(tensor, 'shape', ()))}"
                raise ValueError(f"{path} is not a torchvision AlexNet state dict: {name} should be {want}, got {got}")
            trunk[name] = tensor
    return trunk


def build_lpips(path: str | os.PathLike) -> torch.nn.Module:
    """``lpips.LPIPS(net="alex")`` in eval mode on CPU, its trunk read from ``path`` (no download).

    Raises:
        ValueError: ``path`` is not an AlexNet state dict (:func:`read_trunk`).
    """
    import lpips

    trunk = read_trunk(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchvision's `pretrained=` deprecation
        model = lpips.LPIPS(net="alex", pnet_rand=True, verbose=False)  # random trunk: torchvision downloads nothing
    # lpips splits AlexNet's ``features`` into slices that keep torchvision's indices: slice<k>.<i>.<param>.
    mapped = {key: trunk["features." + key.split(".", 1)[1]] for key in model.net.state_dict()}
    model.net.load_state_dict(mapped)
    return model.eval()


@functools.lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file, hashed once per process (again only if its size or mtime change)."""
    stat = os.stat(path)
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


def weights_provenance(weights: str | os.PathLike | None = None) -> dict[str, str]:
    """``lpips_weights`` (the trunk file LPIPS reads, or "absent") and ``lpips_weights_sha256``
    (its sha256, or "absent"), for a result row's provenance."""
    path = resolve_weights(weights)
    if path is None or not path.is_file():
        return {"lpips_weights": str(path) if path is not None else ABSENT, "lpips_weights_sha256": ABSENT}
    return {"lpips_weights": str(path), "lpips_weights_sha256": file_sha256(path)}
