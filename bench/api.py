"""A Python API for notebooks: run a grid, load stored results, render a paper table, draw a figure.

Everything goes through the machinery of the ``bench`` commands: :func:`run` stores exactly what
``bench run`` stores (and, like it, skips the cells already stored), :func:`load` reads what
``bench report`` reads, :func:`table` and :func:`figure` render what ``bench report`` and
``bench figures`` render. Bad input raises :class:`ValueError` (:class:`bench.errors.GridError` for a
bad grid) with a one-line message, before anything is written.

Example:
    >>> from bench import api
    >>> grid = {"dataset": "digits", "defense": ["raw", "lightsplit-f"], "seeds": [0], "profile": "smoke",
    ...         "knobs": {"cr": 8}}
    >>> df = api.run(grid, out="results/notebook")
    >>> print(api.table(df, "II"))
    >>> fig = api.figure(df, "pareto")
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from bench.run.cell import Cell
    from bench.run.grid import GridSpec

PathLike = str | os.PathLike
FIGURES = ("pareto",)


def run(grid: GridSpec | Mapping[str, Any], *, out: PathLike, data_root: PathLike | None = None, jobs: int = 1,
        download: bool = True, lpips_weights: PathLike | None = None, quiet: bool = True, device: str = "auto") -> pd.DataFrame:
    """Run every cell of ``grid`` not yet stored in ``out``, as ``bench run`` does; return its rows.

    Args:
        grid: A :class:`bench.run.grid.GridSpec`, or a dict with the keys of a grid file's
            ``[[grid]]`` table (:mod:`bench.run.grid_file`): ``dataset``, ``defense`` and ``seeds``,
            and optionally ``attack``, ``knobs``, ``profile``, ``victim``, ``cut``, ``lambda_wcc``,
            ``protocol``, ``heads``, ``partition``, ``alpha``, ``clients``. A list key also takes a
            single value; ``dataset`` may be ``"auto"`` or a comma list, as ``--dataset``.
        out: The results folder (created if needed; a second run on it only reads what is stored).
        data_root: The data folder (default: ``$BENCH_DATA_ROOT``, else the cache folder).
        jobs: Local worker processes.
        download: Download missing data when a network exists.
        lpips_weights: A torchvision AlexNet state dict for LPIPS, as ``--lpips-weights``.
        quiet: No progress bar.
        device: ``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``, as ``--device``.

    Returns:
        The tidy table (one row per cell and metric) of the grid's cells, stored ones included. A
        failed cell has a row with ``status == "failed"`` and its traceback in ``error`` (and a warning).

    Raises:
        GridError: an invalid grid, missing data, or ``out`` in use by another run.
        ValueError: ``lpips_weights`` is not a torchvision AlexNet state dict file.

    Example:
        >>> df = api.run({"dataset": "digits", "defense": "raw", "seeds": [0, 1], "profile": "smoke"},
        ...              out="results/notebook")
        >>> df.pivot_table(index="seed", columns="metric", values="value")["accuracy"]
    """
    from bench.cli.common import execute_grid, make_executor

    cells, root = _cells(grid, data_root)
    weights = _checked_weights(lpips_weights)
    with ExitStack() as resources:  # holds the folder's lock until the grid has run
        summary, _ = execute_grid(cells, root, Path(out), download=download, quiet=quiet, resources=resources,
                                  executor=make_executor("local", jobs, None, device=device), lpips_weights=weights,
                                  device=device)
    if summary.failed:
        warnings.warn(f"{len(summary.failed)} of {len(cells)} cells failed; their tracebacks are in the 'error' column",
                      stacklevel=2)
    rows = load(out)
    return rows[rows["cell_id"].isin({cell.id for cell in cells})].reset_index(drop=True)


def load(results_dir: PathLike) -> pd.DataFrame:
    """The tidy table stored in a results folder: the table ``bench report --results`` reads.

    Raises:
        FileNotFoundError: the folder holds no stored results.

    Example:
        >>> df = api.load("results/issue6-reproduction")
        >>> sorted(df["attack"].unique())
    """
    import click

    from bench.cli.report import load_results

    try:
        return load_results(Path(results_dir))
    except click.BadParameter as err:
        raise FileNotFoundError(err.message) from None


def table(df: pd.DataFrame, name: str, *, fmt: str = "markdown", profile: str | None = None) -> str:
    """One of the paper's tables, built from ``df`` as ``bench report --table NAME`` builds it.

    Args:
        df: A tidy table (:func:`run`, :func:`load`, or several concatenated).
        name: The paper's numeral, e.g. ``"II"`` (see :data:`bench.report.tables.TABLES`).
        fmt: ``markdown``, ``latex`` or ``csv``.
        profile: The profile to show when ``df`` holds several.

    Example:
        >>> print(api.table(df, "II", fmt="markdown"))
    """
    from bench.report.aggregate import select_profile
    from bench.report.render import RENDERERS
    from bench.report.tables import TABLES, build_table

    spec = {key.lower(): spec for key, spec in TABLES.items()}.get(name.lower())
    if spec is None:
        raise ValueError(f"unknown table '{name}' (choose from {', '.join(TABLES)})")
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format '{fmt}' (choose from {', '.join(RENDERERS)})")
    rows = select_profile(df.drop_duplicates(["cell_id", "metric"]), profile)
    return RENDERERS[fmt](build_table(rows, spec, profile))


def figure(df: pd.DataFrame, name: str = "pareto", *, path: PathLike | None = None, attack: str | None = None,
           metric: str = "ssim", profile: str | None = None) -> Figure:
    """One of ``bench figures``' figures as a matplotlib Figure (saved to ``path`` too, if given).

    Args:
        df: A tidy table (:func:`run`, :func:`load`).
        name: ``pareto``: accuracy against bytes up per sample, coloured by an attack's ``metric``
            (:func:`bench.report.figures.draw_pareto`).
        path: A file to save the figure to (its suffix names the format: ``.png``, ``.pdf``, ...).
        attack: The attack whose ``metric`` colours the points (default: the strongest stored).
        metric: The privacy metric.
        profile: The profile to plot when ``df`` holds several.

    Raises:
        ValueError: an unknown figure, or ``df`` holds nothing it can draw.

    Example:
        >>> fig = api.figure(df, "pareto", path="pareto.pdf")
    """
    from bench.report.figures import draw_pareto, save_figure

    if name not in FIGURES:
        raise ValueError(f"unknown figure '{name}' (choose from {', '.join(FIGURES)})")
    skipped: list[str] = []
    fig = draw_pareto(df, attack=attack, metric=metric, profile=profile, on_skip=skipped.append)
    if fig is None:
        raise ValueError(skipped[-1])
    for message in skipped:
        warnings.warn(message, stacklevel=2)
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        save_figure(fig, path)
    return fig


def _cells(grid: GridSpec | Mapping[str, Any], data_root: PathLike | None) -> tuple[list[Cell], Path]:
    """The grid's cells (every choice checked) and the data root, datasets resolved as ``--dataset``."""
    from bench.data.autodetect import resolve_datasets
    from bench.data.root import resolve_data_root
    from bench.run.grid import GridSpec, expand
    from bench.run.grid_file import parse_grid_file

    root_option = None if data_root is None else str(data_root)
    if isinstance(grid, GridSpec):
        root, datasets = resolve_datasets(",".join(grid.datasets), root_option)
        return expand(replace(grid, datasets=datasets)), root
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid must be a GridSpec or a dict, not {type(grid).__name__}")
    values = {key: _plain(value) for key, value in grid.items()}
    names = [values["dataset"]] if isinstance(values.get("dataset"), str) else values.get("dataset")
    root = resolve_data_root(root_option)
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        root, datasets = resolve_datasets(",".join(names), root_option)
        values["dataset"] = list(datasets)
    return list(parse_grid_file({"grid": [values]}, "grid").cells), root


def _plain(value: Any) -> Any:
    """Tuples as lists, the types a grid file's TOML gives."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {key: _plain(v) for key, v in value.items()}
    return value


def _checked_weights(path: PathLike | None) -> Path | None:
    if path is None:
        return None
    from bench.metrics.lpips_weights import read_trunk

    read_trunk(path)
    return Path(path).resolve()
