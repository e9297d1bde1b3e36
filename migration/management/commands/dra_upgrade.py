"""`manage.py dra_upgrade PATH… [--diff] [--write] [--no-inventory]`: v1.33-era DRA manifests to resource.k8s.io/v1.

Exit status (for CI): 0 nothing would change, 1 something would change (or did, with --write), 2 errors
(invalid YAML, YAML beyond the converter's limits, a refused conversion, a converted document the 1.37
schema rejects, a missing path). On an error nothing is written.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandParser

from dra.upgrade import StreamLimitError, StreamResult
from migration.upgrade import inventory_available, manifests_upgrade

SUFFIXES = (".yaml", ".yml")


class Command(BaseCommand):
    stealth_options = ("stdin",)
    help = (
        "Convert resource.k8s.io v1alpha3/v1beta1/v1beta2 DeviceClasses, ResourceClaims, ResourceClaimTemplates, "
        "ResourceSlices and DeviceTaintRules to resource.k8s.io/v1. Files, directories (*.yaml, *.yml) or - for "
        "stdin. Prints the converted manifests unless --diff or --write. Exit 0: nothing to change, 1: something "
        "would change (or did), 2: errors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "paths", nargs="+", metavar="PATH", help="manifest files or directories, or - for stdin"
        )
        parser.add_argument(
            "--diff", action="store_true", help="print a unified diff instead of the manifests"
        )
        parser.add_argument(
            "--write", action="store_true", help="rewrite changed files in place (atomically)"
        )
        parser.add_argument(
            "--no-inventory",
            action="store_true",
            help="do not compile DeviceTaintRule class/CEL selectors against the mirrored inventory (refuse them)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stdin: TextIO = options.get("stdin") or sys.stdin
        use_inventory = not options["no_inventory"]
        if use_inventory and not inventory_available():
            use_inventory = False
        sources, missing = _expand(options["paths"])
        results: list[tuple[Path | None, StreamResult]] = []
        for path in sources:
            source = "<stdin>" if path is None else str(path)
            try:
                text = stdin.read() if path is None else path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                missing.append(f"{path}: cannot read: {error}")
                continue
            try:
                results.append(
                    (path, manifests_upgrade(text=text, source=source, use_inventory=use_inventory))
                )
            except StreamLimitError as error:
                missing.append(f"{source}: {error.message}")

        errors = missing + [message for _, result in results for message in result.messages()]
        for message in errors:
            self.stderr.write(message)
        if errors:
            self.stderr.write(
                f"dra_upgrade: {len(errors)} error{'s' if len(errors) != 1 else ''}; nothing written"
            )
            raise SystemExit(2)

        changed = [result for _, result in results if result.changed]
        if options["verbosity"] >= 1:
            for result in changed:
                for doc in result.documents:
                    if doc.changed:
                        what = " ".join(x for x in (doc.kind, doc.name) if x)
                        for note in doc.notes:
                            self.stderr.write(f"{result.source}: document {doc.index} ({what}): {note}")
        if options["write"]:
            for path, result in results:
                if result.changed and path is not None:
                    _atomic_write(path, result.text)
                elif result.changed:
                    self.stdout.write(result.text, ending="")
        elif options["diff"]:
            for result in changed:
                self.stdout.write(result.diff(), ending="")
        else:
            for number, (_, result) in enumerate(results):
                if number and not result.text.startswith("---"):
                    self.stdout.write("---")
                self.stdout.write(result.text, ending="" if result.text.endswith("\n") else "\n")
        if changed:
            raise SystemExit(1)


def _expand(paths: list[str]) -> tuple[list[Path | None], list[str]]:
    """Files in the order given, directories walked (sorted); None stands for stdin."""
    sources: list[Path | None] = []
    missing: list[str] = []
    for raw in paths:
        if raw == "-":
            sources.append(None)
            continue
        path = Path(raw)
        if path.is_dir():
            sources.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix in SUFFIXES
                and not any(part.startswith(".") for part in p.parts[len(path.parts) :])
            )
        elif path.is_file():
            sources.append(path)
        else:
            missing.append(f"{path}: no such file or directory")
    return sources, missing


def _atomic_write(path: Path, text: str) -> None:
    """Write beside the file and rename over it: a reader sees the old file or the new one, never half."""
    mode = path.stat().st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
