"""Captures the kernel's Bluetooth monitor channel into a btsnoop file, as `btmon -w` does.

    python3 capture.py FILE        runs until SIGTERM or SIGINT

btmon 5.66 decodes every packet it writes, and its ATT decoder crashes (SIGSEGV) on some runs
with many straps, which ends the capture; this writes the same records and decodes nothing.
The file is btsnoop with datalink 2001 (Linux monitor): each record's flags carry the
controller index and the monitor opcode, its time is the kernel's receive time. Read it with
`btmon -r FILE`, `tshark -r FILE`, or `hrmctl replay FILE`.
"""

import ctypes
import os
import signal
import socket
import struct
import sys
import time

AF_BLUETOOTH = 31
BTPROTO_HCI = 1
HCI_CHANNEL_MONITOR = 2
HCI_DEV_NONE = 0xFFFF
SO_TIMESTAMP = 29
# Microseconds from 0000-01-01 (btsnoop's epoch) to 1970-01-01.
BTSNOOP_EPOCH_OFFSET_US = 0x00DCDDB30F2F8000
MONITOR_HEADER = struct.Struct("<HHH")  # opcode, controller index, payload length


def open_monitor() -> socket.socket:
    monitor = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    # Python's bind() takes only a device for BTPROTO_HCI; the channel needs the C structure.
    address = struct.pack("<HHH", AF_BLUETOOTH, HCI_DEV_NONE, HCI_CHANNEL_MONITOR)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.bind(monitor.fileno(), address, len(address)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"binding the HCI monitor channel: {os.strerror(error)}")
    monitor.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
    return monitor


# How often the capture looks up from the socket to see whether it was asked to stop.
POLL_SECONDS = 0.25


def main(path: str) -> int:
    monitor = open_monitor()
    monitor.settimeout(POLL_SECONDS)
    stop = False

    def request_stop(*_):
        # Only a flag: the loop ends between two records, so each record is whole, and no
        # exception can land in the middle of writing or closing the file.
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    with open(path, "wb") as file:
        file.write(b"btsnoop\0" + struct.pack(">II", 1, 2001))
        file.flush()
        record(monitor, file, lambda: stop)
    return 0


def record(monitor: socket.socket, file, stopping) -> None:
    """Writes each monitor packet as one btsnoop record, flushed, until `stopping()` says so
    (looked at after each packet and at least every POLL_SECONDS)."""
    while not stopping():
        try:
            data, ancillary, _, _ = monitor.recvmsg(65536, socket.CMSG_SPACE(16))
        except TimeoutError:
            continue
        if len(data) < MONITOR_HEADER.size:
            continue
        opcode, index, length = MONITOR_HEADER.unpack_from(data)
        payload = data[MONITOR_HEADER.size:MONITOR_HEADER.size + length]
        received = next((struct.unpack("qq", value[:16]) for level, kind, value in ancillary
                         if level == socket.SOL_SOCKET and kind == SO_TIMESTAMP and len(value) >= 16), None)
        if received is None:
            now = time.time_ns() // 1000
            received = (now // 1_000_000, now % 1_000_000)
        stamp = received[0] * 1_000_000 + received[1] + BTSNOOP_EPOCH_OFFSET_US
        file.write(struct.pack(">IIIIq", len(payload), len(payload), (index << 16) | opcode, 0, stamp) + payload)
        file.flush()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: capture.py FILE")
    sys.exit(main(sys.argv[1]))
