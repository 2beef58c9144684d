"""The ``kapiserver`` command: ``serve``, ``plugins``, ``options``, ``snapshot``,
``kubeconfig`` and ``version``."""

from __future__ import annotations

import json
import signal
import sys

from .errors import ConfigError

USAGE = """kapiserver COMMAND [options]

commands:
  serve      serve the Kubernetes API over HTTPS (kapiserver serve --help for options)
  plugins    list the loaded plugins, their distributions and what they provide
  options    print every option with its help and default, as a commented YAML file
  snapshot   save FILE: copy the stored objects to FILE, consistently, while serving;
             restore FILE: make FILE the store of a data dir no server is using
  kubeconfig print the admin kubeconfig of a data dir (--data-dir, or --config FILE)
  version    print the version
"""

SNAPSHOT_USAGE = """usage: kapiserver snapshot save FILE [options]
       kapiserver snapshot restore FILE [options]

save     copy the stored objects to FILE while the server runs (SQLite: its online
         backup API, the store at one revision; etcd: etcd's own snapshot, as
         `etcdctl snapshot save` takes it)
restore  make FILE the store of --data-dir; refused while a server uses it (SQLite
         only: restore an etcd snapshot with `etcdutl snapshot restore`)

options: the server's own (--data-dir, --config FILE, --storage-backend, --etcd-servers,
...); `kapiserver serve --help` lists them.
"""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "serve":
            return serve(rest)
        if command == "plugins":
            return plugins(rest)
        if command == "options":
            from .bootstrap import build_registry
            from .options.reference import render
            from .plugin_manager import new_plugin_manager

            print(render(build_registry(new_plugin_manager())), end="")
            return 0
        if command == "snapshot":
            return snapshot(rest)
        if command == "kubeconfig":
            return kubeconfig(rest)
        if command == "version":
            from .version import version_info

            print(json.dumps(version_info(), indent=2))
            return 0
    except ConfigError as err:
        print("kapiserver: invalid configuration:", file=sys.stderr)
        for line in err.errors:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"kapiserver: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


def _stop_before_serving(signum, frame):
    raise SystemExit(0)


def serve(argv) -> int:
    # A SIGTERM before gunicorn installs its handlers (while plugins load and certificates
    # are made) is a clean stop, as it is once serving.
    signal.signal(signal.SIGTERM, _stop_before_serving)
    from .bootstrap import load_config
    from .server.serving import run

    config, pm = load_config(argv)
    run(config, pm)
    return 0


def plugins(argv) -> int:
    """Print every plugin with its distribution and version, and the components it provides."""
    from .bootstrap import load_config

    config, pm = load_config(argv, prog="kapiserver plugins")
    provided: dict[str, list[str]] = {}
    for hook, label in (("kapiserver_authenticators", "authenticator"),
                        ("kapiserver_authorizers", "authorization mode"),
                        ("kapiserver_admission_plugins", "admission plugin"),
                        ("kapiserver_delegates", "delegate"),
                        ("kapiserver_audit_backends", "audit backend")):
        pm.collect(hook, config=config)
        for name, plugin in pm.providers[hook].items():
            provided.setdefault(plugin, []).append(f"{label} {name}")
    for impl in pm.hook.kapiserver_api_groups.get_hookimpls():
        for installer in impl.function(**({"config": config} if impl.argnames else {})) or []:
            provided.setdefault(impl.plugin_name, []).append(
                f"API group {installer.group or 'core'} (in {installer.delegate})")
    rows = [("PLUGIN", "DISTRIBUTION", "VERSION", "MODULE")]
    rows += [(i.name, i.distribution, i.version, i.module) for i in pm.plugin_infos()]
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip())
        name = row[0]
        if i and provided.get(name):
            print(f"    provides: {', '.join(sorted(provided[name]))}")
    return 0


def snapshot(argv) -> int:
    """``kapiserver snapshot save|restore FILE [options]``."""
    from .bootstrap import load_config
    from .snapshot import SnapshotError, restore_sqlite, save_etcd, save_sqlite

    if not argv or argv[0] in ("-h", "--help"):
        print(SNAPSHOT_USAGE, end="")
        return 0 if argv else 2
    action, rest = argv[0], argv[1:]
    if action not in ("save", "restore") or not rest or rest[0].startswith("-"):
        print(SNAPSHOT_USAGE, end="", file=sys.stderr)
        return 2
    file, options = rest[0], rest[1:]
    config, _ = load_config(options, prog=f"kapiserver snapshot {action} FILE")
    etcd = config.storage_backend == "etcd3"
    try:
        if action == "save" and etcd:
            size = save_etcd(config, file)
            print(f"Snapshot saved at {file} ({size} bytes, etcd's own snapshot of "
                  f"{', '.join(config.etcd_servers)}: restore it with `etcdutl snapshot "
                  "restore`)")
        elif action == "save":
            info = save_sqlite(config.data_dir, file)
            print(f"Snapshot saved at {info.describe()}")
        elif etcd:
            raise SnapshotError("restore is for the SQLite store: restore an etcd snapshot "
                                "with `etcdutl snapshot restore`, which makes a new etcd "
                                "member's data dir")
        else:
            info, replaced = restore_sqlite(file, config.data_dir)
            was = "" if replaced is None else f"; it replaced a store at revision {replaced}"
            print(f"Restored {info.describe()} into {config.data_dir}{was}")
    except SnapshotError as err:
        print(f"kapiserver snapshot {action}: {err}", file=sys.stderr)
        return 1
    return 0


def kubeconfig(argv) -> int:
    """Print the admin kubeconfig ``kapiserver serve`` wrote into the data dir."""
    import os

    from .bootstrap import load_config
    from .pki import PKI

    config, _ = load_config(argv, prog="kapiserver kubeconfig")
    path = PKI(config.data_dir).admin_kubeconfig_file
    if not os.path.exists(path):
        print(f"kapiserver kubeconfig: no admin kubeconfig in {config.data_dir}: "
              "`kapiserver serve` writes it when it starts", file=sys.stderr)
        return 1
    with open(path) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
