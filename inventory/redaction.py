"""The one redaction rule: values that can hold credentials are shown to admins only.

Every path that hands a mirrored object to a user who is not an admin (`dradash.context.user_is_admin`)
passes it through `redact_object` first: the REST API (`/api/objects/`, a claim's `object`), the YAML
page and its `?format=json`, the exports. Names are kept, so a viewer still sees *which* variable or
parameter is set; the value becomes `REDACTED`. Redacted, wherever they appear in an object:

* `env[].value` of every container list (`containers`, `initContainers`, `ephemeralContainers`, at any
  depth, so pod templates are covered too); `env[].valueFrom` is a reference, not a value, and is kept;
* the `kubectl.kubernetes.io/last-applied-configuration` annotation (it embeds the whole spec, env
  included), and any annotation whose key names a credential (`CREDENTIAL_NAME`);
* a Secret's `data` and `stringData` values (Secrets are not mirrored today; if they ever are, they stay
  secret);
* inside the opaque configuration of claims, templates and classes (`…config[].opaque.parameters`), any
  field whose name names a credential (`password`, `token`, `secret`, `apiKey`, `bearer`, `pwd`, `tls.key`,
  `connectionString`, … — `names_a_credential`), at any depth, and the `value` of a
  `{"name": <such a name>, "value": …}` pair;
* the password in a URL's user information (`postgres://user:…@host`) in those parameters and in
  annotation values;
* the same fields of the data a driver reports per allocated device (a claim's `status.devices[].data`,
  as opaque as the parameters): in the object, and where pages and the API show it on its own
  (`redact_device_status`: the claim, pod and device pages, `/api/claims/…`, `/api/devices/…`).

A pasted object (the what-if's `input.yaml`) is YAML text: `redact_yaml_text` applies the same rule to
each document in it (text that is not YAML is replaced whole).

What is deliberately not redacted: container `command`/`args` (needed to understand a workload; a
credential passed there is already visible to anyone who can list pods).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

REDACTED = "(redacted: admins only)"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: a field or annotation name that says its value is a credential, anywhere in the name
CREDENTIAL_NAME = re.compile(
    r"pass(word|wd|phrase)?|secret|token|credential|bearer|authorization|connection[-_.]?string"
    r"|(api|private|access|ssh)[-_.]?key",
    re.IGNORECASE,
)
#: words too short to look for inside other words: a credential only as a word of the name
CREDENTIAL_WORDS = frozenset({"pwd", "cred", "creds", "dsn", "pat", "pem"})
#: "<word> key" names a key that is a credential (tls.key, clientKey, signing_key); "taintKey" does not
KEY_KINDS = frozenset({"tls", "client", "certificate", "cert", "signing", "encryption", "secret", "master"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
#: the password of a URL's user information (`postgres://user:PASSWORD@host`)
URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)([^/\s@]+)(@)", re.IGNORECASE)


def names_a_credential(name: str) -> bool:
    """Whether a field or annotation name says its value is a credential."""
    if CREDENTIAL_NAME.search(name):
        return True
    words = [w.lower() for w in _WORD.findall(name)]
    if any(w in CREDENTIAL_WORDS for w in words):
        return True
    return any(
        first in KEY_KINDS and second == "key" for first, second in zip(words, words[1:], strict=False)
    )


def _without_url_password(value: Any) -> Any:
    return URL_PASSWORD.sub(rf"\g<1>{REDACTED}\g<3>", value) if isinstance(value, str) else value


def redact_object(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `raw` (a Kubernetes object as JSON) with every credential-bearing value replaced."""
    redacted = _walk(raw)
    assert isinstance(redacted, dict)
    metadata = redacted.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        metadata["annotations"] = {
            key: REDACTED if key == LAST_APPLIED or names_a_credential(key) else _without_url_password(value)
            for key, value in metadata["annotations"].items()
        }
    status = redacted.get("status")
    if isinstance(status, dict) and isinstance(status.get("devices"), list):
        status["devices"] = [redact_device_status(entry) for entry in status["devices"]]
    if redacted.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if isinstance(redacted.get(field), dict):
                redacted[field] = dict.fromkeys(redacted[field], REDACTED)
    return redacted


def redact_device_status(entry: Any) -> Any:
    """A claim's `status.devices[]` entry (or a Device row's copy of it) with the credential-named fields of
    its driver `data` redacted, as in opaque parameters."""
    if isinstance(entry, Mapping) and "data" in entry:
        return {**entry, "data": _credentials(entry["data"])}
    return entry


def reveal_or_redact(raw: Mapping[str, Any], *, reveal: bool) -> dict[str, Any]:
    """The object as is for admins (`reveal`), redacted for everybody else."""
    return dict(raw) if reveal else redact_object(raw)


def _walk(value: Any) -> Any:
    if isinstance(value, list):
        return [_walk(item) for item in value]
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in CONTAINER_LISTS and isinstance(item, list):
            out[key] = [_container(c) for c in item]
        elif key == "opaque" and isinstance(item, Mapping) and "parameters" in item:
            out[key] = {**_walk(item), "parameters": _credentials(item["parameters"])}
        else:
            out[key] = _walk(item)
    return out


def _container(container: Any) -> Any:
    walked = _walk(container)
    if isinstance(walked, dict) and isinstance(walked.get("env"), list):
        walked["env"] = [
            {**var, "value": REDACTED} if isinstance(var, dict) and "value" in var else var
            for var in walked["env"]
        ]
    return walked


def _credentials(value: Any) -> Any:
    """Opaque driver parameters: any field named like a credential loses its value, at any depth."""
    if isinstance(value, list):
        return [_credentials(item) for item in value]
    if not isinstance(value, Mapping):
        return _without_url_password(value)
    name = value.get("name")
    if isinstance(name, str) and names_a_credential(name) and "value" in value:
        return {**value, "value": REDACTED}  # a {"name": "password", "value": "…"} pair
    return {
        key: REDACTED if isinstance(key, str) and names_a_credential(key) else _credentials(item)
        for key, item in value.items()
    }


def redact_yaml_text(text: str) -> str:
    """YAML text with every object in it redacted (as `redact_object`); unparsable text entirely."""
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return REDACTED
    redacted = [redact_object(d) if isinstance(d, Mapping) else d for d in documents]
    return yaml.safe_dump_all(redacted, default_flow_style=False, sort_keys=False)
