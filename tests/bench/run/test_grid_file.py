import textwrap

import pytest

from bench.errors import GridError
from bench.run.grid import GridSpec, expand
from bench.run.grid_file import load_grid_file
from bench.run.run_options import RunOptions

DEFAULTS = """
[defaults]
dataset = "digits"
profile = "smoke"
seeds = [0]
"""


def grid_file(tmp_path, text: str):
    path = tmp_path / "grid.toml"
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path, text: str):
    return load_grid_file(grid_file(tmp_path, text))


def test_defaults_merge_key_by_key_and_a_grid_key_replaces_the_default(tmp_path):
    grids = load(tmp_path, DEFAULTS + """
        knobs = { cr = [8, 16] }
        [[grid]]
        defense = ["raw", "lightsplit-f"]
        [[grid]]
        defense = "lightsplit-f"
        seeds = [1, 2]
        lambda_wcc = 0.1
        knobs = { cr = 8 }
    """).grids
    assert grids[0] == GridSpec(datasets=("digits",), defenses=("raw", "lightsplit-f"), seeds=(0,), profile="smoke",
                                knobs={"cr": (8, 16)})
    assert grids[1] == GridSpec(datasets=("digits",), defenses=("lightsplit-f",), seeds=(1, 2), profile="smoke",
                                knobs={"cr": (8,)}, lambda_wccs=(0.1,))


def test_every_grid_key_reaches_its_field(tmp_path):
    (spec,) = load(tmp_path, """
        [[grid]]
        dataset = ["digits"]
        victim = "mnistnet"
        cut = "split-2"
        defense = ["dp"]
        attack = ["none"]
        knobs = { sigma = [0.5, 1] }
        lambda_wcc = [0, 1e-3]
        seeds = [3]
        profile = "smoke"
        protocol = "vanilla"
        heads = "pch"
        partition = "dirichlet"
        alpha = 1
        clients = 2
    """).grids
    assert spec == GridSpec(datasets=("digits",), defenses=("dp",), seeds=(3,), profile="smoke", victim="mnistnet",
                            cut="split-2", knobs={"sigma": (0.5, 1)}, lambda_wccs=(0.0, 1e-3), attacks=("none",),
                            protocol="vanilla", heads="pch", partition="dirichlet", alpha=1.0, clients=2)


def test_run_options_are_read_and_default_like_the_command_line(tmp_path):
    minimal = DEFAULTS + "[[grid]]\ndefense = 'raw'\n"
    assert load(tmp_path, minimal).options == RunOptions()
    options = load(tmp_path, """
        out = "results/x"
        data_root = "../shared/data"
        download = false
        executor = "ray"
        jobs = 2
        address = "auto"
        device = "cuda:1"
        gpus_per_worker = 0.5
        tf32 = true
        autocast = "bf16"
        deterministic = true
        time_budget = 420
    """ + minimal).options
    assert options == RunOptions(out="results/x", data_root="../shared/data", download=False, executor="ray", jobs=2,
                                 address="auto", device="cuda:1", gpus_per_worker=0.5, tf32=True, autocast="bf16",
                                 deterministic=True, time_budget=420.0)


def test_several_grids_are_one_grid_each_cell_once_in_file_order(tmp_path):
    grid = load(tmp_path, DEFAULTS + """
        [[grid]]
        defense = ["raw", "lightsplit-f"]
        knobs = { cr = 8 }
        [[grid]]
        defense = "lightsplit-f"
        knobs = { cr = [8, 16] }
    """)
    first, second = (expand(spec) for spec in grid.grids)
    assert len(first) == 2 and len(second) == 3  # each with its matched raw cell
    assert [c.id for c in grid.cells] == [c.id for c in first] + [second[-1].id]
    assert [c.knob("cr") for c in grid.cells] == [None, 8.0, 16.0]


@pytest.mark.parametrize("text,needle", [
    ("outt = 'x'\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "grid.toml: unknown key 'outt' (known: out, data_root,"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\n[[grid]]\ndefence = 'raw'\n",
     "grid.toml: [[grid]] 2: unknown key 'defence' (known: dataset, victim, cut, defense,"),
    (DEFAULTS + "jobs = 2\n[[grid]]\ndefense = 'raw'\n", "grid.toml: [defaults]: unknown key 'jobs'"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nseeds = ['a']\n", "[[grid]] 1: 'seeds' must be an integer or a list of them, got ['a']"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nseeds = [true]\n", "'seeds' must be an integer or a list of them"),
    (DEFAULTS + "[[grid]]\ndefense = ['raw', 1]\n", "'defense' must be a string or a list of them, got ['raw', 1]"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nclients = 1.5\n", "'clients' must be an integer, got 1.5"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nvictim = ['mnistnet']\n", "'victim' must be a string, got ['mnistnet']"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nlambda_wcc = '0.1'\n", "'lambda_wcc' must be a number or a list of them"),
    ("jobs = 0\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "grid.toml: 'jobs' must be an integer >= 1, got 0"),
    ("executor = 'slurm'\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'executor' must be one of local, ray, got 'slurm'"),
    ("download = 'yes'\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'download' must be true or false"),
    ("out = ''\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'out' must be a non-empty string"),
    ("device = 'gpu'\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'device' must be auto, cpu, cuda or cuda:N, got 'gpu'"),
    ("gpus_per_worker = 2\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'gpus_per_worker' must be a number in (0, 1]"),
    ("autocast = 'fp16'\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'autocast' must be one of none, bf16"),
    ("time_budget = 0\n" + DEFAULTS + "[[grid]]\ndefense = 'raw'\n", "'time_budget' must be a number of seconds > 0"),
    (DEFAULTS + "[[grid]]\ndefense = 'lightsplit-f'\nknobs = [8]\n", "'knobs' must be a table of knob values"),
    (DEFAULTS + "[[grid]]\ndefense = 'lightsplit-f'\nknobs = { cr = [] }\n", "knob 'cr' has at least one value"),
    (DEFAULTS + "[[grid]]\ndefense = 'lightsplit-f'\nknobs = { cr = [true] }\n", "knob 'cr' is a number or a string"),
    (DEFAULTS + "[[grid]]\ndefense = 'nosuch'\n", "grid.toml: [[grid]] 1: unknown defense 'nosuch'"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\n[[grid]]\ndefense = 'raw'\nattack = 'nosuch'\n", "[[grid]] 2: unknown attack 'nosuch'"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\ndataset = 'nosuch'\n", "[[grid]] 1: unknown dataset 'nosuch'"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nprofile = 'huge'\n", "[[grid]] 1: unknown profile 'huge'"),
    (DEFAULTS + "[[grid]]\ndefense = 'lightsplit-f'\nknobs = { cr = 7 }\n", "no integer k >= 1"),
    (DEFAULTS + "[[grid]]\ndefense = 'dp'\nknobs = { sigma = -1 }\n", "knob sigma must be >= 0"),
    (DEFAULTS + "[[grid]]\ndefense = 'raw'\nknobs = { nosuch = 1 }\n", "no defense or attack of the grid reads knob 'nosuch'"),
    (DEFAULTS.replace("seeds = [0]", "") + "[[grid]]\ndefense = 'raw'\n",
     "[[grid]] 1: no 'seeds' (give it in this [[grid]] or in [defaults])"),
    (DEFAULTS, "grid.toml: no [[grid]] table"),
    (DEFAULTS + "[grid]\ndefense = 'raw'\n", "'grid' must be an array of tables ([[grid]])"),
    ("defaults = 1\n[[grid]]\ndefense = 'raw'\n", "'defaults' must be a table ([defaults])"),
    ("[[grid]\n", "grid.toml: not valid TOML: "),
])
def test_every_problem_is_one_line_naming_the_file_the_place_and_the_problem(tmp_path, text, needle):
    with pytest.raises(GridError) as err:
        load(tmp_path, text)
    message = str(err.value)
    assert needle in message and message.startswith(str(tmp_path / "grid.toml"))
    assert "\n" not in message


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(GridError, match=r"nosuch\.toml: no such file"):
        load_grid_file(tmp_path / "nosuch.toml")
