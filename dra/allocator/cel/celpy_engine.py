"""The selector engine backed by cel-python 0.5.0 (``celpy``, a pure-Python CEL interpreter).

The same environment as ``engine.py`` (the ``device`` variable, the strings, sets, two-variable
comprehension and bindings extensions, the Kubernetes quantity, semver, lists, regex, IP/CIDR and
``includes`` functions), the same lookup rules (an unknown domain is an empty map, an unknown attribute
is "no such key"), the same error class and the same static cost estimate and limit (cost.py, on the
tree :func:`.celpy_cost.cost_node` builds in cel-cpp's shapes).

The pipeline: :func:`.celpy_syntax.parse` (celpy's lark parser; refuses what it cannot run), then
:func:`.device_types.device_type_problem` (upstream's types for ``device``, as engine.py), then
:func:`.celpy_check.check` (compile-time errors cel-cpp's checker would give), then constant folding and
the cost estimate (:func:`.celpy_cost.cost_node`); :class:`.celpy_runtime.Program` evaluates on celpy's interpreter.

Not supported (refused at compile time with a CelError naming the construct and the expression):
optional types — ``.?field``, ``[?key]``, ``[?x]``/``{?k: v}`` entries, ``optional.of``/``none``, ``orValue``
and the other optional methods — plus ``format()``, ``strings.quote``, ``transformMap``/``transformMapEntry``
and type values (``type(x)``, ``int`` as a value); see :data:`UNSUPPORTED`. Guard attributes with
``has()`` instead of optional chaining.

Known differences from the cel-expr-python engine (tests/dra/test_cel_backends.py compares the two on
generated expressions, leaving out exactly these):

* runtime error messages are worded differently; the conformance file pins the words that matter
  ("no such key: <name>", "no such overload", "integer overflow", the library messages);
* Kubernetes values are not bytes here, so ``size(quantity("1"))``, ``string(<a Quantity attribute>)``,
  ``b"x" == cidr("10.0.0.0/8")`` and ``[b"x", ip("::1")]`` are errors, as upstream (cel-expr-python
  answers with the tagged encoding's length or text, or compares bytes);
* expressions with mixed-number ordering (``1 < 2.5``) keep every check here (cel-expr-python compiles
  them unchecked: no equality guard for Semver, no literal or list-type checks);
* iterating a map follows the device's order (the order is unspecified in CEL);
* ``string(double)`` uses Python's ``%g``; ``trim()`` uses Python's notion of whitespace.

Speed: bench/bench_cel.py measures both backends; this one evaluates about 6-9x slower (and compiles
about twice as fast).
"""

from __future__ import annotations

from . import celpy_functions, celpy_runtime, celpy_values
from .cache import DEFAULT_CACHE_SIZE, CachingCompiler, CompileCache
from .celpy_check import check
from .celpy_cost import cost_node, written_node
from .celpy_syntax import UNSUPPORTED, parse
from .cost import COST_LIMIT, estimate_cost
from .device import DeviceInput
from .device_types import device_type_problem
from .errors import CelError
from .type_names import cel_type_name

BACKEND = "cel-python"
__all__ = ["BACKEND", "UNSUPPORTED", "CelPythonEngine", "CelPythonSelector"]


class CelPythonSelector:
    """A compiled expression; ``matches`` evaluates a selector, ``evaluate`` any other expression."""

    __slots__ = ("expression", "estimated_cost", "_program", "_cost_limit")

    def __init__(
        self, expression: str, program: celpy_runtime.Program, estimated_cost: int, cost_limit: int
    ) -> None:
        self.expression = expression
        self.estimated_cost = estimated_cost
        self._program = program
        self._cost_limit = cost_limit

    def _run(self, device: DeviceInput) -> object:
        if self.estimated_cost > self._cost_limit:
            raise CelError(
                f"CEL runtime error: operation cancelled: actual cost limit exceeded "
                f"(estimated cost {self.estimated_cost} > limit {self._cost_limit})"
            )
        return self._program.run(device)

    def matches(self, device: DeviceInput) -> bool:
        value = self._run(device)
        if celpy_values.is_bool(value):
            return bool(value)
        name = "uint" if celpy_values.kind(value) == "uint" else cel_type_name(celpy_values.to_native(value))
        raise CelError(f"CEL result of type {name} could not be converted to bool")

    def evaluate(self, device: DeviceInput) -> object:
        """The expression's value as Python data (Quantity/Semver objects, lists, dicts); CelError on error."""
        return celpy_values.to_python(self._run(device))

    def __repr__(self) -> str:
        return f"CelPythonSelector({self.expression!r})"


class CelPythonEngine(CachingCompiler[CelPythonSelector]):
    """Compiles selectors once (LRU cache); converts each device to celpy values once."""

    backend = BACKEND

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE, cost_limit: int = COST_LIMIT) -> None:
        self.cost_limit = cost_limit
        self.compile_count = 0  # how many expressions were actually compiled (cache misses)
        self._cache: CompileCache[CelPythonSelector] = CompileCache(cache_size)
        self._functions = celpy_functions.functions()

    def _compile_checked(self, expression: str, *, require_bool: bool) -> CelPythonSelector:
        try:
            parsed = parse(expression)
            if "device" in expression:  # upstream's types for `device` first, as engine.py
                problem = device_type_problem(
                    expression, written_node(parsed.root), require_bool=require_bool
                )
                if problem is not None:
                    raise CelError(problem)
            check(expression, parsed.root, require_bool=require_bool)
            celpy_runtime.fold_constants(parsed.root)
            cost = estimate_cost(cost_node(parsed.root))
            tree = celpy_runtime.prepare(parsed.tree)
        except RecursionError as exc:
            raise CelError("compilation failed: the expression nests too deeply") from exc
        return CelPythonSelector(
            expression, celpy_runtime.Program(tree, self._functions), cost, self.cost_limit
        )
