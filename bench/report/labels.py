"""Display names, privacy directions and number formats shared by the tables and figures."""
from __future__ import annotations

import math

# +1: a larger value means more privacy (the attacker does worse); -1: a smaller one does.
PRIVACY_DIRECTION: dict[str, int] = {
    "mse": 1, "lpips": 1, "masked_mse": 1, "box_lpips": 1, "recon_holdout_mse": 1,
    "ssim": -1, "psnr": -1, "masked_psnr": -1, "box_ssim": -1,
    "median_r2": -1, "recon_holdout_median_r2": -1, "reid_accuracy": -1,
    "label_auc_mean": -1, "label_accuracy": -1,  # label attacks (bench.metrics.labels)
}
UTILITY_METRICS = frozenset({"accuracy", "accuracy_delta_vs_raw", "best_val_perplexity", "perplexity_inflation"})
# The victim's own measurements (no attack): +1 a larger value is better for the defended row, -1 a smaller one.
VICTIM_DIRECTION: dict[str, int] = {
    "accuracy": 1, "accuracy_delta_vs_raw": 1, "best_val_perplexity": -1, "perplexity_inflation": -1,
    "bytes_up_per_sample": -1, "bytes_down_per_sample": -1, "realized_cr": 1,
    "dp_epsilon_total": -1, "dp_epsilon_per_release": -1,  # a smaller ε is a stronger guarantee
    # the attack-free measures (bench.leakage.names): less dependence, information or Fisher information is better;
    # a larger bound on an unbiased attacker's MSE is better
    "dcor_input_payload": -1, "gaussian_channel_bits": -1, "gaussian_channel_class_bits": -1, "dfil": -1,
    "dfil_mse_bound": 1,
}

METRIC_LABELS = {
    "accuracy": "Acc. (%)", "mse": "MSE", "psnr": "PSNR", "ssim": "SSIM", "lpips": "LPIPS",
    "masked_mse": "masked MSE", "masked_psnr": "masked PSNR", "box_ssim": "box SSIM", "box_lpips": "box LPIPS",
    "median_r2": "median R²", "reid_accuracy": "re-ID acc. (%)", "foreground_ratio": "fg. ratio",
    "bytes_up_per_sample": "bytes up / sample", "best_val_perplexity": "best perplexity",
    "perplexity_inflation": "inflation (× Raw)", "label_auc_mean": "label AUC", "label_accuracy": "label acc. (%)",
    # the attack-free measures (bench.leakage.names)
    "dcor_input_payload": "dCor", "gaussian_channel_bits": "channel bits", "gaussian_channel_class_bits": "class bits",
    "dfil": "dFIL", "dfil_mse_bound": "MSE bound (1/dFIL)",
}
# The paper's names of the attacks, and of a report's columns that are no attack: the victims' own
# (attack ``none``) and the worst case over attacks (bench.report.table_specs.WORST). Kept here, not
# on the attack classes: a report names the attacks its table specs show even when a results folder
# lacks them, and reading a stored table never imports torch (tests/bench/cli/test_startup.py).
ATTACK_LABELS = {
    "none": "", "sdar": "SDAR", "fora": "FORA", "decoder": "aux. decoder", "decoder-ref": "FORA ref. decoder",
    "unsplit": "UnSplit", "fsha": "FSHA", "har-recon": "HAR recon.", "har-reid": "HAR re-ID",
    "decoder-z": "decoder z", "decoder-z-lift": "decoder z+zRᵀ", "decoder-z-grad": "decoder z+g",
    "decoder-fused": "decoder fused", "prior": "prior (floor)", "worst-case": "worst case",
    "label-norm": "norm scoring", "label-direction": "direction scoring", "model-completion": "model completion",
    "linear-probe": "linear probe",
}
DEFENSE_ORDER = ("raw", "dp", "raw+dp", "learned-1x1", "topk", "lightsplit-f", "lightsplit-f-srht", "lightsplit-f+dp",
                 "lightsplit-l", "lightsplit-l-srht", "block-local", "block-local+dp",
                 "nopeek", "shredder", "adversarial", "disco", "mid", "c3sl")
DEFENSE_LABELS = {
    "raw": "Raw", "learned-1x1": "Learned 1×1", "topk": "top-K", "lightsplit-f": "LightSplit-F",
    "lightsplit-l": "LightSplit-L", "block-local": "Block-local", "dp": "Raw+DP",
    "lightsplit-f-srht": "LightSplit-F (SRHT)", "lightsplit-l-srht": "LightSplit-L (SRHT)",
    "nopeek": "NoPeek", "shredder": "Shredder", "adversarial": "Adversarial (ResSFL)", "disco": "DISCO",
    "mid": "MID", "c3sl": "C3-SL",
}
DATASET_LABELS = {
    "mnist": "MNIST", "fashion-mnist": "F-MNIST", "cifar10": "CIFAR-10", "cifar100": "CIFAR-100",
    "gtsrb": "GTSRB", "imagenet": "ImageNet", "har": "HAR", "digits": "digits",
    "cifar10-jpeg": "CIFAR-10 (JPEG)", "hapt": "HAPT (raw windows)", "wikitext-2": "WikiText-2",
    "wikitext-103": "WikiText-103",
}
FACTOR_LABELS = {
    "dataset": "Dataset", "victim": "Victim", "cut": "Cut", "defense": "Defense", "protocol": "Protocol",
    "heads": "Heads", "partition": "Partition", "alpha": "α", "clients": "Clients", "cr": "CR", "sigma": "σ",
    "tile": "b", "width": "m", "lambda_wcc": "λ_WCC",
}
# Decimals after scaling; other metrics get 4 significant digits.
DECIMALS = {
    "accuracy": 1, "reid_accuracy": 1, "ssim": 3, "box_ssim": 3, "lpips": 3, "box_lpips": 3, "mse": 4,
    "masked_mse": 4, "psnr": 2, "masked_psnr": 2, "median_r2": 3, "foreground_ratio": 3,
    "best_val_perplexity": 1, "perplexity_inflation": 3, "label_auc_mean": 3, "label_accuracy": 1,
    "dcor_input_payload": 3, "gaussian_channel_bits": 1, "gaussian_channel_class_bits": 1,
}
SCALE = {"accuracy": 100.0, "reid_accuracy": 100.0, "label_accuracy": 100.0}  # shown in %
# The values a metric can take, where bounded on both sides: a 95% CI wider than this says nothing.
METRIC_RANGES = {"accuracy": (0.0, 1.0), "reid_accuracy": (0.0, 1.0), "ssim": (-1.0, 1.0), "box_ssim": (-1.0, 1.0),
                 "label_auc_mean": (0.0, 1.0), "label_accuracy": (0.0, 1.0)}
MINUS = "\u2212"
# The suffixes of a metric scored another way (attacks.base.Scoring): the same quantity of another image.
SCORING_LABELS = {"_minmax": "min-max", "_black": "all black", "_grey": "grey 0.5"}


def split_scoring(metric: str) -> tuple[str, str]:
    """``("masked_mse", "_minmax")`` for ``masked_mse_minmax``; ``(metric, "")`` when it has no scoring suffix."""
    for suffix in SCORING_LABELS:
        if metric.endswith(suffix) and len(metric) > len(suffix):
            return metric[: -len(suffix)], suffix
    return metric, ""


def base_metric(metric: str) -> str:
    """The metric without its scoring suffix (``masked_mse_minmax`` → ``masked_mse``)."""
    return split_scoring(metric)[0]


def ci_wider_than_range(mean: float | None, ci95: float | None, metric: str) -> bool:
    """Whether ``mean ± ci95`` spans more than the whole range of ``metric`` (:data:`METRIC_RANGES`,
    of its unsuffixed base; never for an unbounded metric or a missing interval)."""
    bounds = METRIC_RANGES.get(metric, METRIC_RANGES.get(base_metric(metric)))
    if bounds is None or mean is None or ci95 is None or not math.isfinite(ci95):
        return False
    return 2.0 * ci95 > bounds[1] - bounds[0]


def privacy_direction(metric: str) -> int:
    """:data:`PRIVACY_DIRECTION` of the metric or of its unsuffixed base; 0 for any other metric."""
    return PRIVACY_DIRECTION.get(metric, PRIVACY_DIRECTION.get(base_metric(metric), 0))


def arrow(metric: str) -> str:
    """``↑`` or ``↓``: the direction of more privacy; empty for utility and other metrics."""
    return {1: "↑", -1: "↓"}.get(privacy_direction(metric), "")


def better_arrow(metric: str) -> str:
    """``↑`` or ``↓``: the direction in which ``metric`` is better for the defended row: more privacy
    for an attack's metric (:data:`PRIVACY_DIRECTION`), else :data:`VICTIM_DIRECTION`; empty for
    a metric that declares neither."""
    direction = privacy_direction(metric) or VICTIM_DIRECTION.get(metric, VICTIM_DIRECTION.get(base_metric(metric), 0))
    return {1: "↑", -1: "↓"}.get(direction, "")


def metric_label(metric: str) -> str:
    """The column label of a metric with its privacy arrow (a scoring suffix in parentheses)."""
    base, suffix = split_scoring(metric)
    label = METRIC_LABELS.get(metric) or METRIC_LABELS.get(base, base) + (f" ({SCORING_LABELS[suffix]})" if suffix else "")
    return f"{label} {arrow(metric)}".strip()


def attack_label(name: str) -> str:
    """Display name of an attack (:data:`ATTACK_LABELS`; the name itself for one it does not know)."""
    return ATTACK_LABELS.get(name, name)


def defense_label(name: str) -> str:
    """Paper name of a defense (compositions ``x+dp`` → ``X+DP``)."""
    if name in DEFENSE_LABELS:
        return DEFENSE_LABELS[name]
    base, _, rest = name.partition("+")
    return DEFENSE_LABELS.get(base, base) + ("+" + rest.upper() if rest else "")


def defense_rank(name: str) -> int:
    """Sort position of a defense: the paper's order, unknown defenses last."""
    return DEFENSE_ORDER.index(name) if name in DEFENSE_ORDER else len(DEFENSE_ORDER)


def factor_value(field: str, value: object) -> str:
    """A row factor as shown: ``8×`` for a CR, ``SCH`` for heads, empty when the cell does not read it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if field == "defense":
        return defense_label(str(value))
    if field == "dataset":
        return DATASET_LABELS.get(str(value), str(value))
    if field == "cr":
        return f"{float(value):g}×"
    if field in ("heads",):
        return str(value).upper()
    if field == "protocol":
        return {"ushaped": "USL", "vanilla": "VSL"}.get(str(value), str(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def number(value: float, metric: str, *, signed: bool = False, scaled: bool = True) -> str:
    """A value of ``metric`` in its display units and precision, with a true minus sign."""
    base = base_metric(metric)
    x = value * SCALE.get(metric, SCALE.get(base, 1.0)) if scaled else value
    digits = DECIMALS.get(metric, DECIMALS.get(base))
    sign = "+" if signed else ""
    text = f"{x:{sign}.{digits}f}" if digits is not None else f"{x:{sign}.4g}"
    return text.replace("-", MINUS)
