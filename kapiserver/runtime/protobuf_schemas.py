"""Protobuf message schemas of the built-in kinds, as data (field numbers from upstream 1.32).

Field numbers are a wire contract: each one below was read from upstream's
``generated.proto`` (k8s.io/api and k8s.io/apimachinery). Adding a kind is adding data
here: its messages under its package and its name under its group version in ``KINDS``.

A message is a dict ``{field number: (json name, type)}`` or ``(json name, type, KEEP)``,
written in the order of the Go struct's fields, which is the order Go's JSON encoder
writes them in (the wire order is always by field number). Types:

* scalars ``string``, ``bool``, ``int32``, ``int64``, ``bytes`` (base64 in JSON);
* ``Time``, ``MicroTime``, ``Duration``, ``Quantity``, ``IntOrString``, ``RawExtension``,
  ``FieldsV1``, ``ExtraValue`` (a ``{items=1}`` message written in JSON as the bare list of
  strings) and ``Object`` (an embedded object in its own protobuf envelope, as
  ``WatchEvent.object`` carries it): the types whose JSON form is not their message's;
* a message name, looked up in the message's own package, then in ``meta/v1``, unless
  qualified (``core/v1.ObjectReference``);
* prefixed ``*`` for a Go pointer (written only when set, and then even when zero),
  ``[]`` for a repeated field, or written ``map[string]T``.

``KEEP`` marks a field whose Go JSON tag has no ``omitempty``: decoding writes it even
when zero or empty, as Go's encoder does (a nil slice or map as ``null``, like the
``"rules": null`` of upstream's ClusterRoles).
"""

KEEP = "keep"

META_V1 = "meta/v1"

MESSAGES = {
    "meta/v1": {
        "TypeMeta": {1: ("kind", "string"), 2: ("apiVersion", "string")},
        "ListMeta": {
            1: ("selfLink", "string"),
            2: ("resourceVersion", "string"),
            3: ("continue", "string"),
            4: ("remainingItemCount", "*int64"),
        },
        "ObjectMeta": {
            1: ("name", "string"),
            2: ("generateName", "string"),
            3: ("namespace", "string"),
            4: ("selfLink", "string"),
            5: ("uid", "string"),
            6: ("resourceVersion", "string"),
            7: ("generation", "int64"),
            8: ("creationTimestamp", "Time"),
            9: ("deletionTimestamp", "*Time"),
            10: ("deletionGracePeriodSeconds", "*int64"),
            11: ("labels", "map[string]string"),
            12: ("annotations", "map[string]string"),
            13: ("ownerReferences", "[]OwnerReference"),
            14: ("finalizers", "[]string"),
            17: ("managedFields", "[]ManagedFieldsEntry"),
        },
        "OwnerReference": {
            5: ("apiVersion", "string", KEEP),
            1: ("kind", "string", KEEP),
            3: ("name", "string", KEEP),
            4: ("uid", "string", KEEP),
            6: ("controller", "*bool"),
            7: ("blockOwnerDeletion", "*bool"),
        },
        "ManagedFieldsEntry": {
            1: ("manager", "string"),
            2: ("operation", "string"),
            3: ("apiVersion", "string"),
            4: ("time", "*Time"),
            6: ("fieldsType", "string"),
            7: ("fieldsV1", "*FieldsV1"),
            8: ("subresource", "string"),
        },
        "LabelSelector": {
            1: ("matchLabels", "map[string]string"),
            2: ("matchExpressions", "[]LabelSelectorRequirement"),
        },
        "LabelSelectorRequirement": {
            1: ("key", "string", KEEP),
            2: ("operator", "string", KEEP),
            3: ("values", "[]string"),
        },
        "Condition": {
            1: ("type", "string", KEEP),
            2: ("status", "string", KEEP),
            3: ("observedGeneration", "int64"),
            4: ("lastTransitionTime", "Time", KEEP),
            5: ("reason", "string", KEEP),
            6: ("message", "string", KEEP),
        },
        "Status": {
            1: ("metadata", "ListMeta"),
            2: ("status", "string"),
            3: ("message", "string"),
            4: ("reason", "string"),
            5: ("details", "*StatusDetails"),
            6: ("code", "int32"),
        },
        "StatusDetails": {
            1: ("name", "string"),
            2: ("group", "string"),
            3: ("kind", "string"),
            6: ("uid", "string"),
            4: ("causes", "[]StatusCause"),
            5: ("retryAfterSeconds", "int32"),
        },
        "StatusCause": {1: ("reason", "string"), 2: ("message", "string"), 3: ("field", "string")},
        "DeleteOptions": {
            1: ("gracePeriodSeconds", "*int64"),
            2: ("preconditions", "*Preconditions"),
            3: ("orphanDependents", "*bool"),
            4: ("propagationPolicy", "*string"),
            5: ("dryRun", "[]string"),
        },
        "Preconditions": {1: ("uid", "*string"), 2: ("resourceVersion", "*string")},
        "WatchEvent": {1: ("type", "string", KEEP), 2: ("object", "Object", KEEP)},
    },
    "core/v1": {
        "ObjectReference": {
            1: ("kind", "string"),
            2: ("namespace", "string"),
            3: ("name", "string"),
            4: ("uid", "string"),
            5: ("apiVersion", "string"),
            6: ("resourceVersion", "string"),
            7: ("fieldPath", "string"),
        },
        "LocalObjectReference": {1: ("name", "string")},
        "ConfigMap": {
            1: ("metadata", "ObjectMeta"),
            4: ("immutable", "*bool"),
            2: ("data", "map[string]string"),
            3: ("binaryData", "map[string]bytes"),
        },
        "ConfigMapList": {1: ("metadata", "ListMeta"), 2: ("items", "[]ConfigMap", KEEP)},
        "Namespace": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "NamespaceSpec"),
            3: ("status", "NamespaceStatus"),
        },
        "NamespaceSpec": {1: ("finalizers", "[]string")},
        "NamespaceStatus": {1: ("phase", "string"), 2: ("conditions", "[]NamespaceCondition")},
        "NamespaceCondition": {
            1: ("type", "string", KEEP),
            2: ("status", "string", KEEP),
            4: ("lastTransitionTime", "Time"),
            5: ("reason", "string"),
            6: ("message", "string"),
        },
        "NamespaceList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Namespace", KEEP)},
        "Secret": {
            1: ("metadata", "ObjectMeta"),
            5: ("immutable", "*bool"),
            2: ("data", "map[string]bytes"),
            4: ("stringData", "map[string]string"),
            3: ("type", "string"),
        },
        "SecretList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Secret", KEEP)},
        "ServiceAccount": {
            1: ("metadata", "ObjectMeta"),
            2: ("secrets", "[]ObjectReference"),
            3: ("imagePullSecrets", "[]LocalObjectReference"),
            4: ("automountServiceAccountToken", "*bool"),
        },
        "ServiceAccountList": {
            1: ("metadata", "ListMeta"),
            2: ("items", "[]ServiceAccount", KEEP),
        },
        "Service": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "ServiceSpec"),
            3: ("status", "ServiceStatus"),
        },
        "ServiceSpec": {
            1: ("ports", "[]ServicePort"),
            2: ("selector", "map[string]string"),
            3: ("clusterIP", "string"),
            18: ("clusterIPs", "[]string"),
            4: ("type", "string"),
            5: ("externalIPs", "[]string"),
            7: ("sessionAffinity", "string"),
            8: ("loadBalancerIP", "string"),
            9: ("loadBalancerSourceRanges", "[]string"),
            10: ("externalName", "string"),
            11: ("externalTrafficPolicy", "string"),
            12: ("healthCheckNodePort", "int32"),
            13: ("publishNotReadyAddresses", "bool"),
            14: ("sessionAffinityConfig", "*SessionAffinityConfig"),
            19: ("ipFamilies", "[]string"),
            17: ("ipFamilyPolicy", "*string"),
            20: ("allocateLoadBalancerNodePorts", "*bool"),
            21: ("loadBalancerClass", "*string"),
            22: ("internalTrafficPolicy", "*string"),
            23: ("trafficDistribution", "*string"),
        },
        "ServicePort": {
            1: ("name", "string"),
            2: ("protocol", "string"),
            6: ("appProtocol", "*string"),
            3: ("port", "int32", KEEP),
            4: ("targetPort", "IntOrString"),
            5: ("nodePort", "int32"),
        },
        "ServiceStatus": {
            1: ("loadBalancer", "LoadBalancerStatus"),
            2: ("conditions", "[]Condition"),
        },
        "LoadBalancerStatus": {1: ("ingress", "[]LoadBalancerIngress")},
        "LoadBalancerIngress": {
            1: ("ip", "string"),
            2: ("hostname", "string"),
            3: ("ipMode", "*string"),
            4: ("ports", "[]PortStatus"),
        },
        "PortStatus": {
            1: ("port", "int32", KEEP),
            2: ("protocol", "string", KEEP),
            3: ("error", "*string"),
        },
        "SessionAffinityConfig": {1: ("clientIP", "*ClientIPConfig")},
        "ClientIPConfig": {1: ("timeoutSeconds", "*int32")},
        "ServiceList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Service", KEEP)},
        "Endpoints": {1: ("metadata", "ObjectMeta"), 2: ("subsets", "[]EndpointSubset")},
        "EndpointSubset": {
            1: ("addresses", "[]EndpointAddress"),
            2: ("notReadyAddresses", "[]EndpointAddress"),
            3: ("ports", "[]EndpointPort"),
        },
        "EndpointAddress": {
            1: ("ip", "string", KEEP),
            3: ("hostname", "string"),
            4: ("nodeName", "*string"),
            2: ("targetRef", "*ObjectReference"),
        },
        "EndpointPort": {
            1: ("name", "string"),
            2: ("port", "int32", KEEP),
            3: ("protocol", "string"),
            4: ("appProtocol", "*string"),
        },
        "EndpointsList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Endpoints", KEEP)},
        "Event": {
            1: ("metadata", "ObjectMeta"),
            2: ("involvedObject", "ObjectReference"),
            3: ("reason", "string"),
            4: ("message", "string"),
            5: ("source", "EventSource"),
            6: ("firstTimestamp", "Time"),
            7: ("lastTimestamp", "Time"),
            8: ("count", "int32"),
            9: ("type", "string"),
            10: ("eventTime", "MicroTime"),
            11: ("series", "*EventSeries"),
            12: ("action", "string"),
            13: ("related", "*ObjectReference"),
            14: ("reportingComponent", "string", KEEP),
            15: ("reportingInstance", "string", KEEP),
        },
        "EventSeries": {1: ("count", "int32"), 2: ("lastObservedTime", "MicroTime")},
        "EventSource": {1: ("component", "string"), 2: ("host", "string")},
        "EventList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Event", KEEP)},
    },
    "coordination/v1": {
        "Lease": {1: ("metadata", "ObjectMeta"), 2: ("spec", "LeaseSpec")},
        "LeaseSpec": {
            1: ("holderIdentity", "*string"),
            2: ("leaseDurationSeconds", "*int32"),
            3: ("acquireTime", "*MicroTime"),
            4: ("renewTime", "*MicroTime"),
            5: ("leaseTransitions", "*int32"),
            6: ("strategy", "*string"),
            7: ("preferredHolder", "*string"),
        },
        "LeaseList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Lease", KEEP)},
    },
    "events/v1": {
        "Event": {
            1: ("metadata", "ObjectMeta"),
            2: ("eventTime", "MicroTime", KEEP),
            3: ("series", "*EventSeries"),
            4: ("reportingController", "string"),
            5: ("reportingInstance", "string"),
            6: ("action", "string"),
            7: ("reason", "string"),
            8: ("regarding", "core/v1.ObjectReference"),
            9: ("related", "*core/v1.ObjectReference"),
            10: ("note", "string"),
            11: ("type", "string"),
            12: ("deprecatedSource", "core/v1.EventSource"),
            13: ("deprecatedFirstTimestamp", "Time"),
            14: ("deprecatedLastTimestamp", "Time"),
            15: ("deprecatedCount", "int32"),
        },
        "EventSeries": {1: ("count", "int32", KEEP), 2: ("lastObservedTime", "MicroTime", KEEP)},
        "EventList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Event", KEEP)},
    },
    "authentication/v1": {
        "BoundObjectReference": {
            1: ("kind", "string"),
            2: ("apiVersion", "string"),
            3: ("name", "string"),
            4: ("uid", "string"),
        },
        "TokenRequest": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "TokenRequestSpec"),
            3: ("status", "TokenRequestStatus"),
        },
        "TokenRequestSpec": {
            1: ("audiences", "[]string", KEEP),
            4: ("expirationSeconds", "*int64"),
            3: ("boundObjectRef", "*BoundObjectReference"),
        },
        "TokenRequestStatus": {
            1: ("token", "string", KEEP),
            2: ("expirationTimestamp", "Time", KEEP),
        },
        "TokenReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "TokenReviewSpec"),
            3: ("status", "TokenReviewStatus"),
        },
        "TokenReviewSpec": {1: ("token", "string"), 2: ("audiences", "[]string")},
        "TokenReviewStatus": {
            1: ("authenticated", "bool"),
            2: ("user", "UserInfo"),
            4: ("audiences", "[]string"),
            3: ("error", "string"),
        },
        "UserInfo": {
            1: ("username", "string"),
            2: ("uid", "string"),
            3: ("groups", "[]string"),
            4: ("extra", "map[string]ExtraValue"),
        },
        "SelfSubjectReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("status", "SelfSubjectReviewStatus"),
        },
        "SelfSubjectReviewStatus": {1: ("userInfo", "UserInfo")},
    },
    "authorization/v1": {
        "SubjectAccessReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SubjectAccessReviewSpec"),
            3: ("status", "SubjectAccessReviewStatus"),
        },
        "SelfSubjectAccessReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SelfSubjectAccessReviewSpec"),
            3: ("status", "SubjectAccessReviewStatus"),
        },
        "LocalSubjectAccessReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SubjectAccessReviewSpec"),
            3: ("status", "SubjectAccessReviewStatus"),
        },
        "SelfSubjectRulesReview": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SelfSubjectRulesReviewSpec"),
            3: ("status", "SubjectRulesReviewStatus"),
        },
        "SubjectAccessReviewSpec": {
            1: ("resourceAttributes", "*ResourceAttributes"),
            2: ("nonResourceAttributes", "*NonResourceAttributes"),
            3: ("user", "string"),
            4: ("groups", "[]string"),
            5: ("extra", "map[string]ExtraValue"),
            6: ("uid", "string"),
        },
        "SelfSubjectAccessReviewSpec": {
            1: ("resourceAttributes", "*ResourceAttributes"),
            2: ("nonResourceAttributes", "*NonResourceAttributes"),
        },
        "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
        "ResourceAttributes": {
            1: ("namespace", "string"),
            2: ("verb", "string"),
            3: ("group", "string"),
            4: ("version", "string"),
            5: ("resource", "string"),
            6: ("subresource", "string"),
            7: ("name", "string"),
            8: ("fieldSelector", "*FieldSelectorAttributes"),
            9: ("labelSelector", "*LabelSelectorAttributes"),
        },
        "FieldSelectorAttributes": {
            1: ("rawSelector", "string"),
            2: ("requirements", "[]FieldSelectorRequirement"),
        },
        "FieldSelectorRequirement": {
            1: ("key", "string", KEEP),
            2: ("operator", "string", KEEP),
            3: ("values", "[]string"),
        },
        "LabelSelectorAttributes": {
            1: ("rawSelector", "string"),
            2: ("requirements", "[]LabelSelectorRequirement"),
        },
        "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
        "SubjectAccessReviewStatus": {
            1: ("allowed", "bool", KEEP),
            4: ("denied", "bool"),
            2: ("reason", "string"),
            3: ("evaluationError", "string"),
        },
        "SubjectRulesReviewStatus": {
            1: ("resourceRules", "[]ResourceRule", KEEP),
            2: ("nonResourceRules", "[]NonResourceRule", KEEP),
            3: ("incomplete", "bool", KEEP),
            4: ("evaluationError", "string"),
        },
        "ResourceRule": {
            1: ("verbs", "[]string", KEEP),
            2: ("apiGroups", "[]string"),
            3: ("resources", "[]string"),
            4: ("resourceNames", "[]string"),
        },
        "NonResourceRule": {1: ("verbs", "[]string", KEEP), 2: ("nonResourceURLs", "[]string")},
    },
    "autoscaling/v1": {
        "Scale": {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "ScaleSpec"),
            3: ("status", "ScaleStatus"),
        },
        "ScaleSpec": {1: ("replicas", "int32")},
        "ScaleStatus": {1: ("replicas", "int32", KEEP), 2: ("selector", "string")},
    },
    "rbac/v1": {
        "PolicyRule": {
            1: ("verbs", "[]string", KEEP),
            2: ("apiGroups", "[]string"),
            3: ("resources", "[]string"),
            4: ("resourceNames", "[]string"),
            5: ("nonResourceURLs", "[]string"),
        },
        "Subject": {
            1: ("kind", "string", KEEP),
            2: ("apiGroup", "string"),
            3: ("name", "string", KEEP),
            4: ("namespace", "string"),
        },
        "RoleRef": {
            1: ("apiGroup", "string", KEEP),
            2: ("kind", "string", KEEP),
            3: ("name", "string", KEEP),
        },
        "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
        "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule", KEEP)},
        "RoleList": {1: ("metadata", "ListMeta"), 2: ("items", "[]Role", KEEP)},
        "ClusterRole": {
            1: ("metadata", "ObjectMeta"),
            2: ("rules", "[]PolicyRule", KEEP),
            3: ("aggregationRule", "*AggregationRule"),
        },
        "ClusterRoleList": {1: ("metadata", "ListMeta"), 2: ("items", "[]ClusterRole", KEEP)},
        "RoleBinding": {
            1: ("metadata", "ObjectMeta"),
            2: ("subjects", "[]Subject"),
            3: ("roleRef", "RoleRef", KEEP),
        },
        "RoleBindingList": {1: ("metadata", "ListMeta"), 2: ("items", "[]RoleBinding", KEEP)},
        "ClusterRoleBinding": {
            1: ("metadata", "ObjectMeta"),
            2: ("subjects", "[]Subject"),
            3: ("roleRef", "RoleRef", KEEP),
        },
        "ClusterRoleBindingList": {
            1: ("metadata", "ListMeta"),
            2: ("items", "[]ClusterRoleBinding", KEEP),
        },
    },
}

# apiVersion -> (package, kinds served in protobuf). A kind's message has the kind's name.
KINDS = {
    "v1": ("core/v1", (
        "ConfigMap", "ConfigMapList", "Namespace", "NamespaceList", "Secret", "SecretList",
        "ServiceAccount", "ServiceAccountList", "Service", "ServiceList", "Endpoints",
        "EndpointsList", "Event", "EventList",
    )),
    "coordination.k8s.io/v1": ("coordination/v1", ("Lease", "LeaseList")),
    "events.k8s.io/v1": ("events/v1", ("Event", "EventList")),
    "authentication.k8s.io/v1": ("authentication/v1", (
        "TokenRequest", "TokenReview", "SelfSubjectReview",
    )),
    "authorization.k8s.io/v1": ("authorization/v1", (
        "SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview",
        "SelfSubjectRulesReview",
    )),
    "autoscaling/v1": ("autoscaling/v1", ("Scale",)),
    "rbac.authorization.k8s.io/v1": ("rbac/v1", (
        "Role", "RoleList", "ClusterRole", "ClusterRoleList", "RoleBinding", "RoleBindingList",
        "ClusterRoleBinding", "ClusterRoleBindingList",
    )),
}

# meta/v1 kinds registered in every group version (metav1.AddToGroupVersion) and in
# meta.k8s.io/v1; Status is always written with apiVersion "v1".
META_KINDS = ("Status", "DeleteOptions", "WatchEvent")
META_GROUP_VERSION = "meta.k8s.io/v1"
