"""The resource.k8s.io rules of dra-api.md §2–§4 (beyond what the JSON schema checks), by their old address.

The rules live in one module per concern; this one re-exports what it held before the split, so that
importers of ``simcluster.validation_dra`` keep working.  New code imports from the module itself:

- ``validation_names``: name formats (DNS labels and subdomains, qualified names, DRA names);
- ``validation_shared``: taints, tolerations, opaque config, conditions and other embedded parts;
- ``validation_cel``: CEL selectors;
- ``validation_capacity``: quantities and capacity request policies;
- ``validation_slices``: ResourceSlice;
- ``validation_claims``: ResourceClaim and ResourceClaimTemplate;
- ``validation_admin``: DeviceClass, DeviceTaintRule and ResourcePoolStatusRequest.

Each ``check_<kind>`` takes the new object, the stored one (``None`` on create) and a ``Causes``; it
returns warnings.  Messages follow apimachinery's wording so that kubectl users see familiar text.
"""

from __future__ import annotations

from simcluster.validation_admin import (
    EMPTY_SELECTOR_WARNING,
    check_device_class,
    check_device_taint_rule,
    check_pool_status_request,
)
from simcluster.validation_capacity import quantity_value
from simcluster.validation_cel import (
    CEL_COST_LIMIT,
    CEL_MAX_LEN,
    COST_EXCEEDED,
    cel_problem,
    cel_syntax_problem,
    check_selectors,
    selector_expressions,
)
from simcluster.validation_claims import (
    check_claim_spec,
    check_resource_claim,
    check_resource_claim_template,
    request_references,
)
from simcluster.validation_names import (
    C_IDENTIFIER_MSG,
    DEVICE_DOMAIN_MAX,
    DEVICE_ID_MAX,
    DNS1123_LABEL_MSG,
    DNS1123_SUBDOMAIN_MSG,
    DRIVER_NAME_MAX,
    LABEL_VALUE_MSG,
    POOL_NAME_MAX,
    QUALIFIED_NAME_MSG,
    device_qualified_name,
    dns_label,
    dns_subdomain,
    driver_name,
    extended_resource_name,
    is_extended_resource_name,
    label_value,
    pool_name,
    qualified_name,
)
from simcluster.validation_shared import (
    OPAQUE_PARAMETERS_MAX,
    TAINT_EFFECTS,
    TOLERATION_EFFECTS,
    Obj,
    check_binding_conditions,
    check_conditions,
    check_opaque_config,
    check_raw_object,
    check_skip_node_operations,
    check_taint,
    check_tolerations,
    exactly_one,
    hashable,
    max_items,
)
from simcluster.validation_slices import check_resource_slice

__all__ = [
    "CEL_COST_LIMIT",
    "CEL_MAX_LEN",
    "COST_EXCEEDED",
    "C_IDENTIFIER_MSG",
    "DEVICE_DOMAIN_MAX",
    "DEVICE_ID_MAX",
    "DNS1123_LABEL_MSG",
    "DNS1123_SUBDOMAIN_MSG",
    "DRIVER_NAME_MAX",
    "EMPTY_SELECTOR_WARNING",
    "LABEL_VALUE_MSG",
    "OPAQUE_PARAMETERS_MAX",
    "POOL_NAME_MAX",
    "QUALIFIED_NAME_MSG",
    "TAINT_EFFECTS",
    "TOLERATION_EFFECTS",
    "Obj",
    "cel_problem",
    "cel_syntax_problem",
    "check_binding_conditions",
    "check_claim_spec",
    "check_conditions",
    "check_device_class",
    "check_device_taint_rule",
    "check_opaque_config",
    "check_pool_status_request",
    "check_raw_object",
    "check_resource_claim",
    "check_resource_claim_template",
    "check_resource_slice",
    "check_selectors",
    "check_skip_node_operations",
    "check_taint",
    "check_tolerations",
    "device_qualified_name",
    "dns_label",
    "dns_subdomain",
    "driver_name",
    "exactly_one",
    "extended_resource_name",
    "hashable",
    "is_extended_resource_name",
    "label_value",
    "max_items",
    "pool_name",
    "qualified_name",
    "quantity_value",
    "request_references",
    "selector_expressions",
]
