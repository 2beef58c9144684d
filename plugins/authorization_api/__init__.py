"""The ``authorization.k8s.io`` API group: access reviews and rules reviews.

``SubjectAccessReview``, ``LocalSubjectAccessReview``, ``SelfSubjectAccessReview`` (what
``kubectl auth can-i`` asks) and ``SelfSubjectRulesReview`` (``kubectl auth can-i
--list``) are create-only: each asks the server's authorizer union and stores nothing.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.resource import ResourceSpec
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

GROUP = "authorization.k8s.io"


def _spec(kind, resource, namespaced=False):
    return ResourceSpec(group=GROUP, version="v1", kind=kind, resource=resource,
                        singular=resource[:-1], namespaced=namespaced, verbs=("create",))


SUBJECTACCESSREVIEWS = _spec("SubjectAccessReview", "subjectaccessreviews")
LOCALSUBJECTACCESSREVIEWS = _spec("LocalSubjectAccessReview", "localsubjectaccessreviews",
                                  namespaced=True)
SELFSUBJECTACCESSREVIEWS = _spec("SelfSubjectAccessReview", "selfsubjectaccessreviews")
SELFSUBJECTRULESREVIEWS = _spec("SelfSubjectRulesReview", "selfsubjectrulesreviews")


class AuthorizationV1(APIGroupInstaller):
    """Install ``authorization.k8s.io/v1``'s four review resources."""

    group = GROUP
    delegate = "kube"

    def install(self, server):
        # Imported here: the web layer (Flask) stays out of the gunicorn master.
        from kapiserver.endpoints.virtual import CreateOnlyHandler

        from .access import AccessReviewer
        from .rules import RulesReviewer

        def handler(spec, create):
            return CreateOnlyHandler(spec, server, create)

        return APIGroupInfo(GROUP, {"v1": {
            "subjectaccessreviews": handler(
                SUBJECTACCESSREVIEWS, AccessReviewer(server, "SubjectAccessReview")),
            "localsubjectaccessreviews": handler(
                LOCALSUBJECTACCESSREVIEWS, AccessReviewer(server, "LocalSubjectAccessReview")),
            "selfsubjectaccessreviews": handler(
                SELFSUBJECTACCESSREVIEWS, AccessReviewer(server, "SelfSubjectAccessReview")),
            "selfsubjectrulesreviews": handler(SELFSUBJECTRULESREVIEWS, RulesReviewer(server)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [AuthorizationV1()]
