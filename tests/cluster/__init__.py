"""The real-Kubernetes tier: see conftest.py, and the harness it runs on, gitops_infra.local."""
