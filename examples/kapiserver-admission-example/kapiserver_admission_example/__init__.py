"""An example third-party kapiserver plugin: the ``TeamOwnership`` admission plugin.

Installed with pip, it is loaded through the ``kapiserver`` entry-point group and runs in
the server's admission chain — no webhook server, no TLS, no network hop. Its settings
come from ``--admission-control-config-file``, as upstream's plugins' do::

    apiVersion: apiserver.config.k8s.io/v1
    kind: AdmissionConfiguration
    plugins:
    - name: TeamOwnership
      configuration:
        teams: [payments, search]
        contactDomain: example.com
        adminGroups: [team-admins]

``--disable-admission-plugins=TeamOwnership`` turns it off.
"""

from kapiserver.admission.config import plugin_configuration
from kapiserver.errors import ConfigError
from kapiserver.plugin_manager import hookimpl

from .team import NAME, Settings, TeamOwnership


@hookimpl
def kapiserver_admission_plugins(config):
    # Called once at start-up (in the gunicorn master too): a bad configuration stops
    # the server before it serves, with the option named.
    try:
        settings = Settings.parse(plugin_configuration(config, NAME))
    except ValueError as err:
        raise ConfigError(f"--admission-control-config-file: {NAME}: {err}") from None
    return {NAME: lambda server: TeamOwnership(server, settings)}
