"""The attack-free measures recorded on every victim's rows: each name with its one-line meaning, the
one source for row notes and report labels (imports no torch)."""
from __future__ import annotations

DCOR = "dcor_input_payload"
CHANNEL_BITS = "gaussian_channel_bits"
CHANNEL_CLASS_BITS = "gaussian_channel_class_bits"
DFIL = "dfil"
DFIL_MSE_BOUND = "dfil_mse_bound"

MEASURES: dict[str, str] = {
    DCOR: "distance correlation (Székely's, plain distances) between members' inputs and the payloads the server "
          "receives, on 2,000 members",
    CHANNEL_BITS: "upper bound in bits on the mutual information between an input and its +dp payload: "
                  "½·log2 det(I + Σ_p/(σ·clip)²), Σ_p the clipped payloads' covariance",
    CHANNEL_CLASS_BITS: "the same bound on the within-class covariance: information about the input beyond its class "
                        "(what WCC shrinks)",
    DFIL: "diagonal Fisher information leakage tr(I(x))/d of the noisy encoder, mean over 64 members "
          "(Maeng et al., NeurIPS 2023)",
    DFIL_MSE_BOUND: "lower bound 1/dFIL on an unbiased attacker's mean per-input-value MSE (Cramér-Rao)",
}
