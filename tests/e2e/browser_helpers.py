"""Shared steps of the browser tests."""

from __future__ import annotations

from typing import Any

PASSWORD = "e2e-password-1"


def user(name: str, group: str) -> Any:
    """A user in `group` (viewer, operator, admin) who logs in with PASSWORD."""
    from django.contrib.auth.models import Group, User

    u = User.objects.create_user(username=name, password=PASSWORD)
    u.groups.add(Group.objects.get_or_create(name=group)[0])
    return u


def log_in(page: Any, base: str, username: str, *, start: str = "/devices/") -> None:
    page.goto(f"{base}{start}")
    assert "/accounts/login/" in page.url, "an anonymous visitor must land on the login page"
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}{start}")


def mirror_current() -> None:
    """Every mirrored kind's watch synced and confirmed now, as a running mirror reports it: no stale-data banner
    (written from a thread of its own: a test's browser event loop owns the test's thread)."""
    from concurrent.futures import ThreadPoolExecutor

    def write() -> None:
        from django.utils import timezone

        from inventory.kube import MIRRORED_KINDS
        from inventory.models import WatchState

        now = timezone.now()
        for kind in MIRRORED_KINDS:
            WatchState.objects.update_or_create(
                kind=kind, defaults={"state": "synced", "since": now, "confirmed_at": now}
            )

    with ThreadPoolExecutor(1) as pool:
        pool.submit(write).result()
