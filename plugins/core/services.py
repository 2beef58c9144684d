"""Services: the resource, its strategies and table, and the storage that allocates.

Defaults and derived fields live in ``service_fields``, validation in
``service_validation``, cluster IP and node port pools in ``service_allocation``.
"""

import copy
import random

from kapiserver import errors
from kapiserver.apimachinery.validation import name_is_dns1035_label
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import RegistryStore
from kapiserver.registry.strategy import Strategy

from .service_allocation import ServiceAllocators, Transaction
from .service_fields import (CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT, _int,
                             drop_type_dependent_fields, init_ip_family_fields,
                             normalize_cluster_ips, patch_allocated_values, ports_of,
                             read_spec, set_defaults)
from .service_validation import (validate_load_balancer_status, validate_service_spec,
                                 validate_update_specific)

SERVICES = ResourceSpec(group="", version="v1", kind="Service", resource="services",
                        singular="service", namespaced=True, short_names=("svc",),
                        categories=("all",), selectable_fields=("spec.clusterIP", "spec.type"),
                        storage_version_hash="0/CO1lhkEBI=")
STATUS_VERBS = ("get", "patch", "update")


def _column(name: str, description: str, priority: int = 0) -> dict:
    return {"name": name, "type": "string", "format": "", "description": description,
            "priority": priority}


COLUMNS = [
    NAME_COLUMN,
    _column("Type", "type determines how the Service is exposed. Defaults to ClusterIP. Valid "
            "options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" "
            "allocates a cluster-internal IP address for load-balancing to endpoints. "
            "Endpoints are determined by the selector or if that is not specified, by manual "
            "construction of an Endpoints object or EndpointSlice objects. If clusterIP is "
            "\"None\", no virtual IP is allocated and the endpoints are published as a set of "
            "endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and "
            "allocates a port on every node which routes to the same endpoints as the "
            "clusterIP. \"LoadBalancer\" builds on NodePort and creates an external "
            "load-balancer (if supported in the current cloud) which routes to the same "
            "endpoints as the clusterIP. \"ExternalName\" aliases this service to the "
            "specified externalName. Several other fields do not apply to ExternalName "
            "services. More info: https://kubernetes.io/docs/concepts/services-networking/"
            "service/#publishing-services-service-types"),
    _column("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned "
            "randomly. If an address is specified manually, is in-range (as per system "
            "configuration), and is not in use, it will be allocated to the service; otherwise "
            "creation of the service will fail. This field may not be changed through updates "
            "unless the type field is also being changed to ExternalName (which requires this "
            "field to be blank) or the type field is being changed from ExternalName (in which "
            "case this field may optionally be specified, as describe above).  Valid values "
            "are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" "
            "makes a \"headless service\" (no virtual IP), which is useful when direct "
            "endpoint connections are preferred and proxying is not required.  Only applies "
            "to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when "
            "creating a Service of type ExternalName, creation will fail. This field will be "
            "wiped when updating a Service to type ExternalName. More info: "
            "https://kubernetes.io/docs/concepts/services-networking/service/"
            "#virtual-ips-and-service-proxies"),
    _column("External-IP", "externalIPs is a list of IP addresses for which nodes in the "
            "cluster will also accept traffic for this service.  These IPs are not managed by "
            "Kubernetes.  The user is responsible for ensuring that traffic arrives at a node "
            "with this IP.  A common example is external load-balancers that are not part of "
            "the Kubernetes system."),
    _column("Port(s)", "The list of ports that are exposed by this service. More info: "
            "https://kubernetes.io/docs/concepts/services-networking/service/"
            "#virtual-ips-and-service-proxies"),
    AGE_COLUMN,
    _column("Selector", "Route service traffic to pods with label keys and values matching "
            "this selector. If empty or not present, the service is assumed to have an "
            "external process managing its endpoints, which Kubernetes will not modify. Only "
            "applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is "
            "ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/"
            "service/", 1),
]


# -- the table --------------------------------------------------------------------------------

def _external_ip(svc: dict) -> str:
    """``getServiceExternalIP`` (wide: the server prints every column)."""
    spec = read_spec(svc)
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    service_type = spec.get("type")
    if service_type in (CLUSTER_IP, NODE_PORT):
        return ",".join(external) or "<none>"
    if service_type == LOAD_BALANCER:
        status = svc.get("status") if isinstance(svc.get("status"), dict) else {}
        balancers = sorted({i.get("ip") or i.get("hostname") for i in
                            (status.get("loadBalancer") or {}).get("ingress") or []
                            if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))})
        return ",".join(balancers + external) or "<pending>"
    if service_type == EXTERNAL_NAME:
        return spec.get("externalName") or ""
    return "<unknown>"


def _ports_cell(svc: dict) -> str:
    pieces = []
    for port in ports_of(svc):
        node_port = _int(port.get("nodePort"))
        pieces.append(f"{_int(port.get('port'))}:{node_port}/{port.get('protocol', '')}"
                      if node_port > 0 else f"{_int(port.get('port'))}/{port.get('protocol', '')}")
    return ",".join(pieces) or "<none>"


def _selector_cell(selector) -> str:
    if not selector:
        return "<none>"
    return ",".join(f"{k}={selector[k]}" for k in sorted(selector))


# -- strategies -------------------------------------------------------------------------------

class ServiceStrategy(Strategy):
    """``pkg/registry/core/service`` strategy: defaults, validation, type-dependent fields."""

    status_subresource = True
    allow_create_on_update = True
    #: upstream's ``ReturnDeletedObject``: DELETE answers the deleted service, not a Status.
    return_deleted_object = True
    merge_keys = {"spec.ports": "port", "status.conditions": "type"}

    def name_validator(self):
        return name_is_dns1035_label

    def apply_defaults(self, obj):
        set_defaults(obj)

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        set_defaults(obj)  # idempotent: also covers writes the store does not default
        normalize_cluster_ips(obj, None)
        obj["status"] = {"loadBalancer": {}}

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        set_defaults(new)
        patch_allocated_values(new, old)
        normalize_cluster_ips(new, old)
        drop_type_dependent_fields(new, old)

    def validate(self, obj):
        return super().validate(obj) + validate_service_spec(obj)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_core_object_meta_update

        errs = validate_core_object_meta_update(new.get("metadata") or {},
                                                old.get("metadata") or {})
        return errs + validate_update_specific(new, old) + self.validate(new)

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        spec = read_spec(obj)
        fields["spec.clusterIP"] = spec.get("clusterIP") or ""
        fields["spec.type"] = spec.get("type") or ""
        return fields

    def table_columns(self):
        return COLUMNS

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        spec = read_spec(obj)
        ips = spec.get("clusterIPs") or []
        return [meta.get("name", ""), spec.get("type") or "", ips[0] if ips else "<none>",
                _external_ip(obj), _ports_cell(obj), age(meta.get("creationTimestamp")),
                _selector_cell(spec.get("selector"))]


class ServiceStatusStrategy(ServiceStrategy):
    """``services/status``: writes the status (and metadata), never the spec."""

    def prepare_for_update(self, new, old):
        new["spec"] = copy.deepcopy(old.get("spec") or {})
        status = new.get("status")
        new["status"] = status if isinstance(status, dict) else {}
        set_defaults(new)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_core_object_meta_update

        errs = validate_core_object_meta_update(new.get("metadata") or {},
                                                old.get("metadata") or {})
        return errs + validate_load_balancer_status(new)


# -- the service storage -----------------------------------------------------------------------

#: upstream's ``names.SimpleNameGenerator`` and its retries for generated names.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_NAME_RETRIES = 8


def _generate_name(prefix: str) -> str:
    return prefix[:63 - 5] + "".join(random.choice(_NAME_ALPHABET) for _ in range(5))


class ServiceRegistry(RegistryStore):
    """The services' storage: the generic store with IP and port allocation around writes.

    Upstream's service REST sets the generic store's ``BeginCreate``, ``BeginUpdate`` and
    ``AfterDelete`` hooks; ``RegistryStore`` has none, so this subclass wraps the verbs
    that write. A generated name is chosen here, before anything is allocated, because an
    allocation is recorded under its owner's name.
    """

    allocators: ServiceAllocators

    @classmethod
    def extending(cls, registry: RegistryStore, allocators: ServiceAllocators):
        """This registry in place of ``registry`` (same spec, strategy, storage, hooks)."""
        extended = cls.__new__(cls)
        extended.__dict__.update(registry.__dict__)
        extended.allocators = allocators
        return extended

    def _prepare(self, svc: dict, old: dict | None) -> None:
        set_defaults(svc)
        if old is not None:
            patch_allocated_values(svc, old)
        normalize_cluster_ips(svc, old)
        name = (svc.get("metadata") or {}).get("name", "")
        if errs := init_ip_family_fields(svc, old, self.allocators.family):
            raise self._invalid(name, errs)

    # The verbs take whatever else RegistryStore's do (admission, field managers) and hand
    # it on unchanged.

    def create(self, obj, namespace="", dry_run=False, *args, **kwargs):
        meta = obj.setdefault("metadata", {})
        if meta.get("name") or not meta.get("generateName"):
            return self._create(obj, namespace, dry_run, *args, **kwargs)
        for attempt in range(_GENERATE_NAME_RETRIES):
            candidate = copy.deepcopy(obj)
            candidate["metadata"]["name"] = _generate_name(meta["generateName"])
            try:
                created = self._create(candidate, namespace, dry_run, *args, **kwargs)
            except errors.AlreadyExists:
                if attempt + 1 < _GENERATE_NAME_RETRIES:
                    continue
                raise
            obj.clear()
            obj.update(created)
            return obj
        raise AssertionError("unreachable")

    def _create(self, obj, namespace, dry_run, *args, **kwargs):
        self._prepare(obj, None)
        owner = (namespace, obj["metadata"].get("name", ""))
        txn = self.allocators.allocate_create(obj, owner, dry_run)
        try:
            created = super().create(obj, namespace, dry_run, *args, **kwargs)
        except BaseException:
            txn.revert()
            raise
        txn.commit()
        return created

    def update(self, namespace, name, obj, dry_run=False, *args, **kwargs):
        try:
            old = self.get(namespace, name)
        except errors.NotFound:
            old = None
        if old is None or (obj.get("metadata") or {}).get("name") != name:
            # Creating (through self.create) or refused for its name: nothing to allocate.
            return super().update(namespace, name, obj, dry_run, *args, **kwargs)
        self._prepare(obj, old)
        txn = self.allocators.allocate_update(obj, old, (namespace, name), dry_run)
        try:
            updated, created = super().update(namespace, name, obj, dry_run, *args, **kwargs)
        except BaseException:
            txn.revert()
            raise
        txn.commit()
        self._released_if_deleted(updated, namespace, name, dry_run)
        return updated, created

    def guaranteed_update(self, namespace, name, mutate, dry_run=False, *args, **kwargs):
        txns: list[Transaction] = []

        def allocating(obj):
            while txns:  # the previous attempt lost a race: give back what it took
                txns.pop().revert()
            old = copy.deepcopy(obj)
            new = mutate(obj)
            self._prepare(new, old)
            txns.append(self.allocators.allocate_update(new, old, (namespace, name), dry_run))
            return new

        try:
            updated = super().guaranteed_update(namespace, name, allocating, dry_run, *args,
                                                **kwargs)
        except BaseException:
            while txns:
                txns.pop().revert()
            raise
        if txns:
            txns.pop().commit()
        self._released_if_deleted(updated, namespace, name, dry_run)
        return updated

    def _released_if_deleted(self, svc: dict, namespace: str, name: str, dry_run: bool):
        # An update removing the last finalizer of a service being deleted deletes it.
        if (not dry_run and (svc.get("metadata") or {}).get("deletionTimestamp")
                and not self.strategy.deletion_pending(svc)):
            self.allocators.release_all(svc, (namespace, name))

    def delete(self, namespace, name, preconditions=None, dry_run=False, *args, **kwargs):
        obj, deleted = super().delete(namespace, name, preconditions, dry_run, *args, **kwargs)
        if deleted and not dry_run:
            self.allocators.release_all(obj, (namespace, name))
        return obj, deleted


def install(server) -> dict:
    """The ``services`` and ``services/status`` handlers of ``server``'s core group."""
    allocators = ServiceAllocators(server.storage, SERVICES,
                                   server.config.service_cluster_ip_range,
                                   server.config.service_node_port_range)
    status = server.rest_handler(SERVICES, ServiceStatusStrategy(SERVICES), "status",
                                 STATUS_VERBS)
    services = server.rest_handler(SERVICES, ServiceStrategy(SERVICES))
    registry = ServiceRegistry.extending(services.store, allocators)
    services.store = server.registries[(SERVICES.group, SERVICES.resource)] = registry
    from .service_proxy import ServiceProxyHandler  # the web layer: not in the master

    return {"services": services, "services/status": status,
            "services/proxy": ServiceProxyHandler(server, SERVICES)}
