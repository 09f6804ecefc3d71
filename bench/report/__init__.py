"""Reports: the paper's tables and figures, regenerated from the stored tidy result table alone.

- :mod:`bench.report.aggregate` computes every statistic (mean ± 95% CI over seeds, Δ vs Raw).
- :mod:`bench.report.table_specs` defines the table specs; :mod:`bench.report.tables` builds them from the aggregate.
- :mod:`bench.report.floor` holds the ``prior`` attack's floor; :mod:`bench.report.worst_case` the most
  leaking attack per configuration, among the attacks whose rows record that they read the data kind.
- :mod:`bench.report.convergence` holds the budget rule (converged when four times the budget gains at
  most a tolerance on the headline metric each attack's rows record).
- :mod:`bench.report.label_table`, :mod:`bench.report.attack_free_table` and :mod:`bench.report.rank_correlation`
  build the tables that are not the paper's: label leakage beside chance, the attack-free measures beside the
  worst case, and how the two rank the defenses (also ``bench verify``'s agreement block).
- :mod:`bench.report.render` writes a built table as LaTeX, Markdown or CSV.
- :mod:`bench.report.labels` holds the display names, privacy directions and number formats.
- :mod:`bench.report.figures` draws the figures.
- :mod:`bench.report.paper_claims` holds the paper's claims, :mod:`bench.report.claims` checks them.
- :mod:`bench.report.leaderboard` ranks defenses.
- :mod:`bench.cli.report` holds the ``bench report`` and ``bench figures`` commands.
"""
