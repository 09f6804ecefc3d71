"""Reports: the paper's tables and figures, regenerated from the stored tidy result table alone.

- :mod:`bench.report.aggregate` computes every statistic (mean ± 95% CI over seeds, Δ vs Raw).
- :mod:`bench.report.tables` defines the table specs and builds them from the aggregate.
- :mod:`bench.report.render` writes a built table as LaTeX, Markdown or CSV.
- :mod:`bench.report.labels` holds the display names, privacy directions and number formats.
- :mod:`bench.report.figures` draws the figures.
- :mod:`bench.cli.report` holds the ``bench report`` and ``bench figures`` commands.
"""
