"""Shredder: learned additive noise at the cut, pushed to be as large as the task allows."""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from bench.knobs import Knob
from defenses.base import DEFENSES
from defenses.bottlenecked import BottleneckedDefense
from defenses.knobs import CR
from defenses.payload import Payload, as_vector

SHREDDER_LAMBDA = Knob(
    "shredder_lambda", float, default=0.5, minimum=0.0, sweep=(0.1, 0.5, 2.0),
    help="Shredder weight λ of the noise magnitude in the client's loss (task − λ·std(noise))",
)
# Shredder v1's initial noise (mireshghallah/shredder-v1 code/alexnet-activation.py; SIMBA's port alike)
INIT_LOC, INIT_SCALE = 0.6, 1.2


@DEFENSES.register("shredder")
class Shredder(BottleneckedDefense):
    """One trainable noise tensor ``n`` of the payload's per-sample shape, added to every payload.

    Training: ``payload = code + n``; ``n`` starts as a Laplace(0.6, 1.2) draw (Shredder v1's
    release and SIMBA's port) and lives in ``client_side``, so the client's optimizer steps it with
    the head on the task gradient plus ``client_loss = −λ · std(n)``: the task loss minus λ times
    the noise magnitude, the v1 paper's form as issue 41 gives it. The releases differ: v1's code
    (``code/alexnet-activation.py``) trains ``n`` on cross-entropy alone, v2's adds a contrastive
    term, and SIMBA (``aidecentralized/InferenceBenchmark`` ``src/algos/shredder.py``) adds
    ``−coeff / std(n)``, which minimised would shrink the noise, and trains nothing (client frozen,
    noise outside its optimizer). λ's default is SIMBA's ``coeff`` 0.5 (``src/configs/shredder.json``;
    ``shredder_2.json``: 1); with Adam each element moves at most the learning rate a step, so λ
    sets how many elements widen against the task gradient (1,000 digits, CR 4, 5 epochs: std
    1.83 → 1.83 at λ = 0, → 1.93 at λ = 0.5).

    Evaluation (every payload the server or an attacker observes): each sample gets a fresh noise
    tensor drawn from the Laplace distribution fitted to ``n``'s elements (location = median, scale
    = mean absolute deviation from it, the maximum-likelihood fit) and placed in ``n``'s rank order,
    so the largest draw lands where ``n`` is largest — the sampling of the ``ShredderNoisyActivation``
    ports (``L1ziang/GLASS`` ``celeba/model.py``). Shredder v1 fits one distribution per element
    over many separately trained tensors; one split-learning run trains one tensor, so the fit is
    over its elements.

    Bytes: at ``cr = 1`` the noisy raw activation crosses (``d`` float32 values); at ``cr > 1`` the
    noise is added to learned 1×1's ``c×H×W`` code (``c = round(C / CR)``), i.e. Shredder at CR 8 is
    learned-1x1 at CR 8 with the learned noise on its code; the realised CR is recorded.

    Paper: Mireshghallah et al., "Shredder: Learning Noise Distributions to Protect Inference
    Privacy", ASPLOS 2020 (arXiv:1905.11814; v2 code: ``mireshghallah/shredder-v2-self-supervised``).
    Threat model: honest-but-curious server that sees noisy payloads and not the noise tensor,
    which is the client's; jointly trained here, whereas Shredder trains noise for a frozen network.

    Args:
        cut_shape: ``(C, H, W)`` or ``(d,)``.
        cr: compression ratio; 1 adds the noise to the raw activation.
        shredder_lambda: the weight ``λ ≥ 0`` of the noise magnitude.
        seed: unused (the noise is drawn from the cell's global seed).
    """

    knobs = (CR, SHREDDER_LAMBDA)

    def __init__(
        self, *, cut_shape: tuple[int, ...], cr: float | None = None, shredder_lambda: float = 0.5, seed: int = 0
    ) -> None:
        super().__init__(cut_shape=cut_shape, cr=cr, seed=seed, name="shredder")
        self.lam = float(SHREDDER_LAMBDA.check(shredder_lambda))
        initial = torch.distributions.Laplace(INIT_LOC, INIT_SCALE).sample(self.code_shape)
        self.client_side.noise = nn.Parameter(initial)

    def noise_scale(self) -> Tensor:
        """The magnitude the loss pushes up: the standard deviation of the noise tensor's elements."""
        return self.client_side.noise.std()

    def sampled_noise(self, code: Tensor) -> Tensor:
        """One fresh noise tensor per row of ``code``, from the Laplace fit of ``n``, in ``n``'s rank order."""
        noise = self.client_side.noise.detach().flatten()
        loc = noise.median()
        scale = (noise - loc).abs().mean()
        # inverse-CDF Laplace(0, 1) draws, out of place (attacks evaluate encoders under vmap)
        u = (torch.rand_like(code.flatten(1)) * 2 - 1).clamp(min=torch.finfo(code.dtype).eps - 1)
        draws = -u.sign() * torch.log1p(-u.abs())
        ranked = loc + scale * draws.sort(dim=1).values
        order = noise.argsort().expand_as(ranked)
        return torch.empty_like(ranked).scatter(1, order, ranked).view_as(code)

    def encode(self, z: Tensor) -> Tensor:
        code = self.to_code(z)
        if self.training:
            return code + self.client_side.noise
        return code + self.sampled_noise(code)

    @torch.no_grad()
    def align_to_observed(self, observed: Payload, simulate: Callable[[], Payload]) -> None:
        """Move the noise tensor by the gap between the observed and simulated payloads' means, so an
        attacker's fresh copy starts from the client's offset (its code's mean differs too, but by
        far less than two independent noise draws do)."""
        self.client_side.noise += as_vector(observed).mean(0).view_as(self.client_side.noise) - as_vector(
            simulate()).mean(0).view_as(self.client_side.noise)

    def client_loss(self, payload: Payload, y: Tensor, *, inputs: Tensor) -> Tensor:
        return -self.lam * self.noise_scale()
