"""Stopping ``bench run`` from outside: SIGTERM stops it as Ctrl-C does, and both end in one line.

Either way the run stops at once: its local workers are terminated (:class:`bench.run.executors.LocalExecutor`),
every record already back in the driver is stored, and the same command later runs what is left.
"""
from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click


@contextmanager
def stop_on_signals(out: Path) -> Iterator[None]:
    """Within the block SIGTERM raises :class:`KeyboardInterrupt`; an interrupted block prints one
    line naming the signal and the results folder, and exits with status 128 + the signal's number."""
    received: list[int] = []

    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    except KeyboardInterrupt:
        signum = received[0] if received else signal.SIGINT
        click.echo(f"stopped by {signal.Signals(signum).name}: the cells that ended are stored in {out}; "
                   "the same command runs the rest", err=True)
        sys.exit(128 + signum)
    finally:
        signal.signal(signal.SIGTERM, previous)
