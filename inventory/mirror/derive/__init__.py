"""Derived rows (Pool, Device, Allocation, Claim, ClassAvailability) recomputed from mirrored objects.

Called by `inventory.mirror.writer` inside the batch's transaction, one module per subject. Work is
proportional to what changed: a claim event touches its devices, a rule event the devices its old and
new selectors select, a slice event its pool. Only a DeviceClass change re-evaluates every device
(classes change rarely). Every DRA rule comes from `dra/`; these modules only turn objects into rows.
"""
