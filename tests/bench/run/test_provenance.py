from bench.run.provenance import environment
from bench.run.table import NOT_FACTORS


def test_records_the_processor_and_never_makes_it_a_factor():
    info = environment()
    assert info["cpu"] and info["cpu"] != "unknown"
    assert info["cpu_capability"]  # torch's kernel family: DEFAULT, AVX2, AVX512, ...
    assert {"cpu", "cpu_capability", "machine", "torch_threads"} <= NOT_FACTORS
