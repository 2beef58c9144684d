"""AlwaysPullImages admission: every container of a new pod pulls its image
(``plugin/pkg/admission/alwayspullimages``).

On a shared cluster an image pulled for one tenant stays on the node, where anyone's pod
could start it without the pull credentials; with ``imagePullPolicy: Always`` the kubelet
checks the credentials for each pod. Pods created, and pods updated to use an image they
did not use before, get the policy on every container (init and ephemeral ones too); the
validating half refuses one that a later mutating plugin changed back. Off by default, as
in kube-apiserver 1.32 (``--enable-admission-plugins=AlwaysPullImages``).
"""

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apis.core.helpers import visit_containers_with_path

PULL_ALWAYS = "Always"


def _containers(pod):
    spec = pod.get("spec") if isinstance(pod, dict) else None
    if not isinstance(spec, dict):
        return []
    return list(visit_containers_with_path(spec, FieldPath("spec")))


class AlwaysPullImages(AdmissionPlugin):
    """Set, then insist on, ``imagePullPolicy: Always``."""

    name = "AlwaysPullImages"
    default_enabled = False
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server=None):
        self.server = server

    def _ignored(self, attributes) -> bool:
        spec = attributes.resource
        if spec.group != "" or spec.resource != "pods" or attributes.subresource:
            return True
        if attributes.operation != UPDATE:
            return False
        # isUpdateWithNoNewImages: an update that brings no new image is left alone.
        old_images = {c.get("image") for c, _ in _containers(attributes.old_object)}
        return all(c.get("image") in old_images for c, _ in _containers(attributes.object))

    def admit(self, attributes):
        if self._ignored(attributes):
            return
        for container, _ in _containers(attributes.object):
            if container.get("imagePullPolicy") != PULL_ALWAYS:
                # The field exists on every defaulted container: its place stays.
                container["imagePullPolicy"] = PULL_ALWAYS

    def validate(self, attributes):
        if self._ignored(attributes):
            return
        problems = []
        for container, path in _containers(attributes.object):
            policy = container.get("imagePullPolicy", "")
            if policy != PULL_ALWAYS:
                error = FieldError.not_supported(path.child("imagePullPolicy"), policy,
                                                 (PULL_ALWAYS,))
                problems.append(forbidden(attributes, str(error)).message)
        if problems:
            # An aggregate of Forbidden errors is no API status: upstream answers a 500.
            unique = list(dict.fromkeys(problems))
            raise errors.Unknown(unique[0] if len(unique) == 1
                                 else "[" + ", ".join(unique) + "]")
