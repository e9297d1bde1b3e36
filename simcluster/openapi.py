"""OpenAPI v3 documents per group-version, built from the v1.37 schemas `kubernetes-validate` ships.

kubectl reads them to decide that the server validates fields itself (`fieldValidation` on PATCH), for
`kubectl explain`, and for client-side apply. /openapi/v2 holds no definitions, in JSON or, as kubectl
asks for it when it validates a `kind: List` itself, in gnostic's protobuf.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources as importlib_resources
from typing import Any

from simcluster.resources import RESOURCES, ResourceDef

Doc = dict[str, Any]

_SCHEMA_FILE = "kubernetes-json-schema/v1.37.0-local/_definitions.json"
_COMMON = (
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
)
_PACKAGES = {"": "core", "policy": "policy", "apps": "apps", "batch": "batch", "resource.k8s.io": "resource"}


@functools.cache
def _definitions() -> dict[str, Any]:
    text = importlib_resources.files("kubernetes_validate").joinpath(_SCHEMA_FILE).read_text()
    defs: dict[str, Any] = json.loads(text)["$defs"]
    return defs


#: The two scalars the JSON-schema files write as a bare `oneOf` without their descriptions, as kube-apiserver's
#: OpenAPI v3 documents have them: no `type`, so that `kubectl explain` names them (`<map[string]Quantity>`,
#: `<IntOrString>`) and prints their description under a field's.
_SCALARS: dict[str, Doc] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "description": (
            "Quantity is a fixed-point representation of a number. It provides convenient marshaling/unmarshaling"
            " in JSON and YAML, in addition to String() and AsInt64() accessors.\n\nThe serialization format is:"
            "\n\n``` <quantity>        ::= <signedNumber><suffix>\n\n\t(Note that <suffix> may be empty, from the"
            ' "" case in <decimalSI>.)\n\n<digit>           ::= 0 | 1 | ... | 9 <digits>          ::= <digit> |'
            " <digit><digits> <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits> <sign>"
            '            ::= "+" | "-" <signedNumber>    ::= <number> | <sign><number> <suffix>          ::='
            " <binarySI> | <decimalExponent> | <decimalSI> <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei\n\n\t"
            "(International System of units; See: http://physics.nist.gov/cuu/Units/binary.html)\n\n<decimalSI>"
            '       ::= m | "" | k | M | G | T | P | E\n\n\t(Note that 1024 = 1Ki but 1000 = 1k; I didn\'t choose'
            ' the capitalization.)\n\n<decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber> ```\n\nNo'
            " matter which of the three exponent forms is used, no quantity may represent a number greater than"
            " 2^63-1 in magnitude, nor may it have more than 3 decimal places. Numbers larger or more precise will"
            " be capped or rounded up. (E.g.: 0.1m will rounded up to 1m.) This may be extended in the future if we"
            " require larger or smaller quantities.\n\nWhen a Quantity is parsed from a string, it will remember"
            " the type of suffix it had, and will use the same type again when it is serialized.\n\nBefore"
            ' serializing, Quantity will be put in "canonical form". This means that Exponent/suffix will be'
            " adjusted up or down (with a corresponding increase or decrease in Mantissa) such that:\n\n- No"
            " precision is lost - No fractional digits will be emitted - The exponent (or suffix) is as large as"
            " possible.\n\nThe sign will be omitted unless the number is negative.\n\nExamples:\n\n- 1.5 will be"
            ' serialized as "1500m" - 1.5Gi will be serialized as "1536Mi"\n\nNote that the quantity will NEVER be'
            " internally represented by a floating point number. That is the whole point of this exercise.\n\n"
            "Non-canonical values will still parse as long as they are well formed, but will be re-emitted in their"
            " canonical form. (So always use canonical form, or don't diff.)\n\nThis format is intended to make it"
            " difficult to use these numbers without writing some sort of special handling code in the hopes that"
            " that will cause implementors to also use a fixed point implementation."
        ),
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": (
            "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and"
            " unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON"
            " field that can accept a name or number."
        ),
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
}


def _convert(node: Any) -> Any:
    """JSON-schema draft (nullable type arrays, $defs refs) -> OpenAPI 3.0 as kube-apiserver writes it."""
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: Doc = {}
    for key, value in node.items():
        if key == "$ref":
            continue
        if key == "type" and isinstance(value, list):
            real = [t for t in value if t != "null"]
            if len(real) == 1:
                out["type"] = real[0]
            continue
        if key == "enum" and isinstance(value, list):
            value = [v for v in value if v is not None]
        out[key] = _convert(value)
    if "$ref" in node:
        ref = {"$ref": str(node["$ref"]).replace("#/$defs/", "#/components/schemas/")}
        if len(out) == 0:
            return ref
        out["allOf"] = [ref]
    return out


def _without_type_enums(schema: Doc) -> Doc:
    """The JSON-schema files pin a kind's `apiVersion` and `kind` with an enum; kube-apiserver's OpenAPI does not
    (`kubectl explain` would print it as `enum: v1` under the field)."""
    if "x-kubernetes-group-version-kind" in schema:
        for field in ("apiVersion", "kind"):
            prop = schema.get("properties", {}).get(field)
            if isinstance(prop, dict):
                prop.pop("enum", None)
    return schema


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/") :]
            if name not in found:
                found.add(name)
                _refs(_definitions().get(name), found)
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _schema_name(resource: ResourceDef, kind: str) -> str:
    return _schema_of(resource.group, resource.version, kind)


def _schema_of(group: str, version: str, kind: str) -> str:
    package = _PACKAGES.get(group, group.split(".")[0])
    return f"io.k8s.api.{package}.{version}.{kind}"


def _gv_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _query(*names: str) -> list[Doc]:
    return [{"name": n, "in": "query", "schema": {"type": "string"}, "uniqueItems": True} for n in names]


def _operation(resource: ResourceDef, action: str, verb_id: str, schema: str, params: list[Doc]) -> Doc:
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}
    return {
        "tags": [_gv_key(resource.group, resource.version).replace("/", "_")],
        "operationId": f"{verb_id}{resource.kind}",
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": content}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }


def _patch_operation(resource: ResourceDef, verb_id: str, schema: str, params: list[Doc]) -> Doc:
    operation = _operation(resource, "patch", verb_id, schema, params)
    patch_schema = {"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    operation["requestBody"] = {
        "content": {ctype: patch_schema for ctype in _PATCH_TYPES},
        "required": True,
    }
    return operation


_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def _paths(resource: ResourceDef) -> dict[str, Doc]:
    base = "/" + _gv_key(resource.group, resource.version)
    scoped = (
        f"{base}/namespaces/{{namespace}}/{resource.plural}"
        if resource.namespaced
        else f"{base}/{resource.plural}"
    )
    kind_schema = _schema_name(resource, resource.kind)
    list_schema = _schema_name(resource, resource.list_kind)
    write = _query("dryRun", "fieldManager", "fieldValidation")
    if resource.review:
        return {scoped: {"post": _operation(resource, "post", "create", kind_schema, write)}}
    paths: dict[str, Doc] = {
        scoped: {
            "get": _operation(resource, "list", "list", list_schema,
                              _query("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
                                     "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")),
            "post": _operation(resource, "post", "create", kind_schema, write),
        },
        f"{scoped}/{{name}}": {
            "get": _operation(resource, "get", "read", kind_schema, []),
            "put": _operation(resource, "put", "replace", kind_schema, write),
            "patch": _patch_operation(resource, "patch", kind_schema, [*write, *_query("force")]),
            "delete": _operation(resource, "delete", "delete", kind_schema, _query("dryRun", "gracePeriodSeconds",
                                                                                   "propagationPolicy")),
        },
    }  # fmt: skip
    if "deletecollection" in resource.verbs:
        paths[scoped]["delete"] = _operation(
            resource, "deletecollection", "deleteCollection", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            _query("dryRun", "labelSelector", "fieldSelector"),
        )  # fmt: skip
    for sub in resource.subresource_specs():
        title = sub.name.title()
        sub_schema = _schema_of(sub.group, sub.version, sub.kind)
        operations: Doc = {}
        if "create" in sub.verbs:
            operations["post"] = _operation(resource, "post", f"create{title}", sub_schema, write)
        if "get" in sub.verbs:
            operations["get"] = _operation(resource, "get", f"read{title}", sub_schema, [])
        if "update" in sub.verbs:
            operations["put"] = _operation(resource, "put", f"replace{title}", sub_schema, write)
        if "patch" in sub.verbs:
            operations["patch"] = _patch_operation(
                resource, f"patch{title}", sub_schema, [*write, *_query("force")]
            )
        paths[f"{scoped}/{{name}}/{sub.name}"] = operations
    if resource.namespaced:
        paths[f"{base}/{resource.plural}"] = {
            "get": _operation(
                resource, "list", "listForAllNamespaces", list_schema, _query("labelSelector", "watch")
            )
        }
    return paths


@functools.cache
def _document_bytes(key: str) -> bytes | None:
    selected = [r for r in RESOURCES if _gv_key(r.group, r.version) == key]
    if not selected:
        return None
    defs = _definitions()
    wanted: set[str] = set(_COMMON)
    paths: dict[str, Doc] = {}
    for resource in selected:
        for kind in (resource.kind, resource.list_kind):
            name = _schema_name(resource, kind)
            if name in defs:
                wanted.add(name)
        for sub in resource.subresource_specs():
            name = _schema_of(sub.group, sub.version, sub.kind)
            if name in defs:
                wanted.add(name)
        paths.update(_paths(resource))
    for name in list(wanted):
        _refs(defs.get(name), wanted)
    schemas = {
        name: _SCALARS.get(name) or _without_type_enums(_convert(defs[name]))
        for name in sorted(wanted)
        if name in defs
    }
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.37.1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def openapi_v3_index() -> Doc:
    keys = sorted({_gv_key(r.group, r.version) for r in RESOURCES})
    paths: Doc = {}
    for key in keys:
        raw = _document_bytes(key)
        if raw is not None:
            digest = hashlib.sha512(raw).hexdigest().upper()[:128]
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def openapi_v3_document(path: str) -> bytes | None:
    return _document_bytes(path.strip("/"))


def openapi_v2() -> Doc:
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.37.1"},
        "paths": {},
        "definitions": {},
    }


#: gnostic's OpenAPIv2 Document in protobuf, as kube-openapi names it in its answer; kubectl asks for it
#: by the older name (`…spec.v2@v1.0+protobuf`), which Go's mime parser would refuse in a Content-Type.
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
OPENAPI_V2_PROTOBUF_ASKED = (
    "com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "com.github.proto-openapi.spec.v2.v1.0+protobuf",
)


def openapi_v2_protobuf() -> bytes:
    """`openapi_v2()` as gnostic's openapi_v2.Document message: swagger (1), info (2: title 1, version 2),
    paths (8) and definitions (9), both empty.

    kubectl reads it to validate a `kind: List` on the client (the v3 documents cannot answer for a List):
    with no definitions it finds no schema for the items and leaves them to the server's own validation."""
    doc = openapi_v2()
    info = _pb_string(1, doc["info"]["title"]) + _pb_string(2, doc["info"]["version"])
    return _pb_string(1, doc["swagger"]) + _pb_bytes(2, info) + _pb_bytes(8, b"") + _pb_bytes(9, b"")


def _pb_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _pb_bytes(number: int, payload: bytes) -> bytes:
    return _pb_varint(number << 3 | 2) + _pb_varint(len(payload)) + payload


def _pb_string(number: int, text: str) -> bytes:
    return _pb_bytes(number, text.encode())
