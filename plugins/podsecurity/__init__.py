"""PodSecurity admission: the Pod Security Standards, chosen per namespace by its labels.

Default on, as in kube-apiserver 1.32. ``checks`` holds the baseline and restricted
checks, ``policy`` the levels, versions and namespace labels, ``config`` the
``PodSecurityConfiguration`` (defaults, exemptions) and ``admission`` the plugin.
"""

from kapiserver.plugin_manager import hookimpl

from .admission import PodSecurity


@hookimpl
def kapiserver_admission_plugins(config):
    return {"PodSecurity": PodSecurity}
