import pandas as pd
import pytest

from tests.bench.report import synthetic


@pytest.fixture(scope="session")
def tidy() -> pd.DataFrame:
    """The synthetic tidy table (read only: tests copy before changing it)."""
    return synthetic.table()
