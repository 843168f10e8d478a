"""Virtual heart-rate straps on Bumble, and the virtual controller Linux drives through /dev/vhci.

Everything runs in one asyncio loop: a Bumble `Controller` behind `/dev/vhci` is the adapter the
kernel and bluetoothd see (hci0); each strap is a Bumble host and controller on the same
`AirLink`, serving Heart Rate (0x180D: measurement 0x2A37, body sensor location 0x2A38), Battery
(0x180F) and Device Information (0x180A), and notifying at its own pace. What each strap sent
while a central was subscribed is kept, so a scenario can compare it with what hrmd stored.

Behaviour a scenario can script on a strap: drop the link, go silent (out of range: nothing
crosses the air until the central's supervision timeout ends the link), come back, lose and find
skin contact, change its battery level, ask for connection parameters the host rejects and then
drop every link at a fixed age, require bonding before notifying, and serve a vendor
characteristic whose notifications look like heart rate.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import struct
import time

from bumble import hci, ll
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import Device, DeviceConfiguration
from bumble.gatt import Characteristic, Descriptor, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport

log = logging.getLogger("straps")

HEART_RATE_SERVICE = "180D"
HEART_RATE_MEASUREMENT = "2A37"
BODY_SENSOR_LOCATION = "2A38"
BATTERY_SERVICE = "180F"
BATTERY_LEVEL = "2A19"
DEVICE_INFORMATION = "180A"
VENDOR_SERVICE = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
VENDOR_STREAM = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
CCCD = "2902"

# The adapter's public address, as a USB dongle would have one.
ADAPTER_ADDRESS = "F0:F1:F2:F3:F4:F5"
# The Heart Rate Profile asks a strap that has just started advertising to use a fast interval
# (20-30 ms) for 30 s, then a reduced-power one (1-2.5 s).
FAST_ADVERTISING_MS = 30
FAST_ADVERTISING_SECONDS = 30.0
SLOW_ADVERTISING_MS = 1000
# HCI error codes a strap ends a link with.
REMOTE_USER_TERMINATED = 0x13
CONNECTION_TIMEOUT = 0x08
UNACCEPTABLE_CONNECTION_PARAMETERS = 0x3B


class AirLink(LocalLink):
    """Bumble's local link with two corrections, so Linux's host stack works across it.

    - LE data is tagged with the address the sender's connection was made with. Bumble's own
      link tags it with the sender controller's random address, but Linux connects with its
      public address (and scans with a private one), so the strap would drop every packet
      from the host ("no connection for ...").
    - A controller can be made silent, as a strap out of range: nothing it sends arrives and
      nothing reaches it, and each of its links ends on both sides with a connection timeout
      (0x08) once the central's supervision timeout has passed.
    """

    def __init__(self) -> None:
        super().__init__()
        self.silent: set[Controller] = set()
        # The supervision timeout (s) of each connection, by (central address, peripheral address).
        self.supervision: dict[tuple[str, str], float] = {}

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        connection = sender_controller.le_connections.get(destination_address)
        destination = self.find_le_controller(destination_address)
        if connection is None or destination is None:
            return
        if sender_controller in self.silent or destination in self.silent:
            return
        source = connection.self_address
        asyncio.get_running_loop().call_soon(
            lambda: destination.on_link_acl_data(source, transport, data))

    def send_advertising_pdu(self, sender_controller, packet):
        if sender_controller in self.silent:
            return
        if isinstance(packet, ll.ConnectInd):
            key = (str(packet.initiator_address), str(packet.advertiser_address))
            self.supervision[key] = packet.timeout * 0.010
        # Only a controller that scans or initiates looks at advertising; the others would drop
        # it, and with twenty straps advertising at 30 ms delivering it to all of them is most
        # of the VM's work.
        connect = isinstance(packet, ll.ConnectInd)
        loop = asyncio.get_running_loop()
        for controller in self.controllers:
            if controller is sender_controller or controller in self.silent:
                continue
            if connect or controller.le_scan_enable or controller.pending_le_connection:
                loop.call_soon(controller.on_ll_advertising_pdu, packet)

    def send_ll_control_pdu(self, sender_address, receiver_address, packet):
        receiver = self.find_le_controller(receiver_address)
        sender = self.find_le_controller(sender_address)
        if receiver is None or receiver in self.silent or sender in self.silent:
            return
        asyncio.get_running_loop().call_soon(lambda: receiver.on_ll_control_pdu(sender_address, packet))

    def silence(self, controller: Controller) -> None:
        """The strap leaves the central's range: its links time out on both sides."""
        self.silent.add(controller)
        loop = asyncio.get_running_loop()
        for peer_address, connection in list(controller.le_connections.items()):
            central = self.find_le_controller(peer_address)
            timeout = self.supervision.get((str(peer_address), str(connection.self_address)), 0.42)
            loop.call_later(timeout, self._time_out, controller, connection, central)

    def _time_out(self, controller, connection, central) -> None:
        if controller.le_connections.get(connection.peer_address) is connection:
            controller.on_le_disconnected(connection, CONNECTION_TIMEOUT)
        if central is not None:
            own = central.le_connections.get(connection.self_address)
            if own is not None:
                central.on_le_disconnected(own, CONNECTION_TIMEOUT)

    def unsilence(self, controller: Controller) -> None:
        self.silent.discard(controller)


class SpecController(Controller):
    """Bumble's controller, sending the connection event the host asked for.

    A host that unmasks LE Enhanced Connection Complete must get that event instead of LE
    Connection Complete (Core 5.x, Vol 4, Part E, 7.7.65.10); Bumble's controller always sends
    the older one. Linux 6.1 unmasks the enhanced event when the controller offers LL privacy,
    then waits for it after each LE Create Connection: with the older event it takes the
    connection but holds its command queue until its 4 s connection timeout, cancels a
    connection that already exists, and later never sends the HCI Disconnect bluetoothd asks for.
    """

    LE_ENHANCED_CONNECTION_COMPLETE = 1 << 9

    def send_hci_packet(self, packet) -> None:
        if isinstance(packet, hci.HCI_LE_Connection_Complete_Event) and \
                self.le_event_mask & self.LE_ENHANCED_CONNECTION_COMPLETE:
            packet = hci.HCI_LE_Enhanced_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, role=packet.role,
                peer_address_type=packet.peer_address_type, peer_address=packet.peer_address,
                local_resolvable_private_address=hci.Address.ANY_RANDOM,
                peer_resolvable_private_address=hci.Address.ANY_RANDOM,
                connection_interval=packet.connection_interval, peripheral_latency=packet.peripheral_latency,
                supervision_timeout=packet.supervision_timeout, central_clock_accuracy=packet.central_clock_accuracy)
        super().send_hci_packet(packet)


class Adapter:
    """The Bumble controller the kernel drives through /dev/vhci (hci0)."""

    def __init__(self, link: AirLink):
        self.link = link
        self.transport = None
        self.controller = None

    async def open(self) -> None:
        self.transport = await open_transport("vhci")
        self._keep_what_follows_the_index()
        self.controller = SpecController(
            "hci0", host_source=self.transport.source, host_sink=self.transport.sink,
            link=self.link, public_address=ADAPTER_ADDRESS)

    def _keep_what_follows_the_index(self) -> None:
        """Bumble's vhci transport drops the whole first read when it holds more than the
        kernel's 4-byte index packet. Under load the kernel's first command (HCI Reset) comes in
        the same read: it is lost, the kernel's setup of the adapter times out (dmesg: `Opcode
        0x0c03 failed: -110`), and the adapter, left in setup, never scans for the connections
        its sockets ask for. Here what follows the index packet goes to the parser."""
        source = self.transport.source
        first = True

        def data_received(data: bytes) -> None:
            nonlocal first
            if first and data[:1] == b"\xff" and len(data) >= 4:
                log.info("vhci: HCI index %d%s", data[2] | data[3] << 8,
                         f" (and {len(data) - 4} more bytes in the same read)" if len(data) > 4 else "")
                data = data[4:]
            first = False
            if data:
                source.parser.feed_data(data)

        source.data_received = data_received

    async def close(self) -> None:
        if self.transport is not None:
            await self.transport.close()


@dataclasses.dataclass
class StrapSpec:
    """What a strap is and how it behaves."""

    address: str
    name: str = "Virtual HRM"
    location: int = 1  # chest
    hz: float = 4.0
    first_bpm: int = 60
    rr: bool = True
    battery: int | None = 87
    manufacturer: str = "hrmd tests"
    model: str = "VH-1"
    serial: str = ""
    firmware: str = "1.0.0"
    # A vendor characteristic notifying bytes that decode as heart rate (0x00, bpm).
    vendor_stream: bool = False
    # Notifications need an encrypted (bonded) link: the CCCD write asks for it.
    needs_bonding: bool = False
    # After each connection, ask for parameters the host rejects, then end the link at this age.
    rejected_update_drop_after: float | None = None
    # Advertise (HRP's fast then reduced-power intervals) as soon as powered.
    advertise: bool = True


@dataclasses.dataclass
class Sent:
    """One notification a strap sent while its central was subscribed."""

    time: float
    bpm: int
    value: bytes
    connection: int


class Strap:
    """One virtual strap: a Bumble device on its own controller on the air link."""

    def __init__(self, spec: StrapSpec, link: AirLink):
        self.spec = spec
        self.link = link
        self.controller = SpecController(spec.address, link=link)
        config = DeviceConfiguration()
        config.name = spec.name
        config.address = hci.Address(spec.address)
        config.le_enabled = True
        config.classic_enabled = False
        host = Host()
        host.controller = self.controller
        self.device = Device(config=config)
        self.device.host = host
        self.sent: list[Sent] = []
        self.vendor_sent = 0
        self.connections = 0
        self.subscribed: set = set()
        self.contact = True
        self.bpm = spec.first_bpm
        self.connected_at: dict = {}
        self.events: list[tuple[float, str]] = []
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._advertising_since = 0.0
        self._build_services()

    # MARK: GATT

    def _build_services(self) -> None:
        spec = self.spec
        cccd_permissions = Descriptor.READABLE | Descriptor.WRITEABLE
        if spec.needs_bonding:
            cccd_permissions |= Descriptor.WRITE_REQUIRES_ENCRYPTION
        self.measurement = Characteristic(HEART_RATE_MEASUREMENT, Characteristic.Properties.NOTIFY, 0, b"")
        if spec.needs_bonding:
            # The server's own subscription bookkeeping, behind a permission that needs encryption.
            self.measurement.descriptors = [Descriptor(
                CCCD, cccd_permissions, self.device.gatt_server.make_descriptor_value(self.measurement))]
        self.location = Characteristic(
            BODY_SENSOR_LOCATION, Characteristic.Properties.READ, Characteristic.READABLE, bytes([spec.location]))
        services = [Service(HEART_RATE_SERVICE, [self.measurement, self.location])]
        self.battery_level = None
        if spec.battery is not None:
            self.battery_level = Characteristic(
                BATTERY_LEVEL, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                Characteristic.READABLE, bytes([spec.battery]))
            services.append(Service(BATTERY_SERVICE, [self.battery_level]))
        information = [("2A29", spec.manufacturer), ("2A24", spec.model), ("2A26", spec.firmware)]
        if spec.serial:
            information.append(("2A25", spec.serial))
        services.append(Service(DEVICE_INFORMATION, [
            Characteristic(uuid, Characteristic.Properties.READ, Characteristic.READABLE, text.encode())
            for uuid, text in information]))
        self.vendor = None
        if spec.vendor_stream:
            self.vendor = Characteristic(VENDOR_STREAM, Characteristic.Properties.NOTIFY, 0, b"")
            services.append(Service(VENDOR_SERVICE, [self.vendor]))
        self.device.add_services(services)
        self.measurement.on("subscription", self._on_subscription)

    def _on_subscription(self, connection, notify_enabled, indicate_enabled) -> None:
        if notify_enabled:
            self.subscribed.add(connection)
            self._event("subscribed")
        else:
            self.subscribed.discard(connection)
            self._event("unsubscribed")

    # MARK: life

    async def start(self) -> None:
        self.device.on("connection", self._on_connection)
        await self.device.power_on()
        if self.spec.advertise:
            await self.start_advertising()
        self._tasks.append(asyncio.create_task(self._notify_forever()))

    async def start_advertising(self) -> None:
        self._advertising_since = time.monotonic()
        await self._advertise(FAST_ADVERTISING_MS)
        self._tasks.append(asyncio.create_task(self._slow_down_advertising()))

    async def _advertise(self, interval_ms: float) -> None:
        if self.device.is_advertising:
            await self.device.stop_advertising()
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180D)),
            (AdvertisingData.APPEARANCE, struct.pack("<H", 0x0341)),  # heart-rate belt
            (AdvertisingData.COMPLETE_LOCAL_NAME, self.spec.name.encode()),
        ]))
        await self.device.start_advertising(
            auto_restart=True, advertising_interval_min=interval_ms, advertising_interval_max=interval_ms)

    async def _slow_down_advertising(self) -> None:
        await asyncio.sleep(FAST_ADVERTISING_SECONDS)
        if self.device.is_advertising and self.link.controllers and self.controller not in self.link.silent:
            await self._advertise(SLOW_ADVERTISING_MS)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _on_connection(self, connection) -> None:
        self.connections += 1
        self.connected_at[connection] = time.monotonic()
        self._event("connected")
        connection.on("disconnection", lambda reason: self._on_disconnection(connection, reason))
        connection.on("pairing_failure", lambda reason: self._on_pairing_failure(connection, reason))
        if self.spec.rejected_update_drop_after is not None:
            self._tasks.append(asyncio.create_task(self._reject_then_drop(connection)))

    def _on_pairing_failure(self, connection, reason) -> None:
        """A strap takes a new pairing request on the same link after a failed one. Bumble would
        hand it to the failed session, which no longer distributes its keys once encrypted (the
        host then waits for them until it gives up): the next request gets a new session."""
        self.device.smp_manager.sessions.pop(connection.handle, None)
        self._event(f"pairing failed: {reason}")

    def _on_disconnection(self, connection, reason) -> None:
        self.subscribed.discard(connection)
        self.connected_at.pop(connection, None)
        self._event(f"disconnected 0x{int(reason):02x}")
        if self.spec.advertise and self.controller not in self.link.silent:
            self._tasks.append(asyncio.create_task(self._readvertise()))

    async def _readvertise(self) -> None:
        # auto_restart brings advertising back; make it the fast interval again, as a strap does.
        await asyncio.sleep(0)
        if not self.device.is_advertising:
            await self.start_advertising()

    async def _reject_then_drop(self, connection) -> None:
        # Interval 100 ms with a 100 ms supervision timeout: the timeout must exceed
        # (1 + latency) * interval * 2, so Linux answers the request "rejected".
        try:
            await connection.update_parameters(100, 100, 0, 100, use_l2cap=True)
        except Exception as error:  # the rejection surfaces here
            self._event(f"parameter update refused: {error.__class__.__name__}")
        await asyncio.sleep(max(0.0, self.spec.rejected_update_drop_after - (time.monotonic() - self.connected_at.get(connection, time.monotonic()))))
        if connection in self.connected_at:
            # As a strap refused its parameters does (btmon: "Unacceptable Connection Parameters").
            await connection.disconnect(UNACCEPTABLE_CONNECTION_PARAMETERS)

    def _event(self, text: str) -> None:
        self.events.append((time.time(), text))
        log.info("%s: %s", self.spec.address, text)
        self._changed.set()

    async def wait_for(self, predicate, timeout: float, what: str) -> None:
        """Waits, bounded, until `predicate()` holds; raises TimeoutError naming `what`."""
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.spec.address}: {what} within {timeout:.0f} s")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, 1.0))
            except asyncio.TimeoutError:
                pass

    # MARK: notifications

    def measurement_value(self) -> bytes:
        """Flags (uint8 bpm, contact supported and state, RR present) then bpm and one RR."""
        flags = 0x04 | (0x02 if self.contact else 0x00)
        value = bytes([flags, self.bpm])
        if self.spec.rr:
            flags |= 0x10
            value = bytes([flags, self.bpm]) + struct.pack("<H", round(60 / self.bpm * 1024))
        return value

    async def _notify_forever(self) -> None:
        period = 1.0 / self.spec.hz
        next_time = time.monotonic()
        while True:
            next_time += period
            await asyncio.sleep(max(0.0, next_time - time.monotonic()))
            for connection in list(self.subscribed):
                if connection not in self.connected_at or self.controller in self.link.silent:
                    continue
                value = self.measurement_value()
                try:
                    await self.device.notify_subscriber(connection, self.measurement, value)
                except Exception as error:
                    log.warning("%s: notify failed: %s", self.spec.address, error)
                    continue
                self.sent.append(Sent(time.time(), self.bpm, value, self.connections))
                self.bpm = 40 + (self.bpm - 40 + 1) % 160
            if self.vendor is not None:
                # Whether subscribed or not (nobody subscribes to it): the bytes cross the air on
                # every link, so the central sees notifications on a handle it never asked for.
                for connection in list(self.connected_at):
                    if self.controller in self.link.silent:
                        continue
                    try:
                        await self.device.notify_subscriber(connection, self.vendor, bytes([0x00, 72]), force=True)
                    except Exception as error:
                        log.warning("%s: vendor notify failed: %s", self.spec.address, error)
                        continue
                    self.vendor_sent += 1

    # MARK: scripted behaviour

    async def drop_link(self) -> None:
        """The strap ends its link (as one taken off and put back on does)."""
        for connection in list(self.connected_at):
            await connection.disconnect(REMOTE_USER_TERMINATED)

    async def go_silent(self) -> None:
        """Out of range: no answer, no advertising, until `come_back`."""
        if self.device.is_advertising:
            await self.device.stop_advertising()
        self.link.silence(self.controller)
        self._event("silent")

    async def come_back(self) -> None:
        self.link.unsilence(self.controller)
        self._event("back")
        if not self.device.is_advertising:
            await self.start_advertising()

    def set_contact(self, contact: bool) -> None:
        self.contact = contact
        self._event("contact found" if contact else "contact lost")

    async def set_battery(self, percent: int) -> None:
        if self.battery_level is None:
            return
        self.battery_level.value = bytes([percent])
        await self.device.notify_subscribers(self.battery_level, bytes([percent]))
        self._event(f"battery {percent}")

    def sent_values(self) -> list[bytes]:
        return [entry.value for entry in self.sent]
