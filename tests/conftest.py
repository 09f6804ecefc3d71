import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny tensors: thread synchronisation costs more than it saves on a busy 2-core machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _carved_digits(tmp_path_factory, profile: str):
    from bench.data import DATASETS
    from bench.data.splits import carve
    from bench.profiles import get_profile

    return carve(DATASETS.get("digits")(tmp_path_factory.mktemp(f"digits-{profile}")), get_profile(profile))


@pytest.fixture(scope="session")
def digits(tmp_path_factory):
    """sklearn's digits carved as the smoke profile carves them, once per session (read only)."""
    return _carved_digits(tmp_path_factory, "smoke")


@pytest.fixture(scope="session")
def digits_cpu(tmp_path_factory):
    """sklearn's digits carved as the cpu profile carves them (more members), once per session (read only)."""
    return _carved_digits(tmp_path_factory, "cpu")
