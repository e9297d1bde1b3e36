"""simcluster: a simulated Kubernetes v1.37 API server with DRA controllers, for the demo and the tests."""
