"""The name grammars of apimachinery's ``util/validation`` (newer releases: ``api/validate/
content``), with upstream's messages: DNS-1123 labels and subdomains, path-segment names,
qualified names (label keys, annotation keys, finalizer names) and label values.

The one implementation of each: object names (``kubegc.registry.validation.objectmeta``, the
strategies), metadata labels, annotations and finalizers, and label selectors
(``kubegc.api.labels``) all check here. Every function returns upstream's messages, none
when the value is valid.
May import: the standard library.
"""

from __future__ import annotations

import functools
import ipaddress
import re

DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _label(value: str, pattern: re.Pattern[str], message: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not pattern.fullmatch(value):
        errs.append(message)
    return errs


def is_dns1123_label(value: str) -> list[str]:
    return _label(value, _DNS1123_LABEL, DNS1123_LABEL_MSG)


_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: a label that starts with a letter (Service names)."""
    return _label(value, _DNS1035_LABEL, DNS1035_LABEL_MSG)


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(DNS1123_SUBDOMAIN_MSG)
    return errs


def is_path_segment_name(value: str) -> list[str]:
    """Names of custom resources and some built-ins: anything that is a path segment."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


# --- qualified names and label values (IsQualifiedName, IsValidLabelValue) ---------------
#
# The one implementation of the qualified-name and label-value grammars: selectors use it
# here, and ``kubegc.registry.validation.objectmeta`` uses it for metadata labels,
# annotation keys and finalizer names. Results are tuples (immutable), so they can be
# remembered: the same keys and values come back on object after object (every create and
# update validates its labels). Only strings short enough to be valid are remembered, so the
# memos never hold a large string a client sent.

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
#: The longest valid qualified name: a DNS-1123 subdomain prefix, '/', a 63-character name.
_QUALIFIED_NAME_MEMO_MAX = DNS1123_SUBDOMAIN_MAX_LENGTH + 1 + QUALIFIED_NAME_MAX_LENGTH
#: Distinct keys and values remembered; the oldest go first (a 4-label Pod template's keys
#: and values are 8 entries, so thousands of templates fit).
_MEMO_SIZE = 4096

_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
    " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for"
    f" validation is '{_NAME_FMT}')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or"
    f" 'my_value',  or '12345', regex used for validation is '({_NAME_FMT})?')"
)



def _qualified_name_errors(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return (
            f"a valid label key {_NAME_MSG} with an optional DNS subdomain prefix and '/'"
            " (e.g. 'example.com/MyName')",
        )
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + e for e in is_dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} characters")
    if not _NAME_RE.fullmatch(name):
        errs.append("name part " + _NAME_MSG)
    return tuple(errs)


def _label_value_errors(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(f"must be no more than {LABEL_VALUE_MAX_LENGTH} characters")
    if not _VALUE_RE.fullmatch(value):
        errs.append(_VALUE_MSG)
    return tuple(errs)


_qualified_name_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_qualified_name_errors)
_label_value_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_label_value_errors)


def is_qualified_name(value: str) -> tuple[str, ...]:
    """``validation.IsQualifiedName`` (``content.IsLabelKey``): ``[prefix/]name``, a
    DNS-1123 subdomain prefix and a name of at most 63 alphanumerics, '-', '_' or '.'
    beginning and ending alphanumeric. The grammar of label keys, annotation keys and
    finalizer names. Returns upstream's messages, none when valid."""
    if len(value) > _QUALIFIED_NAME_MEMO_MAX:
        return _qualified_name_errors(value)
    return _qualified_name_memo(value)


def is_valid_label_value(value: str) -> tuple[str, ...]:
    """``validation.IsValidLabelValue``: empty, or at most 63 alphanumerics, '-', '_' or '.'
    beginning and ending alphanumeric. Returns upstream's messages (a value too long gets
    the length message, and the pattern message too when its characters are wrong), none
    when valid."""
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        return _label_value_errors(value)
    return _label_value_memo(value)


__all__ = [
    "DNS1035_LABEL_MSG",
    "DNS1123_LABEL_MSG",
    "DNS1123_SUBDOMAIN_MSG",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_path_segment_name",
    "is_qualified_name",
    "is_valid_label_value",
]


_CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIG_MAP_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: the keys of ConfigMap and Secret data."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _CONFIG_MAP_KEY.match(value):
        errs.append(CONFIG_MAP_KEY_MSG)
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME."""
    errs = []
    if len(port) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARSET.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``."""
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


_HTTP_HEADER_NAME = re.compile(r"^[-A-Za-z0-9]+$")
HTTP_HEADER_NAME_MSG = ("a valid HTTP header must consist of alphanumeric characters or '-' "
                        "(e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')")


def is_http_header_name(value: str) -> list[str]:
    """``IsHTTPHeaderName``."""
    return [] if _HTTP_HEADER_NAME.match(value) else [HTTP_HEADER_NAME_MSG]


IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def parse_ip_sloppy(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy``: Go's ``net.ParseIP`` that also reads IPv4 octets with
    leading zeros as decimal; no zone (``%eth0``), no CIDR. An IPv4-mapped IPv6 address
    reads as its IPv4 address, as Go's ``net.IP`` does."""
    if not value or "%" in value or "/" in value:
        return None
    text = value
    if ":" not in value and value.count(".") == 3:
        octets = value.split(".")
        if not all(o.isascii() and o.isdigit() and len(o) <= 3 for o in octets):
            return None
        text = ".".join(str(int(o)) for o in octets)
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def parse_cidr_sloppy(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """``netutils.ParseCIDRSloppy``: an address (read as ``parse_ip_sloppy`` does) and a
    prefix length; host bits may be set."""
    address, slash, length = value.partition("/")
    ip = parse_ip_sloppy(address) if slash and length.isascii() and length.isdigit() else None
    if ip is None or (":" in address and ip.version == 4):
        return None
    try:
        return ipaddress.ip_network(f"{ip}/{int(length)}", strict=False)
    except ValueError:
        return None


def is_valid_cidr(value: str) -> list[str]:
    """``validation.IsValidCIDR``."""
    return [] if parse_cidr_sloppy(value) is not None else [CIDR_MSG]


def is_valid_ip(value: str) -> list[str]:
    """``validation.IsValidIP`` (the sloppy parse the core API's legacy fields use)."""
    return [] if parse_ip_sloppy(value) is not None else [IP_MSG]


def non_special_ip(value: str) -> list[str]:
    """``ValidateNonSpecialIP`` of ``pkg/apis/core/validation`` (Endpoints, EndpointSlices,
    external IPs): not unspecified, loopback, link-local or link-local multicast."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return ["must be a valid IP address"]
    errs = []
    if ip.is_unspecified:
        errs.append(f"may not be unspecified ({value})")
    if ip.is_loopback:
        errs.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if ip.is_link_local:
        errs.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    if (ip.version == 4 and ip in _LINK_LOCAL_MULTICAST_V4) or (
            ip.version == 6 and ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02):
        errs.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return errs


_LINK_LOCAL_MULTICAST_V4 = ipaddress.ip_network("224.0.0.0/24")
