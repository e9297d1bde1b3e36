"""A pod that names a ResourceClaim that does not exist (the demo's ml/waits-for-dataset-gpu): its page said
"not in the mirror" beside a link to the claim's page, which is a 404. The name is shown without a link."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages.test_pods_list import pod
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


def test_a_claim_that_does_not_exist_is_named_but_not_linked(client: Client) -> None:
    client.force_login(make_user())
    f.write(pod("waits", phase="Pending", claims=[{"name": "gpu", "resourceClaimName": "dataset-gpu"}]))
    html = client.get("/pods/ml/waits/").content.decode()
    claims = html.split('id="pod-claims"')[1].split("</table>")[0]
    assert "dataset-gpu" in claims and "not in the mirror" in claims
    assert 'href="/claims/ml/dataset-gpu/"' not in claims
    assert client.get("/claims/ml/dataset-gpu/").status_code == 404  # where the link led
