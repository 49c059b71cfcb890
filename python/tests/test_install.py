# SPDX-License-Identifier: MIT
"""`pip install ./python` for real: into a fresh virtual environment, then
the package imported from a folder outside the repository, where it must
load the libfpemu it bundled (no $FPEMU_LIBRARY, no source tree on the
path), whose built-in tree table serves gemm(algo="cublas").

No download: the new environment sees this interpreter's packages (NumPy,
setuptools) through a .pth file, its own old setuptools is removed, and pip
builds without isolation and without an index."""
import json
import os
import subprocess
import sysconfig
import venv
from pathlib import Path

from conftest import PYDIR, ROOT


def test_pip_install_into_a_fresh_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "_outer_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("FPEMU_LIBRARY", "PYTHONPATH")}
    env["FPEMU_BUILD"] = os.environ.get("FPEMU_BUILD") or str(ROOT / "build")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                        "--no-input", str(PYDIR)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    away = tmp_path / "elsewhere"
    away.mkdir()
    env.pop("FPEMU_BUILD")
    probe = ("import json, numpy as np, fpemu; print(json.dumps([fpemu.__file__, fpemu.library_path(), fpemu.version(), "
             "fpemu.cast(np.array([464.0, 1e-6], np.float32), 'e4m3').tolist(), "
             "fpemu.cast_stats([1.0, 70000.0], 'e5m2')['overflow'], "
             "fpemu.gemm(np.ones((64, 4096), np.float16), np.ones((4096, 64), np.float16), algo='cublas', "
             "return_stats=True)[1]['cublas']['table_line']]))")
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, env=env, cwd=away)
    assert r.returncode == 0, r.stderr
    file, lib, ver, vals, ovf, line = json.loads(r.stdout)
    pkg = site / "fpemu"
    assert Path(file) == pkg / "__init__.py"
    assert Path(lib) == pkg / "_lib" / "libfpemu.so"
    built = Path(os.environ.get("FPEMU_BUILD") or ROOT / "build") / ("libfpemu.so." + ver)
    assert Path(lib).read_bytes() == built.read_bytes()
    assert vals == [448.0, 0.0] and ovf == 1
    assert line == 24  # algo='cublas' away from the repository: the table built into the library
    assert not str(Path(file)).startswith(str(ROOT))
