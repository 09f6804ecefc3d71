"""What travels to the GPU machine and what comes back: the travel folder, its size against the
device's limit, and checksummed packs of cell records."""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

TRAVEL_LIMIT = 64 * 2**20  # the working tree and everything carried, per device call
BACK_FILE_LIMIT = 16 * 2**20  # each file that comes back from $OUT
# Packages the GPU machine lacks (its image has torch, pandas, pyarrow, scikit-learn, seaborn, jinja2,
# rich, click, pytest, scipy, tqdm, attrs): carried as wheels for its Python.
MISSING_THERE = ("piq", "lpips", "opacus", "jsonschema", "jsonschema-specifications", "referencing", "rpds-py")
THERE_PYTHON = "3.12"
THERE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_bytes(repo: Path) -> int:
    """Bytes of what a device call sends of the checkout: tracked files and untracked files git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                            capture_output=True, check=True).stdout.split(b"\0")
    return sum((repo / os.fsdecode(name)).stat().st_size for name in listed if name and (repo / os.fsdecode(name)).is_file())


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def download_wheels(into: Path) -> list[Path]:
    """Wheels of :data:`MISSING_THERE` at this machine's installed versions, for the GPU machine's
    Python (pip reaches the package registry from here, not from there)."""
    from importlib.metadata import version

    into.mkdir(parents=True, exist_ok=True)
    platforms = [arg for p in THERE_PLATFORMS for arg in ("--platform", p)]
    for package in MISSING_THERE:
        subprocess.run(["python3", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
                        THERE_PYTHON, "--implementation", "cp", *platforms, "-d", str(into), f"{package}=={version(package)}"],
                       check=True)
    return sorted(into.glob("*.whl"))


def pack_folders(tar_path: Path, root: Path, folders: list[str]) -> None:
    """``root/<folder>`` for each folder, into a gzipped tar (the 10,000 small JPEGs of CIFAR-10 take
    37 MB as a plain tar, mostly headers and padding, and 14 MB gzipped)."""
    with tarfile.open(tar_path, "w:gz", compresslevel=6) as tar:
        for folder in folders:
            tar.add(root / folder, arcname=folder)


def write_pack(out: Path, files: dict[str, bytes], extra: dict) -> None:
    """``files`` (arcname → bytes) as ``out/cells.tar`` and their sha256 in ``out/manifest.json``
    (with ``extra``), each written whole or not at all, so a command killed mid-write leaves the
    previous pack."""
    from bench.run.store import atomic_write_bytes

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    manifest = {**extra, "files": {name: sha256(data) for name, data in sorted(files.items())}}
    atomic_write_bytes(out / "cells.tar", buffer.getvalue())
    atomic_write_bytes(out / "manifest.json", (json.dumps(manifest, indent=1) + "\n").encode())


def read_pack(returned: Path) -> tuple[dict, dict[str, bytes]]:
    """The manifest and the files of a pack that came back."""
    manifest = json.loads((returned / "manifest.json").read_text())
    files = {}
    with tarfile.open(returned / "cells.tar") as tar:
        for member in tar.getmembers():
            if member.isfile():
                files[member.name] = tar.extractfile(member).read()
    return manifest, files

