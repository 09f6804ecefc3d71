"""The static site: entries, pages, plots and reconstruction grids, written into one folder.

Layout (every link relative, nothing loaded from the network, so it opens from ``file://``)::

    index.html                 one leaderboard per (profile, dataset, victim, cut, setting)
    entries/<entry_id>.html    one page per entry: its row, attacks, paper values, DP, how to reproduce it, code
    defenses/<defense>.html    description, knobs, rows, Pareto plot, grids beside raw's
    attacks/<attack>.html      threat model, requirements, knobs, configuration per profile, convergence plot
    entries/<entry_id>.json    one leaderboard entry each (entry.schema.json)
    entry.schema.json          the entries' schema
    grids/<cell_id>.png        reconstruction grids copied from the results folders
    plots/                     Pareto and convergence plots
    assets/                    the stylesheet and the sorting script

The site is built in a sibling folder and moved into place at the end: a failed build leaves the
previous site as it was.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import pandas as pd

from bench.report.convergence import RELATIVE_TOLERANCE, SSIM_TOLERANCE
from bench.site.catalog import attack_info, defense_info
from bench.site.entries import build_entries, slug
from bench.site.entry_page import entry_page_values
from bench.site.markup import paper_markup, paragraphs
from bench.site.pages import (
    GridGroup,
    attack_columns,
    attack_href,
    attack_rows,
    boards,
    defense_href,
    docstring_markup,
    settings_text,
)
from bench.site.plots import convergence_plot, pareto_plot
from bench.site.records import record_files
from bench.site.row_labels import LabelDefaults, board_key, context_parts
from bench.site.schema import SCHEMA_FILE, SCHEMA_VERSION, schema_problems

SITE_MARKERS = ("index.html", "entries")  # what makes an existing folder a site this may replace
ASSETS = ("site.css", "sort.js")


class SiteOutError(ValueError):
    """An output folder that is not a site and not empty (one-line message)."""


def check_out(out: Path) -> None:
    """Refuse an output folder that holds anything but a site built here.

    Raises:
        SiteOutError: ``out`` is a file, or a non-empty folder without ``index.html`` and ``entries/``.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SiteOutError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not all((out / m).exists() for m in SITE_MARKERS):
        raise SiteOutError(f"{out} is not empty and holds no site (index.html and entries/); choose another --out")


def build_site(*, table: pd.DataFrame, sources: dict[str, str], out: Path) -> list[dict]:
    """Write the site of ``table`` into ``out`` (replacing a site there) and return its entries.

    Args:
        table: the tidy table of every results folder (one row per cell and metric).
        sources: the results folder (as given) each cell of ``table`` was read from.
        out: the site's folder.

    Raises:
        SiteOutError: see :func:`check_out`.
        bench.site.records.MissingRecordError: a cell's record file is missing.
    """
    out = Path(out)
    check_out(out)
    label_defaults = LabelDefaults.from_registries(table["dataset"].dropna().unique(), table["defense"].dropna().unique())
    entries = build_entries(table, records=record_files(sources), label_defaults=label_defaults)
    folders = list(dict.fromkeys(sources.values()))
    first_folder: dict[tuple, int] = {}
    for entry in entries:
        board = board_key(entry)
        first_folder[board] = min([first_folder.get(board, len(folders)), *(folders.index(r["results"]) for r in entry["records"])])
    # A dataset's boards together, in the order their folders were given; the fewest parts off the defaults first.
    dataset_first: dict[tuple, int] = {}
    for board, index in first_folder.items():
        dataset_first[board[:2]] = min(dataset_first.get(board[:2], index), index)
    entries.sort(key=lambda e: (dataset_first[board_key(e)[:2]], len(context_parts(e, label_defaults)), first_folder[board_key(e)]))
    for entry in entries:
        problems = schema_problems(entry)
        if problems:  # the builder's own bug, never the input's
            raise AssertionError(f"entry {entry['entry_id']} breaks the schema: {problems[0]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.building-"))
    try:
        _write(staging, entries=entries, table=table, sources=sources)
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return entries


def _write(site: Path, *, entries: list[dict], table: pd.DataFrame, sources: dict[str, str]) -> None:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("bench.site", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["docstring"] = docstring_markup
    env.filters["paragraphs"] = paragraphs
    env.filters["paper"] = paper_markup
    env.filters["slug"] = slug
    package = resources.files("bench.site")
    (site / "entries").mkdir()
    for entry in entries:
        (site / "entries" / f"{entry['entry_id']}.json").write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n")
    (site / SCHEMA_FILE).write_text(package.joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    (site / "assets").mkdir()
    for name in ASSETS:
        (site / "assets" / name).write_text(package.joinpath("static", name).read_text(encoding="utf-8"))
    profiles = sorted({e["profile"] for e in entries})
    defenses = sorted({e["defense"]["name"] for e in entries})
    attacks = sorted({a["attack"] for e in entries for a in e["attacks"]})
    recorded_headlines = {a["attack"]: a["headline_metric"] for e in entries for a in e["attacks"]}
    attack_infos = {a: attack_info(a, profiles=profiles, recorded_headline=recorded_headlines[a]) for a in attacks}
    defaults = {a: info.defaults for a, info in attack_infos.items()}
    all_boards = boards(entries, defaults=defaults)
    common = {"schema_version": SCHEMA_VERSION}

    def render(template: str, path: Path, **values) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(env.get_template(template).render(**common, **values))

    raw_of = dict(table.drop_duplicates("cell_id")[["cell_id", "raw_cell_id"]].itertuples(index=False))
    defense_links = []
    for name in defenses:
        info = defense_info(name)
        defense_links.append({"name": name, "label": info.label, "href": defense_href(name),
                              "links": list(dict.fromkeys(link for _, d in info.parts for link in d.links)),
                              "venues": list(dict.fromkeys(v for _, d in info.parts for v in d.venues))})
        mine = [(b, [r for r, e in zip(b.rows, b.entries) if e["defense"]["name"] == name]) for b in all_boards]
        mine = [(b, rows) for b, rows in mine if rows]
        pareto = []
        for board, _ in mine:
            path = pareto_plot(board.entries, defense=name, path=site / "plots" / f"pareto-{board.id}-{slug(name)}.png")
            if path:
                pareto.append({"href": path.relative_to(site).as_posix(), "alt": f"{info.label} on the {board.title} Pareto plot"})
        grids = _grid_groups([e for e in entries if e["defense"]["name"] == name], site=site, sources=sources, raw_of=raw_of,
                            defaults=defaults)
        render("defense.html.j2", site / defense_href(name), root="../", title=f"Defense: {info.label}", info=info,
               boards=mine, pareto=pareto, grids=grids)
    attack_links = []
    for name in attacks:
        info = attack_infos[name]
        attack_links.append({"name": name, "label": info.label, "href": attack_href(name), "threat_model": info.threat_model,
                             "links": info.described.links, "venues": info.described.venues})
        plot = convergence_plot(entries, attack=name, metric=info.headline_metric, path=site / "plots" / f"convergence-{slug(name)}.png")
        budgets = sorted({float(a["settings"].get("budget", 1.0)) for e in entries for a in e["attacks"] if a["attack"] == name})
        tolerance = f"{SSIM_TOLERANCE:g} SSIM" if info.headline_metric == "ssim" else \
            f"{RELATIVE_TOLERANCE:.0%} of its {info.headline_metric}"
        render("attack.html.j2", site / attack_href(name), root="../", title=f"Attack: {info.label}", info=info,
               budgets=[f"×{b:g}" for b in budgets], convergence=plot.relative_to(site).as_posix() if plot else None,
               tolerance_text=tolerance, columns=attack_columns(info.headline_metric),
               rows=attack_rows(entries, name, defaults=info.defaults))
    for board in all_boards:
        for entry, row in zip(board.entries, board.rows):
            render("entry.html.j2", site / "entries" / f"{entry['entry_id']}.html", root="../", title=f"Entry: {entry['label']}",
                   **entry_page_values(entry, board=board, row=row, defaults=defaults))
    render("index.html.j2", site / "index.html", root="", title="Split-learning cut-layer privacy leaderboard",
           boards=all_boards, defenses=defense_links, attacks=attack_links,
           sources=sorted(set(sources.values())), n_entries=len(entries))


def _grid_groups(entries: list[dict], *, site: Path, sources: dict[str, str], raw_of: dict[str, str],
                 defaults: dict[str, dict]) -> list[GridGroup]:
    """Per (dataset, attack, settings): each entry's lowest-seed grid, raw's of the same attack,
    settings and seed first, copied into the site."""

    def copied(cell_id: str | None) -> str | None:
        if not cell_id or cell_id not in sources:
            return None
        grid = Path(sources[cell_id]) / "grids" / f"{cell_id}.png"
        if not grid.is_file():
            return None
        (site / "grids").mkdir(exist_ok=True)
        shutil.copyfile(grid, site / "grids" / grid.name)
        return f"grids/{grid.name}"

    groups: dict[tuple, GridGroup] = {}
    for entry in entries:
        seeds = {r["cell_id"]: r["seed"] for r in entry["records"]}
        for item in entry["attacks"]:
            for cell_id in sorted(item["cells"], key=lambda c: (seeds.get(c, 0), c)):
                image = copied(cell_id)
                if not image:
                    continue
                settings = settings_text(item["settings"], defaults.get(item["attack"]))
                group = groups.setdefault((entry["dataset"], item["attack"], settings),
                                          GridGroup(attack=item["attack"], settings=settings, dataset=entry["dataset"]))
                raw = raw_of.get(cell_id)
                raw_image = copied(raw) if raw != cell_id else None
                if raw_image and all(raw_image != image_ for _, image_ in group.figures):
                    group.figures.insert(0, (f"Raw, seed {seeds[cell_id]}", raw_image))
                group.figures.append((f"{entry['label']}, seed {seeds[cell_id]}", image))
                break
    return list(groups.values())
