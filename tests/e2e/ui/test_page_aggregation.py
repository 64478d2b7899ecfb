"""The owner-graph page names an unavailable APIService as what holds a Terminating
namespace, with the fix — the doctor's answer (tests/e2e/test_aggregation.py has the
server side)."""

from __future__ import annotations

from typing import Any

import pytest

from ..aggregated_api import AggregatedAPI
from ..conftest import Server, eventually
from ..test_aggregation import (  # noqa: F401 (fixtures)
    API_SERVICE,
    agg_server,
    backend,
    registered,
    wait_available,
)
from .conftest import details, find, login_url, new_page, open_page

pytestmark = pytest.mark.kubectl


def test_the_page_names_the_unavailable_apiservice(
        agg_server: Server, backend: AggregatedAPI, registered: str,  # noqa: F811
        browser: Any) -> None:
    agg_server.kubectl("create", "namespace", "ui-held")
    backend.stop()
    page = new_page(browser)
    try:
        wait_available(agg_server, "False", "FailedDiscoveryCheck")
        agg_server.kubectl("delete", "namespace", "ui-held", "--wait=false")
        eventually(lambda: "NamespaceDeletionDiscoveryFailure" in agg_server.kubectl(
            "get", "ns", "ui-held", "-o", "jsonpath={.status.conditions[*].type}").stdout,
            what="the discovery failure condition")
        open_page(page, login_url(agg_server))
        find(page, "namespace/ui-held")
        text = details(page)
        assert f"APIService {API_SERVICE} is unavailable" in text, text
        assert f"kubectl delete apiservice {API_SERVICE}" in text, text
        assert page.js_errors == []
    finally:
        page.context.close()
        backend.start()
    eventually(lambda: agg_server.kubectl("get", "ns", "ui-held", check=False).returncode != 0,
               timeout=90, what="namespace ui-held released")
