"""``bench verify``: the registered claims against a folder of stored cell records."""
from pathlib import Path

import pytest

from bench.run.cell import Cell
from bench.run.store import OK, CellRecord, ResultStore
from tests.bench.cli.runner import run_cli

BASE = dict(dataset="mnist", victim="mnistnet", cut="split-2")


def record(defense: str, seed: int, metrics: dict, *, attack: str = "none", profile: str = "cpu",
           lambda_wcc: float = 0.0, **knobs) -> CellRecord:
    cell = Cell(defense=defense, seed=seed, attack=attack, profile=profile, lambda_wcc=lambda_wcc,
                defense_knobs=knobs, **BASE)
    return CellRecord(cell, OK, metrics=metrics)


def write(root: Path, records: list[CellRecord]) -> Path:
    store = ResultStore(root)
    for r in records:
        store.write(r)
    return root


@pytest.fixture()
def results(tmp_path) -> Path:
    """Cells that decide three claims (two held, one not held); every other claim lacks cells."""
    return write(tmp_path / "results", [
        # SDAR SSIM at CR 8: LightSplit-F (0.25 + 0.35)/2 = 0.3 < top-K (0.5 + 0.5)/2 = 0.5, past 2·SE 0.1 → held
        record("lightsplit-f", 0, {"ssim": 0.25}, attack="sdar", cr=8.0),
        record("lightsplit-f", 1, {"ssim": 0.35}, attack="sdar", cr=8.0),
        record("topk", 0, {"ssim": 0.5}, attack="sdar", cr=8.0),
        record("topk", 1, {"ssim": 0.5}, attack="sdar", cr=8.0),
        # FORA SSIM at CR 8: LightSplit-F 0.6 is not below top-K 0.5 → not held
        record("lightsplit-f", 0, {"ssim": 0.6}, attack="fora", cr=8.0),
        record("topk", 0, {"ssim": 0.5}, attack="fora", cr=8.0),
        # DP accuracy 0.88 > 0.96 × raw 0.90 = 0.864 → held
        record("raw", 0, {"accuracy": 0.90}),
        record("raw+dp", 0, {"accuracy": 0.88}, sigma=0.02),
        # a stored cell without the claim's metric: not testable, and said so
        record("lightsplit-f", 0, {"ssim": 0.1}, attack="sdar", cr=8.0, lambda_wcc=1e-3),
    ])


def test_verify_prints_one_line_per_claim_and_the_counts(capsys, results):
    from bench.report.paper_claims import CLAIMS

    code, out, err = run_cli(capsys, ["verify", "--results", str(results)])
    lines = out.splitlines()
    assert code == 0, err
    cpu_claims = [c for c in CLAIMS if "cpu" in c.profiles]
    assert len(lines) == len(cpu_claims) + 2
    assert lines[-1] == f"2 held, 1 not held, 0 within noise, 0 no leakage measured, {len(cpu_claims) - 3} not testable (cpu profile)"
    assert lines[-2] == ("convergence at ×1: 0 testable claims on attacks rest on converged attacks, 2 on an attack not "
                         "converged (not converged, unstable or unknown)")
    unknown = "unknown at ×1 (×4 not stored on its seeds)"  # every cell at ×1 only
    assert ("[    held    ] mnist: sdar-ssim-lsf-below-topk-cr8 (Table II): sdar: LightSplit-F lowers SSIM more than topk "
            "at CR 8 — ssim: lightsplit-f CR 8 / sdar 0.3000 ±0.6353 (n=2) < topk CR 8 / sdar 0.5000 ±0.0000 (n=2) — "
            f"rests on an attack not converged: lightsplit-f CR 8 / sdar {unknown}; topk CR 8 / sdar {unknown}") in lines
    assert ("[  not held  ] mnist: fora-ssim-lsf-below-topk-cr8 (Table II): fora: LightSplit-F lowers SSIM more than topk "
            "at CR 8 — ssim: lightsplit-f CR 8 / fora 0.6000 (n=1, no CI) < topk CR 8 / fora 0.5000 (n=1, no CI) — "
            f"rests on an attack not converged: lightsplit-f CR 8 / fora {unknown}; topk CR 8 / fora {unknown}") in lines
    assert any(line.startswith("[    held    ] mnist: utility-dp-keeps-96pct ") and line.endswith(
        "accuracy: raw+dp σ 0.02 0.8800 (n=1, no CI) > raw 0.8640 = 0.96×0.9000 (n=1, no CI)") for line in lines)
    wcc = next(line for line in lines if " sdar-wcc0.001-raises-lpips " in line)
    assert wcc.startswith("[not testable]")
    assert wcc.endswith("no finite lpips in the stored lightsplit-f CR 8 λ 0.001 / sdar cells")
    absent = next(line for line in lines if " fsha-lsf-below-raw " in line)
    assert absent.startswith("[not testable]") and absent.endswith("no stored lightsplit-f CR 8 / fsha cells")
    assert sum(line.startswith("[not testable]") for line in lines) == len(cpu_claims) - 3


def test_verify_reads_several_folders_together(capsys, results, tmp_path):
    """Top-K's FORA cell in a second folder: the claim is decided only with both."""
    first = write(tmp_path / "first", [record("lightsplit-f", 0, {"ssim": 0.4}, attack="fora", cr=8.0)])
    second = write(tmp_path / "second", [record("topk", 0, {"ssim": 0.5}, attack="fora", cr=8.0)])
    _, alone, _ = run_cli(capsys, ["verify", "--results", str(first)])
    code, both, _ = run_cli(capsys, ["verify", "--results", str(first), "--results", str(second)])
    assert code == 0
    assert any(line.startswith("[not testable] mnist: fora-ssim-lsf-below-topk-cr8 ") for line in alone.splitlines())
    assert any(line.startswith("[    held    ] mnist: fora-ssim-lsf-below-topk-cr8 ") for line in both.splitlines())


def test_paper_profile_adds_the_value_claims(capsys, tmp_path):
    root = write(tmp_path / "paper", [record("raw", s, {"ssim": v}, attack="sdar", profile="paper")
                                      for s, v in enumerate((0.80, 0.84))])
    # the value claim: SDAR on raw, but on CIFAR-10 only; these MNIST cells do not count
    code, out, _ = run_cli(capsys, ["verify", "--results", str(root)])
    assert code == 0
    line = next(line for line in out.splitlines() if " sdar-raw-l4-ssim " in line)
    assert line.startswith("[not testable]") and out.splitlines()[-1].endswith("(paper profile)")
    cifar = write(tmp_path / "cifar", [CellRecord(Cell(dataset="cifar10", victim="resnet18", cut="l4", defense="raw",
                                                       profile="paper", seed=0, attack="sdar"), OK, {"ssim": 0.86})])
    _, out, _ = run_cli(capsys, ["verify", "--results", str(cifar)])
    line = next(line for line in out.splitlines() if " sdar-raw-l4-ssim " in line)
    assert line.startswith("[    held    ] cifar10: ") and line.endswith(
        "ssim 0.8600 (n=1, no CI) vs paper 0.83 ± 0.05 — rests on an attack not converged: raw / sdar unknown at ×1 "
        "(×4 not stored on its seeds)")


def budget_record(defense: str, seed: int, ssim: float, budget: float) -> CellRecord:
    cell = Cell(defense=defense, seed=seed, attack="sdar", profile="cpu", defense_knobs={"cr": 8.0},
                attack_knobs={"budget": budget}, **BASE)
    return CellRecord(cell, OK, metrics={"ssim": ssim})


def test_a_claim_states_the_seed_by_seed_convergence_of_its_attacks_and_keeps_its_status(capsys, tmp_path):
    # LightSplit-F: x4 moves each seed by at most 0.01 (converged). Top-K: +0.05 and -0.07 (unstable,
    # though the mean gain is -0.01). The claim itself (0.3 < 0.5) holds either way.
    root = write(tmp_path / "budgets", [
        *(budget_record("lightsplit-f", s, v, b) for s, v, b in ((0, 0.25, 1.0), (1, 0.35, 1.0), (0, 0.26, 4.0), (1, 0.34, 4.0))),
        *(budget_record("topk", s, v, b) for s, v, b in ((0, 0.5, 1.0), (1, 0.5, 1.0), (0, 0.55, 4.0), (1, 0.43, 4.0))),
    ])
    code, out, _ = run_cli(capsys, ["verify", "--results", str(root)])
    line = next(line for line in out.splitlines() if " sdar-ssim-lsf-below-topk-cr8 " in line)
    assert code == 0 and line.startswith("[    held    ] ")
    assert line.endswith(
        " — rests on an attack not converged: lightsplit-f CR 8 / sdar converged at ×1 (×4 gains +0.0100, −0.0100 ssim on "
        "seeds 0, 1; tolerance 0.02); topk CR 8 / sdar unstable at ×1 (×4 gains +0.0500, −0.0700 ssim on seeds 0, 1; "
        "tolerance 0.02)")


def test_bad_input_exits_2_with_one_line(capsys, results, tmp_path):
    code, _, err = run_cli(capsys, ["verify", "--results", str(tmp_path / "empty")])
    assert code == 2 and "no results in" in err
    code, _, err = run_cli(capsys, ["verify", "--results", str(results), "--profile", "paper"])
    assert code == 2 and "no results of profile 'paper'" in err
    mixed = write(tmp_path / "mixed", [record("raw", 0, {"accuracy": 0.9}, profile="smoke"),
                                       record("raw", 0, {"accuracy": 0.9}, profile="cpu")])
    code, _, err = run_cli(capsys, ["verify", "--results", str(mixed)])
    assert code == 2 and "results hold profiles cpu, smoke; pick one with --profile" in err
    code, _, err = run_cli(capsys, ["verify", "--results", str(results), "--attack-budget", "4"])
    assert code == 2 and "no attack cell was run at budget 4" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, ["verify", "--integrity", "--results", str(results), "--attack-budget", "4"])
    assert code == 2 and "--attack-budget does not apply to --integrity" in err
    code, out, _ = run_cli(capsys, ["verify", "--results", str(mixed), "--profile", "smoke"])
    assert code == 0 and out.splitlines()[-1] == "0 held, 0 not held, 0 within noise, 0 no leakage measured, 0 not testable (smoke profile)"


def test_verify_reports_no_leakage_and_an_unreached_cr(capsys, tmp_path):
    """SDAR on LightSplit-F sits on the prior's floor: its claim against top-K is "no leakage measured";
    learned 1×1 at nominal CR 16 realises CR 8: its claim is "not testable"."""
    root = write(tmp_path / "floor", [
        *[record("lightsplit-f", s, {"ssim": v}, attack="sdar", cr=8.0) for s, v in enumerate((0.20, 0.22))],
        *[record("topk", s, {"ssim": v}, attack="sdar", cr=8.0) for s, v in enumerate((0.50, 0.52))],
        *[record("raw", s, {"ssim": v}, attack="prior") for s, v in enumerate((0.21, 0.23))],
        *[record("lightsplit-f", s, {"ssim": 0.5, "realized_cr": 16.0}, attack="decoder-ref", cr=16.0) for s in (0, 1)],
        *[record("learned-1x1", s, {"ssim": 0.9, "realized_cr": 8.0}, attack="decoder-ref", cr=16.0) for s in (0, 1)],
    ])
    code, out, err = run_cli(capsys, ["verify", "--results", str(root)])
    assert code == 0, err
    lines = out.splitlines()
    floor = next(line for line in lines if " sdar-ssim-lsf-below-topk-cr8 " in line)
    assert floor.startswith("[no leakage measured] ")
    assert "vs the floor (prior ssim) 0.2200 (n=2)" in floor and "< topk CR 8 / sdar 0.5100 ±" in floor
    capped = next(line for line in lines if " decoder-ref-ssim-lsf-below-learned-1x1-cr16 " in line)
    assert capped.startswith("[not testable] ")
    assert capped.endswith("learned-1x1 reaches a realised CR of 8 on this victim, not the nominal 16 the claim is made at")
    assert ", 1 no leakage measured, " in lines[-1]
