"""Every kind simcluster validates: its well-formed sample passes untouched."""

from __future__ import annotations

import pytest

from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    FACTORIES,
    Kind,
)


@pytest.mark.parametrize("kind", list(FACTORIES), ids=lambda k: k.kind)
def test_it_accepts_the_well_formed_objects(kind: Kind) -> None:
    assert validate(kind, FACTORIES[kind](), None) == ([], [])
