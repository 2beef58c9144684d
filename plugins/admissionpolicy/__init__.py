"""ValidatingAdmissionPolicies take effect: the ``ValidatingAdmissionPolicy`` admission
plugin (``dispatch``) and the controller that writes their ``status.typeChecking``
(``status``), as kube-apiserver 1.32 and kube-controller-manager run them."""

from kapiserver.plugin_manager import hookimpl


@hookimpl
def kapiserver_admission_plugins(config):
    from .dispatch import NAME, ValidatingAdmissionPolicy

    return {NAME: ValidatingAdmissionPolicy}


@hookimpl
def kapiserver_controllers(config):
    from .status import NAME, PolicyStatusController

    return {NAME: PolicyStatusController}
