"""NoPeek: the client also minimises the distance correlation between its inputs and the payload."""
from __future__ import annotations

from torch import Tensor

from bench.knobs import Knob
from defenses.base import DEFENSES, payload_zero
from defenses.bottlenecked import BottleneckedDefense
from defenses.knobs import CR
from defenses.payload import Payload, values_of

NOPEEK_ALPHA = Knob(
    "nopeek_alpha", float, default=0.1, minimum=0.0, sweep=(0.01, 0.1, 1.0),
    help="NoPeek weight α of dCor(x, payload) in the client's loss (task + α·dCor)",
)


def _double_centred_distances(rows: Tensor, exponent: float) -> Tensor:
    """The ``n × n`` matrix of Euclidean distances between rows raised to ``exponent``, double-centred."""
    sq_norms = rows.pow(2).sum(1)
    dist = (sq_norms[:, None] + sq_norms[None, :] - 2 * rows @ rows.T).clamp_min(0)
    if exponent != 2:
        dist = dist.pow(exponent / 2)
    return dist - dist.mean(0, keepdim=True) - dist.mean(1, keepdim=True) + dist.mean()


def _unit_scale(rows: Tensor) -> Tensor:
    """``rows`` centred and divided by their overall spread. dCor does not change (it is invariant to
    shifts and scales), but a payload that the loss shrinks towards a constant stays representable:
    on MNIST at CR 8 and α 0.1 the code's spread fell to 1e-7 in 750 steps, its squared distances
    underflowed in float32 and training turned to NaN."""
    centred = rows - rows.mean(0, keepdim=True)
    return centred / centred.pow(2).mean().clamp_min(1e-30).sqrt()  # a constant stays 0, its gradient finite


def distance_correlation(x: Tensor, y: Tensor, *, exponent: float = 2.0) -> Tensor:
    """Sample distance correlation of paired rows ``x (n, p)`` and ``y (n, q)``, with pairwise
    Euclidean distances raised to ``exponent`` (Székely and Rizzo's index, in ``(0, 2]``).

    The default, 2, is what NoPeek's releases compute and train on: SQUARED distances (Székely's dCor
    uses plain distances). On squared distances the double-centred matrices are ``-2`` times the
    centred Gram matrices, so this equals the square root of the RV coefficient: 0 for uncorrelated
    rows, 1 for ``y = a·x·Q + b`` with ``Q`` orthogonal, and it sees only linear dependence.
    ``exponent = 1`` is Székely's dCor, the paper's definition and the attack-free measure
    (:mod:`bench.leakage.measures`): 1 for the same maps, and in the population 0 only for
    independent rows, so it sees nonlinear dependence too (no gradient is meant to flow through it:
    a distance's root has none at 0).

    Paper: Székely, Rizzo and Bakirov, "Measuring and testing dependence by correlation of
    distances", Ann. Statist. 2007.
    """
    if not 0 < exponent <= 2:
        raise ValueError(f"distance correlation: exponent must be in (0, 2], got {exponent:g}")
    a = _double_centred_distances(_unit_scale(x.flatten(1)), exponent)
    b = _double_centred_distances(_unit_scale(y.flatten(1)), exponent)
    dcov2_xy = (a * b).mean()
    dcov2_xx, dcov2_yy = (a * a).mean(), (b * b).mean()
    # dCor² ≥ 0 in exact arithmetic; the floor keeps sqrt's gradient finite at 0
    dcor2 = dcov2_xy / (dcov2_xx * dcov2_yy).sqrt().clamp_min(1e-30)
    return dcor2.clamp_min(1e-12).sqrt()


@DEFENSES.register("nopeek")
class NoPeek(BottleneckedDefense):
    """The client's loss adds ``α · dCor(x, payload)`` on each batch, so the head learns payloads
    decorrelated from its inputs while the task loss keeps them useful.

    dCor is computed between the flattened input batch and the flattened payload batch with
    squared Euclidean distances, as both releases do (the paper writes plain distances): see
    :func:`distance_correlation`. ``α`` weighs dCor against the task loss as in the paper and
    ``TTitcombe/NoPeekNN`` (``src/loss.py``, default 0.1); SIMBA (``aidecentralized/InferenceBenchmark``,
    ``src/algos/nopeek.py``) steps ``(1 − α′)·task + α′·dCor`` with ``α′ = 0.9``
    (``src/configs/nopeek.json``), the same direction as ``α = α′/(1 − α′) = 9`` under Adam. The
    sweep 0.01, 0.1, 1 reaches below the default because on a learned 1×1 code (CR ≥ 2) dCor's
    scale-free gradient outruns the task's while the task loss is still flat: on 1,000 digits at
    CR 4 for 5 epochs, α = 0.01 learned (0.71 accuracy) and α ≥ 0.03 collapsed the code to a
    constant (chance), whereas on the raw cut α = 1 still learned (0.89). On MNIST (cpu profile) at
    CR 8, a one-channel code, whether a victim learns follows the code's spread at initialisation,
    not α: seed 1 (spread 0.14) learns at every α up to 0.1, seed 0 (0.09) up to 0.003, seed 2
    (0.035) at none of 0.001, 0.003 and 0.1 (at 0.01 its code widened late and learned); α = 0
    learns on all three (benchmarks/nopeek_code_spread.py), and so does α = 0.0001 (accuracy 0.963,
    0.965, 0.959; results/issue41-mnist). Cost: two ``B × B`` distance matrices per step.

    Bytes: at ``cr = 1`` the raw cut activation crosses (``d`` float32 values, as published); at
    ``cr > 1`` the mechanism runs on learned 1×1's ``c×H×W`` code (``c = round(C / CR)``), i.e.
    NoPeek at CR 8 is learned-1x1 at CR 8 plus the dCor loss on its code; the realised CR is
    recorded by :meth:`describe`.

    Paper: Vepakomma et al., "NoPeek: Information leakage reduction to share activations in
    distributed deep learning", ICDMW 2020 (arXiv:2008.09161).
    Threat model: honest-but-curious server that sees the payload (and owns the 1×1 decoder at
    CR > 1); the dCor term is the client's alone and needs its raw inputs.

    Args:
        cut_shape: ``(C, H, W)`` or ``(d,)``.
        cr: compression ratio; 1 sends the raw activation.
        nopeek_alpha: the weight ``α ≥ 0`` (0: learned 1×1 or raw alone).
        seed: unused (layers are initialised from the cell's global seed).
    """

    knobs = (CR, NOPEEK_ALPHA)

    def __init__(
        self, *, cut_shape: tuple[int, ...], cr: float | None = None, nopeek_alpha: float = 0.1, seed: int = 0
    ) -> None:
        super().__init__(cut_shape=cut_shape, cr=cr, seed=seed, name="nopeek")
        self.alpha = float(NOPEEK_ALPHA.check(nopeek_alpha))

    def client_loss(self, payload: Payload, y: Tensor, *, inputs: Tensor) -> Tensor:
        """``α · dCor(x, payload)``; payload rows are regrouped per input (a token cut's rows per sequence)."""
        if self.alpha == 0:
            return payload_zero(payload)
        values = values_of(payload).reshape(len(inputs), -1)
        return self.alpha * distance_correlation(inputs.flatten(1).to(values.dtype), values)

