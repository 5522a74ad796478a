#!/usr/bin/env python3
"""Builds the Python package into dist/python/: one platform wheel per longrun executable (the client
plus the executable inside, like ruff or uv), the pure wheel (the client alone) and the sdist.

    python3 scripts/python_wheel.py                       # dist/longrun and dist/release/*
    python3 scripts/python_wheel.py --out DIR --no-release
    python3 scripts/python_wheel.py --binary path/to/longrun [--binary …]

Offline, standard library only: wheels are built by pip (`pip wheel --no-build-isolation --no-index`)
through the package's own build backend (clients/python/_build), or by that backend directly when
this Python has no pip (--direct forces it). Executables are found in dist/longrun (this machine's
build) and dist/release/ (plain executables, or .tar.gz / .zip archives holding one); each one's
platform tag is read from its headers. When two give the same tag, a release build wins over the
local one, and a "baseline" build (runs on older CPUs) over the others. An executable that runs here
must say the package's version (`longrun --version`) and pass the client's start check
(`system.describe`: protocol, methods, params); one for another platform is not run.
Install: `pip install --no-index --find-links dist/python longrun` picks this machine's wheel.
`npm run release` runs this with `--binary` for the executable of each of its archives,
`--no-pure --no-sdist`, into dist/release/python/ (scripts/channels.ts): one wheel per platform.
"""
import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.join(REPO, "clients", "python")
sys.path.insert(0, os.path.join(PROJECT, "_build"))
sys.path.insert(0, PROJECT)
import longrun_build  # noqa: E402
from longrun import IncompatibleServer, check_describe  # noqa: E402


def _log(msg: str) -> None:
    print("python_wheel: " + msg, flush=True)


def _from_archive(path: str, scratch: str) -> Optional[str]:
    """The longrun executable inside a release archive, extracted into ``scratch``, or None."""
    names = ("longrun", "longrun.exe")
    out_dir = tempfile.mkdtemp(dir=scratch)
    if path.endswith((".tar.gz", ".tgz", ".tar.xz", ".tar")):
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile() and os.path.basename(m.name) in names:
                    src = tar.extractfile(m)
                    assert src is not None
                    dest = os.path.join(out_dir, os.path.basename(m.name))
                    with src, open(dest, "wb") as f:
                        shutil.copyfileobj(src, f)
                    os.chmod(dest, 0o755)
                    return dest
    elif path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                if os.path.basename(n) in names:
                    dest = os.path.join(out_dir, os.path.basename(n))
                    with z.open(n) as src, open(dest, "wb") as f:
                        shutil.copyfileobj(src, f)
                    os.chmod(dest, 0o755)
                    return dest
    return None


def candidates(args: argparse.Namespace, scratch: str) -> List[Tuple[str, str, str]]:
    """(label, executable path, source kind) of every executable to package."""
    found: List[Tuple[str, str, str]] = []
    if args.binary:
        return [(b, os.path.abspath(b), "given") for b in args.binary]
    local = os.path.join(REPO, "dist", "longrun")
    if not args.no_local and os.path.isfile(local):
        found.append(("dist/longrun", local, "local"))
    release = os.path.join(REPO, "dist", "release")
    if not args.no_release and os.path.isdir(release):
        for dirpath, _, files in os.walk(release):
            for fn in sorted(files):
                path = os.path.join(dirpath, fn)
                label = os.path.relpath(path, REPO)
                exe = _from_archive(path, scratch) if fn.endswith((".tar.gz", ".tgz", ".tar.xz", ".tar", ".zip")) else path
                if exe:
                    found.append((label, exe, "release"))
    return found


def _rank(label: str, kind: str) -> Tuple[int, int, str]:
    return (0 if kind in ("given", "release") else 1, 0 if "baseline" in label else 1, label)


def choose(found: List[Tuple[str, str, str]]) -> Dict[str, Tuple[str, str]]:
    """One executable per platform tag: {tag: (label, path)}."""
    by_tag: Dict[str, List[Tuple[str, str, str]]] = {}
    for label, path, kind in found:
        try:
            tag = longrun_build.platform_tag(path)
        except longrun_build.NotAnExecutable as e:
            _log("skipped %s: %s" % (label, e))
            continue
        by_tag.setdefault(tag, []).append((label, path, kind))
    chosen: Dict[str, Tuple[str, str]] = {}
    for tag, items in sorted(by_tag.items()):
        items.sort(key=lambda x: _rank(x[0], x[2]))
        chosen[tag] = (items[0][0], items[0][1])
        for other in items[1:]:
            _log("%s: using %s, not %s" % (tag, items[0][0], other[0]))
    return chosen


def runs_here(tag: str) -> bool:
    """Whether an executable with this platform tag runs on this machine (so it can be checked)."""
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    if sys.platform.startswith("linux"):
        libc, libc_version = platform.libc_ver()
        m = re.match(r"manylinux_(\d+)_(\d+)_(.+)$", tag)
        if m and libc == "glibc":
            have = tuple(int(x) for x in (libc_version.split(".") + ["0"])[:2])
            return m.group(3) == machine and (int(m.group(1)), int(m.group(2))) <= have
        m = re.match(r"musllinux_\d+_\d+_(.+)$", tag)
        return bool(m) and libc != "glibc" and m.group(1) == machine
    if sys.platform == "darwin":
        return tag.startswith("macosx_") and tag.endswith("_" + ("arm64" if machine == "aarch64" else machine))
    if sys.platform == "win32":
        return tag == {"x86_64": "win_amd64", "aarch64": "win_arm64"}.get(machine)
    return False


def check_executable(label: str, path: str, tag: str, version: str) -> None:
    """An executable that runs here must say the package's version and pass the client's own start
    check (system.describe: the protocol and every method and param the client sends); one for
    another platform cannot be run here and is not checked."""
    if not runs_here(tag):
        _log("%s: for another platform (%s); not run here, not checked" % (label, tag))
        return
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    said = (out.stdout.split() + ["?", "?"])[1]
    if out.returncode != 0 or said != version:
        raise SystemExit("python_wheel: %s says %r (exit %d), the package is %s: rebuild it (bash compile.sh) or bump the version"
                         % (label, out.stdout.strip(), out.returncode, version))
    root = tempfile.mkdtemp(prefix="longrun-wheel-check-")
    try:
        served = subprocess.run([path, "serve", "--root", root], input='{"jsonrpc":"2.0","id":1,"method":"system.describe"}\n',
                                capture_output=True, text=True, timeout=120)
        answer = json.loads(served.stdout.splitlines()[0]) if served.stdout.strip() else {}
        if "result" not in answer:
            raise SystemExit("python_wheel: %s did not answer system.describe: %s" % (label, (served.stdout + served.stderr).strip()[:2000]))
        try:
            check_describe(answer["result"], label)
        except IncompatibleServer as e:
            raise SystemExit("python_wheel: %s cannot serve this client: %s" % (label, e)) from None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _pip_works() -> bool:
    r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    return r.returncode == 0


def build_one(out: str, binary: Optional[str], tag: Optional[str], direct: bool) -> str:
    if direct:
        return longrun_build.build_platform_wheel(out, binary, tag)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps", "--no-cache-dir",
           "--disable-pip-version-check", "--quiet", "-w", out, PROJECT]
    # the executable by environment, not -C/--config-settings: older pips (Python 3.9's) lack the option
    env = {k: v for k, v in os.environ.items() if k not in ("LONGRUN_WHEEL_BINARY", "LONGRUN_WHEEL_PLATFORM")}
    if binary:
        env.update(LONGRUN_WHEEL_BINARY=binary, LONGRUN_WHEEL_PLATFORM=str(tag))
    before = set(os.listdir(out))
    subprocess.run(cmd, check=True, env=dict(env, PIP_NO_INPUT="1"))
    made = sorted(set(os.listdir(out)) - before) or sorted(n for n in os.listdir(out) if n.endswith("-%s.whl" % (tag or "any")))
    return made[-1]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, "dist", "python"))
    ap.add_argument("--binary", action="append", help="package this executable (repeatable); default: dist/longrun and dist/release/")
    ap.add_argument("--no-release", action="store_true", help="ignore dist/release/")
    ap.add_argument("--no-local", action="store_true", help="ignore dist/longrun")
    ap.add_argument("--no-pure", action="store_true", help="no pure (client-only) wheel")
    ap.add_argument("--no-sdist", action="store_true")
    ap.add_argument("--direct", action="store_true", help="call the build backend directly instead of through pip")
    args = ap.parse_args(argv)
    version = str(longrun_build.project_metadata()["version"])
    direct = args.direct or not _pip_works()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        if old.startswith("longrun-") and old.endswith((".whl", ".tar.gz")) or old == "SHA256SUMS":
            os.unlink(os.path.join(out, old))
    scratch = tempfile.mkdtemp(prefix="longrun-wheel-")
    try:
        chosen = choose(candidates(args, scratch))
        if not chosen:
            _log("no executable found (dist/longrun, dist/release/): building the pure wheel only")
        built: List[str] = []
        for tag, (label, path) in chosen.items():
            check_executable(label, path, tag, version)
            built.append(build_one(out, path, tag, direct))
            _log("%s <- %s" % (built[-1], label))
        if not args.no_pure:
            built.append(build_one(out, None, None, direct))
            _log("%s (client only)" % built[-1])
        if not args.no_sdist:
            built.append(longrun_build.build_sdist(out))
            _log("%s" % built[-1])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with open(os.path.join(out, "SHA256SUMS"), "w", encoding="utf-8") as sums:
        for name in sorted(built):
            h = hashlib.sha256()
            with open(os.path.join(out, name), "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            sums.write("%s  %s\n" % (h.hexdigest(), name))
    _log("built %d file(s) in %s (%s)" % (len(built), out, "backend directly" if direct else "pip wheel"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
