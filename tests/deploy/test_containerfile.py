"""deploy/Containerfile, checked without a container engine (these machines have none): pinned base image,
numeric non-root user, two stages, the generated pin set, the files it copies are enough to run, and the
chart runs exactly the entry points the image has."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import get_commands
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.chart import containers, main_container, pod_templates, rendered

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
REQUIREMENTS = ROOT / "deploy" / "requirements.txt"


@dataclass
class Instruction:
    keyword: str
    argument: str
    stage: int


def parse(text: str) -> tuple[dict[str, str], list[Instruction]]:
    """The Containerfile's global ARG defaults and its instructions (continuation lines joined, comments
    dropped), each with the index of the stage it belongs to (-1 before the first FROM)."""
    logical: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    args: dict[str, str] = {}
    instructions: list[Instruction] = []
    stage = -1
    for line in logical:
        keyword, _, argument = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        if keyword == "ARG" and stage == -1 and "=" in argument:
            name, _, default = argument.partition("=")
            args[name.strip()] = default.strip()
        instructions.append(Instruction(keyword, argument.strip(), stage))
    return args, instructions


def substitute(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), value)


ARGS, INSTRUCTIONS = parse(CONTAINERFILE.read_text())
FINAL_STAGE = max(i.stage for i in INSTRUCTIONS)


def final(keyword: str) -> list[str]:
    return [i.argument for i in INSTRUCTIONS if i.keyword == keyword and i.stage == FINAL_STAGE]


def test_it_pins_every_base_image_to_an_exact_release() -> None:
    images = [substitute(i.argument.split()[0], ARGS) for i in INSTRUCTIONS if i.keyword == "FROM"]
    assert len(images) >= 2, "a multi-stage build: dependencies are built apart from the runtime image"
    for image in images:
        assert "$" not in image, f"{image}: an ARG without a default"
        name, _, digest = image.partition("@")
        tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else ""
        exact_tag = re.fullmatch(r"3\.11\.\d+-slim(-[a-z]+)?", tag) is not None
        assert exact_tag or digest.startswith("sha256:"), f"{image} is not pinned to an exact release"
        assert "latest" not in image


@pytest.mark.helm
def test_it_runs_as_the_numeric_non_root_user_the_chart_expects() -> None:
    (user,) = final("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and gid.isdigit() and int(uid) != 0 and int(gid) != 0, user
    for workload, pod in pod_templates(rendered("default")):
        security = pod["securityContext"]
        assert (security["runAsUser"], security["runAsGroup"]) == (int(uid), int(gid)), workload
    keywords = [i.keyword for i in INSTRUCTIONS if i.stage == FINAL_STAGE]
    last_run = max(n for n, keyword in enumerate(keywords) if keyword == "RUN")
    assert keywords.index("USER") > last_run, (
        "USER comes after the last RUN: the image's command never runs as root"
    )


def test_it_installs_the_generated_pin_set_in_the_build_stage_only() -> None:
    build_runs = " ".join(i.argument for i in INSTRUCTIONS if i.keyword == "RUN" and i.stage < FINAL_STAGE)
    assert "pip install" in build_runs and "/tmp/requirements.txt" in build_runs
    assert "--only-binary=:all:" in build_runs, "no compiler in the build, the same wheels every time"
    assert not any("pip install" in run or "apt-get" in run for run in final("RUN")), (
        "the runtime stage installs"
    )
    assert any(c.startswith("--from=") and "/opt/venv" in c for c in final("COPY"))
    copies = [
        i.argument.split() for i in INSTRUCTIONS if i.keyword == "COPY" and not i.argument.startswith("--")
    ]
    assert ["deploy/requirements.txt", "/tmp/requirements.txt"] in copies


def pinned(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", f"{line}: not an exact pin"
            out[canonicalize_name(requirement.name)] = spec.version
    return out


def test_it_pins_what_pyproject_pins_and_no_test_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    image = pinned(REQUIREMENTS.read_text().splitlines())
    direct = pinned(project["dependencies"])
    for name, version in direct.items():
        assert image.get(name) == version, f"{name}: pyproject pins {version}, the image {image.get(name)}"
    test_only = {canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["test"]}
    runtime_too = {"websockets"}  # uvicorn[standard] needs it, the tests too
    leaked = sorted((test_only - set(direct) - runtime_too) & set(image))
    assert not leaked, f"test dependencies in the image: {leaked}"
    assert "dradash" not in image


def copied_sources() -> list[str]:
    sources = []
    for argument in final("COPY"):
        if argument.startswith("--from="):
            continue
        *paths, destination = argument.split()
        assert destination.startswith("/app"), argument
        sources += paths
    return sources


def test_it_copies_the_code_every_installed_app_and_template_needs() -> None:
    sources = copied_sources()
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: no such path in the repository"
    from django.conf import settings

    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps <= set(sources), f"apps not copied: {sorted(local_apps - set(sources))}"
    assert {"manage.py", "dra", "templates", "static"} <= set(sources)
    assert not {"tests", "simcluster", "bench", "var", ".venv"} & set(sources)


def test_it_collects_static_files_and_imports_everything_from_the_copied_tree_alone(tmp_path: Path) -> None:
    """The RUN that collects static files, executed against a copy of exactly the paths the image gets, in a
    fresh interpreter: a module or template outside those paths would fail here as it would in the image."""
    app = tmp_path / "app"
    app.mkdir()
    for source in copied_sources():
        src = ROOT / source
        if src.is_dir():
            shutil.copytree(src, app / source, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, app / source)
    (collect,) = [part.strip() for run in final("RUN") for part in run.split("&&") if "collectstatic" in part]
    bin_dir = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "dradash.settings",
    }
    result = subprocess.run(
        ["sh", "-c", collect], cwd=app, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert (app / "var" / "staticfiles" / "admin").is_dir() and any(
        (app / "var" / "staticfiles").rglob("*.js")
    )
    assert not (app / "var" / "secret-key").exists(), "the build would bake a secret key into the image"
    modules = [
        "dra",
        "dradash.settings",
        "dradash.asgi",
        "dradash.celery",
        "inventory",
        "allocation",
        "maintenance",
    ]
    check = (
        "import importlib, django, os, sys; django.setup(); "
        f"print(all(os.path.realpath(importlib.import_module(m).__file__).startswith({str(app)!r}) for m in {modules!r}))"
    )
    env.update(DRADASH_SECRET_KEY="x" * 64, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    result = subprocess.run([sys.executable, "-c", check], cwd=app, env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stdout + result.stderr


@pytest.mark.helm
def test_it_runs_in_the_chart_the_entry_points_the_image_has() -> None:
    (cmd,) = final("CMD")
    image_cmd = json.loads(cmd)
    manifests = rendered("default")
    web = main_container(manifests, "web")
    assert web["command"] == image_cmd, "the web pods run the image's default command"
    assert f"EXPOSE {web['ports'][0]['containerPort']}" in [f"EXPOSE {e}" for e in final("EXPOSE")]
    django_commands = get_commands()
    for workload, pod in pod_templates(manifests):
        for container in containers(pod):
            command = container["command"]
            words = command[-1].split() if command[:2] == ["sh", "-c"] else command
            if words[:2] == ["python", "manage.py"] or "manage.py" in words:
                sub = words[words.index("manage.py") + 1]
                assert sub in django_commands, f"{workload}: manage.py {sub} does not exist"
            elif words[0] == "uvicorn":
                module, _, attribute = words[1].partition(":")
                spec = importlib.util.find_spec(module)
                assert spec and spec.origin and f"async def {attribute}(" in Path(spec.origin).read_text()
            elif words[0] == "celery":
                app_module = words[words.index("-A") + 1]
                assert importlib.util.find_spec(f"{app_module}.celery"), (
                    f"{workload}: no Celery app {app_module}"
                )
            else:
                raise AssertionError(
                    f"{workload}/{container['name']} runs {command}, not an image entry point"
                )
    assert os.path.basename(image_cmd[0]) == "uvicorn"
    from dradash.asgi import WEBSOCKET_PROTOCOL

    assert image_cmd[image_cmd.index("--ws") + 1] == WEBSOCKET_PROTOCOL
