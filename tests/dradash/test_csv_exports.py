"""Every CSV export goes through one writer (dradash.csvexport): a cell a spreadsheet would run as a
formula (=, +, -, @, tab, CR first) arrives as text, prefixed with '."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from dradash.csvexport import csv_lines
from maintenance.audit import record
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def rows_of(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.mark.parametrize(
    ("cell", "written"),
    [("=cmd()", "'=cmd()"), ("-2+3", "'-2+3"), ("+1", "'+1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
     ("\rx", "'\rx"), ("gpu-0", "gpu-0"), ("a=b", "a=b"), (None, ""), (3, "3")],
)  # fmt: skip
def test_it_neutralises_cells_that_start_like_a_formula(cell: Any, written: str) -> None:
    header, line = list(csv.reader(io.StringIO("".join(csv_lines(["h"], [[cell]])), newline="")))
    assert line == [written]


def test_it_neutralises_a_user_name_like_a_formula_in_the_audit_export() -> None:
    user = User.objects.create_user("-2+3")  # a valid Django user name
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    record(action="create", actor=user.get_username(), rule_name="r1", message="=cmd()")
    client = Client()
    client.force_login(user)
    for url in ("/api/maintenance/audit/export.csv", "/maintenance/audit/?format=csv"):
        (row,) = rows_of(client.get(url))
        assert row["actor"] == "'-2+3" and row["message"] == "'=cmd()"


def test_it_neutralises_a_device_value_like_a_formula_in_the_devices_export() -> None:
    # The mirror stores what the cluster sends; a driver (or a cluster that validates less) controls it.
    f.write(("resourceslices", f.resource_slice("s", pool="=cmd()", devices=[f.gpu("@x"), f.gpu("gpu-1")])))
    client = Client()
    client.force_login(User.objects.create_user("viewer"))
    rows = rows_of(client.get("/devices/export.csv"))
    assert {(r["pool"], r["device"]) for r in rows} == {("'=cmd()", "'@x"), ("'=cmd()", "gpu-1")}
