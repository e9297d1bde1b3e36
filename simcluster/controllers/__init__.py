"""Simulated controllers that run beside the API server (driver, scheduler, eviction, claims, owners)."""
