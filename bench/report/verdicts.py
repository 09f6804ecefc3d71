"""The convergence rule's verdicts (:mod:`bench.report.convergence` applies the rule), in a module
that imports nothing, so an attack's budget table (:mod:`attacks.budget_table`) can name them."""

CONVERGED, NOT_CONVERGED, UNSTABLE, UNKNOWN = "converged", "not converged", "unstable", "unknown"
VERDICTS = (CONVERGED, NOT_CONVERGED, UNSTABLE, UNKNOWN)
