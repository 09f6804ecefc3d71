"""The README's notebook example: run a small grid, then show a paper table and the Pareto figure."""
import os

from bench import api

out = os.environ.get("NOTEBOOK_OUT", "results/notebook")  # a rerun only reads the cells already stored
grid = {"dataset": "digits", "defense": ["raw", "lightsplit-f"], "attack": "fora", "knobs": {"cr": 8},
        "seeds": [0], "profile": "smoke"}
df = api.run(grid, out=out)  # what `bench run` stores, as a tidy DataFrame: one row per cell and metric
print(df.pivot_table(index="defense", columns="metric", values="value")[["accuracy", "ssim", "mse"]])
print(api.table(df, "II", fmt="markdown"))  # Table II: Δ accuracy and FORA's privacy vs Raw
fig = api.figure(df, "pareto", path=os.path.join(out, "pareto.png"))
