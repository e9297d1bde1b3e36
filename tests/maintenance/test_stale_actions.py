"""An action decided on an out-of-date page (a second tab, a slow click) is refused with the truth:
409, what the maintenance is now, who changed it — never "the cluster refused" when it did not."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from maintenance import states
from maintenance.models import AuditEntry, Maintenance
from maintenance.services import maintenance_apply, maintenance_undo
from tests.maintenance.support import create, rules_in

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_answers_an_undo_from_a_second_tab_with_the_current_state(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)
    m.refresh_from_db()
    seen_by_second_tab = m.version
    maintenance_undo(maintenance=m, user=operator, mode="delete")  # the first tab undoes

    page = logged_in(operator).post(
        f"/maintenance/{m.id}/undo/", {"mode": "delete", "version": seen_by_second_tab}
    )
    assert page.status_code == 409
    html = page.content.decode()
    assert "The cluster refused the change" not in html and "Your draft is kept" not in html
    assert "no longer in the state this page showed; nothing was done" in html
    m.refresh_from_db()
    assert f"the maintenance is now at version {m.version} and is undone" in html
    assert 'id="undo-delete"' not in html and 'id="enforce-NoExecute"' not in html  # nothing stale offered
    assert "Undone by olivia" in html


def test_it_refuses_an_api_action_on_a_version_it_did_not_see(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    api = logged_in(operator)
    response = api.post(f"/api/maintenance/{m.id}/apply/", {"effect": "None", "version": m.version + 5},
                        content_type="application/json")  # fmt: skip
    assert response.status_code == 409
    body = response.json()
    assert body["current"] == {"state": "draft", "effect": "", "version": m.version, "drain": None,
                               "actions": states.offered(state="draft", effect="")}  # fmt: skip
    assert body["errors"][0]["field"] == "version"
    assert rules_in(mirrored) == {}


def test_it_refuses_undo_when_nothing_is_applied_and_says_so(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    response = logged_in(operator).post(f"/api/maintenance/{m.id}/undo/", {"mode": "delete"},
                                        content_type="application/json")  # fmt: skip
    assert response.status_code == 409
    assert "it is a draft: no rule is in the cluster yet" in response.json()["errors"][0]["message"]


def test_it_lets_only_the_first_of_two_writes_on_one_version_through(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    stale_copy = Maintenance.objects.get(pk=m.pk)
    maintenance_apply(
        maintenance=m, user=operator, effect="None", confirmed=False, expected_version=m.version
    )
    from maintenance.services import MaintenanceError

    with pytest.raises(MaintenanceError) as error:
        maintenance_undo(
            maintenance=stale_copy, user=operator, mode="delete", expected_version=stale_copy.version
        )
    assert error.value.status == 409
    assert len(rules_in(mirrored)) == len(m.rules)  # the stale undo deleted nothing
    assert AuditEntry.objects.filter(maintenance=m, action="refused").count() == 1


def test_it_offers_only_the_actions_the_state_allows() -> None:
    assert states.offered(state="draft", effect="") == [
        "preview",
        "apply-none",
        "enforce-NoSchedule",
        "enforce-NoExecute",
        "drain",
    ]
    assert states.offered(state="applied", effect="NoExecute") == [
        "preview",
        "undo-none",
        "enforce-NoSchedule",
        "undo-delete",
    ]
    assert states.offered(state="applied", effect="None") == [
        "preview",
        "enforce-NoSchedule",
        "enforce-NoExecute",
        "undo-delete",
        "drain",
    ]
    assert states.offered(state="draining", effect="NoSchedule", drain_state="running") == [
        "preview",
        "drain-pause",
        "drain-abort",
    ]
    assert states.offered(state="draining", effect="NoSchedule", drain_state="paused") == [
        "preview",
        "drain-resume",
        "drain-abort",
    ]
    assert states.offered(state="undone", effect="") == []


def test_it_leaves_no_preview_behind_when_a_concurrent_preview_came_first(
    mirrored: Any, operator: Any, monkeypatch: Any
) -> None:
    """Two previews requested on one version: the one that loses the race is refused (409) and leaves
    no what-if run and no preview behind; the latest preview stays the winner's."""
    from allocation.models import WhatIfRun
    from maintenance import services
    from maintenance.preview import latest_preview

    m = create(operator)
    seen = m.version
    real_check = services._check
    winner: list[Any] = []

    def check_then_lose_the_race(maintenance: Maintenance, action: str, expected_version: int | None) -> None:
        real_check(maintenance, action, expected_version)
        if not winner:  # the other request passes its check too and writes first
            monkeypatch.setattr(services, "_check", real_check)
            other = Maintenance.objects.get(pk=maintenance.pk)
            winner.append(
                services.maintenance_preview_start(maintenance=other, user=operator, expected_version=seen)
            )

    monkeypatch.setattr(services, "_check", check_then_lose_the_race)
    response = logged_in(operator).post(
        f"/api/maintenance/{m.id}/preview/", {"version": seen}, content_type="application/json"
    )
    assert response.status_code == 409, response.content
    assert response.json()["errors"][0]["field"] == "version"
    m.refresh_from_db()
    assert m.version == seen + 1
    assert list(WhatIfRun.objects.values_list("pk", flat=True)) == [winner[0].pk]
    assert m.previews.count() == 1
    latest = latest_preview(m)
    assert latest is not None and latest.run_id == str(winner[0].pk)
    assert m.preview_run_id == str(winner[0].pk)


def test_it_keeps_the_version_and_the_preview_when_the_what_if_limit_refuses_a_preview(
    mirrored: Any, operator: Any, settings: Any
) -> None:
    from maintenance.preview import latest_preview
    from maintenance.services import MaintenanceError, maintenance_preview_start

    settings.DRADASH_WHATIF_MAX_RUNS_PER_USER = 1
    m = create(operator)
    first = maintenance_preview_start(
        maintenance=m, user=operator, expected_version=m.version
    )  # still pending
    version = m.version
    with pytest.raises(MaintenanceError) as error:
        maintenance_preview_start(maintenance=m, user=operator, expected_version=version)
    assert error.value.status == 429 and error.value.errors[0].field == "user"
    assert m.version == version
    m.refresh_from_db()
    assert m.version == version and m.preview_run_id == str(first.pk)
    latest = latest_preview(m)
    assert latest is not None and latest.run_id == str(first.pk) and m.previews.count() == 1


def test_a_drafts_kubectl_command_warns_that_applying_it_by_hand_skips_the_preview(
    mirrored: Any, operator: Any
) -> None:
    evicting = create(operator)  # NoExecute
    html = logged_in(operator).get(f"/maintenance/{evicting.id}/").content.decode()
    warning = html.index('id="kubectl-warning"')
    assert warning < html.index('id="kubectl-command"')
    assert "evicts the pods that use them" in html[warning:] and "Enforce from this page instead" in html

    blocking = create(operator, effect="NoSchedule", title="Cordon")
    html = logged_in(operator).get(f"/maintenance/{blocking.id}/").content.decode()
    assert "out of new allocations at once" in html and "evicts the pods" not in html

    harmless = create(operator, effect="None", title="Watch only")
    assert (
        'id="kubectl-warning"' not in logged_in(operator).get(f"/maintenance/{harmless.id}/").content.decode()
    )
    # rules applied with effect None first: enforcing NoExecute is still ahead, so is the warning
    maintenance_apply(maintenance=evicting, user=operator, effect="None", confirmed=False)
    assert 'id="kubectl-warning"' in logged_in(operator).get(f"/maintenance/{evicting.id}/").content.decode()
    maintenance_undo(maintenance=evicting, user=operator, mode="delete")
    assert (
        'id="kubectl-warning"' not in logged_in(operator).get(f"/maintenance/{evicting.id}/").content.decode()
    )
