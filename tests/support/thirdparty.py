"""Install a distribution as a third party would: ``pip install`` into a virtualenv that
also sees this environment's packages (kapiserver and its dependencies), so that what the
distribution brings — its entry points above all — exists only there."""

import os
import subprocess
import sys


def virtualenv_with(path, *distributions) -> str:
    """Create a virtualenv at ``path``, install ``distributions`` (source directories) into
    it with pip, and return its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    python = os.path.join(path, "bin", "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    # addsitedir (not a bare path), so that this environment's own .pth files — an
    # editable install's finder — are processed too; whether or not it is a virtualenv.
    with open(os.path.join(purelib, "parent-environment.pth"), "w") as f:
        for site_dir in (p for p in sys.path if p.endswith("-packages")):
            f.write(f"import site; site.addsitedir({site_dir!r})\n")
    for distribution in distributions:
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", str(distribution)],
                       check=True, timeout=300)
    return python
