"""The ``rbac.authorization.k8s.io`` API group, the ``RBAC`` authorization mode, the
bootstrap policy and the ClusterRole aggregation controller.

Roles and bindings are served with upstream's validation and escalation checks; the
authorizer and the escalation checks read one in-memory index per server (``index.py``),
kept current from the watch cache. The post-start hook ``rbac/bootstrap-roles`` creates
or reconciles the default roles and bindings of kube-apiserver v1.32.
"""

from kapiserver.controllers import aliased
from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller


class RbacV1(APIGroupInstaller):
    """Install ``rbac.authorization.k8s.io/v1`` and the bootstrap policy's post-start hook."""

    group = "rbac.authorization.k8s.io"
    delegate = "kube"

    def install(self, server):
        from .bootstrap import ensure_bootstrap_policy
        from .escalation import checked_handler
        from .resources import (CLUSTERROLEBINDINGS, CLUSTERROLES, ROLEBINDINGS, ROLES,
                                BindingStrategy, RoleStrategy)

        server.add_post_start_hook("rbac/bootstrap-roles", ensure_bootstrap_policy)
        return APIGroupInfo(self.group, {"v1": {
            spec.resource: checked_handler(server, spec, strategy(spec))
            for spec, strategy in ((CLUSTERROLEBINDINGS, BindingStrategy),
                                   (CLUSTERROLES, RoleStrategy),
                                   (ROLEBINDINGS, BindingStrategy),
                                   (ROLES, RoleStrategy))}})


def _rbac_authorizer(server):
    from .authorizer import RBACAuthorizer

    return RBACAuthorizer(server)


def _aggregation_controller(server):
    from .aggregation import ClusterRoleAggregationController

    return ClusterRoleAggregationController(server)


@hookimpl
def kapiserver_api_groups(config):
    return [RbacV1()]


@hookimpl
def kapiserver_authorizers(config):
    return {"RBAC": _rbac_authorizer}


@hookimpl
def kapiserver_controllers(config):
    # kube-controller-manager's name; the one it had here (its former one) still works.
    return {"clusterrole-aggregation-controller": aliased(_aggregation_controller,
                                                          "clusterrole-aggregation")}
