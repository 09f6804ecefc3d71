"""The leaderboard of every committed results folder in headless Chromium, at a desktop width (1,400 px)
and a phone's (390 px, mobile emulation): no page scrolls sideways (a wide board scrolls inside its own
box, its Defense column pinned), no two rows of a rendered board share a label, and a click on a row's
entry link opens a page that shows the ``bench run`` command that remakes it.

Built from the folders git tracks as ``bench site`` builds it (the ``committed_site`` fixture, about 25
CPU-s). Screenshots of the index and of the defense page with the widest board, at both widths, go to
the test's tmp folder (printed; ``pytest -s``).
Skipped, with the reason, where no Chromium-like browser is installed (Debian: ``apt-get install
chromium``; ``$CHROMIUM`` names another binary) or where no results folder is committed.
"""
from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.bench.site.cdp import Browser
from tests.bench.site.conftest import NEEDS_BROWSER

# The committed site's xdist group: the site (the ``committed_site`` fixture, shared with the boards tests) and
# the browser are built on one worker, not on each.
pytestmark = [NEEDS_BROWSER, pytest.mark.xdist_group("committed-site")]
WIDTHS = (1400, 390)

PAGE_WIDTH = "({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"
BOARD_WIDTHS = """Array.from(document.querySelectorAll('table.sortable[id^="board-"]'))
    .map(t => [t.id, t.scrollWidth]).sort((a, b) => b[1] - a[1])"""


@pytest.fixture(scope="module")
def committed_pages(committed_site) -> Path:
    return committed_site.folder


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots in {folder}")
    return folder


def at_width(browser: Browser, width: int) -> None:
    """The viewport ``width`` px wide; below 600 px as a phone (mobile emulation: a page wider than the
    screen would make the phone zoom out, so ``innerWidth`` would grow past ``width``)."""
    browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                        "mobile": width < 600})


def show(browser: Browser, page: Path) -> None:
    browser.events.clear()
    browser.open(page.resolve().as_uri())
    browser.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")


def assert_no_sideways_scroll(browser: Browser, width: int, page: str) -> None:
    measured = browser.evaluate(PAGE_WIDTH)
    assert measured["inner"] == width and measured["scroll"] <= measured["inner"], (page, width, measured)


def viewport_shot(browser: Browser, path: Path) -> None:
    """What the screen shows now (not the whole page)."""
    path.write_bytes(base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png"})["data"]))


def widest_board(browser: Browser, site: Path) -> str:
    at_width(browser, WIDTHS[0])
    show(browser, site / "index.html")
    return browser.evaluate(BOARD_WIDTHS)[0][0].removeprefix("board-")


def test_no_page_scrolls_sideways_at_desktop_and_phone_widths(browser, committed_pages, shots):
    """The index, every defense and attack page and each board's first entry page."""
    widest = widest_board(browser, committed_pages)
    defense_pages = sorted((committed_pages / "defenses").glob("*.html"))
    attack_pages = sorted((committed_pages / "attacks").glob("*.html"))
    assert defense_pages and attack_pages
    # the defense page that holds the widest board: the first defense on it
    show(browser, committed_pages / "index.html")
    first_defense = browser.evaluate(f"""document.querySelector('#board-{widest} td[data-key="defense"] a')?.getAttribute('href')
        || document.querySelector('#board-{widest} td[data-key="defense"]').textContent""")
    # each board's first row's page, where rows link to pages (the Entry column)
    entry_pages = [committed_pages / href for href in browser.evaluate("""Array.from(document.querySelectorAll(
        'table.sortable[id^="board-"] tbody tr:first-child td[data-key="entry"] a')).map(a => a.getAttribute('href'))
        .filter(h => h.split('#')[0].endsWith('.html')).map(h => h.split('#')[0])""")]
    for width in WIDTHS:
        at_width(browser, width)
        for page in [committed_pages / "index.html", *defense_pages, *attack_pages, *entry_pages]:
            show(browser, page)
            assert_no_sideways_scroll(browser, width, str(page.relative_to(committed_pages)))
            assert browser.errors() == [], page
        show(browser, committed_pages / "index.html")
        browser.screenshot(shots / f"index-{width}.png")
        browser.evaluate(f"document.getElementById('{widest}').scrollIntoView()")
        viewport_shot(browser, shots / f"index-widest-board-{width}.png")
        if first_defense and first_defense.endswith(".html"):
            show(browser, committed_pages / first_defense)
            browser.screenshot(shots / f"defense-{Path(first_defense).stem}-{width}.png")


def test_the_widest_board_scrolls_in_its_box_with_the_defense_column_pinned(browser, committed_pages):
    widest = widest_board(browser, committed_pages)
    for width in WIDTHS:
        at_width(browser, width)
        show(browser, committed_pages / "index.html")
        box = browser.evaluate(f"""(() => {{ const table = document.getElementById('board-{widest}');
            const box = table.parentElement; box.scrollIntoView();
            const before = table.querySelector('tbody td[data-key="defense"]').getBoundingClientRect().left;
            box.scrollLeft = box.scrollWidth;
            const cell = table.querySelector('tbody td[data-key="defense"]').getBoundingClientRect();
            const entry = table.querySelector('thead th[data-key="entry"]').getBoundingClientRect();
            const frame = box.getBoundingClientRect();
            return {{cls: box.className, overflow: getComputedStyle(box).overflowX, frameLeft: frame.left,
                     frameRight: frame.right, before, after: cell.left, entryRight: entry.right,
                     scrolled: box.scrollLeft, inner: window.innerWidth}}; }})()""")
        assert box["cls"] == "table-scroll" and box["overflow"] == "auto", box
        assert box["frameRight"] <= box["inner"], box  # the box itself fits the page
        assert box["entryRight"] <= box["frameRight"] + 1, box  # the Entry column is on screen
        if box["scrolled"] > 0:  # scrolled sideways, the row's label stays at the box's left edge
            assert abs(box["after"] - box["frameLeft"]) <= 2, box


def test_no_two_rows_of_a_rendered_board_share_a_label(browser, committed_pages):
    at_width(browser, WIDTHS[0])
    show(browser, committed_pages / "index.html")
    labels = browser.evaluate("""Object.fromEntries(Array.from(document.querySelectorAll('table.sortable[id^="board-"]'))
        .map(t => [t.id, Array.from(t.querySelectorAll('tbody td[data-key="defense"]')).map(c => c.textContent.trim())]))""")
    assert len(labels) >= 5
    shared = {board: sorted({x for x in rows if rows.count(x) > 1}) for board, rows in labels.items()}
    assert {board: found for board, found in shared.items() if found} == {}
    assert all(rows and all(rows) for rows in labels.values())


def test_a_click_on_a_rows_entry_link_shows_the_command_that_remakes_it(browser, committed_pages, shots):
    at_width(browser, WIDTHS[1])
    show(browser, committed_pages / "index.html")
    target = browser.evaluate("""(() => {
        const links = Array.from(document.querySelectorAll('table.sortable[id^="board-"] tbody td[data-key="entry"] a'));
        const link = links.find(a => a.getAttribute('href').includes('#reproduce'))
                  || links.find(a => a.getAttribute('href').endsWith('.html')) || links[0];
        if (!link) return null;
        link.scrollIntoView({block: 'center'});
        const r = link.getBoundingClientRect();
        return {href: link.getAttribute('href'), x: r.x + r.width / 2, y: r.y + r.height / 2}; })()""")
    assert target, "no board row has an Entry link"
    if not target["href"].split("#")[0].endswith(".html"):
        pytest.skip(f"a row's Entry link leads to {target['href']}, not to an entry page with its reproduce command "
                    "(entry pages not built by this checkout)")
    browser.events.clear()
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", {"type": kind, "x": target["x"], "y": target["y"], "button": "left",
                                                  "clickCount": 1})
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("location.pathname").endswith(target["href"].split("#")[0].split("/")[-1])
    commands = browser.evaluate("Array.from(document.querySelectorAll('#reproduce ~ pre.command')).map(p => p.textContent)")
    if not commands:
        pytest.skip("the entry page has no reproduce section (#reproduce followed by pre.command) in this checkout")
    assert all(c.startswith("bench run ") for c in commands), commands
    if "#reproduce" in target["href"]:  # the link lands on the commands: the first is on screen
        top = browser.evaluate("document.querySelector('#reproduce ~ pre.command').getBoundingClientRect().top")
        assert 0 <= top < browser.evaluate("window.innerHeight")
    assert_no_sideways_scroll(browser, WIDTHS[1], target["href"])
    browser.screenshot(shots / "entry-390.png")
    assert browser.errors() == []
