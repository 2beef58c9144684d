"""PodTemplates: a named pod template (``pkg/registry/core/podtemplate``).

The template gets the pod spec's defaults and validation (``ValidatePodTemplate``);
``metadata.generation`` starts at 1 and grows with each change of the template.
"""

from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver.apimachinery.validation import validate_core_object_meta_update
from kapiserver.registry.builtin import builtin_spec

from .kind_helpers import CoreStrategy, as_dict, container_cells, format_labels, meta_of
from .templates import (drop_disabled_template_fields, set_template_defaults,
                        validate_template, validation_options)

PODTEMPLATES = builtin_spec("", "v1", "podtemplates")
TEMPLATE = FieldPath("template")


class PodTemplateStrategy(CoreStrategy):
    """``podtemplate.Strategy``."""

    #: Its upstream store is built with ``ReturnDeletedObject``: DELETE answers the object.
    return_deleted_object = True

    has_generation = True

    def set_defaults(self, obj):
        # SetObjectDefaults_PodTemplate: Template is a struct, defaulted even when absent.
        if not isinstance(obj.get("template"), dict):
            obj["template"] = {}
        set_template_defaults(obj["template"])

    def on_create(self, obj):
        drop_disabled_template_fields(obj.get("template"))

    def on_update(self, new, old):
        drop_disabled_template_fields(new.get("template"), old.get("template"))

    def validate(self, obj):
        template = as_dict(obj.get("template"))
        return super().validate(obj) + validate_template(template, TEMPLATE,
                                                         validation_options(template))

    def validate_update(self, new, old):
        # ValidatePodTemplateUpdate: metadata's update rules, then the new template.
        template = as_dict(new.get("template"))
        opts = validation_options(template, as_dict(old.get("template")))
        return validate_core_object_meta_update(meta_of(new), meta_of(old)) + \
            validate_template(template, TEMPLATE, opts)

    def table_cells(self, obj):
        template = as_dict(obj.get("template"))
        names, images = container_cells(as_dict(template.get("spec")).get("containers"))
        return [meta_of(obj).get("name", ""), names, images,
                format_labels(as_dict(template.get("metadata")).get("labels"))]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, PodTemplateStrategy(PODTEMPLATES))
