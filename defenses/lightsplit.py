"""LightSplit: a fixed orthogonal random projection at the cut, with a fixed or learned lift-back."""
from __future__ import annotations

import math

from torch import Tensor, nn

from defenses.base import DEFENSES, Defense, DefenseConfigError, require_cr
from defenses.hadamard import SubsampledHadamardProjection
from defenses.knobs import CR, TILE, WIDTH
from defenses.projection import BlockLocalProjection, OrthogonalProjection

PROJECTIONS = {"dense": OrthogonalProjection, "srht": SubsampledHadamardProjection}


def global_projection(kind: str, *, cut_shape: tuple[int, ...], k: int, seed: int) -> nn.Module:
    """The global ``d × k`` projection of the named kind: ``dense`` (QR of a Gaussian, ``d·k`` per
    sample) or ``srht`` (structured, ``O(d log d)`` per sample); both have ``RᵀR = I``."""
    if kind not in PROJECTIONS:
        raise DefenseConfigError(f"unknown projection {kind!r}; choose from {', '.join(PROJECTIONS)}")
    return PROJECTIONS[kind](cut_shape=cut_shape, k=k, seed=seed)


class _LearnedLiftBack(nn.Module):
    """φ: R^k → R^d, Linear → BatchNorm → ReLU → Linear (LightSplit-L's server-side MLP)."""

    def __init__(self, k: int, d: int, width: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(k, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Linear(width, d))

    def forward(self, payload: Tensor) -> Tensor:
        return self.net(payload)


class _ProjectionDefense(Defense):
    """Shared body: the client projects with a fixed public matrix; the server lifts back."""

    projection: OrthogonalProjection | SubsampledHadamardProjection | BlockLocalProjection

    def encode(self, z: Tensor) -> Tensor:
        return self.projection.project(z)

    def decode(self, payload: Tensor) -> Tensor:
        if self.server_side.lift_back is None:
            return self.projection.lift(payload)
        return self.server_side.lift_back(payload).view(payload.shape[0], *self.cut_shape)

    def cut_map(self, payload: Tensor) -> Tensor:
        """``R z̃``, whatever the lift-back: ``R`` is public."""
        return self.projection.lift(payload)

    def public_state(self) -> dict[str, Tensor]:
        return {"R": self.projection.R}


@DEFENSES.register("lightsplit-f")
class LightSplitF(_ProjectionDefense):
    """LightSplit-F: payload ``Rᵀz``; the server's lift-back is the fixed ``R z̃``.

    Paper: LightSplit (arXiv:2605.13265), Sect. IV-B/IV-C, Eq. (2) and (4).
    Threat model: honest-but-curious server that knows ``R`` (public) and sees the ``k``-vector and
    the gradient with respect to it; the complement of range(R) never leaves the client.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: compression ratio ``d / k``; ``k`` must be an integer ≥ 1.
        seed: seed of ``R``.
        projection: ``dense`` or ``srht`` (see :func:`global_projection`).
    """

    knobs = (CR,)
    default_projection = "dense"

    def __init__(
        self, *, cut_shape: tuple[int, ...], cr: float | None = None, seed: int = 0, projection: str | None = None
    ) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        k = require_cr(cr, math.prod(cut_shape), "lightsplit-f")
        kind = projection or self.default_projection
        self.projection = global_projection(kind, cut_shape=cut_shape, k=k, seed=seed)
        self.server_side.lift_back = None


@DEFENSES.register("lightsplit-l")
class LightSplitL(_ProjectionDefense):
    """LightSplit-L: the same payload ``Rᵀz``; the server lifts back with a trainable MLP.

    Paper: LightSplit, Sect. IV-C ("learned MLP lift-back").
    Threat model: as LightSplit-F; the lift-back is server-side post-processing of the same payload.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: compression ratio ``d / k``.
        width: hidden width ``m`` of the lift-back MLP.
        seed: seed of ``R``.
        projection: ``dense`` or ``srht`` (see :func:`global_projection`).
    """

    knobs = (CR, WIDTH)
    default_projection = "dense"

    def __init__(
        self,
        *,
        cut_shape: tuple[int, ...],
        cr: float | None = None,
        width: int = 512,
        seed: int = 0,
        projection: str | None = None,
    ) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        if width < 1:
            raise DefenseConfigError(f"lightsplit-l: lift-back width must be >= 1, got {width}")
        d = math.prod(cut_shape)
        k = require_cr(cr, d, "lightsplit-l")
        kind = projection or self.default_projection
        self.projection = global_projection(kind, cut_shape=cut_shape, k=k, seed=seed)
        self.server_side.lift_back = _LearnedLiftBack(k, d, width)


@DEFENSES.register("lightsplit-f-srht")
class LightSplitFHadamard(LightSplitF):
    """LightSplit-F with the structured projection: ``R`` is a subsampled randomized Hadamard transform.

    Paper: LightSplit, Sect. IV-B (any fixed ``R`` with ``RᵀR = I``); the structured ``R`` is this
    suite's cheaper option (O(d log d) per sample instead of ``d·k``).
    Threat model: as LightSplit-F; the permutation, signs, mixing and kept rows are public.
    """

    default_projection = "srht"


@DEFENSES.register("lightsplit-l-srht")
class LightSplitLHadamard(LightSplitL):
    """LightSplit-L with the structured projection (see ``lightsplit-f-srht``).

    Paper: LightSplit, Sect. IV-C, with this suite's structured ``R``.
    Threat model: as LightSplit-L; the structured ``R`` is public.
    """

    default_projection = "srht"


@DEFENSES.register("block-local")
class BlockLocal(_ProjectionDefense):
    """Block-local LightSplit: ``b×b`` tiles projected by one shared ``R_b`` (fixed lift-back).

    Paper: LightSplit, Sect. IV-B and App. B-B3 (tile ``b``; ``b`` = map size recovers the global R).
    Threat model: as LightSplit-F; ``R_b`` and the tiling are public.

    Args:
        cut_shape: ``(C, H, W)``.
        cr: compression ratio ``d / k``.
        tile: tile side ``b``; must divide ``H`` and ``W``.
        seed: seed of ``R_b``.
    """

    knobs = (CR, TILE)

    def __init__(
        self, *, cut_shape: tuple[int, ...], cr: float | None = None, tile: int = 2, seed: int = 0
    ) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        k = require_cr(cr, math.prod(cut_shape), "block-local")
        self.projection = BlockLocalProjection(cut_shape=cut_shape, k=k, tile=tile, seed=seed)
        self.server_side.lift_back = None
