"""What the SDAR diagnostic scripts share: read stored SDAR cells, and rerun one with a replaced SDAR.

Used by ``sdar_attacker_seed.py``, ``sdar_channel_match.py``, ``sdar_simulator_init.py``,
``sdar_target_mode.py`` and ``sdar_weights.py`` (run as
``python benchmarks/<script>.py``, which puts this folder on the import path). Nothing is stored: a
rerun keeps the stored cell's id, so it must not land in the stored folder.
"""
from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import bench.run.attack_cell as attack_cell
from attacks.sdar import SDAR
from bench.run.cell import Cell

RERUN_METRICS = ("accuracy", "ssim", "mse", "diverged", "sdar_e_dis_loss_window", "sdar_label_acc", "sdar_decoder_mse",
                 "sdar_payload_mmd", "sdar_payload_mmd_floor", "sdar_image_mmd")
"""What a rerun of a stored SDAR cell prints: its victim, its reconstructions and SDAR's own diagnostics."""


def stored_cells_parser(doc: str, cells_help: str = "comma list of stored SDAR cell ids") -> argparse.ArgumentParser:
    """A script's argument parser, described by ``doc``'s first line, with ``--results`` and ``--cells``."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--cells", required=True, help=cells_help)
    return parser


def stored_sdar_cells(results: Path, cell_ids: str, *, defense: str | None = None) -> Iterator[tuple[dict, Cell]]:
    """Each stored SDAR cell of the comma list ``cell_ids`` under ``results``: its record and its cell.

    Raises:
        SystemExit: one line, for an id that is not a stored SDAR cell (on ``defense`` when given).
    """
    for cell_id in cell_ids.split(","):
        stored = json.loads((results / "cells" / f"{cell_id}.json").read_text())
        cell = Cell.from_dict(stored["cell"])
        if cell.id != cell_id or cell.attack != "sdar" or defense not in (None, cell.defense):
            raise SystemExit(f"{cell_id}: not a stored SDAR cell{f' on {defense}' if defense else ''} "
                             f"(id {cell.id}, attack {cell.attack}, defense {cell.defense})")
        yield stored, cell


@contextlib.contextmanager
def sdar_replaced_by(replacement: type[SDAR]) -> Iterator[None]:
    """The cell runner builds ``replacement`` wherever a cell names ``sdar``."""
    registry_get = attack_cell.ATTACKS.get
    with mock.patch.object(attack_cell.ATTACKS, "get", lambda name: replacement if name == "sdar" else registry_get(name)):
        yield
