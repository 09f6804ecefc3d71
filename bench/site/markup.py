"""Docstring text as safe HTML: the small Markdown and reStructuredText subset the classes' docstrings use.

Everything is escaped first; then ````literal````, ```literal``` and Sphinx roles (``:class:`~a.b.C```
→ ``<code>C</code>``, ``:mod:`a.b``` → ``<code>a.b</code>``) become code, ``**strong**`` and
``*emphasis*`` their tags, and paragraphs that start ``* ``, ``- `` or ``1. `` lists. No other
markup is interpreted, no link or raw HTML passes through (no ``markdown`` package is needed).
A paper's arXiv identifiers become links (:func:`paper_links`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from markupsafe import Markup, escape

CODE = re.compile(r"``(.+?)``|:[\w:]+:`~?(.+?)`|`([^`\s][^`]*?)`")
STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])")
BULLET = re.compile(r"^[*-] ")
NUMBERED = re.compile(r"^\d+\. ")
ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")
VENUE = re.compile(r"\b(CVPR|ICCV|ECCV|NeurIPS|ICML|ICLR|AAAI|IJCAI|CCS|NDSS|WPES|USENIX Security|S&P|PETS|ASPLOS|ICDMW|MLSP)"
                   r"(?:['’ ]?)(\d{2}(?:\d{2})?)\b")
ARXIV_ABS = "https://arxiv.org/abs/"


def inline(text: str) -> Markup:
    """One paragraph's inline markup as HTML (escaped; code, strong and emphasis)."""
    codes: list[str] = []

    def keep(match: re.Match) -> str:
        raw = match.group(1) or match.group(2) or match.group(3)
        if match.group(2):  # a role: ~a.b.C shows C, as Sphinx does
            raw = raw.rsplit(".", 1)[-1] if match.group(0).split("`", 1)[1].startswith("~") else raw
        codes.append(f"<code>{escape(raw)}</code>")
        return f"\x00{len(codes) - 1}\x00"

    text = CODE.sub(keep, text)
    html = str(escape(text))
    html = STRONG.sub(r"<strong>\1</strong>", html)
    html = EMPHASIS.sub(r"<em>\1</em>", html)
    return Markup(re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], html))


def paragraphs(items: Iterable[str]) -> Markup:
    """Paragraphs as ``<p>`` blocks, runs of ``* ``/``- `` items as ``<ul>`` and ``1. `` items as ``<ol>``."""
    out: list[str] = []
    open_list = ""
    for text in items:
        kind = "ul" if BULLET.match(text) else "ol" if NUMBERED.match(text) else ""
        if kind != open_list:
            if open_list:
                out.append(f"</{open_list}>")
            if kind:
                out.append(f"<{kind}>")
            open_list = kind
        if kind:
            body = BULLET.sub("", text) if kind == "ul" else NUMBERED.sub("", text)
            out.append(f"<li>{inline(body)}</li>")
        else:
            out.append(f"<p>{inline(text)}</p>")
    if open_list:
        out.append(f"</{open_list}>")
    return Markup("\n".join(out))


def paper_links(text: str) -> list[tuple[str, str]]:
    """``[(arXiv:2605.13265, https://arxiv.org/abs/2605.13265)]``: each arXiv identifier a ``Paper:``
    line names, in order, once."""
    ids = dict.fromkeys(ARXIV.findall(text or ""))
    return [(f"arXiv:{i}", ARXIV_ABS + i) for i in ids]


def venues(text: str) -> list[str]:
    """``["CVPR 2024"]``: the venues (name and year) a ``Paper:`` line names, in order, once."""
    found = []
    for name, year in VENUE.findall(text or ""):
        found.append(f"{name} {year if len(year) == 4 else '20' + year}")
    return list(dict.fromkeys(found))


def paper_markup(text: str) -> Markup:
    """A ``Paper:`` line as HTML: its inline markup, each arXiv identifier a link to its abstract."""
    html = str(inline(text))
    return Markup(ARXIV.sub(lambda m: f'<a class="paper" href="{ARXIV_ABS}{m.group(1)}">arXiv:{m.group(1)}</a>', html))
