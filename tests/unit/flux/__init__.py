"""Unit tests of ``gitops_infra.components.flux``, one module per bootstrap piece."""
