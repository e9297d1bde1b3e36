"""The mirror host's clock stepped back (NTP correcting a clock that ran ahead): a confirmation recorded
in what is now the future must not stay the data's age. Kept as the latest, it made every later
confirmation lose the `max`, so the data looked current (age 0) for as long as the clock had been ahead,
whatever happened to the watch meanwhile."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from inventory.mirror.writer import BatchWriter, Event
from inventory.models import WatchState
from inventory.selectors.status import mirror_status
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_a_confirmation_from_before_the_clock_stepped_back_does_not_keep_the_data_current() -> None:
    rule = f.taint_rule("r", selector=None)
    f.replace("devicetaintrules", [rule], rv="10")
    future = datetime.now(UTC) + timedelta(hours=1)
    WatchState.objects.filter(kind="devicetaintrules").update(state="synced", confirmed_at=future)

    arrived = time.time()
    BatchWriter().apply(
        [Event("devicetaintrules", "BOOKMARK", {"metadata": {"resourceVersion": "11"}}, "11", arrived)]
    )

    confirmed = WatchState.objects.get(kind="devicetaintrules").confirmed_at
    assert confirmed is not None and confirmed <= datetime.now(UTC)
    # Ten minutes without news later, the data is old, as it is.
    later = datetime.fromtimestamp(arrived, UTC) + timedelta(minutes=10)
    status = mirror_status(now=later)
    assert status.age_seconds is not None and status.age_seconds >= 600 - 1
