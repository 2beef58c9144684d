"""CEL validation rules (``x-kubernetes-validations``) of custom resources, on cel-cpp.

:class:`RuleSet` compiles a CRD version's rules once and validates custom resources with them
(``customresource.CustomResourceStrategy``); :func:`validate_schema_rules` checks the rules
of a CRD being written (``crd_validation``). The modules: ``types`` (schemas as CEL types),
``library`` (Kubernetes' CEL libraries), ``compiler``, ``checked`` (the checked AST),
``optional`` (``optionalOldSelf`` at runtime), ``cost`` (cost estimation), ``fieldpath``,
``validation`` and ``schema_rules``; ``environment`` builds runtime environments with other
variables for other plugins' expressions (admission policies).
"""

from .schema_rules import validate_schema_rules
from .validation import RuleSet

__all__ = ["RuleSet", "validate_schema_rules"]
