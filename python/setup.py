# SPDX-License-Identifier: MIT
"""Build step of the fpemu Python package (metadata: pyproject.toml).

The package is pure Python over libfpemu's binding interface (ctypes); the
build bundles the shared library into the package as fpemu/_lib/libfpemu.so:
  1. $FPEMU_LIBRARY, if set (the path of a libfpemu.so), else
  2. in a source checkout (this file in <repo>/python): the build's
     libfpemu.so.VERSION in $FPEMU_BUILD, else <repo>/build, built there
     with `make python-lib` if it is missing;
  3. otherwise nothing is bundled and the package loads libfpemu.so.0 from
     the loader's search path at import time (`make install`).
"""
import atexit
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def version():
    h = ROOT / "emu" / "fpemu.h"
    if h.exists():
        m = re.search(r'#define FPEMU_VERSION "([^"]+)"', h.read_text())
        if m:
            return m.group(1)
    return "0.1.0"


def find_library():
    env = os.environ.get("FPEMU_LIBRARY")
    if env:
        if not Path(env).is_file():
            raise SystemExit("fpemu: $FPEMU_LIBRARY=%s is not a file" % env)
        return Path(env)
    if not (ROOT / "Makefile").exists() or not (ROOT / "emu" / "fpemu_api.h").exists():
        return None
    build = Path(os.environ.get("FPEMU_BUILD") or ROOT / "build").resolve()
    lib = build / ("libfpemu.so." + version())
    if not lib.exists():
        cmd = ["make", "-C", str(ROOT), "BUILD=%s" % build, "python-lib"]
        print("fpemu: %s is not built; running: %s" % (lib, " ".join(cmd)), flush=True)
        r = subprocess.run(cmd)
        if r.returncode != 0 or not lib.exists():
            raise SystemExit("fpemu: could not build %s: run `make` in %s first (`make deps` installs what it needs), "
                             "or set FPEMU_LIBRARY to a libfpemu.so" % (lib, ROOT))
    return lib


class BuildPy(build_py):
    def run(self):
        shutil.rmtree(Path(self.build_lib) / "fpemu", ignore_errors=True)  # no stale files from an earlier build
        super().run()
        lib = find_library()
        if lib is None:
            print("fpemu: not in a source checkout and $FPEMU_LIBRARY is not set: nothing bundled; "
                  "the package will load libfpemu.so.0 from the loader's search path", flush=True)
            return
        dest = Path(self.build_lib) / "fpemu" / "_lib"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib, dest / "libfpemu.so")
        print("fpemu: bundled %s as fpemu/_lib/libfpemu.so" % lib, flush=True)


class BinaryDistribution(Distribution):
    """A wheel for this platform: it carries a shared library."""

    def has_ext_modules(self):
        return True


# Build in a temporary folder, not python/build: nothing is left in the
# source tree, and two builds at once (two test runs) do not share files.
BUILD_BASE = tempfile.mkdtemp(prefix="fpemu-pybuild-")
atexit.register(shutil.rmtree, BUILD_BASE, True)

setup(version=version(), cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution,
      options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}})
