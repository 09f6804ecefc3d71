"""One-line warnings for damage a run repairs and goes on from."""
import sys


def warn(message: str) -> None:
    """One ``warning: ...`` line on stderr."""
    print(f"warning: {' '.join(message.split())}", file=sys.stderr, flush=True)
