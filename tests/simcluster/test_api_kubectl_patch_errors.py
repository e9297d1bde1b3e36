"""kubectl 1.37.1's `patch -p` with a patch that is no JSON: kubectl sends what it could not read as YAML either
(an unbalanced brace), and kube-apiserver answers in Go's encoding/json words (handlers/patch.go: a JSON or
merge patch through sigs.k8s.io/json's UnmarshalStrict, "error decoding patch: …"; a strategic merge patch into
a map, its error as it is), not in another JSON parser's."""

from __future__ import annotations

import pytest

from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl

CONFIG_MAP = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
"""


@pytest.mark.parametrize(
    ("patch_type", "patch", "message"),
    [
        ("merge", '{"data":{"mode":"slow"}', "error decoding patch: unexpected end of JSON input"),
        ("strategic", '{"data":{"mode":"slow"}', "unexpected end of JSON input"),
        ("json", '{"op":"add","path":"/data/x","value":"1"', "error decoding patch: unexpected end of JSON input"),
        ("merge", "{bad", "error decoding patch: invalid character 'b' looking for beginning of object key string"),
        ("strategic", '{"data":{"mode":"slow"},}', "invalid character '}' looking for beginning of object key string"),
        ("merge", '{"data":{"mode":tru}}', "error decoding patch: invalid character '}' in literal true (expecting 'e')"),
        ("json", '{"op":"add","path":"/data/x","value":"1"}',
         "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
        ("strategic", '"x"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
    ],
    ids=["merge-unclosed", "strategic-unclosed", "json-unclosed", "merge-bare-key", "strategic-trailing-comma",
         "merge-bad-literal", "json-not-a-list", "strategic-not-an-object"],
)  # fmt: skip
def test_kubectl_patch_that_is_no_json_is_refused_in_go_encoding_json_words(
    kubectl: Kubectl, patch_type: str, patch: str, message: str
) -> None:
    created = kubectl("apply", "-f", "-", input_text=CONFIG_MAP)
    assert created.returncode == 0, created.stderr
    refused = kubectl("patch", "configmap", "settings", f"--type={patch_type}", "-p", patch)
    assert (refused.returncode, refused.stderr) == (1, f"Error from server (BadRequest): {message}\n")
    kept = kubectl("get", "configmap", "settings", "-o", "jsonpath={.data}")
    assert kept.stdout == '{"mode":"fast"}'


@pytest.mark.parametrize(
    "operations",
    [
        '[{"op":"delete","path":"/data/mode"}]',  # "remove" misremembered
        '[{"op":"remove"}]',
        '[{"op":"move","path":"/data/speed"}]',
    ],
    ids=["unknown-op", "no-path", "move-without-from"],
)
def test_kubectl_patch_with_an_unknown_json_patch_op_is_refused_as_a_patch_that_does_not_apply(
    kubectl: Kubectl, operations: str
) -> None:
    """json-patch's Apply fails on the op (`Unexpected kind: delete`, a missing path or from), and
    kube-apiserver answers every failed Apply with a bare 422 (NewGenericServerResponse): kubectl shows only its
    generic sentence."""
    created = kubectl("apply", "-f", "-", input_text=CONFIG_MAP)
    assert created.returncode == 0, created.stderr
    refused = kubectl("patch", "configmap", "settings", "--type=json", "-p", operations)
    assert (refused.returncode, refused.stderr) == (
        1,
        "The request is invalid: the server rejected our request due to an error in our request\n",
    )
