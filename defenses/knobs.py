"""The knobs the built-in defenses share. A defense declares the ones it reads (``knobs = (CR,)``);
a user's defense may declare these or its own :class:`bench.knobs.Knob`.

``cr``, ``sigma``, ``tile`` and ``width`` have no default: every cell that reads one names its value
(the grid crosses ``sweep`` when the command line gives none), so they always enter the cell's id.
"""
from bench.knobs import Knob

CR = Knob("cr", float, minimum=0.0, exclusive_minimum=True, sweep=(8.0, 16.0, 32.0),
          help="compression ratio d/k; k = d/CR must be an integer >= 1 at the cut")
SIGMA = Knob("sigma", float, minimum=0.0, sweep=(0.02,), help="DP noise multiplier (noise std = sigma * clip)")
TILE = Knob("tile", int, minimum=1, sweep=(2,), help="block-local tile side b; must divide the cut's H and W")
WIDTH = Knob("width", int, minimum=1, sweep=(512,), help="LightSplit-L lift-back hidden width m")
