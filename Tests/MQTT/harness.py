"""Real parts for testing hrmd's MQTT publisher: a mosquitto broker on a free loopback port
with its own configuration in a temporary directory, a paho-mqtt subscriber that keeps every
message it receives, the built hrmd with mock straps and an [mqtt] section, and hrmctl on the
same store file.

    broker = Broker(work)                           # mosquitto -c WORK/broker/mosquitto.conf
    watcher = Subscriber(broker, ["hrmd/#"])        # paho-mqtt 1.6, loop on its own thread
    store = Store(work)                             # hrmctl ... --store WORK/s.sqlite
    store.grant("hrmd", "heart-rate"); store.grant("hrmd/mqtt", "heart-rate", read=True)
    hrmd = Hrmd(work, store, broker, sensors=["mock:id=strap-a"])
    message = watcher.wait_for(lambda m: m.topic.endswith("/heart-rate"), timeout=15)
    hrmd.wait_for_line("mqtt: connected", timeout=10)

Every wait is bounded and waits for an event (a message, a log line, a port that answers)
with a deadline. `requirements()` says what is missing; `skip_or_fail(reason)` skips a test
for it, or fails it when CI=true.
"""

import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

from builds import REPO, bin_dir, hrmctl  # noqa: E402,F401
from ci import in_ci, require, skip_or_fail  # noqa: E402,F401
from processes import Output, stop_process  # noqa: E402
from sockets import accepts, free_port  # noqa: E402,F401
from waiting import wait_until  # noqa: E402,F401
import mqtt  # noqa: E402
from mqtt import Broker, Certificates, Message, Subscriber, tool  # noqa: E402,F401

START_TIMEOUT_S = 15
STOP_TIMEOUT_S = 10


def requirements():
    """None when everything the tests need is here, else what is missing."""
    missing = mqtt.requirements()
    if missing:
        return missing
    for program in ("hrmd", "hrmctl"):
        if not os.access(os.path.join(bin_dir(), program), os.X_OK):
            return "no %s in %s (build it, or set HRMD_BIN_DIR)" % (program, bin_dir())
    probe = subprocess.run([os.path.join(bin_dir(), "hrmd"), "--help"], capture_output=True, text=True, timeout=30)
    if "mqtt" not in probe.stdout + probe.stderr:
        return "%s has no MQTT publisher" % os.path.join(bin_dir(), "hrmd")
    return None


class Store:
    """A store file and hrmctl on it."""

    def __init__(self, work):
        self.path = os.path.join(work, "s.sqlite")

    def hrmctl(self, *arguments, check=True):
        return hrmctl(*(list(arguments[:2]) + ["--store", self.path] + list(arguments[2:])), check=check)

    def grant(self, source, type_, read=False):
        self.hrmctl("auth", "grant", source, type_, *(["--read"] if read else []))

    def revoke(self, source, type_, read=False):
        self.hrmctl("auth", "revoke", source, type_, *(["--read"] if read else []))

    def samples(self, type_="heart-rate"):
        """Every stored sample of TYPE_, oldest first, as hrmctl's JSON."""
        result = hrmctl("samples", "--store", self.path, "--type", type_, "--output", "json", check=False)
        if result.returncode != 0:
            return []
        return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


class Hrmd:
    """The built hrmd on STORE with mock straps and an [mqtt] section for BROKER (plus MQTT, more
    key = value lines), its output kept."""

    def __init__(self, work, store, broker_url, sensors=("mock:id=strap-a,hz=2",), mqtt=(), gateway="gw",
                 more_config="", arguments=()):
        self.config = os.path.join(work, "hrmd.conf")
        with open(self.config, "w") as config:
            config.write("[mqtt]\nbroker = %s\ngateway = %s\n" % (broker_url, gateway))
            for line in mqtt:
                config.write(line + "\n")
            config.write(more_config)
        argv = [os.path.join(bin_dir(), "hrmd"), "--store", store.path, "--config", self.config] + list(arguments)
        for sensor in sensors:
            argv += ["--sensor", sensor]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = Output(self.process.stdout)

    def wait_for_line(self, needle, timeout=START_TIMEOUT_S, count=1):
        return self.output.wait_for_line(needle, timeout, count)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT_S)

    def stop(self):
        """SIGTERM, then SIGKILL after a while; the exit status (None when killed)."""
        if stop_process(self.process, STOP_TIMEOUT_S) is None:
            return None
        self.output.join(STOP_TIMEOUT_S)
        return self.process.returncode
