"""What crossed the host interface, read back from a scenario's capture (btsnoop, datalink 2001:
the Linux monitor format capture.py writes), so a scenario can check that a strap's scripted
behaviour really happened on the wire: the L2CAP connection-parameter update and its answer,
the ATT error that asks for encryption, pairing (SMP) and the encryption change, notifications
on a handle hrmd never subscribed to.

Only what the scenarios look at is decoded: LE connection and disconnection events, the
encryption change, and L2CAP frames (put back together per connection and direction) on the
ATT, LE signalling and SMP channels.
"""

from __future__ import annotations

import dataclasses
import os
import struct

# Microseconds from 0000-01-01 (btsnoop's epoch) to 1970-01-01.
BTSNOOP_EPOCH_OFFSET_US = 0x00DCDDB30F2F8000
# Monitor opcodes (the low 16 bits of a record's flags).
COMMAND, EVENT, ACL_TX, ACL_RX = 2, 3, 4, 5
# L2CAP channels of an LE link.
ATT, LE_SIGNALLING, SMP = 0x0004, 0x0005, 0x0006
# ATT opcodes.
ATT_ERROR, ATT_WRITE_REQUEST, ATT_WRITE_RESPONSE, ATT_NOTIFICATION = 0x01, 0x12, 0x13, 0x1B
ATT_INSUFFICIENT_AUTHENTICATION, ATT_INSUFFICIENT_ENCRYPTION = 0x05, 0x0F
# LE signalling codes.
CONNECTION_PARAMETER_UPDATE_REQUEST, CONNECTION_PARAMETER_UPDATE_RESPONSE = 0x12, 0x13


@dataclasses.dataclass
class Frame:
    """One L2CAP frame: `sent` is host to strap (ACL TX), else strap to host."""

    time: float
    handle: int
    sent: bool
    cid: int
    payload: bytes


@dataclasses.dataclass
class Link:
    """One LE connection the capture shows, from its connection event to its disconnection."""

    handle: int
    peer: str
    connected: float
    disconnected: float | None = None
    reason: int | None = None
    encrypted: float | None = None
    frames: list[Frame] = dataclasses.field(default_factory=list)

    def channel(self, cid: int, sent: bool | None = None) -> list[Frame]:
        return [f for f in self.frames if f.cid == cid and (sent is None or f.sent == sent)]

    def att(self, opcode: int, sent: bool | None = None) -> list[Frame]:
        return [f for f in self.channel(ATT, sent) if f.payload and f.payload[0] == opcode]

    def notifications(self, handle: int | None = None) -> list[Frame]:
        """Notifications from the strap, on `handle` or on any."""
        return [f for f in self.att(ATT_NOTIFICATION, sent=False)
                if handle is None or struct.unpack_from("<H", f.payload, 1)[0] == handle]


def records(path: str):
    """(time, controller index, monitor opcode, payload) of each whole record."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:8] != b"btsnoop\0":
        raise ValueError(f"{path} is not a btsnoop file")
    offset = 16
    while offset + 24 <= len(data):
        original, included, flags, _, stamp = struct.unpack_from(">IIIIq", data, offset)
        offset += 24
        if offset + included > len(data):
            break  # a record still being written
        payload = data[offset:offset + included]
        offset += included
        yield (stamp - BTSNOOP_EPOCH_OFFSET_US) / 1e6, flags >> 16, flags & 0xFFFF, payload


def address(raw: bytes) -> str:
    return ":".join(f"{b:02X}" for b in reversed(raw))


def links(path: str, index: int) -> list[Link]:
    """The LE connections of controller `index`, oldest first, each with its L2CAP frames."""
    found: list[Link] = []
    open_links: dict[int, Link] = {}
    partial: dict[tuple[int, bool], tuple[float, bytearray, int]] = {}
    for time, controller, opcode, payload in records(path):
        if controller != index:
            continue
        if opcode == EVENT and len(payload) >= 2:
            code, params = payload[0], payload[2:]
            if code == 0x3E and params and params[0] in (0x01, 0x0A) and len(params) >= 12 and params[1] == 0:
                handle = struct.unpack_from("<H", params, 2)[0] & 0x0FFF
                link = Link(handle, address(params[6:12]), time)
                open_links[handle] = link
                found.append(link)
            elif code == 0x05 and len(params) >= 4 and params[0] == 0:
                handle = struct.unpack_from("<H", params, 1)[0] & 0x0FFF
                if (link := open_links.pop(handle, None)) is not None:
                    link.disconnected, link.reason = time, params[3]
            elif code == 0x08 and len(params) >= 4 and params[0] == 0 and params[3]:
                handle = struct.unpack_from("<H", params, 1)[0] & 0x0FFF
                if (link := open_links.get(handle)) is not None and link.encrypted is None:
                    link.encrypted = time
        elif opcode in (ACL_TX, ACL_RX) and len(payload) >= 4:
            field, length = struct.unpack_from("<HH", payload)
            handle, boundary, data = field & 0x0FFF, (field >> 12) & 0x3, payload[4:4 + length]
            sent = opcode == ACL_TX
            key = (handle, sent)
            if boundary in (0b00, 0b10):  # the start of an L2CAP frame
                if len(data) < 4:
                    continue
                partial[key] = (time, bytearray(data), struct.unpack_from("<H", data)[0] + 4)
            elif key in partial:
                partial[key][1].extend(data)
            else:
                continue
            began, buffer, needed = partial[key]
            if len(buffer) >= needed:
                del partial[key]
                if (link := open_links.get(handle)) is not None:
                    cid = struct.unpack_from("<H", buffer, 2)[0]
                    link.frames.append(Frame(began, handle, sent, cid, bytes(buffer[4:needed])))
    return found


def links_to(path: str, index: int, peer: str) -> list[Link]:
    return [link for link in links(path, index) if link.peer == peer.upper()]


def settled(path: str, index: int, peers: list[str]) -> bool:
    """Whether the last connection the capture shows to each of `peers` has its disconnection
    in it too."""
    if not os.path.exists(path):
        return False
    found = links(path, index)
    for peer in peers:
        mine = [link for link in found if link.peer == peer.upper()]
        if mine and mine[-1].disconnected is None:
            return False
    return True


def parameter_updates(link: Link) -> list[tuple[Frame, int | None]]:
    """Each Connection Parameter Update Request the strap sent on `link`, with the result the host
    answered (0 accepted, 1 rejected; None when it did not answer)."""
    requests = [f for f in link.channel(LE_SIGNALLING, sent=False)
                if f.payload and f.payload[0] == CONNECTION_PARAMETER_UPDATE_REQUEST]
    answers = {f.payload[1]: struct.unpack_from("<H", f.payload, 4)[0]
               for f in link.channel(LE_SIGNALLING, sent=True)
               if len(f.payload) >= 6 and f.payload[0] == CONNECTION_PARAMETER_UPDATE_RESPONSE}
    return [(request, answers.get(request.payload[1])) for request in requests]


def encryption_refusals(link: Link) -> list[Frame]:
    """ATT Error Responses from the strap asking for authentication or encryption."""
    return [f for f in link.att(ATT_ERROR, sent=False)
            if len(f.payload) >= 5 and f.payload[4] in (ATT_INSUFFICIENT_AUTHENTICATION, ATT_INSUFFICIENT_ENCRYPTION)]
