"""The real-Kubernetes tier: see local_cluster.py and conftest.py."""
