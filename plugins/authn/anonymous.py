"""The anonymous authenticator (``--anonymous-auth``), consulted when nothing else applies."""

from kapiserver.authentication import (ALL_UNAUTHENTICATED, ANONYMOUS, Authenticator,
                                       UserInfo)


class AnonymousAuthenticator(Authenticator):
    """Make credential-less requests ``system:anonymous`` in ``system:unauthenticated``."""

    name = "anonymous"
    anonymous = True
    user = UserInfo(ANONYMOUS, "", (ALL_UNAUTHENTICATED,))

    def authenticate(self, request):
        return self.user
