"""What-if questions answered with the allocator: the registry of kinds (`base`), submit-time input
checks (`inputs`), resolution of the question in the worker (`subject`), the allocator over a
snapshot (`view`, `fingerprint`), and one module per kind in `kinds/`."""
