"""The PEP 517 build backend of the longrun Python package: standard library only, so the package
builds offline with any pip (``pip wheel --no-build-isolation --no-index clients/python``) and with
no setuptools or wheel installed.

A plain build makes the pure wheel (``py3-none-any``: the client alone). Given an executable, it
makes a platform wheel that carries it as ``longrun/bin/longrun`` (``longrun.exe`` on Windows) and
installs the ``longrun`` command; the platform tag is read from the executable itself (ELF, Mach-O
or PE headers: architecture, glibc or musl and the newest glibc symbol it needs, macOS minimum):

    pip wheel --no-build-isolation --no-index --no-deps -w OUT clients/python \\
        -C binary=dist/longrun [-C platform=manylinux_2_27_x86_64]

(or the environment variables ``LONGRUN_WHEEL_BINARY`` / ``LONGRUN_WHEEL_PLATFORM``;
``LONGRUN_WHEEL_COMPRESSLEVEL``, default 6, sets the deflate level).
``scripts/python_wheel.py`` does this for dist/longrun and every binary in dist/release/.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import struct
import tarfile
import time
import zipfile
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)  # clients/python
#: Zip timestamps of every entry (reproducible wheels): 1980-01-01, the earliest a zip can hold.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


# -- project metadata (pyproject.toml) ---------------------------------------------------------

def _toml_string(text: str, key: str) -> Optional[str]:
    m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), text, re.M)
    return m.group(1) if m else None


def _toml_list(text: str, key: str) -> List[str]:
    m = re.search(r"^%s\s*=\s*\[(.*?)\]" % re.escape(key), text, re.M | re.S)
    return re.findall(r'"([^"]*)"', re.sub(r"#[^\n]*", "", m.group(1))) if m else []


def project_metadata(project: str = PROJECT) -> Dict[str, object]:
    """What the wheel needs from pyproject.toml (read without tomllib: Python 3.9 has none; a test
    checks this reading against tomllib's)."""
    with open(os.path.join(project, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    proj = text.split("[project]", 1)[1].split("\n[", 1)[0]
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0] if "[project.scripts]" in text else ""
    build = text.split("[tool.longrun-build]", 1)[1].split("\n[", 1)[0]
    lic = re.search(r'^license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', proj, re.M)
    return {
        "name": _toml_string(proj, "name"),
        "version": _toml_string(proj, "version"),
        "description": _toml_string(proj, "description"),
        "readme": _toml_string(proj, "readme"),
        "requires-python": _toml_string(proj, "requires-python"),
        "license": lic.group(1) if lic else None,
        "classifiers": _toml_list(proj, "classifiers"),
        "scripts": dict(re.findall(r'^([A-Za-z0-9_.-]+)\s*=\s*"([^"]+)"', scripts, re.M)),
        "packages": _toml_list(build, "packages"),
        "modules": _toml_list(build, "modules"),
    }


def _metadata_text(meta: Mapping[str, object], project: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % meta["name"],
        "Version: %s" % meta["version"],
        "Summary: %s" % meta["description"],
        "License: %s" % meta["license"],
        "Requires-Python: %s" % meta["requires-python"],
    ]
    lines += ["Classifier: %s" % c for c in meta["classifiers"]]  # type: ignore[union-attr]
    body = ""
    if meta.get("readme"):
        with open(os.path.join(project, str(meta["readme"])), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _license_file(project: str) -> Optional[str]:
    for p in (os.path.join(project, "LICENSE"), os.path.join(project, "..", "..", "LICENSE")):
        if os.path.isfile(p):
            return p
    return None


def _sources(meta: Mapping[str, object], project: str) -> Iterator[Tuple[str, str]]:
    """(name in the wheel, path) of every source file: the packages' .py files and py.typed, the modules."""
    for pkg in meta["packages"]:  # type: ignore[union-attr]
        base = os.path.join(project, str(pkg))
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "bin"))
            for fn in sorted(filenames):
                if fn.endswith(".py") or fn == "py.typed":
                    path = os.path.join(dirpath, fn)
                    yield os.path.relpath(path, project).replace(os.sep, "/"), path
    for mod in meta["modules"]:  # type: ignore[union-attr]
        yield "%s.py" % mod, os.path.join(project, "%s.py" % mod)


# -- platform tags, read from the executable ----------------------------------------------------

class NotAnExecutable(ValueError):
    """The file is not an ELF, Mach-O or PE executable this backend knows how to tag."""


def _elf_tag(head: bytes, path: str) -> str:
    if head[4] != 2:
        raise NotAnExecutable("%s: a 32-bit ELF; longrun ships 64-bit executables" % path)
    endian = "<" if head[5] == 1 else ">"
    machine = struct.unpack(endian + "H", head[18:20])[0]
    arch = {0x3E: "x86_64", 0xB7: "aarch64"}.get(machine)
    if arch is None:
        raise NotAnExecutable("%s: ELF machine %#x is not x86_64 or aarch64" % (path, machine))
    with open(path, "rb") as f:
        data = f.read()
    # the program interpreter says glibc or musl; the newest GLIBC_2.N symbol version, which glibc
    phoff, = struct.unpack(endian + "Q", data[32:40])
    phentsize, phnum = struct.unpack(endian + "HH", data[54:58])
    interp = b""
    for i in range(phnum):
        off = phoff + i * phentsize
        p_type, = struct.unpack(endian + "I", data[off:off + 4])
        if p_type == 3:  # PT_INTERP
            p_offset, = struct.unpack(endian + "Q", data[off + 8:off + 16])
            p_filesz, = struct.unpack(endian + "Q", data[off + 32:off + 40])
            interp = data[p_offset:p_offset + p_filesz]
    if b"musl" in interp:
        return "musllinux_1_2_%s" % arch
    minors = [int(m.group(1)) for m in re.finditer(rb"GLIBC_2\.([0-9]+)(?:\.[0-9]+)?\x00", data)]
    minor = max(minors + [17])  # manylinux_2_17 is the oldest tag pip still knows
    return "manylinux_2_%d_%s" % (minor, arch)


def _macho_tag(head: bytes, path: str) -> str:
    cputype, = struct.unpack("<i", head[4:8])
    arch = {0x01000007: "x86_64", 0x0100000C: "arm64"}.get(cputype)
    if arch is None:
        raise NotAnExecutable("%s: Mach-O CPU type %#x is not x86_64 or arm64" % (path, cputype))
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    ncmds, sizeofcmds = struct.unpack("<II", data[16:24])
    off, major, minor = 32, 11 if arch == "arm64" else 10, 0 if arch == "arm64" else 15
    for _ in range(ncmds):
        cmd, size = struct.unpack("<II", data[off:off + 8])
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos (xxxx.yy.zz)
            minos, = struct.unpack("<I", data[off + 12:off + 16])
            major, minor = minos >> 16, (minos >> 8) & 0xFF
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX
            version, = struct.unpack("<I", data[off + 8:off + 12])
            major, minor = version >> 16, (version >> 8) & 0xFF
        off += size
        if size == 0 or off > 32 + sizeofcmds:
            break
    return "macosx_%d_%d_%s" % (major, 0 if major >= 11 else minor, arch)


def _pe_tag(head: bytes, path: str) -> str:
    with open(path, "rb") as f:
        data = f.read(4096)
    pe, = struct.unpack("<I", data[0x3C:0x40])
    if data[pe:pe + 4] != b"PE\0\0":
        raise NotAnExecutable("%s: an MZ file without a PE header" % path)
    machine, = struct.unpack("<H", data[pe + 4:pe + 6])
    tag = {0x8664: "win_amd64", 0xAA64: "win_arm64"}.get(machine)
    if tag is None:
        raise NotAnExecutable("%s: PE machine %#x is not amd64 or arm64" % (path, machine))
    return tag


def platform_tag(path: str) -> str:
    """The wheel platform tag an executable runs on, read from its headers."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:4] == b"\x7fELF":
        return _elf_tag(head, path)
    if head[:4] == b"\xcf\xfa\xed\xfe":
        return _macho_tag(head, path)
    if head[:2] == b"MZ":
        return _pe_tag(head, path)
    raise NotAnExecutable("%s: not an ELF, Mach-O or PE executable" % path)


# -- writing wheels and sdists ------------------------------------------------------------------

def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class _Wheel:
    def __init__(self, path: str) -> None:
        level = int(os.environ.get("LONGRUN_WHEEL_COMPRESSLEVEL", "6"))  # tests use 1: faster, a few MB larger
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level)
        self.records: List[str] = []

    def add(self, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, ZIP_TIME)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append("%s,%s,%d" % (name, _record_hash(data), len(data)))

    def add_file(self, name: str, path: str, mode: int = 0o644) -> None:
        """A large file, streamed (the executable is over 100 MB)."""
        info = zipfile.ZipInfo(name, ZIP_TIME)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        digest, size = hashlib.sha256(), 0
        with open(path, "rb") as src, self.zip.open(info, "w", force_zip64=True) as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                size += len(chunk)
                dst.write(chunk)
        self.records.append("%s,sha256=%s,%d" % (name, base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode(), size))

    def close(self, record_name: str) -> None:
        self.records.append("%s,," % record_name)
        info = zipfile.ZipInfo(record_name, ZIP_TIME)
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n", compress_type=zipfile.ZIP_DEFLATED)
        self.zip.close()


def _dist_info(meta: Mapping[str, object]) -> str:
    return "%s-%s.dist-info" % (meta["name"], meta["version"])


def _settings(config_settings: Optional[Mapping[str, object]]) -> Tuple[Optional[str], Optional[str]]:
    cs = dict(config_settings or {})
    binary = cs.get("binary") or os.environ.get("LONGRUN_WHEEL_BINARY") or None
    platform = cs.get("platform") or os.environ.get("LONGRUN_WHEEL_PLATFORM") or None
    return (os.path.abspath(str(binary)) if binary else None), (str(platform) if platform else None)


def _dist_info_files(meta: Mapping[str, object], project: str, tag: str, pure: bool, with_scripts: bool) -> List[Tuple[str, bytes]]:
    di = _dist_info(meta)
    files = [
        ("%s/METADATA" % di, _metadata_text(meta, project).encode("utf-8")),
        ("%s/WHEEL" % di, ("Wheel-Version: 1.0\nGenerator: longrun_build\nRoot-Is-Purelib: %s\nTag: py3-none-%s\n"
                           % ("true" if pure else "false", tag)).encode()),
    ]
    scripts = meta.get("scripts") or {}
    if with_scripts and scripts:
        body = "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(scripts.items()))  # type: ignore[union-attr]
        files.append(("%s/entry_points.txt" % di, body.encode()))
    lic = _license_file(project)
    if lic:
        with open(lic, "rb") as f:
            files.append(("%s/LICENSE" % di, f.read()))
    return files


def build_platform_wheel(wheel_directory: str, binary: Optional[str], platform: Optional[str] = None, project: str = PROJECT) -> str:
    """Writes the wheel (platform when ``binary`` is given, else pure) into ``wheel_directory``; returns its file name."""
    meta = project_metadata(project)
    tag = (platform or platform_tag(binary)) if binary else "any"
    name = "%s-%s-py3-none-%s.whl" % (meta["name"], meta["version"], tag)
    os.makedirs(wheel_directory, exist_ok=True)
    tmp = os.path.join(wheel_directory, ".%s.%d.tmp" % (name, os.getpid()))
    try:
        w = _Wheel(tmp)
        for arc, path in _sources(meta, project):
            with open(path, "rb") as f:
                w.add(arc, f.read())
        if binary:
            w.add_file("longrun/bin/longrun.exe" if tag.startswith("win") else "longrun/bin/longrun", binary, 0o755)
        for arc, data in _dist_info_files(meta, project, tag, pure=binary is None, with_scripts=binary is not None):
            w.add(arc, data)
        w.close("%s/RECORD" % _dist_info(meta))
        os.replace(tmp, os.path.join(wheel_directory, name))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return name


# -- PEP 517 / PEP 660 hooks --------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings: Optional[Mapping[str, object]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Mapping[str, object]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Mapping[str, object]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Mapping[str, object]] = None) -> str:
    meta = project_metadata()
    binary, platform = _settings(config_settings)
    tag = (platform or platform_tag(binary)) if binary else "any"
    for arc, data in _dist_info_files(meta, PROJECT, tag, pure=binary is None, with_scripts=binary is not None):
        path = os.path.join(metadata_directory, *arc.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return _dist_info(meta)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[Mapping[str, object]] = None, metadata_directory: Optional[str] = None) -> str:
    binary, platform = _settings(config_settings)
    return build_platform_wheel(wheel_directory, binary, platform)


def build_editable(wheel_directory: str, config_settings: Optional[Mapping[str, object]] = None, metadata_directory: Optional[str] = None) -> str:
    """An editable install: a .pth file pointing at this source folder (no executable inside)."""
    meta = project_metadata()
    name = "%s-%s-py3-none-any.whl" % (meta["name"], meta["version"])
    w = _Wheel(os.path.join(wheel_directory, name))
    w.add("__editable__.%s-%s.pth" % (meta["name"], meta["version"]), (PROJECT + "\n").encode())
    for arc, data in _dist_info_files(meta, PROJECT, "any", pure=True, with_scripts=False):
        w.add(arc, data)
    w.close("%s/RECORD" % _dist_info(meta))
    return name


def build_sdist(sdist_directory: str, config_settings: Optional[Mapping[str, object]] = None) -> str:
    meta = project_metadata()
    base = "%s-%s" % (meta["name"], meta["version"])
    name = base + ".tar.gz"
    files: List[Tuple[str, str]] = [(arc, path) for arc, path in _sources(meta, PROJECT)]
    files += [("pyproject.toml", os.path.join(PROJECT, "pyproject.toml")), ("_build/longrun_build.py", os.path.join(HERE, "longrun_build.py"))]
    if meta.get("readme"):
        files.append((str(meta["readme"]), os.path.join(PROJECT, str(meta["readme"]))))
    lic = _license_file(PROJECT)
    if lic:
        files.append(("LICENSE", lic))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        pkg_info = _metadata_text(meta, PROJECT).encode("utf-8")
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size, info.mtime, info.mode = len(pkg_info), int(time.time()), 0o644
        tar.addfile(info, io.BytesIO(pkg_info))
        for arc, path in files:
            tar.add(path, arcname="%s/%s" % (base, arc), recursive=False)
    return name
