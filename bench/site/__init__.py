"""The leaderboard as data and as a static site.

- :mod:`bench.site.schema`: the entries' versioned JSON Schema (``entry.schema.json``) and its validation.
- :mod:`bench.site.records`: where each stored record lies and the sha256 of its file.
- :mod:`bench.site.views`: one profile's statistics, looked up by configuration (:mod:`bench.site.values`: as JSON holds them).
- :mod:`bench.site.entries`: one leaderboard entry per (profile, dataset, victim, cut, defense, knobs).
- :mod:`bench.site.worst`: the worst case, the strongest attack seed by seed, then mean ± CI over those seeds.
- :mod:`bench.site.row_labels`: row labels (the parts off their defaults) and the board each row is on.
- :mod:`bench.site.ranking`: bytes groups (measured bytes per sample) and the order of rows on a board.
- :mod:`bench.site.integrity`: entries checked against the records they name (``bench verify --integrity``).
- :mod:`bench.site.reproduce`: the ``bench run`` commands that remake an entry, and its code flags.
- :mod:`bench.site.paper`: the paper's own numbers beside the measured ones (its value claims).
- :mod:`bench.site.leakage`: an entry's label leakage and attack-free measures (its page's sections, two board columns).
- :mod:`bench.site.catalog`: what the registries say about each defense and attack (papers, venues).
- :mod:`bench.site.markup`: docstring text as safe HTML (bullets, emphasis, code, roles, arXiv links).
- :mod:`bench.site.plots`: the site's Pareto and convergence plots.
- :mod:`bench.site.pages`: the rows and sections the templates render (:mod:`bench.site.cells`: each
  cell; :mod:`bench.site.entry_page`: an entry's own page).
- :mod:`bench.site.build`: the site, written from entries, grids and the package's templates
  (``templates/*.html.j2``, ``static/``: package data).
- :mod:`bench.cli.site` holds the ``bench site`` command.
"""
