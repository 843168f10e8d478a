"""hrmd's MQTT publisher end to end: the built hrmd with mock straps, a real mosquitto broker,
a paho-mqtt subscriber, hrmctl on the same store."""

import calendar
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import unittest

from harness import (Broker, Certificates, Hrmd, Store, Subscriber, free_port, require, requirements, skip_or_fail, tool,
                     wait_until)

GATEWAY = "gw"
PASSWORD = "s3cret-Pa55-never-logged"


def epoch(text):
    """Seconds since the epoch of hrmctl's UTC time (2026-01-02T03:04:05.678Z)."""
    return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + text[19:].rstrip("Z"))


# A device identifier with capitals is folded, with its digest after it: one topic level and one
# Home Assistant id per identifier.
STRAP_LEVEL = "strap-a~" + hashlib.sha256(b"Strap-A").hexdigest()[:16]
STRAP_ID = "hrmd_%s_strap-a_%s" % (GATEWAY, hashlib.sha256(b"Strap-A").hexdigest()[:16])


def state_topic(device, measurement):
    return "hrmd/%s/%s/%s" % (GATEWAY, device, measurement)


def is_state(device, measurement="heart-rate"):
    return lambda message: message.topic == state_topic(device, measurement)


class PublisherTest(unittest.TestCase):
    """A temporary directory, a broker and a store per test; what a test starts is stopped."""

    def setUp(self):
        require(requirements())
        self.work = tempfile.mkdtemp(prefix="hrmd-mqtt-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.store = Store(self.work)
        self.outputs = []

    def start_broker(self, **options):
        broker = Broker(self.work, **options)
        self.addCleanup(broker.stop)
        return broker

    def subscribe(self, broker, topics=("#",), **credentials):
        subscriber = Subscriber(broker, list(topics), **credentials)
        self.addCleanup(subscriber.stop)
        return subscriber

    def start_hrmd(self, broker_url, **options):
        hrmd = Hrmd(self.work, self.store, broker_url, gateway=GATEWAY, **options)
        self.addCleanup(self.check_no_password, hrmd)
        self.addCleanup(hrmd.stop)
        return hrmd

    def check_no_password(self, hrmd):
        self.assertNotIn(PASSWORD, hrmd.output.text(), "the password is in hrmd's output")

    def write_password(self, password):
        path = os.path.join(self.work, "mqtt-password")
        with open(path, "w") as file:
            file.write(password + "\nsecond line ignored\n")
        os.chmod(path, 0o600)
        return path

    def grant_all(self, types=("heart-rate",)):
        for type_ in types:
            self.store.grant("hrmd", type_)
            self.store.grant("hrmd/mqtt", type_, read=True)

    def stored_count(self, type_="heart-rate"):
        return len(self.store.samples(type_))


class DiscoveryTest(PublisherTest):
    def test_discovery_documents_are_retained_json_with_what_home_assistant_needs(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["homeassistant/#", "hrmd/#"])
        hrmd = self.start_hrmd(broker.url, sensors=["mock:id=Strap-A,hz=2"])
        config_topic = "homeassistant/sensor/%s/heart_rate/config" % STRAP_ID
        watcher.wait_for(lambda m: m.topic == config_topic, 20, what=config_topic)
        hrmd.wait_for_line("mqtt: connected to %s" % broker.url)
        watcher.wait_for(is_state(STRAP_LEVEL), 10, what="a heart-rate state message")

        # A subscriber that comes later gets every document from the broker: they are retained.
        late = self.subscribe(broker, ["homeassistant/#"])
        topics = {
            "heart_rate": "homeassistant/sensor/%s/heart_rate/config" % STRAP_ID,
            "battery": "homeassistant/sensor/%s/battery/config" % STRAP_ID,
            "contact": "homeassistant/binary_sensor/%s/contact/config" % STRAP_ID,
            "gateway": "homeassistant/binary_sensor/hrmd_gw/status/config",
        }
        documents = {}
        for name, topic in topics.items():
            message = late.wait_for(lambda m, topic=topic: m.topic == topic, 10, what=topic)
            self.assertTrue(message.retain, "%s is not retained" % topic)
            documents[name] = message.json()
        self.assertEqual([], late.received(lambda m: "rr_interval" in m.topic), "RR documents without rr = yes")

        heart = documents["heart_rate"]
        for key in ("name", "unique_id", "state_topic", "unit_of_measurement", "state_class", "icon",
                    "availability_topic", "payload_available", "payload_not_available", "device", "origin"):
            self.assertIn(key, heart)
        self.assertEqual("bpm", heart["unit_of_measurement"])
        self.assertEqual("measurement", heart["state_class"])
        self.assertEqual(state_topic(STRAP_LEVEL, "heart-rate"), heart["state_topic"])
        self.assertEqual("hrmd/gw/status", heart["availability_topic"])
        self.assertEqual(("online", "offline"), (heart["payload_available"], heart["payload_not_available"]))
        self.assertEqual(STRAP_ID + "_heart_rate", heart["unique_id"])
        device = heart["device"]
        self.assertEqual([STRAP_ID], device["identifiers"])
        self.assertEqual("hrmd mock strap Strap-A", device["name"])
        self.assertEqual(("hrmd", "mock"), (device["manufacturer"], device["model"]))
        self.assertEqual("hrmd_gw", device["via_device"])
        self.assertEqual("hrmd", heart["origin"]["name"])
        self.assertIn("sw_version", heart["origin"])

        unique_ids = {document["unique_id"] for document in documents.values()}
        self.assertEqual(len(documents), len(unique_ids), "unique ids repeat")
        for name in ("battery", "contact"):
            self.assertEqual(device, documents[name]["device"], "%s is not on the same device" % name)
        self.assertEqual("battery", documents["battery"]["device_class"])
        self.assertEqual("%", documents["battery"]["unit_of_measurement"])
        self.assertEqual(("detected", "notDetected"), (documents["contact"]["payload_on"], documents["contact"]["payload_off"]))
        self.assertEqual(["hrmd_gw"], documents["gateway"]["device"]["identifiers"])

        # Each document's state topic carries its values: battery in percent, contact words.
        battery = watcher.wait_for(lambda m: m.topic == documents["battery"]["state_topic"], 10, what="battery")
        self.assertEqual("95", battery.text)
        contact = watcher.wait_for(lambda m: m.topic == documents["contact"]["state_topic"], 10, what="contact")
        self.assertIn(contact.text, ("detected", "notDetected"))


class StateTest(PublisherTest):
    def test_state_messages_equal_the_stored_samples(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/#"])
        self.start_hrmd(broker.url, sensors=["mock:id=strap-a,hz=2,bpm=60", "mock:id=strap-b,hz=2,bpm=90"])
        for device in ("strap-a", "strap-b"):
            watcher.wait_for(is_state(device), 20, count=4, what="4 heart-rate messages of %s" % device)
        stored = self.store.samples()
        self.assertTrue(stored)
        for device in ("strap-a", "strap-b"):
            values = [sample["value"] for sample in stored if sample["device"]["identifier"] == device]
            self.assertGreaterEqual(len(values), 4)
            # Everything stored so far reaches the broker, in order, as plain numbers.
            watcher.wait_for(is_state(device), 10, count=len(values), what="%d messages of %s" % (len(values), device))
            published = [float(message.text) for message in watcher.received(is_state(device))][: len(values)]
            self.assertEqual(values, published, device)
            for message in watcher.received(is_state(device)):
                self.assertFalse(message.retain)

    def test_rr_intervals_when_asked(self):
        broker = self.start_broker()
        self.grant_all(("heart-rate", "rr-interval"))
        watcher = self.subscribe(broker, ["hrmd/#", "homeassistant/#"])
        self.start_hrmd(broker.url, sensors=["mock:id=strap-a,hz=2"], mqtt=["rr = yes"])
        watcher.wait_for(lambda m: m.topic == "homeassistant/sensor/hrmd_gw_strap-a/rr_interval/config", 20, what="the RR document")
        watcher.wait_for(is_state("strap-a", "rr-interval"), 20, count=3, what="RR messages")
        stored = [sample["value"] for sample in self.store.samples("rr-interval")]
        published = [float(message.text) for message in watcher.received(is_state("strap-a", "rr-interval"))]
        for value in published[:3]:
            self.assertTrue(any(abs(value - s) < 1e-6 for s in stored), "%s ms is not stored" % value)


class EventTest(PublisherTest):
    def test_an_open_event_turns_the_straps_problem_sensor_on_with_the_event_as_attributes(self):
        broker = self.start_broker()
        self.grant_all(("heart-rate", "high-heart-rate-event"))
        watcher = self.subscribe(broker, ["homeassistant/#", "hrmd/#"])
        # The mock's heart rate (90) is over 45 at once: a high event opens after a second.
        hrmd = self.start_hrmd(broker.url, sensors=["mock:id=Strap-A,hz=5,bpm=90,contact-loss=0"],
                               more_config="[hrmd]\nflush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n")
        hrmd.wait_for_line("mqtt: connected to %s" % broker.url)
        config_topic = "homeassistant/binary_sensor/%s/high_heart_rate_event/config" % STRAP_ID
        document = watcher.wait_for(lambda m: m.topic == config_topic, 20, what=config_topic).json()
        topic = state_topic(STRAP_LEVEL, "high-heart-rate-event")
        self.assertEqual((document["device_class"], document["state_topic"], document["payload_on"], document["payload_off"]),
                         ("problem", topic, "ON", "OFF"))
        self.assertEqual(document["json_attributes_topic"], topic + "/attributes")
        self.assertEqual(document["device"]["identifiers"], [STRAP_ID])
        watcher.wait_for(lambda m: m.topic == topic and m.payload == b"ON", 30, what="the problem sensor on")
        # Retained: a subscriber that comes later is told at once.
        late = self.subscribe(broker, [topic])
        self.assertTrue(late.wait_for(lambda m: m.topic == topic, 10, what="the retained state").retain)
        attributes = watcher.wait_for(lambda m: m.topic == topic + "/attributes", 10, what="the event's attributes").json()
        self.assertEqual((attributes["type"], attributes["device"], attributes["metadata"]["threshold"]),
                         ("high-heart-rate-event", "Strap-A", 45))
        self.assertNotIn("end", attributes)
        # The event, as hrmctl reads it from the store.
        stored = [json.loads(line) for line in self.store.hrmctl("events", "--output=json").stdout.splitlines()]
        self.assertIn(attributes["id"], [event["id"] for event in stored])
        # An event extended by later readings (its latest reading saved every 10 s) is not sent
        # again: once the store holds an extension, the samples stored after it are published
        # after it, and the sensor was turned on once.
        def extended():
            for line in self.store.hrmctl("events", "--output=json").stdout.splitlines():
                event = json.loads(line)
                if event["id"] == attributes["id"] and event.get("latest") != attributes.get("latest"):
                    return True
            return False

        wait_until(extended, 30, "the event's extension in the store")
        heart = len(watcher.received(is_state(STRAP_LEVEL)))
        watcher.wait_for(is_state(STRAP_LEVEL), 20, count=heart + 10, what="heart rate stored after the extension")
        self.assertEqual(1, len(watcher.received(lambda m: m.topic == topic and m.payload == b"ON")))
        # Without read authorization of a type, its sensor says nothing.
        self.assertEqual([], watcher.received(lambda m: m.topic == state_topic(STRAP_LEVEL, "low-heart-rate-event")))


class WorkoutTest(PublisherTest):
    def test_a_persons_workout_state_and_its_home_assistant_entities(self):
        broker = self.start_broker()
        self.grant_all()
        self.store.grant("hrmd/mqtt", "workout", read=True)
        watcher = self.subscribe(broker, ["homeassistant/#", "hrmd/#"])
        hrmd = self.start_hrmd(broker.url, sensors=["mock:id=strap-w,hz=2"])
        hrmd.wait_for_line("mqtt: connected to %s" % broker.url)
        hrmd.wait_for_line("mqtt: hrmd/mqtt may read workout: publishing")
        self.store.hrmctl("person", "add", "ann")
        workout_id = self.store.hrmctl("workout", "start", "--person", "ann", "--activity", "rowing").stdout.splitlines()[-1]
        topic = "hrmd/gw/person/ann/workout"

        def state(name):
            return lambda m: m.topic == topic and m.payload and m.json()["state"] == name

        active = watcher.wait_for(state("active"), 20, what="the active state")
        self.assertEqual((active.json()["activity"], active.json()["id"]), ("rowing", workout_id))
        document = watcher.wait_for(lambda m: m.topic == "homeassistant/sensor/hrmd_gw_person_ann/workout/config", 10,
                                    what="the workout entity").json()
        self.assertEqual((document["state_topic"], document["value_template"]), (topic, "{{ value_json.state }}"))
        self.assertEqual(document["device"]["name"], "ann")
        elapsed = watcher.wait_for(lambda m: m.topic == "homeassistant/sensor/hrmd_gw_person_ann/workout_elapsed/config", 10,
                                   what="the elapsed entity").json()
        self.assertEqual((elapsed["device_class"], elapsed["unit_of_measurement"]), ("duration", "s"))
        self.store.hrmctl("workout", "pause", workout_id)
        watcher.wait_for(state("paused"), 20, what="the paused state")
        self.store.hrmctl("workout", "end", workout_id)
        ended = watcher.wait_for(state("ended"), 20, what="the ended state")
        self.assertIn("end", ended.json())
        self.assertGreaterEqual(ended.json()["elapsed"], 0)
        # A later subscriber gets the last state from the broker: it is retained.
        late = self.subscribe(broker, [topic])
        retained = late.wait_for(lambda m: m.topic == topic, 10, what="the retained state")
        self.assertTrue(retained.retain)
        self.assertEqual(retained.json()["state"], "ended")
        self.store.hrmctl("workout", "delete", workout_id)
        watcher.wait_for(state("none"), 20, what="the state after the deletion")

    def test_without_the_workout_grant_no_workout_is_published(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/#"])
        hrmd = self.start_hrmd(broker.url, sensors=["mock:id=strap-v,hz=2"])
        hrmd.wait_for_line("mqtt: waiting for permission to read workout; grant it with: hrmctl auth grant hrmd/mqtt workout --read")
        self.store.hrmctl("workout", "start", "--device", "strap-v")
        # Heart rate flows after the workout started: had the workout been published, it would be there.
        before = len(watcher.received(is_state("strap-v")))
        watcher.wait_for(is_state("strap-v"), 20, count=before + 4, what="heart-rate messages after the start")
        self.assertEqual([], watcher.received(lambda m: m.topic.endswith("/workout")))


class StatusTest(PublisherTest):
    def test_online_then_the_last_will_when_hrmd_is_killed(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/gw/status"])
        hrmd = self.start_hrmd(broker.url)
        online = watcher.wait_for(lambda m: m.text == "online", 20, what="status online")
        self.assertEqual("hrmd/gw/status", online.topic)
        late = self.subscribe(broker, ["hrmd/gw/status"])
        self.assertTrue(late.wait_for(lambda m: m.text == "online", 10, what="the retained status").retain)
        hrmd.kill()
        watcher.wait_for(lambda m: m.text == "offline", 10, what="the last will offline")
        later = self.subscribe(broker, ["hrmd/gw/status"])
        offline = later.wait_for(lambda m: True, 10, what="the retained status after the will")
        self.assertEqual(("offline", True), (offline.text, offline.retain))

    def test_a_clean_stop_says_offline(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/gw/status"])
        hrmd = self.start_hrmd(broker.url)
        watcher.wait_for(lambda m: m.text == "online", 20, what="status online")
        self.assertEqual(0, hrmd.stop())
        watcher.wait_for(lambda m: m.text == "offline", 10, what="offline at a clean stop")


class ReconnectTest(PublisherTest):
    def test_state_messages_resume_after_the_broker_restarts(self):
        broker = self.start_broker()
        self.grant_all()
        hrmd = self.start_hrmd(broker.url)
        watcher = self.subscribe(broker, ["hrmd/#"])
        watcher.wait_for(is_state("strap-a"), 20, what="a heart-rate message")
        watcher.stop()
        broker.stop()
        hrmd.wait_for_line("mqtt: connection to %s lost" % broker.url, 10)
        hrmd.wait_for_line("mqtt: broker unreachable", 10)
        stored = self.stored_count()
        wait_until(lambda: self.stored_count() > stored, 10, "samples stored while the broker is down")

        again = self.start_broker(port=broker.port)
        resumed = self.subscribe(again, ["hrmd/#"])
        hrmd.wait_for_line("mqtt: reconnected to %s" % broker.url, 30)
        resumed.wait_for(is_state("strap-a"), 10, count=2, what="heart-rate messages after the restart")
        status = resumed.wait_for(lambda m: m.topic == "hrmd/gw/status", 10, what="status")
        self.assertEqual("online", status.text)
        self.assertEqual(1, len(hrmd.output.matching("mqtt: broker unreachable")), "unreachable said more than once")


class AuthorizationTest(PublisherTest):
    def test_a_revoke_stops_the_flow_within_a_second(self):
        broker = self.start_broker()
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/#"])
        hrmd = self.start_hrmd(broker.url, sensors=["mock:id=strap-a,hz=4"])
        watcher.wait_for(is_state("strap-a"), 20, count=3, what="heart-rate messages")
        self.store.revoke("hrmd/mqtt", "heart-rate", read=True)
        revoked = time.time()
        stored = self.stored_count()
        hrmd.wait_for_line("permission to read heart-rate withdrawn", 5)
        # For 2 s after the revoke took effect (at most a second), no message, while samples are stored.
        # A sample measured 3 s after the revoke shows the moment passed; the watcher's own probe
        # through the broker then shows that whatever hrmd published until then has arrived.
        wait_until(lambda: any(epoch(sample["start"]) >= revoked + 3 for sample in self.store.samples()), 10,
                   "a sample measured three seconds after the revoke")
        watcher.round_trip()
        late = watcher.received(lambda m: m.topic.startswith("hrmd/gw/strap-a/") and m.received > revoked + 1)
        self.assertEqual([], late, "published after the revoke")
        self.assertGreater(self.stored_count(), stored, "no samples stored after the revoke")

        self.store.grant("hrmd/mqtt", "heart-rate", read=True)
        granted = time.time()
        watcher.wait_for(lambda m: is_state("strap-a")(m) and m.received > granted, 5, what="messages after the grant again")

    def test_without_the_read_grant_nothing_is_published(self):
        broker = self.start_broker()
        self.store.grant("hrmd", "heart-rate")
        watcher = self.subscribe(broker, ["#"])
        hrmd = self.start_hrmd(broker.url)
        hrmd.wait_for_line("mqtt: waiting for permission to read heart-rate; grant it with: hrmctl auth grant hrmd/mqtt heart-rate --read")
        hrmd.wait_for_line("mqtt: connected")
        watcher.wait_for(lambda m: m.topic == "hrmd/gw/status" and m.text == "online", 10, what="status online")
        wait_until(lambda: self.stored_count() >= 4, 15, "4 samples stored")
        # The feed's rounds are a second apart: two have passed since those samples were stored.
        wait_until(lambda: self.stored_count() >= 8, 15, "8 samples stored")
        self.assertEqual([], watcher.received(lambda m: "strap-a" in m.topic), "published without the read grant")
        requests = self.store.hrmctl("auth", "requests").stdout
        self.assertTrue(any("hrmd/mqtt" in line and "heart-rate" in line for line in requests.splitlines()), requests)
        self.assertEqual(1, len(hrmd.output.matching("waiting for permission to read heart-rate")))


class SlowBrokerTest(PublisherTest):
    def test_a_broker_that_never_answers_costs_only_the_messages(self):
        # A listener that accepts connections and says nothing.
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        accepted = []

        def accept_until_closed():
            try:
                for _ in range(16):
                    accepted.append(listener.accept())
            except OSError:
                pass  # the listener was closed at the test's end

        threading.Thread(target=accept_until_closed, daemon=True).start()
        self.grant_all()
        hrmd = self.start_hrmd("mqtt://127.0.0.1:%d" % listener.getsockname()[1])
        hrmd.wait_for_line("did not answer within 10 s", 20)
        wait_until(lambda: self.stored_count() >= 5, 15, "samples stored")
        self.assertEqual(0, hrmd.stop(), "hrmd did not stop cleanly")
        for connection, _ in accepted:
            connection.close()


class TLSTest(PublisherTest):
    def test_mqtts_with_a_private_ca(self):
        if not tool("openssl"):
            skip_or_fail("needs openssl to make the test's certificates")
        certificates = Certificates(os.path.join(self.work, "tls"))
        broker = self.start_broker(tls=certificates)
        self.grant_all()
        hrmd = self.start_hrmd("mqtts://localhost:%d" % broker.port, mqtt=["ca-file = %s" % certificates.ca])
        hrmd.wait_for_line("mqtt: connected to mqtts://localhost:%d" % broker.port)
        broker.output.wait_for_line("New client connected", 10)

    def test_mqtts_refuses_a_certificate_the_ca_did_not_sign(self):
        if not tool("openssl"):
            skip_or_fail("needs openssl to make the test's certificates")
        certificates = Certificates(os.path.join(self.work, "tls"))
        other = Certificates(os.path.join(self.work, "other"))
        broker = self.start_broker(tls=certificates)
        self.grant_all()
        hrmd = self.start_hrmd("mqtts://localhost:%d" % broker.port, mqtt=["ca-file = %s" % other.ca])
        hrmd.wait_for_line("mqtt: broker unreachable", 20)
        wait_until(lambda: self.stored_count() >= 3, 15, "samples stored")
        self.assertEqual([], hrmd.output.matching("mqtt: connected"))


class CredentialsTest(PublisherTest):
    def test_right_credentials_publish(self):
        broker = self.start_broker(users={"hrmd": PASSWORD})
        self.grant_all()
        watcher = self.subscribe(broker, ["hrmd/#"], username="hrmd", password=PASSWORD)
        hrmd = self.start_hrmd(broker.url, mqtt=["username = hrmd", "password-file = %s" % self.write_password(PASSWORD)])
        hrmd.wait_for_line("mqtt: connected")
        watcher.wait_for(is_state("strap-a"), 20, what="a heart-rate message")
        with open("/proc/%d/cmdline" % hrmd.process.pid, "rb") as cmdline:
            self.assertNotIn(PASSWORD.encode(), cmdline.read())

    def test_wrong_credentials_keep_storing_and_say_so_once(self):
        broker = self.start_broker(users={"hrmd": "the-right-one"})
        self.grant_all()
        hrmd = self.start_hrmd(broker.url, mqtt=["username = hrmd", "password-file = %s" % self.write_password(PASSWORD)])
        hrmd.wait_for_line("mqtt: connection refused: bad credentials")
        # The broker turns away three attempts (back-off: 1 s, then 2 s): one line in hrmd's log.
        broker.output.wait_for_line("not authorised", 15, count=3)
        wait_until(lambda: self.stored_count() >= 3, 15, "samples stored")
        self.assertEqual(1, len(hrmd.output.matching("connection refused")), hrmd.output.text())
        self.assertIsNone(hrmd.process.poll(), "hrmd stopped")


class SecretsTest(PublisherTest):
    # A [sync] url whose every part is distinctive: none of it may reach the log.
    SYNC_URL = "postgresql://gw_secret_user@127.0.0.1:1/secret_database?sslmode=disable&application_name=secret_app"

    def test_no_log_level_prints_a_secret(self):
        broker = self.start_broker(users={"hrmd": PASSWORD})
        self.grant_all()
        password_file = self.write_password(PASSWORD)
        for level in ("trace", "debug", "info"):
            with self.subTest(level=level):
                hrmd = self.start_hrmd(broker.url, mqtt=["username = hrmd", "password-file = %s" % password_file],
                                       more_config="[sync]\nurl = %s\n" % self.SYNC_URL, arguments=["--log-level", level])
                hrmd.wait_for_line("mqtt: connected")
                hrmd.wait_for_line("sync: ")  # the sync tried the (closed) port
                self.assertEqual(0, hrmd.stop())
                text = hrmd.output.text()
                for secret in (PASSWORD, self.SYNC_URL, "gw_secret_user", "secret_database", "secret_app"):
                    self.assertNotIn(secret, text, "at --log-level %s" % level)

    def test_a_password_in_the_sync_url_is_refused_however_spelled(self):
        for url in ("host=127.0.0.1 port=1 password = pw-one", "host=127.0.0.1 port=1\tpassword=pw-two",
                    "postgresql://u@127.0.0.1:1/db?passw%6Frd=pw-three", "postgresql://u:pw-four@127.0.0.1:1/db"):
            with self.subTest(url=url):
                hrmd = self.start_hrmd("mqtt://127.0.0.1:1", more_config="[sync]\nurl = %s\n" % url)
                self.assertEqual(64, hrmd.process.wait(30))
                hrmd.output.join(10)
                self.assertIn("[sync] url holds a password", hrmd.output.text())
                self.assertNotIn("pw-", hrmd.output.text())


class ConfigurationTest(PublisherTest):
    def test_an_unknown_key_is_a_start_up_error_naming_file_line_and_key(self):
        hrmd = self.start_hrmd("mqtt://127.0.0.1:1", mqtt=["pasword-file = /x"])
        self.assertEqual(64, hrmd.process.wait(30))
        hrmd.output.wait_for_line("hrmd.conf:4: key 'pasword-file': unknown key", 5)

    def test_a_missing_password_file_is_a_start_up_error(self):
        hrmd = self.start_hrmd("mqtt://127.0.0.1:1", mqtt=["username = u", "password-file = %s/missing" % self.work])
        self.assertEqual(64, hrmd.process.wait(30))
        hrmd.output.wait_for_line("cannot read the password file", 5)


if __name__ == "__main__":
    unittest.main()
