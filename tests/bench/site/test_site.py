"""``bench site``: every page, only relative links to files inside the site, templates shipped as
package data, and bad input refused before anything is written."""
from __future__ import annotations

import fnmatch
import json
import re
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from bench.site.entries import slug
from bench.site.schema import schema_problems
from tests.bench.cli.runner import run_cli

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "bench" / "site"


OUTBOUND = ("https://arxiv.org/abs/",)  # the only links that leave the site: a paper's abstract, followed on a click


class Links(HTMLParser):
    """Every href and src of a page (a link to a paper's abstract apart), the papers it links, and the script sources."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.papers: list[str] = []
        self.scripts: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and (values.get("href") or "").startswith(OUTBOUND):
            self.papers.append(values["href"])
            return
        self.urls += [v for k, v in attrs if k in ("href", "src", "srcset", "action", "poster", "data") and v is not None]
        if tag == "script":
            self.scripts.append(values.get("src"))


def links(page: Path) -> Links:
    parser = Links()
    parser.feed(page.read_text())
    return parser


def test_every_page_is_written(site, grid):
    entries = sorted((site / "entries").glob("*.json"))
    assert len(entries) == 2 and all(schema_problems(json.loads(e.read_text())) == [] for e in entries)
    assert {p.name for p in (site / "defenses").iterdir()} == {"raw.html", "lightsplit-f.html"}
    assert {p.name for p in (site / "attacks").iterdir()} == {"decoder-ref.html", "prior.html"}
    assert (site / "index.html").is_file() and (site / "entry.schema.json").is_file()
    assert {p.name for p in (site / "assets").iterdir()} == {"site.css", "sort.js"}
    assert (site / "plots" / "convergence-decoder-ref.png").is_file()  # raw's decoder at budgets 1 and 4
    assert not (site / "plots" / "convergence-prior.png").exists()
    assert {p.name for p in (site / "plots").glob("pareto-*.png")} == {"pareto-digits-smoke-mnistnet-split-2-raw.png",
                                                                       "pareto-digits-smoke-mnistnet-split-2-lightsplit-f.png"}
    assert all((grid / "grids" / p.name).read_bytes() == p.read_bytes() for p in (site / "grids").iterdir())


def test_links_are_relative_and_resolve_inside_the_site(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 7  # index, 2 defenses, 2 attacks, 2 entries
    for page in pages:
        found = links(page)
        assert found.scripts == ["../assets/sort.js" if page.parent != site else "assets/sort.js"]  # no inline or remote script
        for url in found.urls:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc and not url.startswith("/"), (page, url)
            if parts.path:
                target = (page.parent / unquote(parts.path)).resolve()
                assert target.is_file() and site.resolve() in target.parents, (page, url)
    text = "\n".join(p.read_text() for p in [*pages, *(site / "assets").iterdir()])
    for outbound in OUTBOUND:
        text = re.sub(rf'<a class="paper" href="{re.escape(outbound)}[0-9.]+">', "", text)
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.IGNORECASE)  # nothing fetched from a host
    assert "url(" not in (site / "assets" / "site.css").read_text()


def test_the_index_ranks_by_worst_case_within_each_bytes_group(site):
    index = (site / "index.html").read_text()
    assert "digits · mnistnet/split-2 (smoke profile): ranked by worst-case SSIM ↓" in index
    rows = re.findall(r'<td data-key="defense" data-sort="([^"]+)"', index)
    assert rows == ["Raw", "LightSplit-F (CR 8×)"]  # uncompressed first, then 8× fewer bytes
    for entry in (site / "entries").glob("*.json"):
        assert f'href="entries/{entry.stem}.html"' in index
        assert f'href="{entry.name}"' in (site / "entries" / f"{entry.stem}.html").read_text()
    headers = re.findall(r'<th data-key="(\w+)" data-type="(num|text)">', index)
    assert headers[:4] == [("rank", "num"), ("defense", "text"), ("cr", "num"), ("accuracy", "num")]
    assert "perplexity" not in index  # an image board keeps its accuracy column


def test_a_language_model_board_shows_perplexity_in_accuracys_place(capsys, tmp_path):
    out = tmp_path / "site"
    code, _, err = run_cli(capsys, ["site", "--results", str(REPO / "results" / "issue15-wikitext2"), "--out", str(out)])
    assert code == 0, err
    index = (out / "index.html").read_text()
    headers = [key for key, _ in re.findall(r'<th data-key="(\w+)" data-type="(num|text)">', index)]
    assert "perplexity" in headers and "accuracy" not in headers
    raw = json.loads(next((out / "entries").glob("wikitext-2-cpu-raw-*.json")).read_text())
    best = raw["perplexity"]["best"]
    shown = f'{best["mean"]:.1f} ± {best["ci95"]:.1f} (×1.000)'
    assert f'data-sort="{best["mean"]!r}">{shown}' in index


def test_a_defense_page_shows_its_description_rows_plot_and_grids_beside_raws(site):
    page = (site / "defenses" / "lightsplit-f.html").read_text()
    assert 'Paper</dt><dd>LightSplit (<a class="paper" href="https://arxiv.org/abs/2605.13265">arXiv:2605.13265</a>)' in page
    assert "<code>cr</code>" in page
    assert page.count('data-key="defense" data-sort="LightSplit-F (CR 8×)"') == 1
    assert '<img class="plot" src="../plots/pareto-digits-smoke-mnistnet-split-2-lightsplit-f.png"' in page
    grids = re.findall(r'<img class="grid" src="\.\./grids/(\w+)\.png" alt="([^"]+)"', page)
    assert [alt for _, alt in grids] == ["decoder-ref: Raw, seed 0", "decoder-ref: LightSplit-F (CR 8×), seed 0",
                                         "prior: Raw, seed 0", "prior: LightSplit-F (CR 8×), seed 0"]


def test_an_attack_page_shows_threat_model_requirements_knobs_and_convergence(site):
    page = (site / "attacks" / "decoder-ref.html").read_text()
    assert "<dt>Threat model (contract)</dt><dd>passive</dd>" in page
    assert "<code>member_inputs</code>" in page and "<code>budget</code>" in page and "<code>precision</code>" in page
    assert "Budgets stored</dt><dd>×1, ×4" in page
    assert 'src="../plots/convergence-decoder-ref.png"' in page
    assert "convergence is not known" in (site / "attacks" / "prior.html").read_text()


def test_templates_and_assets_are_package_data():
    shipped = resources.files("bench.site")
    assert shipped.joinpath("entry.schema.json").is_file()
    for name in ("base", "index", "defense", "attack", "table", "described"):
        assert shipped.joinpath("templates", f"{name}.html.j2").is_file()
    pyproject = (REPO / "pyproject.toml").read_text()  # tomllib is 3.11+; the line is simple enough to read
    patterns = json.loads(re.search(r'^"bench\.site" = (\[.*\])$', pyproject, re.MULTILINE).group(1))
    data_files = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert data_files and all(any(fnmatch.fnmatch(f, pattern) for pattern in patterns) for f in data_files), data_files
    assert '"jinja2>=' in pyproject and '"jsonschema>=' in pyproject


def test_slugs_are_safe_file_names():
    assert slug("lightsplit-f+dp") == "lightsplit-f-plus-dp"
    assert "/" not in slug("../../etc/passwd") and slug("../x") == "x"
    assert re.fullmatch(r"[a-z0-9.-]+", slug("ÄÖ weird_name!"))


def test_a_site_is_replaced_by_a_new_build(capsys, grid, tmp_path):
    out = tmp_path / "site"
    for _ in range(2):
        code, stdout, err = run_cli(capsys, ["site", "--results", str(grid), "--out", str(out)])
        assert code == 0, err
    assert stdout.startswith(f"wrote {out}/index.html: 1 leaderboards, 2 entries in {out}/entries")
    assert not list(tmp_path.glob(".site.building-*"))


@pytest.mark.parametrize("case", ["no records", "unknown folder", "not a site"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, grid, tmp_path, case):
    out = tmp_path / "out"
    results = str(grid)
    if case == "no records":
        (tmp_path / "empty" / "cells").mkdir(parents=True)
        results = str(tmp_path / "empty")
    elif case == "unknown folder":
        results = str(tmp_path / "nowhere")
    else:
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, stdout, err = run_cli(capsys, ["site", "--results", results, "--out", str(out)])
    assert code == 2 and stdout == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
