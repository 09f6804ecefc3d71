"""The one error every command turns into ``error: <message>`` and exit status 2."""


class GridError(ValueError):
    """An invalid choice on the command line or in a grid; its message is one line naming the problem."""


class MissingExtraError(GridError):
    """A part of the grid needs an optional package that is not installed (``pip install 'splitbench[text]'``)."""
