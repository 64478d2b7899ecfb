"""kubegc: Kubernetes' deletion machinery, for real.

Layers (imports flow downward only; pyproject.toml's import-linter contracts are the
truth, docs/architecture.md draws them):
cli > testing | planner_cluster > cluster > tools | controllermanager > controllers |
kubelet | scheduler > component > client > server > registry > storage | authz | tokens >
api
"""

__version__ = "0.1.0"
