"""A synthetic tidy table with known values: 3 seeds, Raw + LightSplit-F at CR 8 and 16, attacks
decoder-ref and UnSplit (plus the victims' own ``none`` cells; UnSplit also scored min-max), one
diverged run, LPIPS missing. No ``prior`` cells: the floor row has tests of its own."""
from __future__ import annotations

import pandas as pd

from bench.run.cell import Cell
from bench.run.derived import add_derived_metrics
from bench.run.store import OK, CellRecord, records_to_table

SEEDS = (0, 1, 2)
CONFIGS = {"raw": ("raw", None), "ls8": ("lightsplit-f", 8.0), "ls16": ("lightsplit-f", 16.0)}
LPIPS_NOTE = "LPIPS unavailable: AlexNet weights not cached (no network)"
# Per configuration, one value per seed.
ACCURACY = {"raw": (0.97, 0.96, 0.98), "ls8": (0.93, 0.92, 0.94), "ls16": (0.90, 0.91, 0.89)}
BYTES_UP = {"raw": 4608.0, "ls8": 576.0, "ls16": 288.0}
ATTACK_METRICS = {
    "decoder-ref": {
        "ssim": {"raw": (0.90, 0.92, 0.94), "ls8": (0.60, 0.62, 0.58), "ls16": (0.40, 0.44, 0.42)},
        "mse": {"raw": (0.010, 0.012, 0.014), "ls8": (0.030, 0.036, 0.033), "ls16": (0.050, 0.060, 0.055)},
        "masked_mse": {"raw": (0.02, 0.03, 0.04), "ls8": (0.05, 0.06, 0.07), "ls16": (0.08, 0.09, 0.10)},
    },
    "unsplit": {
        "ssim": {"raw": (0.50, 0.52, 0.54), "ls8": (0.30, 0.32, 0.34), "ls16": (0.20, 0.22, 0.0)},
        "mse": {"raw": (0.05, 0.06, 0.07), "ls8": (0.08, 0.09, 0.10), "ls16": (0.11, 0.12, 0.9)},
        "masked_mse": {"raw": (0.10, 0.11, 0.12), "ls8": (0.13, 0.14, 0.12), "ls16": (0.15, 0.16, 0.99)},
        "masked_mse_minmax": {"raw": (0.20, 0.22, 0.24), "ls8": (0.25, 0.26, 0.24), "ls16": (0.30, 0.32, 0.99)},
    },
}
DIVERGED = ("unsplit", "ls16", 2)  # this run diverged: its values above are junk and must be left out


def cell(key: str, seed: int, attack: str = "none", profile: str = "smoke") -> Cell:
    defense, cr = CONFIGS[key]
    return Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense=defense, profile=profile,
                seed=seed, defense_knobs={"cr": cr}, attack=attack)


def records(profile: str = "smoke") -> list[CellRecord]:
    out = []
    for key in CONFIGS:
        for i, seed in enumerate(SEEDS):
            utility = {"accuracy": ACCURACY[key][i], "bytes_up_per_sample": BYTES_UP[key]}
            out.append(CellRecord(cell(key, seed, profile=profile), OK, metrics=dict(utility)))
            for attack, metrics in ATTACK_METRICS.items():
                values: dict[str, float | None] = {**utility, **{m: v[key][i] for m, v in metrics.items()}}
                values.update(lpips=None, diverged=float((attack, key, seed) == DIVERGED))
                out.append(CellRecord(cell(key, seed, attack, profile), OK, metrics=values, notes={"lpips": LPIPS_NOTE}))
    return out


def table(profile: str = "smoke") -> pd.DataFrame:
    """The tidy table as the store collects it (with the derived accuracy delta rows)."""
    return add_derived_metrics(records_to_table(records(profile)))
