"""The Kubernetes IP and CIDR CEL libraries (``apiserver/pkg/cel/library/{ip,cidr}.go`` semantics).

Values travel as tagged bytes like Quantity and Semver: ``b"I" + canonical address`` and
``b"C" + canonical address + "/" + prefix length`` (host bits kept, as upstream keeps them), so CEL's
``==`` compares them canonically. ``string(ip)``/``string(cidr)`` reach :func:`tagged_to_string`
through the AST rewrite (cel-cpp already owns ``string(bytes)``).
"""

from __future__ import annotations

import ipaddress
from typing import Any

IP_PREFIX = b"I"
CIDR_PREFIX = b"C"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


class NetError(ValueError):
    """A string that is not an IP address or CIDR the library accepts."""


def parse_ip(text: str) -> Address:
    if "%" in text:
        raise NetError(f"IP address {text!r} with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError as exc:
        raise NetError(f"IP Address {text!r} parse error during conversion from string: {exc}") from exc
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise NetError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def parse_cidr(text: str) -> Interface:
    address_text, slash, bits = text.partition("/")
    if not slash or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        raise NetError(
            f"network address parse error during conversion from string: {text!r} is not CIDR notation"
        )
    try:
        address = parse_ip(address_text)
    except NetError as exc:
        raise NetError(f"network address parse error during conversion from string: {exc}") from exc
    if int(bits) > address.max_prefixlen:
        raise NetError(
            f"network address parse error during conversion from string: prefix length {bits} too large"
        )
    return ipaddress.ip_interface(f"{address}/{bits}")


def encode_ip(address: Address) -> bytes:
    return IP_PREFIX + str(address).encode("ascii")


def encode_cidr(interface: Interface) -> bytes:
    return CIDR_PREFIX + f"{interface.ip}/{interface.network.prefixlen}".encode("ascii")


def _ip(value: Any) -> Address:
    if isinstance(value, bytes | bytearray) and value[:1] == IP_PREFIX:
        return ipaddress.ip_address(bytes(value[1:]).decode("ascii"))
    raise NetError("no such overload: expected an IP address")


def _cidr(value: Any) -> Interface:
    if isinstance(value, bytes | bytearray) and value[:1] == CIDR_PREFIX:
        return ipaddress.ip_interface(bytes(value[1:]).decode("ascii"))
    raise NetError("no such overload: expected a CIDR")


def _is_link_local_multicast(address: Address) -> bool:
    if address.version == 4:
        return address in ipaddress.ip_network("224.0.0.0/24")
    return (int(address) >> 112) & 0xFF0F == 0xFF02


def _is_global_unicast(address: Address) -> bool:
    if address.version == 4 and str(address) in ("0.0.0.0", "255.255.255.255"):
        return False
    return not (
        address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local
    )


def _contains_ip(cidr: Any, other: Any) -> bool:
    network = _cidr(cidr).network
    address = parse_ip(other) if isinstance(other, str) else _ip(other)
    return address.version == network.version and address in network


def _contains_cidr(cidr: Any, other: Any) -> bool:
    network = _cidr(cidr).network
    inner = (parse_cidr(other) if isinstance(other, str) else _cidr(other)).network
    if inner.version != network.version or inner.prefixlen < network.prefixlen:
        return False
    return int(inner.network_address) & int(network.netmask) == int(network.network_address)


def _is_valid(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except NetError:
        return False
    return True


def _is_canonical(text: str) -> bool:
    return str(parse_ip(text)) == text


def function_decls() -> dict[str, list[tuple[str, str, list[str], Any, bool]]]:
    """(overload id, result, params, implementation, is_member) per function name (types as in library.TYPES)."""
    tagged, s, b, i = "tagged", "string", "bool", "int"
    return {
        "ip": [
            ("string_to_ip", tagged, [s], lambda t: encode_ip(parse_ip(t)), False),
            ("cidr_ip", tagged, [tagged], lambda c: encode_ip(_cidr(c).ip), True),
        ],
        "isIP": [("is_ip", b, [s], lambda t: _is_valid(parse_ip, t), False)],
        "ip.isCanonical": [("ip_is_canonical", b, [s], _is_canonical, False)],
        "family": [("ip_family", i, [tagged], lambda v: _ip(v).version, True)],
        "isUnspecified": [("ip_is_unspecified", b, [tagged], lambda v: _ip(v).is_unspecified, True)],
        "isLoopback": [("ip_is_loopback", b, [tagged], lambda v: _ip(v).is_loopback, True)],
        "isLinkLocalMulticast": [
            ("ip_is_link_local_multicast", b, [tagged], lambda v: _is_link_local_multicast(_ip(v)), True)
        ],
        "isLinkLocalUnicast": [
            ("ip_is_link_local_unicast", b, [tagged], lambda v: _ip(v).is_link_local, True)
        ],
        "isGlobalUnicast": [
            ("ip_is_global_unicast", b, [tagged], lambda v: _is_global_unicast(_ip(v)), True)
        ],
        "cidr": [("string_to_cidr", tagged, [s], lambda t: encode_cidr(parse_cidr(t)), False)],
        "isCIDR": [("is_cidr", b, [s], lambda t: _is_valid(parse_cidr, t), False)],
        "containsIP": [
            ("cidr_contains_ip_string", b, [tagged, s], _contains_ip, True),
            ("cidr_contains_ip_ip", b, [tagged, tagged], _contains_ip, True),
        ],
        "containsCIDR": [
            ("cidr_contains_cidr_string", b, [tagged, s], _contains_cidr, True),
            ("cidr_contains_cidr", b, [tagged, tagged], _contains_cidr, True),
        ],
        "prefixLength": [("cidr_prefix_length", i, [tagged], lambda c: _cidr(c).network.prefixlen, True)],
        "masked": [
            (
                "cidr_masked",
                tagged,
                [tagged],
                lambda c: encode_cidr(ipaddress.ip_interface(str(_cidr(c).network))),
                True,
            )
        ],
    }


def net_text(value: bytes | bytearray) -> str | None:
    """The canonical text of an IP or CIDR value, or None for other bytes."""
    if value[:1] in (IP_PREFIX, CIDR_PREFIX):
        return bytes(value[1:]).decode("ascii")
    return None
