"""The device kit: run the pending GPU work on a borrowed GPU machine and bring its cells home.

    python benchmarks/device/kit.py prepare                      # here: fill .travel/
    python3 benchmarks/device/kit.py run --out "$OUT"            # there (device tool, carry .travel)
    python benchmarks/device/kit.py collect /work/.device/...    # here: merge what came back

``prepare`` packs what the GPU machine lacks (wheels, the data the pending grids read, the LPIPS
trunk, records not yet committed) and checks that the tree and the travel folder fit the device's
64 MiB. ``run`` installs the project against that machine's torch, then works down
``pending.toml`` within a wall-clock budget, starting no cell it cannot finish, and keeps the new
cell records packed in ``$OUT`` (rewritten as cells land, so a killed command loses nothing it
finished). ``collect`` merges the returned records into their results folders, refusing any whose
checksum or cell id does not match, and regenerates those folders' tables, figures and claims.
See benchmarks/device/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

# This checkout's suite (not whichever copy pip installed last), and the kit's own modules.
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]
from commands import REPO, call  # noqa: E402
from pending import PENDING, PendingError, PendingItem, read_pending  # noqa: E402
from travel import (  # noqa: E402
    BACK_FILE_LIMIT,
    TRAVEL_LIMIT,
    download_wheels,
    folder_bytes,
    pack_folders,
    sha256,
    tree_bytes,
    write_pack,
)

MIN_ITEM_SECONDS = 45  # an item is not begun with less time left
GRACE_SECONDS = 20  # kept back from a grid's time budget for packing and exit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="fill the travel folder (here)")
    p.add_argument("--pending", type=Path, default=PENDING)
    p.add_argument("--only", nargs="*", default=[], help="pending items by name (default: all)")
    p.add_argument("--travel", type=Path, default=REPO / ".travel")
    p.add_argument("--data-root", type=Path, default=None, help="default: the project's ../shared/data")
    p.add_argument("--no-wheels", action="store_true", help="carry no wheels (a rehearsal on this machine)")
    r = sub.add_parser("run", help="run the pending work within a time budget (on the GPU machine)")
    r.add_argument("--out", type=Path, required=True, help="$OUT: what comes back")
    r.add_argument("--travel", type=Path, default=REPO / ".travel")
    r.add_argument("--budget", type=float, default=480, help="wall-clock seconds for everything (default 480 of 600)")
    r.add_argument("--device", default="cuda")
    r.add_argument("--no-install", action="store_true", help="use the installed project (a rehearsal)")
    c = sub.add_parser("collect", help="merge returned records into their results folders (here)")
    c.add_argument("returned", type=Path, help="the folder holding the returned cells.tar and manifest.json")
    c.add_argument("--pending", type=Path, default=PENDING)
    c.add_argument("--no-regenerate", action="store_true")
    args = parser.parse_args(argv)
    try:
        return {"prepare": prepare, "run": run, "collect": collect}[args.command](args)
    except PendingError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


# ---- prepare (here) ----------------------------------------------------------------------------------
def prepare(args) -> int:
    from bench.data import LAYOUTS
    from bench.data.autodetect import OFFLINE_COPIES
    from bench.errors import GridError
    from bench.metrics.lpips_weights import SHARED_TRUNK
    from bench.run.grid_file import load_grid_file
    from bench.run.provenance import code_version

    items = read_pending(args.pending, tuple(args.only))
    data_root = args.data_root or OFFLINE_COPIES[0]
    try:
        grids = {item.name: load_grid_file(REPO / item.grid) for item in items if item.grid}
    except GridError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    cells = [cell for grid in grids.values() for cell in grid.cells]
    folders = set()
    for dataset in sorted({cell.dataset for cell in cells}):
        if dataset == "digits":
            continue  # scikit-learn's own copy: nothing to carry
        found = LAYOUTS.get(dataset).find(data_root) if dataset in LAYOUTS else None
        if found is None or found == data_root:
            print(f"error: {dataset} not found as its own folder under {data_root}", file=sys.stderr)
            return 2
        folders.add(found.relative_to(data_root).parts[0])
    if any(cell.attack != "none" for cell in cells):
        folders.add(SHARED_TRUNK.parts[0])
    shutil.rmtree(args.travel, ignore_errors=True)
    args.travel.mkdir(parents=True)
    pack_folders(args.travel / "data.tar.gz", data_root, sorted(folders))
    wheels = [] if args.no_wheels else [w.name for w in download_wheels(args.travel / "wheels")]
    resumed = _carry_uncommitted_records([grid.options.out for grid in grids.values()], args.travel / "resume")
    meta = {"code_version": code_version(), "items": [asdict(item) for item in items], "data_folders": sorted(folders),
            "wheels": wheels, "resumed_records": resumed}
    (args.travel / "travel.json").write_text(json.dumps(meta, indent=1) + "\n")
    tree, carried = tree_bytes(REPO), folder_bytes(args.travel)
    for item in items:
        print(f"{item.name}: {item.kind}, ~{item.gpu_minutes:g} GPU min"
              + (f", {len(grids[item.name].cells)} cells" if item.name in grids else ""))
    total = tree + carried
    print(f"travel: tree {tree / 2**20:.1f} MiB + {args.travel.name}/ {carried / 2**20:.1f} MiB "
          f"(data {', '.join(sorted(folders)) or 'none'}; {len(wheels)} wheels; {resumed} uncommitted records) "
          f"= {total / 2**20:.1f} of {TRAVEL_LIMIT / 2**20:.0f} MiB")
    if total > TRAVEL_LIMIT:
        print(f"error: {total / 2**20:.1f} MiB would travel, over the device's {TRAVEL_LIMIT / 2**20:.0f} MiB: "
              "name fewer items with --only, or commit less under results/", file=sys.stderr)
        return 2
    print(f'device run: command "python3 benchmarks/device/kit.py run --out $OUT", carry ["{args.travel.name}"], timeout_s 600')
    return 0


def _carry_uncommitted_records(outs: list[str], into: Path) -> int:
    """Copy each grid folder's records that git does not hold as committed (new or changed) under
    ``into``: the GPU run resumes from them."""
    count = 0
    for out in outs:
        cells = REPO / out / "cells"
        if not cells.is_dir():
            continue
        listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", str(cells)], cwd=REPO,
                                capture_output=True, text=True).stdout.splitlines()
        for line in listed:
            path = REPO / line[3:].strip()
            if path.suffix == ".json" and path.is_file():
                target = into / path.relative_to(REPO)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
                count += 1
    return count


# ---- run (on the GPU machine) -------------------------------------------------------------------------
def run(args) -> int:
    deadline = time.time() + args.budget
    args.out.mkdir(parents=True, exist_ok=True)
    log = (args.out / "log.txt").open("a")

    def say(message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    meta = json.loads((args.travel / "travel.json").read_text())
    items = [PendingItem(**{**item, "workers": tuple(item["workers"]), "paths": tuple(item["paths"])}) for item in meta["items"]]
    # The tree sent here has no git history: its cells record the version prepare read there.
    env = dict(os.environ, PYTHONUNBUFFERED="1", BENCH_CODE_VERSION=meta["code_version"])
    if not args.no_install:
        _install(args.travel, env, say)
    data = args.travel / "data"
    if not data.is_dir():
        data.mkdir()
        shutil.unpack_archive(args.travel / "data.tar.gz", data)
    _resume(args.travel / "resume")
    from bench.run.grid_file import load_grid_file

    grids = {item.name: load_grid_file(REPO / item.grid) for item in items if item.kind == "grid"}
    packer = Packer(args.out, [REPO / grid.options.out for grid in grids.values()], {
        "code_version": meta["code_version"], "device": args.device, "folders": [g.options.out for g in grids.values()],
    })
    packer.start()
    bench = [sys.executable, "-c", "import sys; from bench.cli import main; sys.exit(main())"]
    try:
        for item in items:
            left = deadline - time.time()
            if left < MIN_ITEM_SECONDS:
                say(f"stopping before {item.name}: {left:.0f} s left")
                break
            say(f"{item.name} ({item.kind}), {left:.0f} s left")
            if item.kind == "tests":
                code = call([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", *item.paths],
                             env, min(left, 240), args.out / "tests.txt")
            elif item.kind == "grid":
                cmd = [*bench, "run", "--config", str(REPO / item.grid), "--device", args.device, "--jobs", str(item.jobs),
                       "--data-root", str(data), "--time-budget", str(max(1.0, left - GRACE_SECONDS)), "--quiet"]
                code = call(cmd, env, left, log)  # LPIPS finds its trunk under the data root
            else:
                from utilisation import measure_utilisation

                code = measure_utilisation(item, bench, data, args.device, deadline, args.out / "utilisation.json", env)
            say(f"{item.name}: exit {code}")
            packer.pack()
    finally:
        packer.stop()
    say(f"packed {packer.count} new files; {deadline - time.time():.0f} s of the budget left")
    return 0


def _install(travel: Path, env: dict, say) -> None:
    wheels = sorted(str(w) for w in (travel / "wheels").glob("*.whl"))
    if wheels:
        site = "/tmp/kit-site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--target", site, *wheels], check=True)
        sys.path.insert(0, site)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
    project = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                              "-e", str(REPO)], env=env, capture_output=True, text=True)
    if project.returncode:  # e.g. a setuptools too old for editable installs: the checkout on the path does as well
        say(f"pip install -e . failed ({(project.stderr.strip().splitlines() or ['?'])[-1]}); using the checkout on PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    say(f"installed the project and {len(wheels)} wheels against torch {_torch_version(env)}")


def _torch_version(env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                         capture_output=True, text=True, env=env)
    return out.stdout.strip() or "unknown"


def _resume(folder: Path) -> None:
    for path in folder.rglob("*.json") if folder.is_dir() else []:
        target = REPO / path.relative_to(folder)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


class Packer:
    """Keeps ``out/cells.tar`` holding every record (and reconstruction grid) that appeared or changed
    in ``folders`` since it started, rewritten every ``every`` seconds and on :meth:`pack`."""

    def __init__(self, out: Path, folders: list[Path], extra: dict, every: float = 20.0) -> None:
        self.out, self.folders, self.extra, self.every = out, folders, extra, every
        self.before = {p: sha256(p.read_bytes()) for p in self._files()}
        self.count, self._stop, self._lock = 0, threading.Event(), threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _files(self):
        for folder in self.folders:
            for sub, pattern in (("cells", "*.json"), ("grids", "*.png")):
                yield from sorted((folder / sub).glob(pattern))

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.pack()

    def pack(self) -> None:
        with self._lock:
            files, size = {}, 0
            for path in self._files():
                data = path.read_bytes()
                if self.before.get(path) == sha256(data):
                    continue
                if path.suffix == ".png" and size + len(data) > BACK_FILE_LIMIT // 2:
                    continue  # pictures only while there is room: the records always go
                size += len(data)
                files[_arcname(path)] = data
            write_pack(self.out, files, self.extra)
            self.count = len(files)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.pack()


def _arcname(path: Path) -> str:
    """``<out as the grid file names it>/<cells|grids>/<file>``: relative to the repository where it lies inside."""
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


# ---- collect (here) -----------------------------------------------------------------------------------
def collect(args) -> int:
    from merge import merge_pack

    refused, touched = merge_pack(args.returned, read_pending(args.pending), REPO)
    for line in refused:
        print(f"refused: {line}", file=sys.stderr)
    print(f"merged into {', '.join(map(str, touched)) or 'no folder'}; {len(refused)} refused")
    if touched and not args.no_regenerate:
        done = subprocess.run(["bash", str(REPO / "results" / "regenerate.sh"), *map(str, touched)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            print(f"error: the records are merged, but regenerating their tables failed: {last} "
                  f"(rerun: bash results/regenerate.sh {' '.join(map(str, touched))})", file=sys.stderr)
            return 1
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
