"""CEL runtime environments with one's own variables and functions, for the expressions
other plugins evaluate (admission policies, webhook match conditions) on this package's
libraries.

An expression is checked in a typed environment (its errors and types are upstream's), then
its checked AST is planned here, where every variable is bound to plain Python values as
the CRD rules' are (see ``compiler``). :func:`new_runtime` builds such an environment;
:meth:`Runtime.plan` turns a checked expression into a program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from . import declarations, format_library, library, types


@dataclass
class Runtime:
    """A runtime environment: cel-expr-python's ``Env``, its descriptor pool and the
    library's implementations (whose ``classes`` make the library's opaque values)."""

    env: Any
    pool: Any
    library: library.Runtime

    def plan(self, serialized: bytes, checked=None):
        """The program of a checked expression (``Expression.serialize()`` of an expression
        checked with this package's declarations); ``checked`` is its read
        ``CheckedAST`` when the caller has it. Raises ``RuntimeError`` when it cannot be
        planned."""
        from .checked import read_checked

        if checked is None:
            checked = read_checked(serialized)
        return self.env.deserialize(format_library.rewrite(serialized, checked))

    def activation(self, data: Mapping[str, Any]):
        return self.env.Activation(data)


def new_runtime(variables: Sequence[str] | Mapping[str, Any], *, files: Sequence = (),
                functions: Sequence = ()) -> Runtime:
    """A runtime environment declaring ``variables`` (names, bound as ``dyn``; or a mapping
    of names to ``cel.Type``), the messages of the ``FileDescriptorProto`` s ``files`` beside
    the library's, and ``functions`` (``cel.FunctionDecl`` s with implementations) beside the
    library's. Building one takes milliseconds: build it once and keep it."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_optional

    if not isinstance(variables, Mapping):
        variables = {name: cel.Type.DYN for name in variables}
    pool = types.new_pool([*library.library_files(), *files])
    runtime = library.Runtime(pool)
    env = cel.NewEnv(pool, variables=dict(variables),
                     functions=declarations.runtime_declarations(runtime) + list(functions),
                     extensions=[ext_optional.ExtOptional()])
    return Runtime(env, pool, runtime)
