"""Controllers of upstream's pkg/controller/certificates (only the root CA publisher)."""
