"""Where a cell computes and with which arithmetic: the device and the numerics policy.

The device is a run option, never part of a cell's id: a cell run on a GPU answers the same question
as on the CPU, and its row says where it ran (:func:`device_provenance`). float32 is the default;
TF32 and bf16 autocast are opt-in and recorded on every row, as is ``deterministic``.

A cell runs inside :func:`device_scope`: PyTorch's default device is the cell's, so every tensor and
network built without naming a device (the victims, the defenses' buffers, the attackers' networks
and the metrics' kernels) is built there. Random draws from a seeded ``torch.Generator`` stay on
the CPU (``device=generator.device``) so that every device sees the same data order and the same
draws; their results move to the device where they index device tensors. On the CPU the scope
changes nothing: a CPU run is bit-identical to one made before devices existed.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from bench.run.run_options import AUTOCAST, DeviceError, check_device_name


def resolve_device(name: str, *, gpu_count: int | None = None) -> str:
    """The concrete device ``name`` means on a machine with ``gpu_count`` GPUs (default: this one's).

    ``auto`` is ``cuda:0`` when a GPU is present, else ``cpu``; ``cuda`` is ``cuda:0``.

    Raises:
        DeviceError: a misspelt name, CUDA asked for without a GPU, or ``cuda:N`` past the last GPU.
    """
    if check_device_name(name) == "cpu":  # every cell resolves its device: no GPU query for the CPU's
        return "cpu"
    gpus = torch.cuda.device_count() if gpu_count is None else gpu_count
    if name == "auto" and gpus == 0:
        return "cpu"
    if gpus == 0:
        raise DeviceError(f"device '{name}' asked for, but this machine has no CUDA GPU (torch {torch.__version__}); use --device cpu")
    index = int(name.split(":")[1]) if ":" in name else 0
    if index >= gpus:
        raise DeviceError(f"device '{name}' asked for, but this machine has {gpus} GPU(s): cuda:0 to cuda:{gpus - 1}")
    return f"cuda:{index}"


@dataclass(frozen=True)
class Numerics:
    """The arithmetic of a run (``bench run --tf32 --autocast --deterministic``).

    Attributes:
        tf32: let float32 matrix products and convolutions use TF32 on GPUs (off: IEEE float32).
        autocast: ``none`` (float32 throughout) or ``bf16`` (``torch.autocast`` around training and
            attacks; the metrics are computed in float32 whatever this says).
        deterministic: PyTorch's deterministic algorithms (an operation without one then fails the cell
            with PyTorch's message), and cuDNN's autotuner off.
    """

    tf32: bool = False
    autocast: str = "none"
    deterministic: bool = False

    def __post_init__(self) -> None:
        if self.autocast not in AUTOCAST:
            raise ValueError(f"autocast must be one of {', '.join(AUTOCAST)}, got '{self.autocast}'")

    def columns(self) -> dict[str, str]:
        """The policy as row provenance."""
        return {"tf32": str(self.tf32).lower(), "autocast": self.autocast, "deterministic": str(self.deterministic).lower()}


def _apply_numerics(numerics: Numerics) -> None:
    torch.backends.cuda.matmul.allow_tf32 = numerics.tf32
    torch.backends.cudnn.allow_tf32 = numerics.tf32
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = numerics.deterministic
    if numerics.deterministic:
        # cuBLAS reads this when it starts; without it its deterministic mode raises.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(numerics.deterministic)


@contextlib.contextmanager
def device_scope(device: str, numerics: Numerics = Numerics()) -> Iterator[None]:
    """Run the body with ``device`` as PyTorch's default device and ``numerics`` applied.

    On the CPU with the default policy the body runs exactly as without the scope.
    """
    device = resolve_device(device)
    _apply_numerics(numerics)
    if device == "cpu":
        with autocast_scope(device, numerics):
            yield
        return
    torch.cuda.set_device(torch.device(device))
    with torch.device(device), autocast_scope(device, numerics):
        yield


def autocast_scope(device: str, numerics: Numerics):
    """``torch.autocast`` in bf16 when the policy asks for it, else nothing."""
    if numerics.autocast == "bf16":
        return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def float32_scope() -> contextlib.ExitStack:
    """Autocast off wherever it is on (metrics are always computed in float32)."""
    stack = contextlib.ExitStack()
    for kind in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
        if torch.is_autocast_enabled(kind):
            stack.enter_context(torch.autocast(device_type=kind, enabled=False))
    return stack


def current_device() -> torch.device:
    """PyTorch's default device here (the cell's, inside :func:`device_scope`)."""
    return torch.empty(0).device


def rng_devices() -> list[int]:
    """The CUDA devices whose random state :func:`torch.random.fork_rng` must fork here: the
    current one inside a CUDA scope, none on the CPU."""
    device = current_device()
    return [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []


def device_provenance(device: str) -> dict[str, str]:
    """Where a cell ran, as row provenance: the device, its name, the CUDA and cuDNN versions (cuDNN's
    only on a GPU: asking loads the library, 50 MiB, which a CPU cell never uses)."""
    resolved = torch.device(device)
    if resolved.type != "cuda":
        return {"device": str(resolved), "device_name": "cpu", "version_cuda": torch.version.cuda or "absent",
                "version_cudnn": "unused"}
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "device": str(resolved),
        "device_name": torch.cuda.get_device_name(resolved),
        "version_cuda": torch.version.cuda or "absent",
        "version_cudnn": str(cudnn) if cudnn else "absent",
    }


def seeded_permutation(n: int, generator: torch.Generator, *, device: torch.device | str) -> Tensor:
    """A permutation of ``range(n)`` drawn from ``generator`` on its own device (so every device
    draws the same one), then moved to ``device`` in one copy."""
    return torch.randperm(n, generator=generator, device=generator.device).to(device)


class DeviceLog:
    """Scalars recorded step by step where they were computed, read back in one transfer when asked
    for (reading a device scalar every step is a host sync that stalls a GPU). The values read are
    the floats ``.item()`` would have given, in the same order."""

    def __init__(self) -> None:
        self._read: list[list[float]] = []
        self._unread: list[Tensor] = []

    def append(self, *values: Tensor) -> None:
        """One row: the given scalars, detached, as float32."""
        self._unread.append(torch.stack([v.detach().float() for v in values]))

    def rows(self) -> list[list[float]]:
        """Every row appended so far, in order."""
        if self._unread:
            self._read.extend(torch.stack(self._unread).tolist())
            self._unread = []
        return self._read


def forked_rng():
    """:func:`torch.random.fork_rng` over the CPU and, in a CUDA scope, the current GPU: what the body
    draws leaves every random stream the run reads as it was."""
    return torch.random.fork_rng(devices=rng_devices())
