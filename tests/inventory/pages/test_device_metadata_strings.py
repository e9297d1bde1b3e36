"""What a driver publishes and reports about a device is shown capped and isolated wherever a page shows
it: the claim and pod pages' device metadata table (the attributes, the network data and data of the
claim's device status), the device page's attributes, capacity and status conditions, a node's labels and
a pod's device taints. A 100,000-character attribute or interface name filled the claim page (400 KB),
and a right-to-left override (U+202E) in one reversed the text after it, where other fields are in a
<bdi>."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db

DRIVER = "gpu.example.com"
RLO = "\u202e"
HOSTILE = f"<img src=x>{RLO}evil"
LONG = "Z" * 100_000


class Text(HTMLParser):
    """Every text node of a page, with whether an element isolates it (<bdi>) around it."""

    VOID = frozenset({"br", "img", "input", "meta", "link", "hr", "wbr", "col"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.nodes: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while tag in self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.nodes.append((data, "bdi" in self.open or "title" in self.open))


def texts(html: str) -> list[tuple[str, bool]]:
    parser = Text()
    parser.feed(html)
    return parser.nodes


@pytest.fixture
def hostile() -> None:
    taint = {"key": "example.com/t", "value": "v" + RLO, "effect": "NoSchedule"}
    device = f.gpu("gpu-0", model=HOSTILE + LONG, taints=[taint])
    device["attributes"][f"evil{RLO}name"] = {"version": "1.0.0-" + HOSTILE}
    device["capacity"]["cores"] = {"value": "8"}
    claim = f.claim(
        "c1",
        namespace="ml",
        results=[f.result("gpu-0")],
        reserved_for=[{"resource": "pods", "name": "p-0", "uid": "uid-p-0"}],
        device_status=[
            {
                "driver": DRIVER,
                "pool": "node-0",
                "device": "gpu-0",
                "conditions": [{"type": HOSTILE, "status": "True", "reason": "r", "message": "m"}],
                "networkData": {
                    "interfaceName": HOSTILE + LONG,
                    "hardwareAddress": HOSTILE,
                    "ips": [HOSTILE],
                },
                "data": {"note": HOSTILE + LONG},
            }
        ],
    )
    pod = f.pod("p-0", claim="c1", namespace="ml")
    f.write(
        ("deviceclasses", f.device_class(DRIVER)),
        ("nodes", f.node("node-0", **{"example.com/evil": "v" + RLO})),
        ("resourceslices", f.resource_slice("s", devices=[device])),
        ("resourceclaims", claim),
        ("pods", pod),
    )


@pytest.mark.parametrize(
    "path",
    ["/claims/ml/c1/", "/pods/ml/p-0/", f"/devices/{DRIVER}/node-0/gpu-0/", "/nodes/node-0/"],
)
def test_a_drivers_strings_are_capped_escaped_and_isolated_on_the_page(
    client: Client, hostile: None, path: str
) -> None:
    client.force_login(make_user())

    page = client.get(path).content.decode()

    assert "<img src=x>" not in page
    assert "Z" * 2000 not in page  # DRADASH_MAX_STRING is 1024
    reversed_ = [text for text, isolated in texts(page) if RLO in text and not isolated]
    assert reversed_ == []
