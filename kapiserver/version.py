"""The version kapiserver reports on ``/version`` (upstream's ``version.Info`` shape)."""

from __future__ import annotations

import functools
import os
import platform
import subprocess

from . import __version__

#: The Kubernetes API level kapiserver implements; kubectl compares its own against it.
KUBERNETES_MAJOR = "1"
KUBERNETES_MINOR = "32"
KUBERNETES_PATCH = "0"
#: The build-metadata part names kapiserver and its own version (like ``v1.32.3+k3s1``).
GIT_VERSION = f"v{KUBERNETES_MAJOR}.{KUBERNETES_MINOR}.{KUBERNETES_PATCH}+kapiserver.{__version__}"


@functools.cache  # the checkout of a running server is what it was at start
def _git_commit() -> tuple[str, str]:
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(top, ".git")):
        return "", ""
    try:
        head = subprocess.run(["git", "-C", top, "rev-parse", "--verify", "-q", "HEAD"],
                              capture_output=True, text=True, timeout=5)
        commit = head.stdout.strip() if head.returncode == 0 else ""
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "", ""
    return commit, ("dirty" if dirty else "clean") if commit else ""


def version_info(build_date: str = "") -> dict:
    """Return ``/version``'s body, keys in upstream's order."""
    commit, tree_state = _git_commit()
    return {
        "major": KUBERNETES_MAJOR,
        "minor": KUBERNETES_MINOR,
        "gitVersion": GIT_VERSION,
        "gitCommit": commit,
        "gitTreeState": tree_state,
        "buildDate": build_date,
        "goVersion": f"{platform.python_implementation().lower()}{platform.python_version()}",
        "compiler": platform.python_implementation().lower(),
        "platform": f"{platform.system().lower()}/{_arch()}",
    }


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
