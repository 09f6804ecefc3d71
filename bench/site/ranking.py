"""How the leaderboard ranks its rows: per board, in groups of rows that send the same bytes.

A board is one (profile, dataset, victim, cut, setting) (:func:`bench.site.row_labels.board_key`);
rows on different victims, cuts or settings never compete. Within a board, rows are grouped by the
bytes they measurably send per sample (up + down, as the channel counted them), not by their
nominal CR: the board's uncompressed rows (no ``cr`` knob, raw's) send the reference bytes, each
row's measured CR is the reference over its own bytes, and its group is the power of two nearest
that CR on a log scale (rows within a group differ by less than a factor √2 in bytes). A row whose
group is not its nominal CR (a learned 1×1 at "CR 16×" that sends 8× fewer bytes, not 16×) is
marked. A board without an uncompressed row groups by the exact bytes. Within a group, rows are
ranked by their worst case (most private first). A row whose victim stayed at chance on some cell
is not ranked: it is private for the wrong reason (it carries nothing the task could use), so it
follows the ranked rows, by its worst case, with no rank; rows without a worst case come last.
"""
from __future__ import annotations

import math

from bench.report.labels import privacy_direction
from bench.site.row_labels import board_key, by_board

RANKING_METRICS = ("ssim", "median_r2", "reid_accuracy")


def total_bytes(entry: dict) -> float | None:
    """Bytes per sample up plus down (None unless both are measured)."""
    up, down = (entry["bytes_per_sample"][d]["mean"] for d in ("up", "down"))
    return None if up is None or down is None else float(up + down)


def bytes_groups(board: list[dict]) -> None:
    """Set each entry's ``bytes_group`` (see the module's rules) on one board's entries."""
    reference = [total_bytes(e) for e in board if "cr" not in e["defense"]["knobs"] and total_bytes(e)]
    ref = sum(reference) / len(reference) if reference else None
    for entry in board:
        total, nominal = total_bytes(entry), entry["defense"]["knobs"].get("cr")
        measured = ref / total if ref and total else None
        group = 2.0 ** round(math.log2(measured)) if measured else None
        entry["bytes_group"] = {
            "bytes": total, "reference_bytes": ref, "measured_cr": measured, "group_cr": group,
            "nominal_cr": float(nominal) if nominal is not None else None,
            "matches_nominal": None if group is None else math.isclose(group, float(nominal or 1.0)),
        }


def learned_on_every_seed(entry: dict) -> bool:
    """Whether no cell of the entry has its victim at chance (``flags.not_learned_cells`` is empty)."""
    return not entry["flags"]["not_learned_cells"]


def rank_entries(entries: list[dict]) -> None:
    """Set each entry's ``bytes_group`` and ``ranking``: per board, the worst case of the first of
    :data:`RANKING_METRICS` any of its entries has (with its privacy direction and seed count), and
    whether the entry is ranked (a worst case, and a victim that learned on every cell)."""
    for board in by_board(entries).values():
        bytes_groups(board)
        metric = next((m for m in RANKING_METRICS if any(e["worst_case"].get(m, {}).get("stat", {}).get("mean") is not None
                                                          for e in board)), None)
        for entry in board:
            worst = entry["worst_case"].get(metric) if metric else None
            value = worst["stat"]["mean"] if worst else None
            entry["ranking"] = {"metric": metric, "direction": privacy_direction(metric) if metric else 0, "value": value,
                                "attack": worst["attack"] if worst else None, "n": worst["stat"]["n"] if worst else 0,
                                "ranked": value is not None and learned_on_every_seed(entry)}


def group_of(entry: dict) -> tuple:
    """The group an entry is ranked in: its measured CR's power of two, else its exact bytes."""
    group = entry["bytes_group"]
    if group["group_cr"] is not None:
        return (0, group["group_cr"])
    return (1, -(group["bytes"] or 0.0))


def group_ranks(board: list[dict]) -> list[int | None]:
    """Each entry's rank within its bytes group (:func:`group_of`), the board's entries in ranked order
    (:func:`board_position`): the ranked ones numbered from 1 per group, ``None`` for the others."""
    counts: dict[tuple, int] = {}
    ranks: list[int | None] = []
    for entry in board:
        rank = None
        if entry["ranking"]["ranked"]:
            rank = counts[group_of(entry)] = counts.get(group_of(entry), 0) + 1
        ranks.append(rank)
    return ranks


def board_position(entry: dict) -> tuple:
    """Most bytes first (uncompressed, then by measured CR); within a group the ranked rows, most
    private worst case first, then the unranked ones with a worst case (a victim at chance), none last."""
    ranking = entry["ranking"]
    value = ranking["value"]
    leak = -ranking["direction"] * value if value is not None else 0.0
    return (tuple(str(v) for v in board_key(entry)), group_of(entry), not ranking["ranked"], value is None, leak, entry["label"])
