"""The one-screen summary that opens ``results/README.md``, written from a built site's entries.

Per dataset, on its default victim, cut and setting (the board whose rows carry no context), three
rows: raw, LightSplit-F at CR 8, and the most private row among those that send about 8× fewer bytes
than raw (the site's bytes group) and faced the attacks that set the board's worst cases. Each row
shows what one sample sends (up + down), the accuracy change against raw on the same board, and the
worst case: the strongest attack seed by seed, then mean ± 95% CI over those seeds
(:mod:`bench.site.worst`), read against the prior's floor. Every number comes from the site's
entries, so the summary and the leaderboard cannot disagree.

    bench site $(git ls-files 'results/*/results.parquet' | xargs -n1 dirname | sed 's/^/--results /') --out site
    python -m bench.site.front_page --site site --readme results/README.md
"""
from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from bench.report.labels import DATASET_LABELS, metric_label
from bench.site.row_labels import LabelDefaults, board_key, context_parts

BEGIN = "<!-- front page: begin (python -m bench.site.front_page; do not edit by hand) -->"
END = "<!-- front page: end -->"
GROUP_CR = 8.0  # the bytes group the summary compares at: the paper's headline compression


def summary_boards(entries: Iterable[Mapping], defaults: LabelDefaults) -> dict[str, list[Mapping]]:
    """``{dataset: entries}``: per dataset, of its cpu-profile boards in the default setting (one
    client, U-shaped, ...; any victim and cut), the one with the most rows an attack was read on, the
    dataset's default victim and cut breaking ties; datasets in the order they first appear."""
    boards: dict[str, dict[tuple, list[Mapping]]] = {}
    for entry in entries:
        own_victim = replace(defaults, victims={**defaults.victims, entry["dataset"]: (entry["victim"], entry["cut"])})
        if entry["profile"] == "cpu" and not context_parts(entry, own_victim):
            boards.setdefault(entry["dataset"], {}).setdefault(board_key(entry), []).append(entry)

    def preference(board: list[Mapping]) -> tuple[int, bool]:
        attacked = sum(e["ranking"]["value"] is not None for e in board)
        return attacked, not context_parts(board[0], defaults)

    return {dataset: max(found.values(), key=preference) for dataset, found in boards.items()}


def _is(entry: Mapping, name: str, cr: float | None = None) -> bool:
    knobs = entry["defense"]["knobs"]
    return (entry["defense"]["name"] == name and (cr is None or knobs.get("cr") == cr)
            and not knobs.get("lambda_wcc"))


def summary_rows(board: list[Mapping]) -> list[tuple[str, Mapping]]:
    """``(role, entry)``: raw, LightSplit-F at CR 8 and the most private row of the 8× bytes group,
    among the rows whose victim learned on every seed (one at chance is private for the wrong reason)
    and that faced every attack that sets a worst case on the board (one that did not may be private
    only for want of an attack: :mod:`bench.site.coverage`); its role counts the more private rows
    left out for that."""
    rows = [("raw", e) for e in board if _is(e, "raw")][:1]
    rows += [("the paper's defense", e) for e in board if _is(e, "lightsplit-f", GROUP_CR)][:1]
    group = [e for e in board if (e.get("bytes_group") or {}).get("group_cr") == GROUP_CR and e["ranking"]["ranked"]]
    leak = lambda e: e["ranking"]["direction"] * -e["ranking"]["value"]  # noqa: E731
    faced = [e for e in group if not e["flags"].get("missing_attacks")]
    if faced:
        best = min(faced, key=leak)
        skipped = sum(leak(e) < leak(best) for e in group if e["flags"].get("missing_attacks"))
        role = f"most private at ~{GROUP_CR:g}× bytes" + (
            f" ({skipped} more private {'row' if skipped == 1 else 'rows'} did not face every winning attack)" if skipped else "")
        if all(best is not e for _, e in rows):
            rows.append((role, best))
        else:
            rows = [(f"{r}; {role}" if e is best else r, e) for r, e in rows]
    return rows


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _worst_case(entry: Mapping) -> str:
    ranking = entry["ranking"]
    if ranking["value"] is None:
        return "no attack stored"
    metric = ranking["metric"]
    stat = entry["worst_case"][metric]["stat"]
    ci = "" if stat.get("ci95") is None else f" ± {stat['ci95']:.3f}"
    flags = entry["flags"]
    marks = [*(["not above the floor"] if flags.get("not_above_floor") else []),
             *(["one seed"] if flags.get("single_seed_worst_case") else []),
             *(["CI wider than the range"] if metric in (flags.get("wide_ci") or []) else []),
             *([f"victim at chance on {len(flags['not_learned_cells'])} cells"] if flags.get("not_learned_cells") else []),
             *([f"{len(flags['missing_attacks'])} of the board's winning attacks not faced"] if flags.get("missing_attacks") else [])]
    floor = (entry.get("floor") or {}).get("metrics", {}).get(metric, {}).get("mean")
    note = f" ({'; '.join(marks)})" if marks else ""
    return (f"{metric_label(metric)} {stat['mean']:.3f}{ci} (n={stat['n']}) by {ranking['attack']}"
            f"{note}; floor {_number(floor)}")


def _utility(entry: Mapping, raw: Mapping | None) -> str:
    """Accuracy as a change against raw; a language model's best perplexity and its inflation over raw."""
    perplexity = (entry.get("perplexity") or {}).get("best", {}).get("mean")
    if perplexity is not None:
        inflation = entry["perplexity"].get("inflation", {}).get("mean")
        return f"perplexity {perplexity:.1f}" + ("" if entry is raw or inflation is None else f" (×{inflation:.2f})")
    mean = lambda e: (e.get("accuracy") or {}).get("mean")  # noqa: E731
    if raw is None or mean(raw) is None or mean(entry) is None:
        return "—"
    return f"{100 * mean(raw):.1f}% (raw)" if entry is raw else f"{100 * (mean(entry) - mean(raw)):+.1f} pp"


def claim_verdicts(folders: Iterable[Path]) -> dict[str, tuple[str, Counter]]:
    """``{dataset: (folder, verdict counts)}``: ``bench verify``'s verdicts (cpu profile, attacks at
    their default budget) in the folder that tests the most of that dataset's claims."""
    from bench.cli.report import load_results
    from bench.report.claims import NOT_TESTABLE, verify

    best: dict[str, tuple[str, Counter]] = {}
    for folder in folders:
        table = load_results(folder)
        if table.empty or "cpu" not in set(table["profile"]):
            continue
        by_dataset: dict[str, Counter] = {}
        stored = set(table["dataset"].dropna())
        for verdict in verify(table, "cpu"):
            dataset = verdict.dataset.split(" ")[0]  # "mnist" or "mnist (victim/cut)"
            if dataset in stored:  # not a claim pinned to a data set this folder does not hold
                by_dataset.setdefault(dataset, Counter())[verdict.status] += 1
        for dataset, counts in by_dataset.items():
            tested = sum(n for status, n in counts.items() if status != NOT_TESTABLE)
            if tested and tested > sum(n for s, n in best.get(dataset, ("", Counter()))[1].items() if s != NOT_TESTABLE):
                best[dataset] = (str(folder), counts)
    return best


def front_page(entries: Iterable[Mapping], defaults: LabelDefaults,
               verdicts: Mapping[str, tuple[str, Counter]] | None = None) -> str:
    """The summary's Markdown (without the markers): the table, then each dataset's claim verdicts."""
    from bench.report.claims import VERDICTS

    lines = [
        "| Data set · victim/cut | Row | Defense | bytes / sample (up + down) | utility (Δ vs raw) "
        "| worst case over attacks, seed by seed |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for dataset, board in summary_boards(entries, defaults).items():
        raw = next((e for e in board if _is(e, "raw")), None)
        where = f"{DATASET_LABELS.get(dataset, dataset)} · {board[0]['victim']}/{board[0]['cut']}"
        for role, entry in summary_rows(board):
            total = (entry.get("bytes_group") or {}).get("bytes")
            lines.append(f"| {where} | {role} | {entry['label']} | {_number(total, 0)} | {_utility(entry, raw)} "
                         f"| {_worst_case(entry)} |")
            where = ""
    if verdicts:
        lines += ["", "The paper's claims (`bench verify`, in the folder that tests the most of each data set's):", ""]
        for dataset, (folder, counts) in verdicts.items():
            text = ", ".join(f"{counts[s]} {s}" for s in VERDICTS if counts[s])
            lines.append(f"- {DATASET_LABELS.get(dataset, dataset)} (`{folder}/claims.txt`): {text}")
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between :data:`BEGIN` and :data:`END` replaced by ``block``.

    Raises:
        ValueError: when the markers are missing or out of order.
    """
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the front page's markers are missing or out of order: put {BEGIN!r} and {END!r} in the file")
    return f"{text[:start + len(BEGIN)]}\n{block}\n{text[end:]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True, help="a built site (bench site --out)")
    parser.add_argument("--readme", type=Path, required=True, help="the file whose marked block is replaced")
    args = parser.parse_args(argv)
    entries = [json.loads(p.read_text()) for p in sorted((args.site / "entries").glob("*.json"))]
    if not entries:
        raise SystemExit(f"front page: no entries in {args.site / 'entries'}; build the site first (bench site)")
    defaults = LabelDefaults.from_registries({e["dataset"] for e in entries}, {e["defense"]["name"] for e in entries})
    folders = sorted({Path(r["results"]) for e in entries for r in e["records"]})
    try:
        args.readme.write_text(replace_block(args.readme.read_text(),
                                             front_page(entries, defaults, claim_verdicts(folders))))
    except ValueError as err:
        raise SystemExit(f"front page: {args.readme}: {err}") from None


if __name__ == "__main__":
    main()
