"""The selector engine backed by cel-expr-python 0.1.3 (Google's cel-cpp).

Environment: one variable ``device`` (``map<string, dyn>`` with ``driver``, ``attributes``,
``capacity``, ``allowMultipleAllocations``; upstream's types for those are checked on the checked or parsed
AST by :mod:`.device_types`, before cel-cpp's own errors), the cel-cpp extensions strings, optional types, bindings,
sets and two-variable comprehensions, plus the Kubernetes quantity, semver, lists, regex and DRA
``includes`` functions from :mod:`.library`, IP and CIDR from :mod:`.library_net`. Quantity, Semver, IP
and CIDR values are tagged bytes (:mod:`.tagged`).

After type-checking, the checked AST is edited (:mod:`.rewrite`) and loaded back:

* an unknown *domain* is an empty map: ``device.attributes[d]`` becomes
  ``device.attributes[?d].orValue({})``; ``in``, ``size`` and iteration still see only real domains, and an
  unknown attribute inside a domain stays a "no such key" error;
* ``quantity("…")``/``semver("…")``/``ip("…")``/``cidr("…")`` literals are folded into constants;
* ``string(x)`` on those values goes to the Kubernetes conversion (error for Quantity/Semver as upstream);
* ``a == b`` with a dynamic ``a`` gets a guard that raises "no such overload" when ``a`` is a Semver, IP
  or CIDR and ``b`` is not (cel-go asks the left operand; cel-cpp would answer false);
* Kubernetes' checks cel-cpp lacks are applied: homogeneous list/map literals, valid duration,
  timestamp and regex literals, and no ``<``/``>`` on Kubernetes values (they are bytes here, which
  would otherwise compare).
Mixed-number ordering (``1 < 2.5``, Kubernetes' CrossTypeNumericComparisons) is missing from cel-cpp's
checker but present in its runtime, so such expressions are compiled unchecked.

Cost: a static worst-case estimate per expression (:mod:`.cost`), not cel-go's runtime tracking.

Runtime errors use cel-go's wording where upstream's tests pin it (:mod:`.type_names`): a non-bool result
names cel-go's type; a comprehension over a scalar, which cel-cpp reports without a type, is evaluated
again by a second program whose ranges are guarded (built on the first such error) to name it.

Known differences from upstream:
unknown domains default to an empty map only for lookups on ``device.attributes``/``device.capacity``
or a ``cel.bind`` name for them, not on other copies (``[device.attributes][0]["x"]``);
``type(quantity("1"))`` is ``bytes``; ``in``, ``includes``, ``indexOf`` and ``sets.*`` compare a Semver
with a foreign value as false where cel-go may raise "no such overload"; ``find``/``findAll`` use Python's ``re`` (RE2 in upstream; ``matches`` is RE2 here too);
the URL, format, image and authz libraries are not provided; cel-cpp's parser refuses nesting deeper
than 32 levels (e.g. 32 chained ``+``; ``&&``/``||`` chains are balanced and unaffected), cel-go allows 250.
"""

from __future__ import annotations

import itertools
import json
import re
import threading

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from . import library
from .cache import DEFAULT_CACHE_SIZE, CachingCompiler, CompileCache
from .checked_ast import written_tree
from .cost import COST_LIMIT, estimate_cost
from .device import DeviceInput, from_cel_value
from .device_types import device_type_problem
from .errors import CelError
from .rewrite import rewrite_checked_expr
from .type_names import cel_type_name_of_kind

BACKEND = "cel-expr-python"

_ENV_CONFIG_YAML = """\
extensions:
  - name: "sets"
  - name: "two-var-comprehensions"
"""
_NO_SUCH_KEY = re.compile(r"Key not found in map\s*:\s*(.*)")
_NOT_ITERABLE = "No matching overloads found : <iter_range>"
#: upstream's hint (dynamic-resource-allocation cel.EnhanceRuntimeError), word for word
_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has()"
    " for optional fields"
)


def _runtime_message(raw: str) -> str:
    match = _NO_SUCH_KEY.search(raw)
    if match:
        return f"no such key: {match.group(1).strip().strip(chr(34))}{_HINT}"
    # cel-cpp prefixes absl status codes ("OUT_OF_RANGE: ..."); keep the message, drop the code.
    return re.sub(r"^[A-Z_]+: ", "", raw)


class CelExprSelector:
    """A compiled expression; ``matches`` evaluates a selector, ``evaluate`` any other expression."""

    __slots__ = ("expression", "estimated_cost", "_program", "_engine", "_over_limit", "_diagnosis")

    def __init__(
        self, expression: str, program: cel.Expression, estimated_cost: int, engine: CelExprEngine
    ) -> None:
        self.expression = expression
        self.estimated_cost = estimated_cost
        self._program = program
        self._engine = engine
        self._over_limit = estimated_cost > engine.cost_limit
        self._diagnosis: cel.Expression | None = None

    def _cost_error(self) -> CelError:
        return CelError(
            f"CEL runtime error: operation cancelled: actual cost limit exceeded "
            f"(estimated cost {self.estimated_cost} > limit {self._engine.cost_limit})"
        )

    def _eval(self, device: DeviceInput) -> cel.Value:
        if self._over_limit:
            raise self._cost_error()
        engine = self._engine
        try:
            key = engine._local.key
        except AttributeError:
            key = engine._thread_key()
        activation = device._activations.get(key)
        if activation is None:
            activation = engine.activation(device)
        try:
            return self._program.eval(activation)
        except Exception as exc:  # cel-expr-python raises (rather than returns) a few internal errors
            raise self._runtime_error(str(exc), device) from exc

    def _runtime_error(self, raw: str, device: DeviceInput) -> CelError:
        if _NOT_ITERABLE in raw:
            # cel-cpp names no type here; a program whose comprehension ranges are guarded does, as cel-go.
            raw = self._not_iterable_error(device) or raw
        return CelError(f"CEL runtime error: {_runtime_message(raw)}")

    def _not_iterable_error(self, device: DeviceInput) -> str | None:
        try:
            if self._diagnosis is None:
                self._diagnosis = self._engine.diagnosis_program(self.expression)
            result = self._diagnosis.eval(self._engine.activation(device))
            message = result.value() if result.type() == cel.Type.ERROR else None
        except Exception as exc:  # the guard's error may be raised rather than returned, as above
            message = str(exc)
        return message if isinstance(message, str) and "expected iterable type" in message else None

    def evaluate(self, device: DeviceInput) -> object:
        """The expression's value as Python data (Quantity/Semver objects, lists, dicts); CelError on error.

        For expressions that are not selectors, e.g. DRA derived attributes; compile those with
        ``compile_value`` (no bool check).
        """
        result = self._eval(device)
        try:
            plain = result.plain_value()
        except Exception as exc:  # optional values have no Python form (TypeError, SystemError)
            raise CelError("CEL result of type optional cannot be used; unwrap it with orValue()") from exc
        if result.type() == cel.Type.ERROR:
            raise self._runtime_error(str(plain), device)
        return from_cel_value(plain)

    def matches(self, device: DeviceInput) -> bool:
        result = self._eval(device)
        try:
            value = result.value()
        except Exception:  # e.g. an optional value has no Python form (TypeError, SystemError)
            value = None
        if value is True or value is False:  # only a CEL bool converts to a Python bool
            return value
        kind = result.type()
        if kind == cel.Type.ERROR:
            # cel-expr-python also reports optional values as ERROR; only real errors carry a message.
            if isinstance(value, str):
                raise self._runtime_error(value, device)
            raise CelError("CEL result of type optional_type could not be converted to bool")
        name = cel_type_name_of_kind(kind.name().lower(), value)
        raise CelError(f"CEL result of type {name} could not be converted to bool")

    def __repr__(self) -> str:
        return f"CelExprSelector({self.expression!r})"


class CelExprEngine(CachingCompiler[CelExprSelector]):
    """Compiles selectors once (LRU cache) and converts each device to a CEL activation once."""

    backend = BACKEND

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE, cost_limit: int = COST_LIMIT) -> None:
        self.cost_limit = cost_limit
        self._env = cel.NewEnv(
            config=cel.NewEnvConfigFromYaml(_ENV_CONFIG_YAML),
            variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
            extensions=[
                ext_strings.ExtStrings(),
                ext_optional.ExtOptional(),
                ext_bindings.ExtBindings(),
                cel.CelExtension("kubernetes", _kubernetes_decls()),
            ],
        )
        self._python_functions = library.python_function_names()
        self._cache: CompileCache[CelExprSelector] = CompileCache(cache_size)
        self.compile_count = 0  # how many expressions were actually compiled (cache misses)
        # cel-expr-python activations belong to the thread that built them (using one from another thread
        # fails with "No PyCelArena found"), so DeviceInput caches one per (engine, thread). Slots come
        # from a counter, never from thread ids, which the OS reuses.
        self._local = threading.local()
        self._slots = itertools.count()

    def _compile_checked(self, expression: str, *, require_bool: bool) -> CelExprSelector:
        try:
            checked = self._env.compile(expression)
        except RuntimeError as exc:
            message = _compile_message(str(exc))
            try:
                unchecked = self._env.compile(expression, disable_check=True)
            except RuntimeError:
                raise CelError(f"compilation failed: {message}") from exc  # a syntax error
            # The checker saw `device` as map<string, dyn>; upstream's types may explain the error first
            # (`device.driver + 1 == "a"` is `_+_` on (string, int), not `_==_` on (int, string)).
            self._check_device_types(expression, unchecked.serialize(), require_bool=require_bool)
            if not _only_cross_type_numeric_errors(message):
                raise CelError(f"compilation failed: {message}") from exc
            # cel-cpp's checker lacks Kubernetes' CrossTypeNumericComparisons (`1 < 2.0`), but its runtime
            # compares mixed numbers; such expressions run unchecked (result type checked at runtime).
            checked = unchecked
            serialized = checked.serialize()
        else:
            serialized = checked.serialize()
            self._check_device_types(expression, serialized, require_bool=require_bool)
            output = checked.return_type()
            if require_bool and output != cel.Type.BOOL and output != cel.Type.DYN:
                raise CelError(f"must evaluate to bool or the unknown type, not {output.name().lower()}")
        rewritten = rewrite_checked_expr(serialized, self._python_functions)
        problems = rewritten.problems + [p for p in map(self._literal_problem, rewritten.literals) if p]
        if problems:
            raise CelError("compilation failed: " + "; ".join(dict.fromkeys(problems)))
        program = self._env.deserialize(rewritten.serialized) if rewritten.serialized is not None else checked
        return CelExprSelector(expression, program, estimate_cost(rewritten.root), self)

    @staticmethod
    def _check_device_types(expression: str, serialized: bytes, *, require_bool: bool) -> None:
        """Refuse what upstream's checker refuses for the types of `device` (see device_types.py)."""
        if "device" not in expression:
            return
        problem = device_type_problem(expression, written_tree(serialized), require_bool=require_bool)
        if problem is not None:
            raise CelError(problem)

    def diagnosis_program(self, expression: str) -> cel.Expression:
        """The expression again with every comprehension range guarded (see ``_runtime_error``)."""
        try:
            checked = self._env.compile(expression)
        except RuntimeError:
            checked = self._env.compile(expression, disable_check=True)
        rewritten = rewrite_checked_expr(checked.serialize(), self._python_functions, guard_ranges=True)
        return self._env.deserialize(rewritten.serialized) if rewritten.serialized is not None else checked

    def _literal_problem(self, literal: tuple[str, str]) -> str | None:
        """Validate a literal the way Kubernetes' AST validators do, using cel-cpp itself where it decides."""
        kind, text = literal
        if kind == "python-regex":  # find/findAll run on Python's re (see library.py)
            try:
                re.compile(text, re.ASCII)
            except re.error as exc:
                return f"invalid regex literal {text!r}: {exc}"
            return None
        probe = {
            "duration": f"duration({json.dumps(text)}) == duration({json.dumps(text)})",
            "timestamp": f"timestamp({json.dumps(text)}) == timestamp({json.dumps(text)})",
            "re2": f'"".matches({json.dumps(text)})',
        }[kind]
        try:
            result = self._env.compile(probe).eval()
        except RuntimeError as exc:
            return f"invalid {kind} literal {text!r}: {_compile_message(str(exc))}"
        if result.type() == cel.Type.ERROR:
            what = "regex" if kind == "re2" else kind
            return f"invalid {what} literal {text!r}: {_runtime_message(str(result.value()))}"
        return None

    def _thread_key(self) -> tuple[int, int]:
        key = (id(self), next(self._slots))
        self._local.key = key
        return key

    def activation(self, device: DeviceInput) -> cel.Activation:
        """The device as a CEL activation for this engine and thread, built on first use."""
        try:
            key = self._local.key
        except AttributeError:
            key = self._thread_key()
        cached = device._activations.get(key)
        if cached is None:
            cached = self._env.Activation(data={"device": device.cel_data})
            device._activations[key] = cached
        assert isinstance(cached, cel.Activation)
        return cached


_CEL_TYPES = {
    "tagged": cel.Type.BYTES,
    "int": cel.Type.INT,
    "bool": cel.Type.BOOL,
    "string": cel.Type.STRING,
    "double": cel.Type.DOUBLE,
    "dyn": cel.Type.DYN,
    "list": cel.Type.List(cel.Type.DYN),
    "list<string>": cel.Type.List(cel.Type.STRING),
}


def _kubernetes_decls() -> list[cel.FunctionDecl]:
    """The Kubernetes library (library.py's table), declared with types so the checker rejects misuse."""
    return [
        cel.FunctionDecl(
            name,
            [
                cel.Overload(
                    o.overload_id,
                    _CEL_TYPES[o.result],
                    [_CEL_TYPES[p] for p in o.params],
                    is_member=o.member,
                    impl=o.impl,
                )
                for o in group
            ],
        )
        for name, group in library.overloads().items()
    ]


_CHECKER_ERROR = re.compile(r"^ERROR: <input>:\d+:\d+: (.*)$", re.MULTILINE)
_CROSS_TYPE = re.compile(
    r"found no matching overload for '_(?:<|<=|>|>=)_' applied to '\((?:int|uint|double), (?:int|uint|double)\)'"
)


def _only_cross_type_numeric_errors(message: str) -> bool:
    errors = _CHECKER_ERROR.findall(message)
    return bool(errors) and all(_CROSS_TYPE.fullmatch(error.strip()) for error in errors)


def _compile_message(raw: str) -> str:
    return re.sub(r"^INVALID_ARGUMENT: ", "", raw).replace(" [INVALID_ARGUMENT]", "").strip()
