"""The page of each object the inventory shows, by its identity: one place that knows the URL shapes, for
templates (`{% load links %}`), search hits and selectors. Names from the cluster are escaped."""

from __future__ import annotations

from urllib.parse import quote

from django.urls import reverse


def device_url(driver: str, pool: str, name: str) -> str:
    # Pool names may hold "/" (a path group in urls.py): kept; everything else quoted.
    base = reverse("inventory:devices")
    return f"{base}{quote(driver, safe='')}/{quote(pool, safe='/')}/{quote(name, safe='')}/"


def pod_url(namespace: str, name: str) -> str:
    return reverse("inventory:pod-detail", args=[namespace, name])


def claim_url(namespace: str, name: str) -> str:
    return reverse("inventory:claim-detail", args=[namespace, name])


def node_url(name: str) -> str:
    return reverse("inventory:node-detail", args=[name])


def rule_url(name: str) -> str:
    return reverse("inventory:taint-rule-detail", args=[name])
