"""Print a built site's boards at one CR as markdown tables: accuracy, bytes and worst case.

The site's entries (``entries/*.json``, schema ``entry.schema.json``) hold everything a leaderboard
row shows; this reads them back, so a paper or a note can quote a board without opening a browser::

    bench site --results results/issue41-mnist --results results/issue39-mnist-table3 --out /tmp/site
    python examples/board_table.py /tmp/site --dataset mnist --cr 8

One table per board (profile, dataset, victim, cut and setting: rows on different boards never
compete) that has rows in the group at ``--cr`` (measured bytes, so a defense a few bytes off its
nominal CR stays in it). Rows come in the board's order (:func:`bench.site.ranking.board_position`):
raw first, then the group, ranked rows most private first, then the unranked ones (a victim at
chance on some cell, or no worst case). A rank marked * is that of a row that did not face every
attack which sets a worst case on its board (``flags.missing_attacks``): a lower bound on its leakage.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.site.ranking import board_position, group_ranks
from bench.site.row_labels import board_title, by_board


def _stat(stat: dict | None) -> str:
    """``mean ± 95% CI`` over seeds (the CI only where there are several)."""
    if not stat or stat.get("mean") is None:
        return "–"
    ci = f" ± {stat['ci95']:.3f}" if stat.get("ci95") is not None else ""
    return f"{stat['mean']:.3f}{ci}"


def board_rows(site: Path, *, dataset: str, profile: str, cr: float, metric: str = "ssim") -> list[str]:
    """The markdown lines of each ``dataset`` board at ``profile`` with rows at ``cr``: a title, then
    raw and the ``cr`` group in the board's order."""
    entries = [json.loads(path.read_text()) for path in sorted((site / "entries").glob("*.json"))]
    wanted = sorted((e for e in entries if e["dataset"] == dataset and e["profile"] == profile), key=board_position)
    lines: list[str] = []
    for board in by_board(wanted).values():
        shown = [(entry, rank) for entry, rank in zip(board, group_ranks(board))
                 if entry["defense"]["name"] == "raw" or entry["bytes_group"]["group_cr"] == cr]
        if any(entry["defense"]["name"] != "raw" for entry, _ in shown):
            lines += _table(board_title(board[0]), shown, metric)
    if not lines:
        raise SystemExit(f"board_table: no {dataset} entries at profile {profile} and CR {cr:g} in {site}/entries")
    return lines


def _table(title: str, rows: list[tuple[dict, int | None]], metric: str) -> list[str]:
    """``rows``: each entry with its rank in its bytes group (:func:`bench.site.ranking.group_ranks`)."""
    lines = [f"**{title}**", "",
             f"| defense | accuracy | bytes up / sample | worst-case {metric.upper()} | attack | seeds | rank |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for entry, rank in rows:
        worst = entry["worst_case"].get(metric) or {}
        is_raw = entry["defense"]["name"] == "raw"
        rank_text = "–" if is_raw else f"{rank}" if rank else "unranked"
        if entry["flags"]["missing_attacks"]:
            rank_text += "*"
        lines.append(f"| {entry['label']} | {_stat(entry['accuracy'])} | {entry['bytes_per_sample']['up']['mean']:.0f} | "
                     f"{_stat(worst.get('stat'))} | {worst.get('attack') or '–'} | {len(entry['seeds'])} | "
                     f"{rank_text} |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a folder bench site wrote")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--cr", type=float, default=8.0, help="the measured-CR group to print beside raw")
    parser.add_argument("--metric", default="ssim", help="the worst case's metric")
    args = parser.parse_args()
    print("\n".join(board_rows(args.site, dataset=args.dataset, profile=args.profile, cr=args.cr, metric=args.metric)))


if __name__ == "__main__":
    main()
