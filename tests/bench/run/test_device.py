"""The device and numerics of a run: resolution, the CPU scope changes nothing, rows say where a cell
ran, seeded draws name their device (what a CUDA default device would otherwise refuse)."""
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, execute_cell
from bench.run.device import Numerics, current_device, device_scope, resolve_device
from bench.run.run_options import DeviceError
from bench.run.table import NOT_FACTORS

BASE = dict(dataset="digits", victim="mnistnet", cut="split-2", profile="smoke", seed=0)


@pytest.mark.parametrize("name, gpus, expected", [
    ("auto", 0, "cpu"), ("cpu", 2, "cpu"), ("auto", 2, "cuda:0"), ("cuda", 1, "cuda:0"), ("cuda:1", 2, "cuda:1"),
])
def test_resolution(name, gpus, expected):
    assert resolve_device(name, gpu_count=gpus) == expected


@pytest.mark.parametrize("name, gpus", [("cuda", 0), ("cuda:3", 2), ("tpu", 1), ("", 0)])
def test_resolution_refuses_what_the_machine_lacks(name, gpus):
    with pytest.raises(DeviceError):
        resolve_device(name, gpu_count=gpus)


def test_numerics_refuses_an_unknown_autocast():
    with pytest.raises(ValueError, match="autocast"):
        Numerics(autocast="fp8")


def _metrics(record):
    return {k: v for k, v in record.metrics.items() if not k.endswith("_seconds")}


def test_the_cpu_scope_changes_no_number_and_the_row_says_where_and_how_it_ran(tmp_path):
    """Oracle: the same cell outside any scope (as before devices existed) and inside the CPU scope;
    the scoped record's device and numerics are provenance, none of it a factor."""
    from bench.run.cell_runner import run_cell

    cell = Cell(defense="lightsplit-f", defense_knobs={"cr": 8.0}, attack="decoder-ref", **BASE)
    plain, _ = run_cell(cell, RunContext(data_root=tmp_path))
    scoped = execute_cell(cell, RunContext(data_root=tmp_path, device="cpu"))
    strip = lambda m: {k: v for k, v in m.items() if not k.endswith("_seconds")}  # noqa: E731
    assert strip(scoped.metrics) == strip(plain)
    prov = scoped.provenance
    assert (prov["device"], prov["device_name"]) == ("cpu", "cpu")
    assert (prov["tf32"], prov["autocast"], prov["deterministic"]) == ("false", "none", "false")
    assert prov["version_cuda"] and prov["version_cudnn"]
    assert {k for k in prov if not k.startswith("version_")} <= NOT_FACTORS


def test_bf16_autocast_runs_scores_in_float32_and_is_recorded(tmp_path):
    cell = Cell(defense="raw", attack="decoder-ref", **BASE)
    record = execute_cell(cell, RunContext(data_root=tmp_path, numerics=Numerics(autocast="bf16")))
    assert record.status == "ok", record.error
    assert record.provenance["autocast"] == "bf16"
    assert 0 <= record.metrics["ssim"] <= 1 and 0 <= record.metrics["accuracy"] <= 1
    assert not torch.is_autocast_enabled("cpu")  # the scope ended with the cell


def test_deterministic_is_applied_inside_the_cell_and_recorded(tmp_path):
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if not seen:
                seen.append(torch.are_deterministic_algorithms_enabled())
            return func(*args, **(kwargs or {}))

    with Spy():
        record = execute_cell(Cell(defense="raw", **BASE), RunContext(data_root=tmp_path, numerics=Numerics(deterministic=True)))
    try:
        assert record.status == "ok" and record.provenance["deterministic"] == "true" and seen == [True]
    finally:
        torch.use_deterministic_algorithms(False)


def test_inside_a_scope_new_tensors_are_built_on_its_device():
    with device_scope("cpu"):
        assert current_device() == torch.device("cpu")
    with torch.device("meta"):  # any default device: the helper reads it
        assert current_device() == torch.device("meta")


class _GeneratorDeviceGuard(TorchFunctionMode):
    """Refuses what a CUDA default device refuses: a draw from a (CPU) generator that does not name
    its device, which the default device would put on the GPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if kwargs.get("generator") is not None and func in _device_constructors() and "device" not in kwargs:
            raise AssertionError(f"torch.{func.__name__} draws from a generator without naming its device")
        return func(*args, **kwargs)


@pytest.mark.parametrize("attack, defense", [
    ("decoder-ref", "lightsplit-f"), ("sdar", "topk"), ("fora", "lightsplit-l"), ("fsha", "lightsplit-f-srht"),
])
def test_every_seeded_draw_names_its_device(tmp_path, attack, defense):
    knobs = {} if defense == "raw" else {"cr": 8.0}
    cell = Cell(defense=defense, defense_knobs=knobs, attack=attack, **BASE)
    with _GeneratorDeviceGuard():
        record = execute_cell(cell, RunContext(data_root=tmp_path))
    assert record.status == "ok", record.error
