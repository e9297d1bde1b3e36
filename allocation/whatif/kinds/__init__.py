"""The what-if kinds: every module here registers one (`AllocationConfig.ready()` imports them all)."""
