"""Admission webhooks: the ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook``
admission plugins, which call the webhooks that ``admissionregistration.k8s.io/v1``
webhook configurations declare, as kube-apiserver 1.32 calls them (``dispatch``)."""

from kapiserver.plugin_manager import hookimpl

from .dispatch import MutatingAdmissionWebhook, ValidatingAdmissionWebhook


@hookimpl
def kapiserver_admission_plugins(config):
    return {"MutatingAdmissionWebhook": MutatingAdmissionWebhook,
            "ValidatingAdmissionWebhook": ValidatingAdmissionWebhook}
