"""OpenAPI v2 as protobuf: gnostic's ``openapi_v2.Document`` (github.com/google/gnostic,
``openapiv2/OpenAPIv2.proto``), the body of ``GET /openapi/v2`` with
``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` — the only form
kubectl reads (it validates ``kind: List`` files, and in 1.27/1.28 every file, against it).

``encode_document(swagger)`` is kube-openapi's ``ToProtoBinary``: gnostic's
``ParseDocument`` of the JSON document, then ``proto.Marshal``. The tables below give, for
each message, its JSON keys in field-number order (``_fields``: the n-th key is field
n+first); what gnostic keeps as ``Any`` (extensions ``x-…``, ``default``, ``example``,
``enum`` values) is its YAML text (``Any.yaml``, from ``compiler.Marshal``), which
kubectl reads back with ``yaml.Unmarshal``. As proto3 encodes them, empty strings, zeros and
false are left out, while a message (``properties: {}``) or a oneof member (
``additionalProperties: false``) that is present is written even when empty: kubectl tells
an object schema with no properties from one without ``properties`` by that.
May import: stdlib only.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

_VARINT, _FIXED64, _BYTES = 0, 1, 2

# field kinds: str bool double int64 any [str] [any] and message names; [Name] repeated
Table = tuple[tuple[int, str, str], ...]  # (field number, JSON key, kind)


def _fields(first: int, spec: str) -> Table:
    """``"key:kind key:kind"`` numbered from ``first``; ``-`` skips a number."""
    out = []
    for number, item in enumerate(spec.split(), first):
        if item != "-":
            key, _, kind = item.partition(":")
            out.append((number, key, kind))
    return tuple(out)


_LIMITS = ("maximum:double exclusiveMaximum:bool minimum:double exclusiveMinimum:bool "
           "maxLength:int64 minLength:int64 pattern:str maxItems:int64 minItems:int64 "
           "uniqueItems:bool enum:[any] multipleOf:double")
_PRIMITIVE = f"type:str format:str items:PrimitivesItems collectionFormat:str default:any {_LIMITS}"

#: message → (its fields, number of its vendor_extension field or 0)
MESSAGES: dict[str, tuple[Table, int]] = {
    "Document": (_fields(1, "swagger:str info:Info host:str basePath:str schemes:[str] "
                            "consumes:[str] produces:[str] paths:Paths "
                            "definitions:map:Schema parameters:map:Parameter "
                            "responses:map:Response security:[SecurityRequirement] "
                            "securityDefinitions:map:SecurityDefinitionsItem tags:[Tag] "
                            "externalDocs:ExternalDocs"), 16),
    "Info": (_fields(1, "title:str version:str description:str termsOfService:str "
                        "contact:Contact license:License"), 7),
    "Contact": (_fields(1, "name:str url:str email:str"), 4),
    "License": (_fields(1, "name:str url:str"), 3),
    "ExternalDocs": (_fields(1, "description:str url:str"), 3),
    "Tag": (_fields(1, "name:str description:str externalDocs:ExternalDocs"), 4),
    "Xml": (_fields(1, "name:str namespace:str prefix:str attribute:bool wrapped:bool"), 6),
    "PathItem": (_fields(1, "$ref:str get:Operation put:Operation post:Operation "
                            "delete:Operation options:Operation head:Operation "
                            "patch:Operation parameters:[ParametersItem]"), 10),
    "Operation": (_fields(1, "tags:[str] summary:str description:str "
                             "externalDocs:ExternalDocs operationId:str produces:[str] "
                             "consumes:[str] parameters:[ParametersItem] "
                             "responses:Responses schemes:[str] deprecated:bool "
                             "security:[SecurityRequirement]"), 13),
    "BodyParameter": (_fields(1, "description:str name:str in:str required:bool "
                                 "schema:Schema"), 6),
    "QueryParameterSubSchema": (_fields(1, "required:bool in:str description:str name:str "
                                           f"allowEmptyValue:bool {_PRIMITIVE}"), 23),
    "PathParameterSubSchema": (_fields(1, f"required:bool in:str description:str name:str "
                                          f"{_PRIMITIVE}"), 22),
    "PrimitivesItems": (_fields(1, _PRIMITIVE), 18),
    "JsonReference": (_fields(1, "$ref:str description:str"), 0),
    "Response": (_fields(1, "description:str schema:SchemaItem - examples:map:any"), 5),
    "Schema": (_fields(1, "$ref:str format:str title:str description:str default:any "
                          "multipleOf:double maximum:double exclusiveMaximum:bool "
                          "minimum:double exclusiveMinimum:bool maxLength:int64 "
                          "minLength:int64 pattern:str maxItems:int64 minItems:int64 "
                          "uniqueItems:bool maxProperties:int64 minProperties:int64 "
                          "required:[str] enum:[any] "
                          "additionalProperties:AdditionalPropertiesItem type:TypeItem "
                          "items:ItemsItem allOf:[Schema] properties:map:Schema "
                          "discriminator:str readOnly:bool xml:Xml "
                          "externalDocs:ExternalDocs example:any"), 31),
    "ApiKeySecurity": (_fields(1, "type:str name:str in:str description:str"), 5),
    "BasicAuthenticationSecurity": (_fields(1, "type:str description:str"), 3),
}
MESSAGES["HeaderParameterSubSchema"] = MESSAGES["PathParameterSubSchema"]
MESSAGES["FormDataParameterSubSchema"] = MESSAGES["QueryParameterSubSchema"]
_NON_BODY = {"header": (1, "HeaderParameterSubSchema"),
             "formData": (2, "FormDataParameterSubSchema"),
             "query": (3, "QueryParameterSubSchema"), "path": (4, "PathParameterSubSchema")}
_RESPONSE_CODE = re.compile(r"^([0-9]{3})$|^(default)$")


def encode_document(swagger: Mapping[str, Any]) -> bytes:
    """The protobuf ``openapi_v2.Document`` of a Swagger 2.0 JSON document."""
    return _message("Document", swagger)


# -- wire format -----------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s take ten bytes, as Go writes them
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _bytes(number: int, data: bytes) -> bytes:
    return _key(number, _BYTES) + _varint(len(data)) + data


def _scalar(number: int, kind: str, value: Any) -> bytes:
    """A proto3 scalar: nothing for the zero value."""
    if kind == "str":
        return _bytes(number, value.encode()) if isinstance(value, str) and value else b""
    if kind == "bool":
        return _key(number, _VARINT) + b"\x01" if value is True else b""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value:
        return b""
    if kind == "double":
        return _key(number, _FIXED64) + struct.pack("<d", float(value))
    return _key(number, _VARINT) + _varint(int(value))  # int64


# -- messages ---------------------------------------------------------------------------------


def _message(name: str, value: Any) -> bytes:
    special = _SPECIAL.get(name)
    if special is not None:
        return special(value)
    if not isinstance(value, Mapping):
        return b""
    fields, vendor = MESSAGES[name]
    out = bytearray()
    for number, key, kind in fields:
        if key in value:
            out += _field(number, kind, value[key])
    if vendor:
        out += _vendor_extensions(vendor, value)
    return bytes(out)


def _field(number: int, kind: str, value: Any) -> bytes:
    if kind.startswith("["):
        inner = kind[1:-1]
        items = value if isinstance(value, list) else []
        return b"".join(_field(number, inner, item) for item in items)
    if kind.startswith("map:"):
        return _bytes(number, _named_map(kind[4:], value))
    if kind == "any":
        return _bytes(number, _any(value))
    if kind in ("str", "bool", "double", "int64"):
        return _scalar(number, kind, value)
    return _bytes(number, _message(kind, value))


def _named(name: str, kind: str, value: Any) -> bytes:
    """A ``Named<Kind>`` message: {1: name, 2: value}."""
    return _bytes(1, name.encode()) + _field(2, kind, value)


def _named_map(kind: str, value: Any) -> bytes:
    """A map message (``Properties``, ``Definitions``…): ``repeated Named<Kind>
    additional_properties = 1``, in the document's key order."""
    items = value.items() if isinstance(value, Mapping) else ()
    return b"".join(_bytes(1, _named(str(k), kind, v)) for k, v in items)


def _vendor_extensions(number: int, value: Mapping[str, Any]) -> bytes:
    return b"".join(_bytes(number, _named(k, "any", v))
                    for k, v in value.items() if isinstance(k, str) and k.startswith("x-"))


def _any(value: Any) -> bytes:
    """gnostic's ``Any``: only ``yaml`` (field 2) is set."""
    return _bytes(2, to_yaml(value).encode())


def _paths(value: Any) -> bytes:
    if not isinstance(value, Mapping):
        return b""
    out = _vendor_extensions(1, value)
    return out + b"".join(_bytes(2, _named(k, "PathItem", v))
                          for k, v in value.items() if k.startswith("/"))


def _responses(value: Any) -> bytes:
    if not isinstance(value, Mapping):
        return b""
    out = b"".join(_bytes(1, _named(k, "ResponseValue", v))
                   for k, v in value.items() if _RESPONSE_CODE.match(k))
    return out + _vendor_extensions(2, value)


def _oneof_ref(target: str) -> Callable[[Any], bytes]:
    """A ``oneof`` of a message (1) and a ``JsonReference`` (2), chosen by ``$ref``."""
    def encode(value: Any) -> bytes:
        if isinstance(value, Mapping) and "$ref" in value:
            return _bytes(2, _message("JsonReference", value))
        return _bytes(1, _message(target, value))
    return encode


def _parameter(value: Any) -> bytes:
    location = value.get("in") if isinstance(value, Mapping) else None
    if location == "body":
        return _bytes(1, _message("BodyParameter", value))
    number, sub = _NON_BODY.get(str(location), (3, "QueryParameterSubSchema"))
    return _bytes(2, _bytes(number, _message(sub, value)))


def _schema_item(value: Any) -> bytes:
    return _bytes(1, _message("Schema", value))  # file schemas (type: file) are not served


def _additional_properties(value: Any) -> bytes:
    if isinstance(value, bool):  # a oneof member: written even when false
        return _key(2, _VARINT) + (b"\x01" if value else b"\x00")
    return _bytes(1, _message("Schema", value))


def _type_item(value: Any) -> bytes:
    names = value if isinstance(value, list) else [value]
    return b"".join(_scalar(1, "str", name) for name in names)


def _items_item(value: Any) -> bytes:
    schemas = value if isinstance(value, list) else [value]
    return b"".join(_bytes(1, _message("Schema", s)) for s in schemas)


def _security_requirement(value: Any) -> bytes:
    items = value.items() if isinstance(value, Mapping) else ()
    return b"".join(_bytes(1, _bytes(1, str(k).encode()) + _bytes(2, b"".join(
        _scalar(1, "str", s) for s in (v or [])))) for k, v in items)


def _security_definitions_item(value: Any) -> bytes:
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "basic":
        return _bytes(1, _message("BasicAuthenticationSecurity", value))
    return _bytes(2, _message("ApiKeySecurity", value))  # kube-apiserver's BearerToken


_SPECIAL: dict[str, Callable[[Any], bytes]] = {
    "Paths": _paths, "Responses": _responses, "ResponseValue": _oneof_ref("Response"),
    "ParametersItem": _oneof_ref("Parameter"), "Parameter": _parameter,
    "SchemaItem": _schema_item, "AdditionalPropertiesItem": _additional_properties,
    "TypeItem": _type_item, "ItemsItem": _items_item,
    "SecurityRequirement": _security_requirement,
    "SecurityDefinitionsItem": _security_definitions_item,
}


# -- YAML (what gnostic's compiler.Marshal writes for an Any) -------------------------------

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
#: Words YAML 1.1 (kubectl's sigs.k8s.io/yaml) would not read back as strings.
_RESERVED = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null", "nan",
                       "inf"})


def to_yaml(value: Any) -> str:
    """A JSON value as block YAML, 4-space indented, ending in a newline (yaml.v3's
    ``Marshal``); strings are quoted unless they are plain words any YAML reads back as
    strings."""
    return "".join(_yaml_lines(value, 0)) if isinstance(value, Mapping | list) and value else (
        _yaml_scalar(value) + "\n")


def _yaml_lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            lines += _yaml_entry(f"{pad}{_yaml_scalar(str(key))}:", item, indent + 4)
    else:
        for item in value:
            if isinstance(item, Mapping) and item:
                nested = _yaml_lines(item, indent + 2)
                lines.append(f"{pad}- {nested[0].lstrip()}")
                lines += nested[1:]
            else:
                lines += _yaml_entry(f"{pad}-", item, indent + 2)
    return lines


def _yaml_entry(head: str, item: Any, indent: int) -> list[str]:
    if isinstance(item, Mapping | list) and item:
        return [head + "\n", *_yaml_lines(item, indent)]
    return [f"{head} {_yaml_scalar(item)}\n"]


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list):
        return "[]"
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return '"' + "".join(_yaml_escape(ch) for ch in text) + '"'


def _yaml_escape(ch: str) -> str:
    if ch in '"\\':
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return f"\\u{ord(ch):04x}"
    return ch
