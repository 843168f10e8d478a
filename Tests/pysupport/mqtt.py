"""A real MQTT broker and subscriber for the tests: mosquitto on a free loopback port with its
own configuration in a temporary directory, and a paho-mqtt subscriber that keeps every message
it receives, with bounded waits for one.

    broker = Broker(work)                           # mosquitto -c WORK/broker/mosquitto.conf
    watcher = Subscriber(broker, ["hrmd/#"])        # paho-mqtt 1.6, loop on its own thread
    message = watcher.wait_for(lambda m: m.topic.endswith("/heart-rate"), timeout=15)

`requirements()` says what is missing (mosquitto, paho-mqtt).
"""

import itertools
import json
import os
import shutil
import subprocess
import threading
import time

from processes import Output, stop_process
from sockets import accepts, free_port
from waiting import wait_until

START_TIMEOUT_S = 15
STOP_TIMEOUT_S = 10


def requirements():
    """None when mosquitto and paho-mqtt are here, else what is missing."""
    for name in ("mosquitto", "mosquitto_passwd"):
        if not tool(name):
            return "needs %s (Debian package mosquitto)" % name
    try:
        import paho.mqtt.client  # noqa: F401
    except ImportError:
        return "needs paho-mqtt (Debian package python3-paho-mqtt)"
    return None


def tool(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/usr/bin")


class Broker:
    """mosquitto on a free loopback port (or PORT, to start it again on the same one), with
    its own configuration in WORK/broker: anonymous clients, or only USERS (name → password);
    with TLS (a Certificates), TLS only."""

    def __init__(self, work, port=None, users=None, tls=None):
        self.directory = os.path.join(work, "broker")
        os.makedirs(self.directory, exist_ok=True)
        self.port = port or free_port()
        lines = [
            "listener %d 127.0.0.1" % self.port,
            "persistence false",
            "log_dest stderr",
            "log_type all",
            "connection_messages true",
        ]
        if os.geteuid() == 0:
            lines.append("user root")  # else mosquitto drops to its own user, who cannot read WORK
        if tls:
            lines += ["cafile %s" % tls.ca, "certfile %s" % tls.certificate, "keyfile %s" % tls.key]
        if users:
            password_file = os.path.join(self.directory, "passwords")
            open(password_file, "w").close()
            os.chmod(password_file, 0o600)
            for name, password in users.items():
                subprocess.run([tool("mosquitto_passwd"), "-b", password_file, name, password], check=True, capture_output=True, timeout=30)
            lines += ["allow_anonymous false", "password_file %s" % password_file]
        else:
            lines.append("allow_anonymous true")
        self.config = os.path.join(self.directory, "mosquitto.conf")
        with open(self.config, "w") as config:
            config.write("\n".join(lines) + "\n")
        self.process = subprocess.Popen([tool("mosquitto"), "-c", self.config], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = Output(self.process.stdout)
        self.output.wait_for_line("Opening ipv4 listen socket on port %d" % self.port, START_TIMEOUT_S)
        wait_until(self._answers, START_TIMEOUT_S, "mosquitto to accept connections on port %d" % self.port)

    def _answers(self):
        if "cafile" in open(self.config).read():
            return True  # the listen line said so; a bare TCP probe would only add a TLS error to its log
        return accepts(self.port)

    @property
    def url(self):
        return "mqtt://127.0.0.1:%d" % self.port

    def stop(self):
        stop_process(self.process, STOP_TIMEOUT_S)
        self.process.stdout.close()


class Certificates:
    """A private CA and a certificate it signs for localhost, made with openssl in DIRECTORY."""

    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.ca = os.path.join(directory, "ca.pem")
        self.certificate = os.path.join(directory, "server.pem")
        self.key = os.path.join(directory, "server.key")
        ca_key = os.path.join(directory, "ca.key")
        request = os.path.join(directory, "server.csr")
        extensions = os.path.join(directory, "san.cnf")
        with open(extensions, "w") as file:
            file.write("subjectAltName = DNS:localhost\n")

        def openssl(*arguments):
            subprocess.run([tool("openssl")] + list(arguments), check=True, capture_output=True, timeout=60)

        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=hrmd test CA",
                "-keyout", ca_key, "-out", self.ca)
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", self.key, "-out", request)
        openssl("x509", "-req", "-in", request, "-CA", self.ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
                "-extfile", extensions, "-out", self.certificate)


class Message:
    def __init__(self, topic, payload, retain, received):
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.received = received  # time.time() at arrival

    @property
    def text(self):
        return self.payload.decode("utf-8")

    def json(self):
        return json.loads(self.payload)

    def __repr__(self):
        return "Message(%r, %r, retain=%r)" % (self.topic, self.payload, self.retain)


class Subscriber:
    """A paho-mqtt client subscribed to TOPICS that keeps every message, with waits for one."""

    def __init__(self, broker, topics, username=None, password=None):
        import paho.mqtt.client as mqtt

        self.messages = []
        self.changed = threading.Condition()
        self.client_id = "hrmd-test-%d-%d" % (os.getpid(), id(self))
        self.client = mqtt.Client(client_id=self.client_id, clean_session=True)
        if username:
            self.client.username_pw_set(username, password)
        subscribed = threading.Event()
        self.client.on_message = self._received
        self.client.on_subscribe = lambda client, userdata, mid, granted: subscribed.set()
        self.client.on_connect = lambda client, userdata, flags, rc: client.subscribe([(topic, 1) for topic in topics])
        self.client.connect("127.0.0.1", broker.port, keepalive=30)
        self.client.loop_start()
        if not subscribed.wait(START_TIMEOUT_S):
            self.stop()
            raise AssertionError("the test's subscriber could not subscribe to %s" % topics)

    def _received(self, client, userdata, message):
        with self.changed:
            self.messages.append(Message(message.topic, bytes(message.payload), bool(message.retain), time.time()))
            self.changed.notify_all()

    def received(self, predicate=lambda message: True):
        with self.changed:
            return [message for message in self.messages if predicate(message)]

    def wait_for(self, predicate, timeout, count=1, what="a message"):
        """The COUNT-th message for which PREDICATE holds, waiting up to TIMEOUT for it."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [message for message in self.messages if predicate(message)]
                if len(found) >= count:
                    return found[count - 1]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        "gave up after %.1f s waiting for %s (%d of %d); received: %s"
                        % (timeout, what, len(found), count, self.messages[-20:]))
                self.changed.wait(remaining)

    _probes = itertools.count(1)

    def round_trip(self, timeout=START_TIMEOUT_S):
        """Publishes a probe to itself through the broker (on a topic under hrmd/, which it must
        subscribe to) and waits for it: the broker passes a subscriber its messages in order, so
        what it had for this one before the probe has arrived."""
        topic = "hrmd/test-probe/%s/%d" % (self.client_id, next(self._probes))
        self.client.publish(topic, b"probe", qos=1)
        self.wait_for(lambda message: message.topic == topic, timeout, what="the probe %s back" % topic)

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()
