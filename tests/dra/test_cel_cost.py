"""The static cost estimate tracks cel-go's estimates for upstream's DRA selector cost cases."""

from __future__ import annotations

import pytest

from dra.allocator.cel import BACKEND_NAMES, COST_LIMIT, new_engine

NESTED_ALL = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)

# (expression, cel-go's estimated cost in upstream's compile_test.go)
UPSTREAM_ESTIMATES = [
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('"no-such-domain" in device.attributes', 3),
    ('device.driver == "dra.example.com"', 4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('device.attributes["dra.example.com"].name > 0', 5),
    ('device.attributes["dra.example.com"].names.exists(x, x > 0)', 5 + 6 * 64),
    ('device.attributes["dra.example.com"].name.includes("fish")', 52),
    ('1 in device.attributes["dra.example.com"].names', 68),
    ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ('device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    (NESTED_ALL, 85_555_551),
]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize(("expression", "upstream"), UPSTREAM_ESTIMATES)
def test_it_estimates_close_to_cel_go(expression: str, upstream: int, backend: str) -> None:
    estimate = new_engine(backend).compile(expression).estimated_cost
    assert 0.5 * upstream <= estimate <= 1.5 * upstream


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_it_puts_upstreams_expensive_case_over_the_limit_and_typical_selectors_far_under(
    backend: str,
) -> None:
    engine = new_engine(backend)
    assert engine.compile(NESTED_ALL).estimated_cost > COST_LIMIT
    typical = engine.compile(
        'device.driver == "gpu.example.com" && '
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0 && '
        'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))'
    )
    assert typical.estimated_cost < 100
