"""dra.upgrade on YAML streams: what is not converted stays byte-for-byte, comments travel with their fields."""

from __future__ import annotations

import textwrap

from dra.upgrade import load_documents, split_documents, upgrade_text
from dra.upgrade.stream import guess_indent

POD = """\
apiVersion: v1
kind:   Pod     # odd spacing on purpose
metadata: {name: trainer, labels: {"app": 'trainer'}}
spec:
    containers:
    -   name: main
        image: "registry.example.com/trainer:1.4"
        args: [--epochs, "3"]
"""
V1_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: already-v1
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""
OLD_TEMPLATE = """\
# the trainer's template
apiVersion: resource.k8s.io/v1beta1   # from the 1.33 guide
kind: ResourceClaimTemplate
metadata:
  name: trainer
  namespace: ml
spec:
  spec:
    devices:
      requests:
        - name: gpus          # two on one NUMA node
          deviceClassName: gpu.example.com
          # two, not one
          count: 2
          selectors:
            - cel:
                expression: 'device.attributes["gpu.example.com"].model == "H100"'   # quoted
        - name: nic
          deviceClassName: "nic.example.com"
      constraints:
        - requests: [gpus, nic]
          matchAttribute: resource.kubernetes.io/numaNode
"""


def test_it_copies_documents_it_does_not_convert_byte_for_byte() -> None:
    stream = (
        "# leading comment\n"
        + POD
        + "---\n"
        + V1_CLAIM
        + "...\n---   # trailing marker comment\n"
        + POD.rstrip("\n")
    )
    result = upgrade_text(stream)
    assert result.text == stream
    assert not result.changed and not result.failed
    assert [d.action for d in result.documents] == ["kept", "kept", "kept"]


def test_it_changes_only_the_converted_document() -> None:
    stream = POD + "---\n" + OLD_TEMPLATE + "---\n" + V1_CLAIM
    result = upgrade_text(stream, source="jobs.yaml")
    assert result.changed
    docs = split_documents(result.text)
    assert docs[0] == POD
    assert docs[2] == "---\n" + V1_CLAIM
    assert [d.action for d in result.documents] == ["kept", "converted", "kept"]
    assert result.diff().startswith("--- a/jobs.yaml\n+++ b/jobs.yaml\n")


def test_it_keeps_comments_quotes_and_indentation_of_moved_fields() -> None:
    new = upgrade_text(OLD_TEMPLATE).text
    assert new == textwrap.dedent(
        """\
        # the trainer's template
        apiVersion: resource.k8s.io/v1        # from the 1.33 guide
        kind: ResourceClaimTemplate
        metadata:
          name: trainer
          namespace: ml
        spec:
          spec:
            devices:
              requests:
                - name: gpus          # two on one NUMA node
                  exactly:
                    deviceClassName: gpu.example.com
                    allocationMode: ExactCount
                    # two, not one
                    count: 2
                    selectors:
                      - cel:
                          expression: 'device.attributes["gpu.example.com"].model == "H100"'   # quoted
                - name: nic
                  exactly:
                    deviceClassName: "nic.example.com"
                    allocationMode: ExactCount
                    count: 1
              constraints:
                - requests: [gpus, nic]
                  matchAttribute: resource.kubernetes.io/numaNode
        """
    )


def test_it_keeps_comments_of_fields_moved_out_of_basic() -> None:
    old = textwrap.dedent(
        """\
        apiVersion: resource.k8s.io/v1beta1
        kind: ResourceSlice
        metadata:
          name: s
        spec:
          driver: gpu.example.com
          nodeName: node-9
          pool: {name: node-9, generation: 1, resourceSliceCount: 1}
          devices:
          - name: gpu-0
            basic:
              # what the driver reports
              attributes:
                model: {string: H100}   # marketing name
              capacity:
                memory: {value: 80Gi}
        """
    )
    new = upgrade_text(old).text
    assert new.endswith(
        "  devices:\n"
        "  - name: gpu-0\n"
        "    # what the driver reports\n"
        "    attributes:\n"
        "      model: {string: H100}   # marketing name\n"
        "    capacity:\n"
        "      memory: {value: 80Gi}\n"
    ), new


def test_it_guesses_the_indentation_a_document_uses() -> None:
    assert guess_indent(OLD_TEMPLATE) == (2, 2)
    assert guess_indent(V1_CLAIM) == (2, 0)
    assert guess_indent(POD) == (4, 0)
    assert guess_indent("") == (2, 0)


def test_it_cuts_a_stream_only_at_document_markers() -> None:
    stream = "a: |\n  ---not a marker\n  --- nor this\n---\nb: 1\n...\n--- !!map\nc: 2\n"
    docs = split_documents(stream)
    assert "".join(docs) == stream
    assert docs == ["a: |\n  ---not a marker\n  --- nor this\n", "---\nb: 1\n...\n", "--- !!map\nc: 2\n"]
    assert load_documents(stream) == [{"a": "---not a marker\n--- nor this\n"}, {"b": 1}, {"c": 2}]


def test_it_names_the_document_and_line_of_invalid_yaml() -> None:
    stream = V1_CLAIM + "---\nkind: ResourceClaim\nmetadata: {name: [unclosed\n"
    result = upgrade_text(stream, source="bad.yaml")
    assert result.failed
    (message,) = result.messages()
    assert message.startswith("bad.yaml: document 2: invalid YAML: ")
    assert "line 12" in message or "line 13" in message
    assert result.text == stream  # nothing rewritten


def test_it_refuses_a_conversion_the_1_37_schema_rejects() -> None:
    old = textwrap.dedent(
        """\
        apiVersion: resource.k8s.io/v1beta1
        kind: ResourceClaim
        metadata: {name: c, namespace: ml}
        spec:
          devices:
            requests:
            - name: accel
              firstAvailable:
              - name: a
                deviceClassName: gpu.example.com
                colour: blue
        """
    )
    result = upgrade_text(old)
    assert result.failed
    (doc,) = result.documents
    assert doc.action == "refused"
    assert [p.path for p in doc.problems] == ["spec.devices.requests[0].firstAvailable[0]"]
    assert "'colour' was unexpected" in doc.problems[0].message
    assert result.text == old


def test_it_writes_compiled_rules_as_separate_documents_with_a_note() -> None:
    from tests.dra.test_upgrade_rules import INVENTORY, FakeInventory

    old = textwrap.dedent(
        """\
        apiVersion: resource.k8s.io/v1alpha3
        kind: DeviceTaintRule
        metadata:
          name: fw
        spec:
          deviceSelector:
            deviceClassName: gpu.example.com
            pool: node-2
          taint: {key: example.com/fw, effect: NoSchedule}
        """
    )
    result = upgrade_text(POD + "---\n" + old, inventory=FakeInventory(INVENTORY))
    docs = split_documents(result.text)
    assert docs[0] == POD
    assert len(docs) == 2  # node-2 has two GPUs, both in the class: one whole-pool rule
    assert docs[1].startswith("---\n# Compiled by dradash from DeviceTaintRule fw (")
    (rule,) = load_documents(docs[1])
    assert rule["spec"] == {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "node-2"},
        "taint": {"key": "example.com/fw", "effect": "NoSchedule"},
    }
    assert any(n.startswith("generated rules: fw-node-2-") for n in result.documents[1].notes)


#: a v1beta1 request whose `count` is no integer: the manifest's path is `…requests[0].count`, v1's is
#: `…requests[0].exactly.count` (the migration page and API tests use it too)
MISCOUNTED_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: trainer}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.example.com
      count: two
"""
MISNAMED = (
    MISCOUNTED_CLAIM
    + """\
---
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      capacity: {memory: 80 GB}
---
apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaim
metadata: {name: already-flat}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, count: two}
"""
)


def test_a_refused_field_is_named_where_the_manifest_has_it_and_where_v1_puts_it() -> None:
    """A v1beta1 request's `count` is v1's `exactly.count`, a v1alpha3 device's plain capacity is v1's
    `capacity.<name>.value` out of `basic`: the error names the line the user wrote, then the v1 path (which
    the API server would name); a v1beta2 field that did not move is named once."""
    result = upgrade_text(MISNAMED, source="old.yaml")
    problems = [(d.index, p.path, p.converted_path) for d in result.documents for p in d.problems]
    assert problems == [
        (1, "spec.devices.requests[0].count", "spec.devices.requests[0].exactly.count"),
        (2, "spec.devices[0].basic.capacity.memory", "spec.devices[0].capacity.memory.value"),
        (3, "spec.devices.requests[0].exactly.count", ""),
    ]
    messages = result.messages()
    assert messages[0].startswith(
        "old.yaml: document 1 (ResourceClaim trainer): spec.devices.requests[0].count "
        "(in v1: spec.devices.requests[0].exactly.count): "
    )
    assert messages[2].startswith(
        "old.yaml: document 3 (ResourceClaim already-flat): spec.devices.requests[0].exactly.count: "
    )


def test_the_list_kubectl_get_prints_is_converted_item_by_item() -> None:
    """`kubectl get resourceclaims -A -o yaml` prints a v1 List: its old DRA items are converted and
    checked against the 1.37 schema one by one (a List has no schema of its own; it was refused as "no
    schema for List v1"), its other items are kept."""
    text = (
        "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ''}\nitems:\n"
        + textwrap.indent(MISNAMED.split("---\n")[0].replace("count: two", "count: 2"), "  ").replace(
            "  apiVersion", "- apiVersion", 1
        )
        + "- apiVersion: v1\n  kind: Pod\n  metadata: {name: trainer-0}\n"
    )
    result = upgrade_text(text, source="claims.yaml")
    assert result.messages() == []
    (items,) = [doc["items"] for doc in load_documents(result.text)]
    assert items[0]["apiVersion"] == "resource.k8s.io/v1"
    assert items[0]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    assert items[1] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer-0"}}

    refused = upgrade_text(text.replace("count: 2", "count: two"), source="claims.yaml")
    assert [(p.path, p.converted_path) for d in refused.documents for p in d.problems] == [
        ("items[0].spec.devices.requests[0].count", "items[0].spec.devices.requests[0].exactly.count")
    ]


def test_a_document_the_schema_refuses_reads_like_any_refused_one_with_no_target_version() -> None:
    """Refused by the 1.37 schema after its conversion (document 1) or by the conversion itself (document 2):
    both keep their version and name none they were written as (the page showed "v1beta1 → v1" for one)."""
    result = upgrade_text(MISNAMED, source="old.yaml")
    assert [(d.action, d.from_version, d.to_version) for d in result.documents[:2]] == [
        ("refused", "resource.k8s.io/v1beta1", ""),
        ("refused", "resource.k8s.io/v1alpha3", ""),
    ]
