"""Adversarial learning at the cut: the client trains against its own proxy inversion decoder (ResSFL)."""
from __future__ import annotations

from torch import Tensor
from torch.nn import functional as F

from bench.knobs import Knob
from defenses.base import DEFENSES
from defenses.bottlenecked import BottleneckedDefense
from defenses.knobs import CR
from defenses.proxy_decoder import PROXY_BLOCKS, PROXY_WIDTH, check_inputs, evaluating, is_image, mean_ssim, proxy_decoder

ADV_LAMBDA = Knob("adv_lambda", float, default=0.3, minimum=0.0, sweep=(0.3, 0.5, 0.8),
                  help="weight λ of the client's term against its proxy decoder (ResSFL regularization_strength)")
SSIM_THRESHOLD = Knob("ssim_threshold", float, default=0.5, minimum=0.0, maximum=1.0,
                      help="the client's term counts only the proxy's SSIM above this (ResSFL ssim_threshold; 0: none)")


@DEFENSES.register("adversarial")
class AdversarialLearning(BottleneckedDefense):
    """Model-inversion-resistant training: the client's loss adds ``λ·max(SSIM(D(p), x) − τ, 0)``, the
    similarity its proxy decoder ``D`` reaches from the payload ``p``, and ``D`` is trained to
    maximise that SSIM (to minimise ``−SSIM``). So the client's term is ``−λ·`` the proxy's loss,
    above the threshold ``τ``. With tabular inputs the loss is the mean squared error instead
    (ResSFL's ``gan_loss_type=MSE``): the client adds ``−λ·MSE``, the proxy minimises MSE.

    Bytes: ResSFL's ``bottleneck_option`` (``norelu_C8S1``: a client conv to 8 channels, a server
    conv back, no ReLU) realises ``CR``: the payload is the code of a learned 1×1 bottleneck
    (:class:`~defenses.bottlenecked.BottleneckedDefense`), ``c = round(C / CR)`` channels of the
    cut's ``H×W`` (``d / CR`` values of a vector cut), float32; at ``CR = 1`` the raw cut is sent
    (ResSFL without a bottleneck). The proxy decodes that code.

    Released settings (``zlijingtao/ResSFL``, ``reproduce/table3/ace_run_expert_vgg11_cut2.sh``,
    ``reproduce/table6/…``): ``gan_adv_step1`` (one proxy step per client step), strength 0.3,
    ``ssim_threshold`` 0.5, ``gan_loss_type`` SSIM, proxy ``res_normN4C64`` (Adam 1e-3, the
    profile's rate here); ``reproduce/fig4/ace_run_expert_vgg11_cifar10.sh`` sweeps 0.3/0.5/0.8.
    Following ``MIA_torch.py``, the client's term runs the proxy in evaluation mode (BatchNorm on
    running statistics) and a strength of 0 builds no proxy. Not reproduced: the 30-epoch proxy
    pre-training before victim training and ResSFL's transfer from a source task; the bottleneck is
    a 1×1 conv (released: 3×3); the engine steps the proxy after the client, ResSFL before.
    DeepObfuscator (SIMBA ``src/algos/deepobfuscator.py``) is the same game without a threshold
    (``ssim_threshold=0``), weighted ``α`` against ``1 − α`` on the task.

    Paper: Li et al., "ResSFL: A Resistance Transfer Framework for Defending Model Inversion Attack
    in Split Federated Learning", CVPR 2022; Li et al., "DeepObfuscator: Obfuscating Intermediate
    Representations with Privacy-Preserving Adversarial Learning on Smartphones", IoTDI 2021.
    Threat model: the server sees the code and owns the bottleneck's decoder conv; the proxy decoder
    is the client's and never leaves it.

    Args:
        cut_shape: ``(C, H, W)`` or ``(d,)``.
        input_shape: per-sample input shape (what the proxy reconstructs).
        cr: compression ratio; ``d / cr`` must be an integer ≥ 1.
        adv_lambda: the weight λ ≥ 0 of the client's term.
        ssim_threshold: τ in [0, 1].
        seed: unused (the layers are initialised from the cell's global seed).
        proxy_width: channels of the proxy decoder's blocks (released 64).
        proxy_blocks: its middle blocks (released 4).
    """

    knobs = (CR, ADV_LAMBDA, SSIM_THRESHOLD, PROXY_WIDTH, PROXY_BLOCKS)

    def __init__(
        self,
        *,
        cut_shape: tuple[int, ...],
        input_shape: tuple[int, ...],
        cr: float | None = None,
        adv_lambda: float = 0.3,
        ssim_threshold: float = 0.5,
        seed: int = 0,
        proxy_width: int = 64,
        proxy_blocks: int = 4,
    ) -> None:
        super().__init__(cut_shape=cut_shape, cr=cr, seed=seed, name="adversarial")
        self.adv_lambda = ADV_LAMBDA.check(adv_lambda)
        self.ssim_threshold = SSIM_THRESHOLD.check(ssim_threshold)
        self.input_shape = tuple(input_shape)
        if self.adv_lambda > 0:
            self.client_side.proxy = proxy_decoder(
                self.code_shape, self.input_shape, width=proxy_width, blocks=proxy_blocks
            )

    def client_loss(self, payload: Tensor, y: Tensor, *, inputs: Tensor) -> Tensor:
        if self.adv_lambda == 0:
            return payload.new_zeros(())
        check_inputs("adversarial", payload.shape[0], inputs)
        with evaluating(self.client_side.proxy) as proxy:
            recon = proxy(payload)
        if not is_image(self.input_shape):
            return -self.adv_lambda * F.mse_loss(recon, inputs)
        return self.adv_lambda * F.relu(mean_ssim(recon, inputs) - self.ssim_threshold)

    def proxy_loss(self, payload: Tensor, inputs: Tensor) -> Tensor | None:
        if self.adv_lambda == 0:
            return None
        check_inputs("adversarial", payload.shape[0], inputs)
        recon = self.client_side.proxy(payload)
        if not is_image(self.input_shape):
            return F.mse_loss(recon, inputs)
        return -mean_ssim(recon, inputs)
