"""``--token-auth-file`` (k8s.io/apiserver ``pkg/authentication/token/tokenfile``): a CSV of
``token,user,uid[,"group1,group2"]``, one user per line, read once at start."""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

from kubegc.api.auth import UserInfo
from kubegc.server.authn import TokenAuthenticator

log = logging.getLogger(__name__)


class TokenFileError(ValueError):
    """The file cannot be read as a token file (the message says where and why)."""


def read_token_file(path: Path) -> dict[str, UserInfo]:
    """token → user (``tokenfile.NewCSV``): fewer than three columns is an error, an empty
    token is skipped, a repeated token is the last line's (both with a warning)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"token file '{path}': {e}") from None
    tokens: dict[str, UserInfo] = {}
    try:
        records = list(csv.reader(io.StringIO(text), skipinitialspace=True, strict=True))
    except csv.Error as e:
        raise TokenFileError(f"token file '{path}': {e}") from None
    number = 0
    for record in records:
        if not record:
            continue  # Go's csv skips empty lines
        if len(record) < 3:
            raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, "
                                 f"user name, user uid), found {len(record)}")
        number += 1
        token = record[0]
        if not token:
            log.warning("empty token has been found in token file '%s', record number '%d'",
                        path, number)
            continue
        if token in tokens:
            log.warning("duplicate token has been found in token file '%s', record number "
                        "'%d'", path, number)
        groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
        tokens[token] = UserInfo(record[1], uid=record[2], groups=groups)
    return tokens


def token_file_authenticator(tokens: dict[str, UserInfo]) -> TokenAuthenticator:
    async def authenticate(token: str) -> UserInfo | None:
        return tokens.get(token)

    return authenticate
