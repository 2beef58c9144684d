"""The ``authentication.k8s.io`` API group: TokenReview and SelfSubjectReview.

Both are create-only: nothing is stored, the answer is computed from the server's
authenticator union (TokenReview) or from the request's own user (SelfSubjectReview).
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.resource import ResourceSpec
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

GROUP = "authentication.k8s.io"
TOKENREVIEWS = ResourceSpec(group=GROUP, version="v1", kind="TokenReview",
                            resource="tokenreviews", singular="tokenreview",
                            namespaced=False, verbs=("create",))
SELFSUBJECTREVIEWS = ResourceSpec(group=GROUP, version="v1", kind="SelfSubjectReview",
                                  resource="selfsubjectreviews", singular="selfsubjectreview",
                                  namespaced=False, verbs=("create",))


class AuthenticationV1(APIGroupInstaller):
    """Install ``authentication.k8s.io/v1`` tokenreviews and selfsubjectreviews."""

    group = GROUP
    delegate = "kube"

    def install(self, server):
        # Imported here: the web layer (Flask) stays out of the gunicorn master.
        from kapiserver.endpoints.virtual import CreateOnlyHandler

        from .reviews import TokenReviewer, self_subject_review

        return APIGroupInfo(GROUP, {"v1": {
            "selfsubjectreviews": CreateOnlyHandler(SELFSUBJECTREVIEWS, server,
                                                    self_subject_review),
            "tokenreviews": CreateOnlyHandler(TOKENREVIEWS, server, TokenReviewer(server)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [AuthenticationV1()]
