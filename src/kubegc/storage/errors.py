"""Storage errors (cf. etcd rpctypes and apiserver ``storage`` errors).

Exception tree:
  StorageError
    CompactedError       -- a read or watch asked for a revision older than the compaction
    FutureRevisionError  -- a read asked for a revision newer than the current one
    KeyExistsError       -- create of a key that exists
    KeyNotFoundError     -- update/delete of a key that does not exist
    ConflictError        -- update/delete whose expected mod revision is not the key's
    StorageClosedError   -- the store was closed

The registry translates these into Kubernetes ``StatusError``s; nothing above the registry
ever sees them.
"""

from __future__ import annotations


class StorageError(Exception):
    pass


class CompactedError(StorageError):
    def __init__(self, revision: int, compact_revision: int) -> None:
        super().__init__("mvcc: required revision has been compacted")
        self.revision = revision
        self.compact_revision = compact_revision


class FutureRevisionError(StorageError):
    def __init__(self, revision: int, current_revision: int) -> None:
        super().__init__("mvcc: required revision is a future revision")
        self.revision = revision
        self.current_revision = current_revision


class KeyExistsError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key exists: {key}")
        self.key = key


class KeyNotFoundError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class ConflictError(StorageError):
    def __init__(self, key: str, expected: int, actual: int) -> None:
        super().__init__(f"conflict on {key}: expected mod revision {expected}, found {actual}")
        self.key = key
        self.expected = expected
        self.actual = actual


class StorageClosedError(StorageError):
    pass
