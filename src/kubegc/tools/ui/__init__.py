"""The live owner-graph page: ``kubegc serve`` mounts it at ``/ui/``, ``kubegc ui`` serves
it alone for any cluster or dump.

Pipeline: ``live`` (informers through the client: list+watch of every resource) →
``feed`` (server-sent events per page, the doctor's marks) and ``answers`` (doctor, why,
tree and plan about one object, in their ``to_dict()`` JSON) → ``app`` (``UIApp``: the
routes, ``auth``'s one-time login tokens and session cookies, the static page under
``static/``). ``UIApp`` knows no HTTP server: the composition root adapts its
``UIRequest``/``UIResponse`` to kubegc's own (``kubegc.ui_server.ui_handler``). Everything
reads through a ``ReadOnlyClient``: nothing the page does writes to the cluster.

May import: ``kubegc.api``, ``kubegc.client`` and the other tools (never ``registry``,
``storage`` or ``server``).
"""

from kubegc.tools.ui.app import PREFIX, UIApp, UIRequest, UIResponse
from kubegc.tools.ui.auth import COOKIE, Sessions
from kubegc.tools.ui.readonly import ReadOnlyClient

__all__ = ["COOKIE", "PREFIX", "ReadOnlyClient", "Sessions", "UIApp", "UIRequest",
           "UIResponse"]
