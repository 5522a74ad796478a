"""The package: generated methods up to date, versions in step, types checked by mypy --strict, the
build backend's metadata and platform tags, and a platform wheel that installs into a fresh venv and
runs the example with nothing else set up (no LONGRUN_BIN, no longrun on PATH)."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import unittest
import zipfile

from testsupport import BIN, HERE, REPO, require_binary, temp_root

sys.path.insert(0, os.path.join(HERE, "_build"))
import gen_methods  # noqa: E402
import longrun_build  # noqa: E402

import longrun  # noqa: E402

MYPY = shutil.which("mypy")


class SourceTest(unittest.TestCase):
    def test_the_generated_methods_are_up_to_date(self):
        self.assertEqual(gen_methods.main(["--check"]), 0, "run python3 clients/python/gen_methods.py")

    def test_the_typed_methods_take_their_params_requiredness_and_types_from_describe(self):
        described = gen_methods.load_described()
        described["memory.get"]["params"]["required"] = []
        described["memory.search"]["params"]["properties"]["limit"] = {"type": "number"}
        text = "".join(gen_methods.render(described).values())
        self.assertIn("def get_memory(self, id: Optional[str] = None)", text)
        self.assertIn("limit: Optional[float] = None", text)

    def test_a_described_param_no_typed_method_sends_stops_the_generator(self):
        described = gen_methods.load_described()
        described["run.get"]["params"]["properties"]["extra"] = {"type": "string"}
        with self.assertRaisesRegex(ValueError, r"run\.get\(extra\)"):
            gen_methods.render(described)

    def test_the_package_version_is_the_servers(self):
        with open(os.path.join(REPO, "src", "version.ts"), encoding="utf-8") as f:
            server = re.search(r'VERSION = "([^"]+)"', f.read()).group(1)
        self.assertEqual(longrun.__version__, server)
        self.assertEqual(longrun_build.project_metadata()["version"], server)

    def test_the_backend_reads_pyproject_as_tomllib_does(self):
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            self.skipTest("tomllib needs Python 3.11")
        with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
            doc = tomllib.load(f)
        meta, proj = longrun_build.project_metadata(), doc["project"]
        for key in ("name", "version", "description", "readme", "requires-python", "classifiers"):
            self.assertEqual(meta[key], proj[key], key)
        self.assertEqual(meta["license"], proj["license"]["text"])
        self.assertEqual(meta["scripts"], proj["scripts"])
        self.assertEqual(meta["packages"], doc["tool"]["longrun-build"]["packages"])
        self.assertEqual(meta["modules"], doc["tool"]["longrun-build"]["modules"])


class TypesTest(unittest.TestCase):
    """mypy --strict over the package (and over a typed caller). Debian: apt-get install mypy."""

    def mypy(self, *args):
        return subprocess.run([MYPY, "--strict", "--python-version", "3.9", "--cache-dir", os.devnull, "--no-error-summary", *args],
                              cwd=HERE, capture_output=True, text=True, timeout=600)

    @unittest.skipIf(MYPY is None, "mypy is not installed (Debian: apt-get install mypy)")
    def test_the_package_passes_mypy_strict(self):
        out = self.mypy("-p", "longrun")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    @unittest.skipIf(MYPY is None, "mypy is not installed (Debian: apt-get install mypy)")
    def test_a_typed_caller_gets_typed_results_and_literal_params(self):
        d = temp_root(self)
        caller = os.path.join(d, "caller.py")
        with open(caller, "w") as f:
            f.write(
                "from longrun import AsyncLongrunClient, LongrunClient\n"
                "from longrun.types import TaskStatus\n"
                "def loop(lr: LongrunClient) -> int:\n"
                "    task = lr.status()['task']\n"
                "    assert task is not None\n"
                "    status: TaskStatus = task['status']\n"
                "    data = lr.resume()['data'] or {}\n"
                "    lr.progress('s', 'n', data={'step': 1})\n"
                "    return int(data.get('step', 0)) + task['turn_index']\n"
                "async def host(lr: AsyncLongrunClient) -> str:\n"
                "    cp = await lr.checkpoint('s', 'n', lang='fr')\n"  # line 11: not a CheckpointLang
                "    return cp['memory_id']\n"
            )
        out = self.mypy(caller)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        errors = [l for l in out.stdout.splitlines() if ": error:" in l]
        self.assertEqual(len(errors), 1, out.stdout)
        self.assertIn("caller.py:11:", errors[0])
        self.assertIn("lang", errors[0])


def _elf(machine, interp=b"/lib64/ld-linux-x86-64.so.2", glibc=(b"GLIBC_2.17", b"GLIBC_2.28", b"GLIBC_2.3.4")):
    """A minimal 64-bit little-endian ELF: header, one PT_INTERP program header, the strings."""
    phoff, interp_off = 64, 64 + 56
    head = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0, phoff, 0, 0, 64, 56, 1, 0, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 3, 4, interp_off, 0, 0, len(interp) + 1, len(interp) + 1, 1)
    return head + ph + interp + b"\0" + b"\0".join(glibc) + b"\0"


def _macho(cputype, minos):
    cmd = struct.pack("<IIIIII", 0x32, 24, 1, minos, 0, 0)
    return struct.pack("<IiiIIIII", 0xFEEDFACF, cputype, 0, 2, 1, len(cmd), 0, 0) + cmd


def _pe(machine):
    data = bytearray(b"MZ" + b"\0" * 0x3A + struct.pack("<I", 0x80) + b"\0" * (0x80 - 0x40))
    return bytes(data) + b"PE\0\0" + struct.pack("<H", machine) + b"\0" * 18


class PlatformTagTest(unittest.TestCase):
    def tag(self, data):
        path = os.path.join(temp_root(self), "exe")
        with open(path, "wb") as f:
            f.write(data)
        return longrun_build.platform_tag(path)

    def test_tags_come_from_the_executables_headers(self):
        self.assertEqual(self.tag(_elf(0x3E)), "manylinux_2_28_x86_64")
        self.assertEqual(self.tag(_elf(0xB7, glibc=(b"GLIBC_2.17",))), "manylinux_2_17_aarch64")
        self.assertEqual(self.tag(_elf(0x3E, interp=b"/lib/ld-musl-x86_64.so.1", glibc=())), "musllinux_1_2_x86_64")
        self.assertEqual(self.tag(_macho(0x0100000C, 13 << 16)), "macosx_13_0_arm64")
        self.assertEqual(self.tag(_macho(0x01000007, (10 << 16) | (15 << 8))), "macosx_10_15_x86_64")
        self.assertEqual(self.tag(_pe(0x8664)), "win_amd64")
        with self.assertRaises(longrun_build.NotAnExecutable):
            self.tag(b"#!/bin/sh\necho not a binary\n")

    def test_the_built_executable_is_tagged_for_this_machine(self):
        require_binary()
        self.assertRegex(longrun_build.platform_tag(BIN), r"^(manylinux_2_\d+|musllinux_1_2)_(x86_64|aarch64)$|^macosx_")


class WheelTest(unittest.TestCase):
    """scripts/python_wheel.py → a fresh venv → pip install → the example runs, nothing else set up."""

    def test_a_platform_wheel_installs_and_runs_the_example_with_its_own_executable(self):
        require_binary()
        d = temp_root(self, "longrun-wheel-test-")
        out = os.path.join(d, "dist")
        scratch = os.path.join(d, "tmp")  # pip's own temporary files (some pips leave cacert.pem behind) go here
        os.mkdir(scratch)
        env = dict(os.environ, LONGRUN_WHEEL_COMPRESSLEVEL="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", TMPDIR=scratch)
        build = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "python_wheel.py"), "--out", out, "--binary", BIN, "--no-sdist"],
                               env=env, capture_output=True, text=True, timeout=900)
        self.assertEqual(build.returncode, 0, build.stdout + build.stderr)
        wheels = sorted(n for n in os.listdir(out) if n.endswith(".whl"))
        self.assertEqual(len(wheels), 2, wheels)
        pure = [w for w in wheels if w.endswith("-any.whl")][0]
        platform = [w for w in wheels if not w.endswith("-any.whl")][0]
        with zipfile.ZipFile(os.path.join(out, platform)) as z:
            exe = z.getinfo("longrun/bin/longrun")
            self.assertTrue((exe.external_attr >> 16) & 0o111, "the executable keeps its x bit")
            self.assertIn("longrun/py.typed", z.namelist())
            self.assertIn("longrun_client.py", z.namelist())
        with zipfile.ZipFile(os.path.join(out, pure)) as z:
            self.assertFalse([n for n in z.namelist() if n.startswith("longrun/bin/") or n.endswith("entry_points.txt")])

        venv = os.path.join(d, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300, env=env)
        py = os.path.join(venv, "bin", "python")
        install = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--find-links", out, "longrun"],
                                 env=env, capture_output=True, text=True, timeout=900)
        self.assertEqual(install.returncode, 0, install.stdout + install.stderr)
        self.assertIn(platform.split("-py3")[0], install.stdout)

        run_dir = os.path.join(d, "elsewhere")
        os.mkdir(run_dir)
        shutil.copy(os.path.join(HERE, "example.py"), run_dir)  # not next to the source package
        clean = {k: v for k, v in os.environ.items() if k not in ("LONGRUN_BIN", "PYTHONPATH")}
        clean["PATH"] = "/usr/bin:/bin"  # no longrun, no venv
        ran = subprocess.run([py, "example.py"], cwd=run_dir, env=clean, capture_output=True, text=True, timeout=120)
        self.assertEqual(ran.returncode, 0, ran.stdout + ran.stderr)
        used = [line[len("binary: "):] for line in ran.stdout.splitlines() if line.startswith("binary: ")][0]
        self.assertTrue(os.path.realpath(used).startswith(os.path.realpath(venv) + os.sep), "the bundled executable: " + used)
        self.assertIn("[5] finish: completed", ran.stdout)
        self.assertIn("<!-- longrun-state:", ran.stdout)

        version = subprocess.run([os.path.join(venv, "bin", "longrun"), "--version"], env=clean, capture_output=True, text=True, timeout=60)
        self.assertEqual(version.stdout.split()[:2], ["longrun", longrun.__version__], version.stderr)
        typed = subprocess.run([py, "-c", "import longrun, os; print(os.path.isfile(os.path.join(os.path.dirname(longrun.__file__), 'py.typed')))"],
                               cwd=run_dir, env=clean, capture_output=True, text=True, timeout=60)
        self.assertEqual(typed.stdout.strip(), "True")

    def test_the_sdist_holds_the_sources_and_the_backend_and_no_executable(self):
        d = temp_root(self)
        name = longrun_build.build_sdist(d)
        with tarfile.open(os.path.join(d, name)) as tar:
            names = tar.getnames()
        base = name[: -len(".tar.gz")]
        for n in ("pyproject.toml", "PKG-INFO", "_build/longrun_build.py", "longrun/__init__.py", "longrun/py.typed", "longrun_client.py", "LICENSE", "README.md"):
            self.assertIn("%s/%s" % (base, n), names)
        self.assertFalse([n for n in names if "/bin/" in n])


if __name__ == "__main__":
    unittest.main()
