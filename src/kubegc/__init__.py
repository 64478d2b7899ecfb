"""kubegc: Kubernetes' deletion machinery, for real.

Layers (imports flow downward only; see docs/architecture.md):
cli > testing > cluster > tools > controllers > client > server > registry > storage > api
"""

__version__ = "0.1.0"
