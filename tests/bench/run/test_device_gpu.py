"""On a CUDA GPU: cells of every attack run there, the public transforms and the data order are the
CPU's, deterministic runs repeat exactly, workers share a GPU. Skipped without a GPU; the device kit
(``benchmarks/device/kit.py run``) runs them with ``-m gpu``."""
import pytest
import torch

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, execute_cell
from bench.run.device import Numerics, device_scope
from bench.run.executors import LocalExecutor
from bench.run.runner import run_grid
from bench.run.store import ResultStore

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

BASE = dict(dataset="digits", victim="mnistnet", cut="split-2", profile="smoke", seed=0)
ATTACKS = [("decoder-ref", "lightsplit-f"), ("decoder-fused", "lightsplit-f"), ("unsplit", "raw"), ("sdar", "topk"),
           ("fora", "lightsplit-l"), ("fsha", "lightsplit-f-srht"), ("prior", "raw"), ("none", "raw+dp")]


def _cell(attack, defense, **extra):
    knobs = {"sigma": 0.02} if defense == "raw+dp" else {} if defense == "raw" else {"cr": 8.0}
    return Cell(defense=defense, defense_knobs=knobs, attack=attack, **{**BASE, **extra})


@pytest.mark.parametrize("attack, defense", ATTACKS)
def test_every_attack_runs_on_the_gpu_and_says_so(tmp_path, attack, defense):
    record = execute_cell(_cell(attack, defense), RunContext(data_root=tmp_path, device="cuda:0"))
    assert record.status == "ok", record.error
    assert record.provenance["device"] == "cuda:0" and record.provenance["device_name"] != "cpu"
    assert 0 <= record.metrics["accuracy"] <= 1
    if attack not in ("none",):
        assert 0 <= record.metrics["ssim"] <= 1


def test_the_public_projection_is_the_cpus():
    from defenses import build_defense

    def projection(device):
        with device_scope(device):
            defense = build_defense("lightsplit-f", cut_shape=(32, 7, 7), seed=3, cr=8.0)
            return {k: v.cpu() for k, v in defense.state_dict().items()}

    on_cpu, on_gpu = projection("cpu"), projection("cuda:0")
    assert on_cpu.keys() == on_gpu.keys() and all(torch.equal(on_cpu[k], on_gpu[k]) for k in on_cpu)


def test_a_deterministic_gpu_cell_repeats_exactly(tmp_path):
    numerics = Numerics(deterministic=True)
    runs = [execute_cell(_cell("decoder-ref", "lightsplit-f"), RunContext(data_root=tmp_path / str(i), device="cuda:0",
                                                                        numerics=numerics)) for i in range(2)]
    torch.use_deterministic_algorithms(False)
    assert all(r.status == "ok" for r in runs), [r.error for r in runs]
    strip = lambda m: {k: v for k, v in m.items() if not k.endswith("_seconds")}  # noqa: E731
    assert strip(runs[0].metrics) == strip(runs[1].metrics)


def test_the_gpu_cell_lands_near_the_cpu_cell(tmp_path):
    """Not equal (other kernels), but the same question: accuracy within 0.15 on the smoke victim."""
    cell = _cell("none", "lightsplit-f")
    cpu = execute_cell(cell, RunContext(data_root=tmp_path, device="cpu"))
    gpu = execute_cell(cell, RunContext(data_root=tmp_path, device="cuda:0"))
    assert abs(cpu.metrics["accuracy"] - gpu.metrics["accuracy"]) < 0.15


def test_four_workers_share_one_gpu(tmp_path):
    cells = [_cell("none", "raw", seed=s) for s in range(4)]
    store = ResultStore(tmp_path / "shared")
    summary = run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path),
                       executor=LocalExecutor(jobs=4, devices=["cuda:0"] * 4))
    assert summary.ran == 4 and summary.failed == []
    assert {r.provenance["device"] for r in store.records()} == {"cuda:0"}


def test_bf16_autocast_runs_on_the_gpu(tmp_path):
    record = execute_cell(_cell("sdar", "lightsplit-f"), RunContext(data_root=tmp_path, device="cuda:0",
                                                                   numerics=Numerics(autocast="bf16", tf32=True)))
    assert record.status == "ok", record.error
    assert (record.provenance["autocast"], record.provenance["tf32"]) == ("bf16", "true")
