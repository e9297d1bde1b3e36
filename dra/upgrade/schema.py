"""Check a converted object against the v1.37 OpenAPI schema shipped in kubernetes-validate (strict).

Strict means closed objects: a field v1 does not have is an error with its path, never dropped. This is
kubernetes-validate's own schema set and validator (jsonschema, draft 2020-12); unlike its `validate`
it reports every error, not the first, and loads the 1.8 MB definitions once per process.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from .rules import FieldProblem

KUBERNETES_VERSION = "1.37.0"
SCHEMA_DIR = f"kubernetes-json-schema/v{KUBERNETES_VERSION}-local-strict"


def _read(name: str) -> Any:
    ref = resources.files("kubernetes_validate").joinpath(f"{SCHEMA_DIR}/{name}")
    with ref.open("r", encoding="utf-8") as handle:
        return json.load(handle)


@functools.cache
def _registry() -> Registry[Any]:
    definitions = Resource.from_contents(_read("_definitions.json"))
    registry: Registry[Any] = definitions @ Registry()
    return registry


def _within(bits: int) -> Callable[[object], bool]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1)

    def check(instance: object) -> bool:
        # only integers are bounded here; a value of another type is the `type` keyword's to refuse
        if not isinstance(instance, int) or isinstance(instance, bool):
            return True
        return bool(low <= instance < high)

    return check


#: the schema's integer formats, which Draft 2020-12 only annotates: the API server decodes these fields
#: into Go's int32/int64 and refuses a number outside their range, so the check must refuse it too
FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("int32")(_within(32))
FORMATS.checks("int64")(_within(64))


@functools.cache
def _validator(api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    # kubernetes-validate's file naming: resource.k8s.io/v1 DeviceClass -> deviceclass-resource-v1.json
    short = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = _read(f"{kind.lower()}-{short}.json")
    except FileNotFoundError:
        return None
    validator: jsonschema.protocols.Validator = jsonschema.Draft202012Validator(
        schema, registry=_registry(), format_checker=FORMATS
    )
    return validator


def field_path(parts: Any) -> str:
    """['spec', 'devices', 'requests', 0, 'exactly'] -> spec.devices.requests[0].exactly"""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def schema_problems(obj: Mapping[str, Any], *, prefix: str = "") -> list[FieldProblem]:
    """Every way `obj` (plain JSON) breaks the v1.37 schema of its apiVersion and kind."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    validator = _validator(api_version, kind)
    if validator is None:
        return [FieldProblem(prefix, f"no v{KUBERNETES_VERSION} schema for {kind} {api_version}")]
    problems = []
    for error in sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
        path = field_path(error.absolute_path)
        full = f"{prefix}.{path}" if prefix and path else prefix or path
        problems.append(FieldProblem(full, f"Kubernetes {KUBERNETES_VERSION} schema: {error.message}"))
    return problems
