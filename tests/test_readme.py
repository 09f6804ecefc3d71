"""The numbers README.md and results/README.md quote, recomputed from what they describe.

Each test reads a statement out of the README text and checks it against the Makefile, the code or
the stored cell records, so a change to any of them that makes the statement false fails here.
"""
from __future__ import annotations

import re
import shlex
import statistics
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from bench.profiles import PROFILES
from bench.run.store import CellRecord, ResultStore

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
README = (ROOT / "README.md").read_text()
RESULTS_README = (RESULTS / "README.md").read_text()
ISSUE_FOLDERS = ("issue2-utility", "issue3-attacks", "issue4-attacks", "issue6-reproduction",
                 "issue6-structured-projection")


@cache
def records(folder: str) -> tuple[CellRecord, ...]:
    return tuple(ResultStore(RESULTS / folder).records())


def quoted(pattern: str) -> tuple[str, ...]:
    """The groups of the one place ``pattern`` matches in results/README.md (a space in ``pattern``
    matches any whitespace, line breaks included)."""
    found = re.findall(pattern.replace(" ", r"\s+"), RESULTS_README)
    assert len(found) == 1, f"the README should say this once: {pattern}"
    return found[0] if isinstance(found[0], tuple) else (found[0],)


def number(text: str) -> int:
    return int(text.replace(",", ""))


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end != -1 else None]


def demo_options() -> dict[str, str]:
    """The options of the ``bench run`` that ``make demo`` runs, its Makefile variables filled in."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t(.+)$", makefile, re.MULTILINE).group(1)
    for name, value in re.findall(r"^(\w+) \?= (\S+)$", makefile, re.MULTILINE):
        recipe = recipe.replace(f"$({name})", value)
    words = shlex.split(recipe)
    assert words[:2] == ["bench", "run"]
    return dict(zip(words[2::2], words[3::2]))


def test_make_demo_is_described_as_the_makefile_runs_it():
    opts = demo_options()
    setup = section(README, "## Set-up")
    crs = re.findall(r"CR (\d+(?:/\d+)*)", setup)
    assert crs and set(crs) == {opts["--cr"].replace(",", "/")}
    assert set(re.findall(r"seed (\d+)", setup)) == {opts["--seeds"]}
    assert f"`{opts['--profile']}` profile" in setup and f"`{opts['--out']}/`" in setup
    names = {"raw": "raw", "lightsplit-f": "LightSplit-F", "decoder-ref": "reference decoder", "unsplit": "UnSplit",
             "prior": "`prior` floor"}
    for name in opts["--defense"].split(",") + opts["--attack"].split(","):
        assert names[name] in setup, name


def test_make_demo_budget_is_quoted_with_the_counts_it_gives():
    from attacks.decoder_nets import DECODER_CONFIGS
    from attacks.unsplit import CONFIGS as UNSPLIT_CONFIGS

    setup = " ".join(section(README, "## Set-up").split())
    budget = float(demo_options()["--attack-budget"])
    epochs, outer = DECODER_CONFIGS["cpu"].epochs, UNSPLIT_CONFIGS["cpu"].outer_steps
    assert f"`DEMO_BUDGET={budget:g}`: {round(budget * epochs)} reference-decoder epochs instead of {epochs}" in setup
    assert f"{round(budget * outer)} UnSplit alternations instead of {outer}" in setup
    assert f"the attacks ran at ×{budget:g}" in setup and "about 8 minutes" not in setup


def test_entry_point_example_names_the_defense_registrys_group():
    from defenses import DEFENSES

    tomllib = pytest.importorskip("tomllib")  # Python ≥ 3.11
    block = re.search(r"```toml\n(\[project\.entry-points.*?)```", README, re.DOTALL).group(1)  # not the grid-file example
    groups = tomllib.loads(block)["project"]["entry-points"]
    assert list(groups) == [f"splitbench.{DEFENSES.kind}s"]
    (name, target), = groups[f"splitbench.{DEFENSES.kind}s"].items()
    example = (ROOT / "examples" / "random_subsample.py").read_text()
    assert f'@DEFENSES.register("{name}")\nclass {target.split(":")[1]}(' in example


def test_the_reproduction_folders_are_cpu_profile_mnist_three_seeds():
    for folder in ISSUE_FOLDERS:
        cells = [r.cell for r in records(folder)]
        assert cells and {c.profile for c in cells} == {"cpu"} and {c.dataset for c in cells} == {"mnist"}
        assert {c.seed for c in cells} == {0, 1, 2}, folder


def test_grids_are_where_attacks_ran():
    for folder in ISSUE_FOLDERS:
        attacked = any(r.cell.attack != "none" for r in records(folder))
        assert (RESULTS / folder / "grids").is_dir() == attacked, folder
    assert "where attacks ran (all but `issue2-utility/`)" in " ".join(RESULTS_README.split())


def test_issue2_folder_holds_exactly_what_its_command_makes():
    command = quoted(r"`(bench run --profile cpu [^`]* --out results/issue2-utility)`")[0]
    words = shlex.split(command)
    opts = dict(zip(words[2::2], words[3::2]))
    crs = [float(c) for c in opts["--cr"].split(",")]
    expected = {(d, cr if d != "raw" else None, int(s)) for d in opts["--defense"].split(",") for cr in crs
                for s in opts["--seeds"].split(",")}
    stored = {(r.cell.defense, r.cell.knob("cr"), r.cell.seed) for r in records("issue2-utility")}
    assert stored == expected


def test_the_cpu_profile_sizes_quoted():
    members, nonmembers, test, epochs = quoted(
        r"carved into ([\d,]+) members, ([\d,]+) non-members \(the attackers' auxiliary data\) and ([\d,]+) test "
        r"images, (\d+) epochs")
    cpu = PROFILES["cpu"]
    assert (number(members), number(nonmembers), number(test), int(epochs)) == (cpu.members, cpu.nonmembers,
                                                                              cpu.test, cpu.epochs)


def test_stored_cell_counts():
    total, attacked, free = quoted(r"Stored: \*\*(\d+) cells\*\* \((\d+) attack cells and (\d+) attack-free")
    stored = records("issue6-reproduction")
    assert number(total) == len(stored)
    assert number(attacked) == sum(r.cell.attack != "none" for r in stored)
    assert number(free) == sum(r.cell.attack == "none" for r in stored)
    assert all(r.status == "ok" for r in stored)


def test_attacked_members_per_cell():
    most, unsplit = quoted(r"Scores are over ([\d,]+) attacked members per cell, except UnSplit's, which are over "
                           r"its (\d+) targets")
    targets = {(r.cell.attack == "unsplit", r.metrics["attack_targets"])
               for r in records("issue6-reproduction") if r.cell.attack != "none"}
    assert targets == {(False, number(most)), (True, number(unsplit))}


def test_lightsplit_l_meets_the_reference_decoder_at_cr_8_only():
    assert "LightSplit-L under the reference decoder, which was run at CR 8 only" in " ".join(RESULTS_README.split())
    crs = {r.cell.knob("cr") for r in records("issue6-reproduction")
           if r.cell.defense == "lightsplit-l" and r.cell.attack == "decoder-ref"}
    assert crs == {8.0}


def test_left_out_decoder_cells_are_not_stored():
    (count,) = quoted(r"not reached in the budget: (\d+) cells, 4 decoders × 4 rows × 3 seeds")
    rows = {("lightsplit-l", 8.0, 0.0, None), ("lightsplit-f", 8.0, 1e-3, None), ("lightsplit-f", 8.0, 0.1, None),
            ("lightsplit-f+dp", 8.0, 0.0, 0.02)}
    decoders = {"decoder-z", "decoder-z-lift", "decoder-z-grad", "decoder-fused"}
    assert number(count) == len(decoders) * len(rows) * 3
    stored = [r for r in records("issue6-reproduction") if r.cell.attack in decoders
              and (r.cell.defense, r.cell.knob("cr"), r.cell.lambda_wcc, r.cell.knob("sigma")) in rows]
    assert stored == []


def test_reused_cells_and_how_many_differ_from_their_originals():
    copied, differ = quoted(r"Their (\d+) cells were copied in, and (\d+) of them now differ")
    reproduction = {r.cell.id: r for r in records("issue6-reproduction")}
    originals = [*records("issue3-attacks"), *records("issue4-attacks")]
    assert number(copied) == len(originals) and all(r.cell.id in reproduction for r in originals)
    assert number(differ) == sum(r.metrics != reproduction[r.cell.id].metrics for r in originals)


def test_every_passive_victim_matches_its_utility_cell():
    from attacks import ATTACKS

    (pairs,) = quoted(r"\((\d+) pairs: every FORA, reference-decoder, UnSplit and projection-aware decoder cell")
    stored = records("issue6-reproduction")
    utility = {r.cell.victim_key: r.metrics["accuracy"] for r in stored if r.cell.attack == "none"}
    passive = [r for r in stored if r.cell.attack != "none" and ATTACKS.get(r.cell.attack).threat_model.value == "passive"]
    assert {r.cell.attack for r in passive} == {"fora", "decoder-ref", "unsplit", "decoder-z", "decoder-z-lift",
                                                "decoder-z-grad", "decoder-fused"}
    matched = [r for r in passive if r.cell.victim_key in utility]
    assert number(pairs) == len(matched)
    assert all(r.metrics["accuracy"] == utility[r.cell.victim_key] for r in matched)


WALL_GROUPS = {"SDAR": {"sdar"}, "FORA": {"fora"}, "UnSplit": {"unsplit"}, "FSHA": {"fsha"},
               "reference decoder": {"decoder-ref"},
               "projection-aware decoders": {"decoder-z", "decoder-z-lift", "decoder-z-grad", "decoder-fused"}}


@pytest.mark.parametrize("label", WALL_GROUPS)
def test_wall_time_per_attack_cell(label):
    low, high, median = quoted(rf"{label} (\d+)–(\d+) s \((?:median )?(\d+)\)")
    seconds = [r.wall_seconds for r in records("issue6-reproduction") if r.cell.attack in WALL_GROUPS[label]]
    assert (int(low), int(high), int(median)) == (round(min(seconds)), round(max(seconds)),
                                                  round(statistics.median(seconds)))


def test_quoted_tables_are_the_stored_ones():
    for name in ("II", "III", "XV", "XVI"):
        table = (RESULTS / "issue6-reproduction" / "tables" / f"table_{name}.md").read_text().strip()
        assert table in RESULTS_README, name


def test_quoted_claim_verdicts_are_the_stored_ones():
    lines = [line for line in (RESULTS / "issue6-reproduction" / "claims.txt").read_text().splitlines()
             if line.startswith("[")]  # the verdicts, not the convergence tally and the counts
    rows = [line for line in RESULTS_README.splitlines()
            if re.match(r"\| (\*\*held\*\*|\*\*not held\*\*|within noise|not testable|no leakage measured) \|", line)]
    assert len(rows) == len(lines)
    for line, row in zip(lines, rows):
        status, _, claim_id, where, text, detail = re.match(r"\[\s*(.*?)\s*\] (\S+): (\S+) \((.*?)\): (.*) — (.*)", line).groups()
        verdict, claim, measured = (cell.strip() for cell in row.strip("|").split("|"))
        assert (verdict.strip("*"), claim, measured) == (status, f"{text} ({where})", detail), claim_id
    assert Counter(r.split("|")[1].strip().strip("*") for r in rows) == Counter(
        re.match(r"\[\s*(.*?)\s*\]", line).group(1) for line in lines)


def test_python_api_example_is_examples_notebook_py():
    block = re.search(r"### Python API.*?```python\n(.*?)```", README, re.DOTALL).group(1)
    example = (ROOT / "examples" / "notebook.py").read_text()
    assert block == example.split("\n", 1)[1]  # the file less its one-line docstring
