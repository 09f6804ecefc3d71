"""The check every mutant shares: each of its targets must fail one of its assertions.

A target that passes under the mutant, one that fails another way (an error in a fixture, an
exception the mutant raised inside the test), or one that is not collected at all (a renamed test)
makes the run fail, naming it.
"""
from __future__ import annotations

import pytest

ASSERTION = "mutant-failed-an-assertion"


class EveryTargetMustFail:
    """A pytest plugin object: turns "every collected test failed an assertion" into exit 0."""

    def __init__(self, mutant: str) -> None:
        self.mutant = mutant
        self.failed: set[str] = set()
        self.other: dict[str, str] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        if call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
            outcome.get_result().user_properties.append((ASSERTION, True))  # travels back from xdist workers

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.failed and (ASSERTION, True) in report.user_properties:
            self.failed.add(report.nodeid)
        elif report.failed or (report.when == "call" and report.passed) or report.skipped:
            how = "failed without an assertion" if report.failed and report.when == "call" else f"{report.outcome} in {report.when}"
            self.other.setdefault(report.nodeid, how)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(session.config, "workerinput"):  # an xdist worker: the controller sees every report
            return
        survivors = {node: why for node, why in self.other.items() if node not in self.failed}
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        write = reporter.write_line if reporter else print
        if session.testscollected == 0 or exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR,
                                                         pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.INTERNAL_ERROR):
            write(f"mutant {self.mutant}: no targets ran (exit {exitstatus})")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif survivors:
            write(f"mutant {self.mutant} SURVIVED {len(survivors)} of {session.testscollected} targets:")
            for node, why in sorted(survivors.items()):
                write(f"  {node}: {why}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            write(f"mutant {self.mutant} killed: all {len(self.failed)} targets failed")
            session.exitstatus = pytest.ExitCode.OK


def register(config: pytest.Config, mutant: str) -> None:
    config.pluginmanager.register(EveryTargetMustFail(mutant), f"every-target-must-fail-{mutant}")
