"""`manage.py dra_upgrade`: files, directories, multi-document streams, stdin, --diff, --write, exit codes."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from dra.upgrade import load_documents
from tests.migration.conftest import FIXTURES

pytestmark = pytest.mark.django_db


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options: dict[str, Any] = {"stdout": out, "stderr": err}
    if stdin is not None:
        options["stdin"] = io.StringIO(stdin)
    try:
        call_command("dra_upgrade", *args, **options)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "manifests"
    shutil.copytree(FIXTURES, folder)
    return folder


def test_it_prints_the_converted_stream_and_exits_1_when_something_would_change(manifests: Path) -> None:
    code, out, err = run(str(manifests / "v1beta1-templates.yaml"))
    assert code == 1
    docs = load_documents(out)
    assert [d["apiVersion"] for d in docs] == ["resource.k8s.io/v1", "resource.k8s.io/v1"]
    assert docs[0]["spec"]["spec"]["devices"]["requests"][1] == {
        "name": "nic",
        "exactly": {"deviceClassName": "cx7.example.com", "allocationMode": "ExactCount", "count": 1},
    }
    assert "document 1 (ResourceClaimTemplate two-gpus-one-nic): request 'gpus': deviceClassName" in err
    assert (manifests / "v1beta1-templates.yaml").read_text() == (
        FIXTURES / "v1beta1-templates.yaml"
    ).read_text()


def test_it_exits_0_and_prints_the_input_when_nothing_changes(tmp_path: Path) -> None:
    path = tmp_path / "v1.yaml"
    path.write_text("apiVersion: v1\nkind: Pod   # as is\nmetadata: {name: p}\n")
    code, out, err = run(str(path))
    assert (code, out, err) == (0, path.read_text(), "")


def test_it_prints_a_unified_diff(manifests: Path) -> None:
    code, out, _ = run("--diff", str(manifests / "mixed.yaml"))
    assert code == 1
    name = manifests / "mixed.yaml"
    assert out.startswith(f"--- a/{name}\n+++ b/{name}\n")
    changed = [line for line in out.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    assert changed == [
        "-apiVersion: resource.k8s.io/v1beta1",
        "+apiVersion: resource.k8s.io/v1",
        "-        deviceClassName: h100.example.com",
        "+        exactly:",
        "+          deviceClassName: h100.example.com",
        "+          allocationMode: ExactCount",
        "+          count: 1",
    ]


def test_it_rewrites_changed_files_in_place_and_leaves_the_rest(manifests: Path, tmp_path: Path) -> None:
    untouched = manifests / "pod.yaml"
    untouched.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    untouched.chmod(0o640)
    target = manifests / "v1beta2-claims.yaml"
    target.chmod(0o640)
    code, out, _ = run("--write", "--no-inventory", str(target), str(untouched))
    assert (code, out) == (1, "")
    assert target.read_text() == (FIXTURES / "v1beta2-claims.yaml").read_text().replace(
        "resource.k8s.io/v1beta2\n", "resource.k8s.io/v1\n"
    ).replace("        count: 1\n", "        allocationMode: ExactCount\n        count: 1\n")
    assert target.stat().st_mode & 0o777 == 0o640
    assert untouched.read_text() == "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
    assert sorted(p.name for p in manifests.iterdir() if p.name.startswith(".")) == []
    assert run(str(target))[0] == 0  # converted once, nothing left to do


def test_it_walks_directories_and_writes_nothing_when_any_document_is_refused(manifests: Path) -> None:
    before = {p.name: p.read_text() for p in manifests.iterdir()}
    code, out, err = run("--write", str(manifests))  # the database has no devices: the CEL rule is refused
    assert code == 2
    assert out == ""
    assert (
        f"{manifests / 'v1alpha3-taintrules.yaml'}: document 2 (DeviceTaintRule node-2-firmware): "
        "spec.deviceSelector.deviceClassName: v1 DeviceTaintRules select devices only by driver, pool and device"
    ) in err
    assert "dra_upgrade: 1 error; nothing written" in err
    assert {p.name: p.read_text() for p in manifests.iterdir()} == before


def test_it_compiles_legacy_taint_rules_against_the_inventory(manifests: Path, inventory: None) -> None:
    code, out, err = run(str(manifests / "v1alpha3-taintrules.yaml"))
    assert code == 1, err
    docs = load_documents(out)
    names = [d["metadata"]["name"] for d in docs]
    assert names[0] == "node-1-gpu-0-repair"
    # the H100 of node-2 in the seeded inventory (gpu-1 is an A100), named after the old rule
    assert names[1].rsplit("-", 1)[0] == "node-2-firmware-node-2-gpu-0"
    assert docs[1]["spec"]["deviceSelector"] == {
        "driver": "gpu.example.com",
        "pool": "node-2",
        "device": "gpu-0",
    }
    assert "# Compiled by dradash from DeviceTaintRule node-2-firmware" in out
    code, _, err = run("--no-inventory", str(manifests / "v1alpha3-taintrules.yaml"))
    assert code == 2


def test_it_reads_stdin_and_writes_stdout(manifests: Path) -> None:
    text = (manifests / "v1beta1-claims-firstavailable.yaml").read_text()
    code, out, _ = run("-", stdin=text)
    assert code == 1
    (claim,) = load_documents(out)
    assert claim["spec"]["devices"]["requests"][0]["firstAvailable"][1]["count"] == 2
    code, out, _ = run("--write", "-", stdin=text)  # nowhere to write back: stdout
    assert code == 1 and load_documents(out) == [claim]


def test_it_exits_2_on_invalid_yaml_and_missing_paths(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\n---\nkind: [\n")
    code, out, err = run(str(bad), str(tmp_path / "nope.yaml"))
    assert code == 2 and out == ""
    assert f"{bad}: document 2: invalid YAML:" in err
    assert f"{tmp_path / 'nope.yaml'}: no such file or directory" in err


def test_it_exits_2_naming_a_file_nested_too_deep_and_writes_nothing(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("apiVersion: v1\nkind: Pod\n---\n" + "[" * 5000 + "]" * 5000 + "\n")
    old = tmp_path / "old.yaml"
    old.write_text((FIXTURES / "v1beta1-templates.yaml").read_text())
    code, out, err = run("--write", str(old), str(deep))
    assert code == 2 and out == ""
    assert f"{deep}: document 2, line 4: nests more than 100 levels deep" in err
    assert old.read_text() == (FIXTURES / "v1beta1-templates.yaml").read_text()
