"""A pairing agent on bluetoothd, as a desktop's (or bluetoothctl's) is: the user pairing a strap
that wants bonding. It accepts every request (Just Works: "NoInputNoOutput").

No `from __future__ import annotations` here: dbus-fast reads the D-Bus signatures from the
annotations themselves.
"""

import asyncio

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method

AGENT_PATH = "/org/hrmd/test/agent"


class Agent(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.Agent1")
        self.requests: list[str] = []

    @method()
    def Release(self):
        self.requests.append("Release")

    @method()
    def RequestPinCode(self, device: "o") -> "s":
        self.requests.append("RequestPinCode")
        return "0000"

    @method()
    def DisplayPinCode(self, device: "o", pincode: "s"):
        self.requests.append("DisplayPinCode")

    @method()
    def RequestPasskey(self, device: "o") -> "u":
        self.requests.append("RequestPasskey")
        return 0

    @method()
    def DisplayPasskey(self, device: "o", passkey: "u", entered: "q"):
        self.requests.append("DisplayPasskey")

    @method()
    def RequestConfirmation(self, device: "o", passkey: "u"):
        self.requests.append("RequestConfirmation")

    @method()
    def RequestAuthorization(self, device: "o"):
        self.requests.append("RequestAuthorization")

    @method()
    def AuthorizeService(self, device: "o", uuid: "s"):
        self.requests.append("AuthorizeService")

    @method()
    def Cancel(self):
        self.requests.append("Cancel")


async def call(bus: MessageBus, path: str, interface: str, member: str, signature: str = "", body=None,
               timeout: float = 30):
    reply = await asyncio.wait_for(bus.call(Message(
        destination="org.bluez", path=path, interface=interface, member=member,
        signature=signature, body=body or [])), timeout)
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError(f"{interface}.{member} on {path}: {reply.error_name}: {reply.body}")
    return reply.body


async def pair(device_path: str, timeout: float = 60) -> list[str]:
    """Registers the agent as bluetoothd's default, pairs the device at `device_path`
    (Device1.Pair, as `bluetoothctl pair` does), and unregisters; returns what bluetoothd asked
    the agent."""
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    agent = Agent()
    bus.export(AGENT_PATH, agent)
    try:
        await call(bus, "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os", [AGENT_PATH, "NoInputNoOutput"])
        await call(bus, "/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", "o", [AGENT_PATH])
        await call(bus, device_path, "org.bluez.Device1", "Pair", timeout=timeout)
        await call(bus, "/org/bluez", "org.bluez.AgentManager1", "UnregisterAgent", "o", [AGENT_PATH])
    finally:
        bus.disconnect()
    return agent.requests


async def discover(adapter_path: str, device_path: str, timeout: float = 60) -> None:
    """Discovers LE devices on the adapter (as `bluetoothctl scan le` does) until bluetoothd knows
    the device at `device_path`, bounded; then stops discovering."""
    from dbus_fast import Variant
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        # bluetoothd powers the adapter on shortly after it starts: discovery needs it powered.
        while not (await call(bus, adapter_path, "org.freedesktop.DBus.Properties", "Get", "ss",
                              ["org.bluez.Adapter1", "Powered"]))[0].value:
            if asyncio.get_running_loop().time() >= deadline:
                raise TimeoutError(f"{adapter_path} was not powered within {timeout:.0f} s")
            await asyncio.sleep(0.2)
        await call(bus, adapter_path, "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}",
                   [{"Transport": Variant("s", "le")}])
        await call(bus, adapter_path, "org.bluez.Adapter1", "StartDiscovery")
        while True:
            reply = await bus.call(Message(
                destination="org.bluez", path=device_path, interface="org.freedesktop.DBus.Properties",
                member="Get", signature="ss", body=["org.bluez.Device1", "Address"]))
            if reply.message_type != MessageType.ERROR:
                break
            if asyncio.get_running_loop().time() >= deadline:
                raise TimeoutError(f"bluetoothd discovered no {device_path} within {timeout:.0f} s")
            await asyncio.sleep(0.3)
        await call(bus, adapter_path, "org.bluez.Adapter1", "StopDiscovery")
    finally:
        bus.disconnect()
