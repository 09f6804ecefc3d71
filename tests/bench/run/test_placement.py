"""Worker placement against made-up GPU inventories: local workers dealt over the GPUs, Ray's GPU share."""
import pytest

from bench.run.placement import ray_gpus_per_task, worker_devices
from bench.run.run_options import DeviceError


@pytest.mark.parametrize("device, jobs, gpus, expected", [
    ("cpu", 3, 4, ["cpu"] * 3),
    ("auto", 2, 0, ["cpu", "cpu"]),
    ("auto", 1, 1, ["cuda:0"]),
    ("auto", 8, 1, ["cuda:0"] * 8),  # several workers share the one GPU
    ("cuda", 5, 2, ["cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"]),
    ("auto", 4, 8, ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]),
    ("cuda:2", 3, 4, ["cuda:2"] * 3),  # a named GPU takes every worker
])
def test_workers_are_dealt_over_the_gpus_in_turn(device, jobs, gpus, expected):
    assert worker_devices(device, jobs=jobs, gpu_count=gpus) == expected


def test_every_gpu_gets_an_equal_share_of_workers():
    placed = worker_devices("auto", jobs=16, gpu_count=4)
    assert {d: placed.count(d) for d in set(placed)} == {f"cuda:{i}": 4 for i in range(4)}


@pytest.mark.parametrize("device, gpus, message", [
    ("cuda", 0, "no CUDA GPU"),
    ("cuda:1", 0, "no CUDA GPU"),
    ("cuda:2", 2, "cuda:0 to cuda:1"),
    ("gpu", 2, "not one of auto, cpu, cuda, cuda:N"),
    ("cuda:x", 2, "not one of"),
])
def test_a_device_the_inventory_lacks_is_refused_in_one_line(device, gpus, message):
    with pytest.raises(DeviceError, match=message) as err:
        worker_devices(device, jobs=2, gpu_count=gpus)
    assert "\n" not in str(err.value)


def test_jobs_below_one_are_refused():
    with pytest.raises(ValueError, match="jobs"):
        worker_devices("cpu", jobs=0, gpu_count=0)


@pytest.mark.parametrize("device, cluster, share, expected", [
    ("cpu", 8, 0.25, 0.0),
    ("auto", 0, 0.25, 0.0),
    ("auto", 4, 0.25, 0.25),
    ("cuda", 1, 1.0, 1.0),
    ("cuda", 2, 0.125, 0.125),
])
def test_ray_tasks_ask_for_a_share_of_a_gpu_only_where_the_run_computes_on_gpus(device, cluster, share, expected):
    assert ray_gpus_per_task(device, cluster_gpus=cluster, share=share) == expected


@pytest.mark.parametrize("device, cluster, share, error", [
    ("cuda", 0, 0.25, DeviceError),
    ("cuda:1", 4, 0.25, DeviceError),  # Ray assigns the GPU: a named one cannot be honoured
    ("auto", 4, 0.0, ValueError),
    ("auto", 4, 1.5, ValueError),
])
def test_ray_gpu_requests_that_cannot_be_met_are_refused(device, cluster, share, error):
    with pytest.raises(error):
        ray_gpus_per_task(device, cluster_gpus=cluster, share=share)
