"""One module per verb (kine style): each maps an HTTP request to one registry call."""
