"""Grid files: every grid of one results folder, and how to run them, in one TOML file.

``bench run --config FILE`` reads it; every grid is expanded (and so checked) before any runs::

    out = "results/issue13-hapt"        # results folder (relative to the current directory)
    data_root = "../shared/data"        # optional, as --data-root
    jobs = 2                            # optional run options: jobs, executor, address, download,
    device = "auto"                     # device, gpus_per_worker, tf32, autocast, deterministic, threads

    [defaults]                          # optional: any grid key, for every [[grid]]
    profile = "cpu"
    dataset = "hapt"
    seeds = [0, 1, 2]

    [[grid]]                            # one per `bench run`; run in file order into `out`
    defense = ["raw", "lightsplit-f"]
    attack = ["har-recon", "har-reid"]
    knobs = { cr = 8 }

A key of a ``[[grid]]`` replaces the same key of ``[defaults]`` (``knobs`` as a whole). A list key
also takes a single value. ``dataset``, ``defense`` and ``seeds`` must be given, in the grid or in
``[defaults]``; every other key has the default of its ``bench run`` option.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import GridError
from bench.run.cell import Cell
from bench.run.grid import GridSpec, expand
from bench.run.run_options import AUTOCAST, EXECUTORS, RunOptions, check_device_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport, where installed
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ModuleNotFoundError:
        tomllib = None  # type: ignore[assignment]

class _WrongType(Exception):
    """A value that is not of the type its key takes; the message says what it takes."""


def _listed(value: Any, ok: Callable[[Any], bool], expected: str) -> tuple:
    items = value if isinstance(value, list) else [value]
    if not all(ok(v) for v in items):
        raise _WrongType(f"{expected} or a list of them")
    return tuple(items)


def _single(value: Any, ok: Callable[[Any], bool], expected: str) -> Any:
    if not ok(value):
        raise _WrongType(expected)
    return value


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_device(v: Any) -> bool:
    try:
        return check_device_name(v) == v
    except ValueError:
        return False


def _knobs(value: Any) -> dict[str, tuple]:
    if not isinstance(value, dict):
        raise _WrongType("a table of knob values, e.g. { cr = [8, 16] }")
    knobs = {}
    for name, values in value.items():
        try:
            knobs[name] = _listed(values, lambda v: _is_str(v) or _is_number(v), "a number or a string")
        except _WrongType as err:
            raise _WrongType(f"a table whose knob '{name}' is {err}") from None
        if not knobs[name]:
            raise _WrongType(f"a table whose knob '{name}' has at least one value")
    return knobs


# Grid key → (GridSpec field, reader of its TOML value).
GRID_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "dataset": ("datasets", lambda v: _listed(v, _is_str, "a string")),
    "victim": ("victim", lambda v: _single(v, _is_str, "a string")),
    "cut": ("cut", lambda v: _single(v, _is_str, "a string")),
    "defense": ("defenses", lambda v: _listed(v, _is_str, "a string")),
    "attack": ("attacks", lambda v: _listed(v, _is_str, "a string")),
    "knobs": ("knobs", _knobs),
    "lambda_wcc": ("lambda_wccs", lambda v: tuple(float(x) for x in _listed(v, _is_number, "a number"))),
    "seeds": ("seeds", lambda v: _listed(v, _is_int, "an integer")),
    "profile": ("profile", lambda v: _single(v, _is_str, "a string")),
    "protocol": ("protocol", lambda v: _single(v, _is_str, "a string")),
    "heads": ("heads", lambda v: _single(v, _is_str, "a string")),
    "partition": ("partition", lambda v: _single(v, _is_str, "a string")),
    "alpha": ("alpha", lambda v: float(_single(v, _is_number, "a number"))),
    "clients": ("clients", lambda v: _single(v, _is_int, "an integer")),
}
REQUIRED_GRID_KEYS = ("dataset", "defense", "seeds")

# Top-level key → reader of its TOML value (the fields of RunOptions).
RUN_KEYS: dict[str, Callable[[Any], Any]] = {
    "out": lambda v: _single(v, lambda x: _is_str(x) and x.strip() != "", "a non-empty string"),
    "data_root": lambda v: _single(v, _is_str, "a string"),
    "download": lambda v: _single(v, lambda x: isinstance(x, bool), "true or false"),
    "executor": lambda v: _single(v, lambda x: x in EXECUTORS, f"one of {', '.join(EXECUTORS)}"),
    "jobs": lambda v: _single(v, lambda x: _is_int(x) and x >= 1, "an integer >= 1"),
    "address": lambda v: _single(v, _is_str, "a string"),
    "device": lambda v: _single(v, _is_device, "auto, cpu, cuda or cuda:N"),
    "gpus_per_worker": lambda v: float(_single(v, lambda x: _is_number(x) and 0 < x <= 1, "a number in (0, 1]")),
    "tf32": lambda v: _single(v, lambda x: isinstance(x, bool), "true or false"),
    "autocast": lambda v: _single(v, lambda x: x in AUTOCAST, f"one of {', '.join(AUTOCAST)}"),
    "deterministic": lambda v: _single(v, lambda x: isinstance(x, bool), "true or false"),
    "time_budget": lambda v: float(_single(v, lambda x: _is_number(x) and x > 0, "a number of seconds > 0")),
    "threads": lambda v: _single(v, lambda x: _is_int(x) and x >= 1, "an integer >= 1"),
}
TOP_KEYS = (*RUN_KEYS, "defaults", "grid")


@dataclass(frozen=True)
class GridFile:
    """A grid file read and checked: its run options, its grids, and their cells (deduplicated by id,
    in file order)."""

    path: Path
    options: RunOptions
    grids: tuple[GridSpec, ...]
    cells: tuple[Cell, ...]


def load_grid_file(path: str | Path) -> GridFile:
    """Read and check a grid file completely: every key, every type, every grid expanded.

    Raises:
        GridError: one line, ``FILE: WHERE: PROBLEM``, on the first problem found.
    """
    path = Path(path)
    return parse_grid_file(_read_toml(path), str(path), path)


def parse_grid_file(data: dict[str, Any], name: str, path: Path | None = None) -> GridFile:
    """A grid file's parsed TOML as a :class:`GridFile` (``name`` starts every error message)."""
    _check_keys(data, TOP_KEYS, f"{name}: ")
    options = RunOptions(**{key: _read(RUN_KEYS[key], data[key], key, f"{name}: ") for key in RUN_KEYS if key in data})
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise GridError(f"{name}: 'defaults' must be a table ([defaults])")
    _check_keys(defaults, GRID_KEYS, f"{name}: [defaults]: ")
    default_values = {key: _read(GRID_KEYS[key][1], value, key, f"{name}: [defaults]: ") for key, value in defaults.items()}
    grids = data.get("grid")
    if grids is None:
        raise GridError(f"{name}: no [[grid]] table (each [[grid]] is one grid to run)")
    if not isinstance(grids, list) or not all(isinstance(g, dict) for g in grids):
        raise GridError(f"{name}: 'grid' must be an array of tables ([[grid]])")
    specs = []
    for number, grid in enumerate(grids, start=1):
        where = f"{name}: [[grid]] {number}: "
        _check_keys(grid, GRID_KEYS, where)
        own_values = {key: _read(GRID_KEYS[key][1], value, key, where) for key, value in grid.items()}
        specs.append(_spec({**default_values, **own_values}, where))
    cells = combined_cells(_expand(spec, f"{name}: [[grid]] {number}: ") for number, spec in enumerate(specs, start=1))
    return GridFile(path=path or Path(name), options=options, grids=tuple(specs), cells=tuple(cells))


def combined_cells(grids: Iterable[list[Cell]]) -> list[Cell]:
    """The cells of several grids as one grid: each cell once (by id), in order of first appearance."""
    cells: dict[str, Cell] = {}
    for grid in grids:
        for cell in grid:
            cells.setdefault(cell.id, cell)
    return list(cells.values())


def _read_toml(path: Path) -> dict[str, Any]:
    if tomllib is None:
        raise GridError(f"{path}: reading a grid file needs Python >= 3.11 (tomllib) or the tomli package")
    try:
        text = path.read_bytes().decode()
    except FileNotFoundError:
        raise GridError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GridError(f"{path}: a folder, not a grid file") from None
    except UnicodeDecodeError:
        raise GridError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise GridError(f"{path}: cannot be read ({err.strerror})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise GridError(f"{path}: not valid TOML: {' '.join(str(err).split())}") from None


def _check_keys(table: dict[str, Any], known: Iterable[str], where: str) -> None:
    known = tuple(known)
    for key in table:
        if key not in known:
            raise GridError(f"{where}unknown key '{key}' (known: {', '.join(known)})")


def _read(reader: Callable[[Any], Any], value: Any, key: str, where: str) -> Any:
    try:
        return reader(value)
    except _WrongType as err:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise GridError(f"{where}'{key}' must be {err}, got {shown}") from None


def _spec(values: dict[str, Any], where: str) -> GridSpec:
    missing = [key for key in REQUIRED_GRID_KEYS if key not in values]
    if missing:
        raise GridError(f"{where}no '{missing[0]}' (give it in this [[grid]] or in [defaults])")
    return GridSpec(**{GRID_KEYS[key][0]: value for key, value in values.items()})


def _expand(spec: GridSpec, where: str) -> list[Cell]:
    try:
        return expand(spec)
    except GridError as err:
        raise GridError(f"{where}{err}") from None
