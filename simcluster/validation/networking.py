"""Rules of networking.k8s.io/v1 Ingress beyond the schema (upstream's ValidateIngressSpec): a default
backend or rules; each backend a service (a DNS-1035 name and a port name or number) or a resource, not
both; hosts DNS names (a leading `*.` allowed), never IP addresses; each HTTP path with a type, absolute
where the type is Exact or Prefix, and without `//`, `/./`, `/../` or an encoded slash."""

from __future__ import annotations

import ipaddress
from typing import Any, Final

from dra import names
from simcluster.schema import Causes, child
from simcluster.validation.names import invalid_name
from simcluster.validation.shared import as_list, as_map

JSON = dict[str, Any]

_PATH_TYPES: Final = ["Exact", "ImplementationSpecific", "Prefix"]
_INVALID_SEQUENCES: Final = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_SUFFIXES: Final = ("/..", "/.")


def check_ingress(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    rules = spec.get("rules")
    if not rules and spec.get("defaultBackend") is None:
        shown = "[]networking.IngressRule{}" if isinstance(rules, list) else "[]networking.IngressRule(nil)"
        causes.add("FieldValueInvalid", "spec",
                   f"Invalid value: {shown}: either `defaultBackend` or `rules` must be specified")  # fmt: skip
    if spec.get("defaultBackend") is not None:
        _check_backend(causes, as_map(spec["defaultBackend"]), "spec.defaultBackend")
    for index, raw in enumerate(as_list(rules)):
        rule = as_map(raw)
        path = f"spec.rules[{index}]"
        host = rule.get("host")
        if isinstance(host, str) and host:
            _check_host(causes, child(path, "host"), host)
        http = rule.get("http")
        if http is not None:
            _check_http(causes, as_map(http), child(path, "http"))
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        invalid_name(causes, "spec.ingressClassName", class_name, names.dns1123_subdomain_errors(class_name))
    return []


def _check_host(causes: Causes, path: str, host: str) -> None:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        causes.invalid(path, host, "must be a DNS name, not an IP address")
    if host.startswith("*."):
        if not names.is_dns1123_subdomain(host[2:]):
            causes.invalid(path, host, _WILDCARD_MSG)
    else:
        invalid_name(causes, path, host, names.dns1123_subdomain_errors(host))


_WILDCARD_MSG: Final = names.regex_error(
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
    "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
    r"\*\." + names.DNS1123_SUBDOMAIN_FMT,
    "*.example.com",
)


def _check_http(causes: Causes, http: JSON, path: str) -> None:
    paths = as_list(http.get("paths"))
    if not paths:
        causes.required(child(path, "paths"))
    for index, raw in enumerate(paths):
        entry = as_map(raw)
        where = f"{path}.paths[{index}]"
        kind = entry.get("pathType")
        value = entry.get("path", "")
        value = value if isinstance(value, str) else ""
        if kind is None:
            causes.required(child(where, "pathType"), "pathType must be specified")
            continue
        if kind in ("Exact", "Prefix"):
            if not value.startswith("/"):
                causes.invalid(child(where, "path"), value, "must be an absolute path")
            for sequence in _INVALID_SEQUENCES if value else ():
                if sequence in value:
                    causes.invalid(child(where, "path"), value, f"must not contain '{sequence}'")
            for suffix in _INVALID_SUFFIXES if value else ():
                if value.endswith(suffix):
                    causes.invalid(child(where, "path"), value, f"cannot end with '{suffix}'")
        elif kind == "ImplementationSpecific":
            if value and not value.startswith("/"):
                causes.invalid(child(where, "path"), value, "must be an absolute path")
        else:
            causes.not_supported(child(where, "pathType"), kind, _PATH_TYPES)
        _check_backend(causes, as_map(entry.get("backend")), child(where, "backend"))


def _check_backend(causes: Causes, backend: JSON, path: str) -> None:
    """validateIngressBackend."""
    service = backend.get("service")
    resource = backend.get("resource")
    if service is not None and resource is not None:
        causes.invalid(path, "", "cannot set both resource and service backends")
        return
    if resource is not None:
        ref = as_map(resource)
        for field in ("kind", "name"):
            if not ref.get(field):
                causes.required(child(child(path, "resource"), field))
        return
    if service is None:
        causes.invalid(path, "", "resource or service backend is required")
        return
    svc = as_map(service)
    name = svc.get("name")
    if not name:
        causes.required(child(path, "service.name"))
    elif isinstance(name, str):
        invalid_name(causes, child(path, "service.name"), name, names.dns1035_label_errors(name))
    port = as_map(svc.get("port"))
    port_name, number = port.get("name"), port.get("number")
    if port_name and number:
        causes.invalid(path, "", "cannot set both port name & port number")
    elif port_name:
        if isinstance(port_name, str) and not _valid_port_name(port_name):
            causes.invalid(child(path, "service.port.name"), port_name, _PORT_NAME_MSG)
    elif number:
        if isinstance(number, int) and not 1 <= number <= 65535:
            causes.invalid(
                child(path, "service.port.number"), number, "must be between 1 and 65535, inclusive"
            )
    else:
        causes.required(path, "port name or number is required")


_PORT_NAME_MSG: Final = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"


def _valid_port_name(name: str) -> bool:
    """IsValidPortName, reduced to one message: an IANA service name (1-15 characters, a letter at least,
    no leading, trailing or doubled hyphen)."""
    return (
        0 < len(name) <= 15
        and all(c.islower() or c.isdigit() or c == "-" for c in name if c.isascii())
        and name.isascii()
        and any(c.isalpha() for c in name)
        and not name.startswith("-")
        and not name.endswith("-")
        and "--" not in name
    )
