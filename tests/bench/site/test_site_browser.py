"""The site in headless Chromium from file://: pages render without console errors, nothing is fetched
from the network, a header click sorts its column, grid images load. Screenshots go to the test's tmp folder.

Skipped, with the reason, where no Chromium-like browser is installed (Debian: ``apt-get install chromium``;
``$CHROMIUM`` names another binary).
"""
from __future__ import annotations

from pathlib import Path

from tests.bench.site.cdp import Browser
from tests.bench.site.conftest import NEEDS_BROWSER

pytestmark = NEEDS_BROWSER

COLUMN_VALUES = """Array.from(document.querySelectorAll('#{table} tbody tr'))
    .map(row => row.querySelector('td[data-key="{key}"]').getAttribute('data-sort'))"""


def click_header(browser: Browser, table: str, key: str) -> None:
    """A real mouse click (press and release) at the centre of the column's header."""
    box = browser.evaluate(f"""(() => {{ const h = document.querySelector('#{table} th[data-key="{key}"]');
        h.scrollIntoView(); const r = h.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})


def open_page(browser: Browser, page: Path, shot: Path) -> None:
    browser.events.clear()
    browser.open(page.resolve().as_uri())
    browser.evaluate("new Promise(done => requestAnimationFrame(() => done(true)))")
    browser.screenshot(shot)


def assert_clean(browser: Browser) -> None:
    assert browser.errors() == []
    assert all(url.startswith("file://") for url in browser.requested_urls()), browser.requested_urls()


def test_index_renders_and_sorts_by_a_clicked_header(browser, site, tmp_path):
    open_page(browser, site / "index.html", tmp_path / "index.png")
    assert (tmp_path / "index.png").stat().st_size > 0
    assert browser.evaluate("document.title").startswith("Split-learning cut-layer privacy leaderboard")
    table = "board-digits-smoke-mnistnet-split-2"
    assert browser.evaluate(COLUMN_VALUES.format(table=table, key="defense")) == ["Raw", "LightSplit-F (CR 8×)"]
    click_header(browser, table, "defense")
    assert browser.evaluate(COLUMN_VALUES.format(table=table, key="defense")) == ["LightSplit-F (CR 8×)", "Raw"]
    assert browser.evaluate(f"document.querySelector('#{table} th[data-key=\"defense\"]').getAttribute('aria-sort')") == "ascending"
    click_header(browser, table, "bytes_up")
    ascending = [float(v) for v in browser.evaluate(COLUMN_VALUES.format(table=table, key="bytes_up"))]
    click_header(browser, table, "bytes_up")
    descending = [float(v) for v in browser.evaluate(COLUMN_VALUES.format(table=table, key="bytes_up"))]
    assert ascending == sorted(ascending) and descending == sorted(ascending, reverse=True) and ascending != descending
    browser.screenshot(tmp_path / "index-sorted.png")
    assert_clean(browser)


def test_a_defense_page_renders_with_its_grids_and_plot_loaded(browser, site, tmp_path):
    open_page(browser, site / "defenses" / "lightsplit-f.html", tmp_path / "lightsplit-f.png")
    images = browser.evaluate("""Array.from(document.images).map(i => ({src: i.getAttribute('src'), cls: i.className,
        complete: i.complete, width: i.naturalWidth}))""")
    grids = [i for i in images if i["cls"] == "grid"]
    assert len(grids) == 4 and any(i["cls"] == "plot" for i in images)
    assert all(i["complete"] and i["width"] > 0 for i in images), images
    assert browser.evaluate("document.querySelector('h1').textContent") == "Defense: LightSplit-F"
    assert_clean(browser)


def test_an_attack_page_renders(browser, site, tmp_path):
    open_page(browser, site / "attacks" / "decoder-ref.html", tmp_path / "decoder-ref.png")
    assert browser.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)") is True
    assert browser.evaluate("document.querySelectorAll('#attack-rows tbody tr').length") == 3  # raw ×1, ×4; LightSplit-F
    assert_clean(browser)
