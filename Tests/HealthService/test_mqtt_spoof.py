"""Another user's application cannot speak for a strap on MQTT.

hrmd serves the store on the bus and publishes to a real mosquitto broker. An application of
nobody, granted to share heart rate for itself only, saves 199 bpm for device identifiers
spelt like the real strap's (the same, in capitals, with other punctuation). Nothing of it
reaches the broker: not on the strap's topics, not as a topic or discovery document of its
own; the strap's own samples go on being published. The publisher says once, in its log, that
other applications' samples are not published, with the source as a log field of its own.
"""

import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import NOBODY  # noqa: E402
import mqtt  # noqa: E402
from waiting import wait_until  # noqa: E402

HR = "heart-rate"
GATEWAY = "gym"
STRAP = "strap-a"
SPOOFS = ["strap-a", "Strap-A", "STRAP-A", "strap_a", "strap-a "]
SPOOF_BPM = 199.0
SPOOF_APP = "spoof"
STRAP_TOPIC = "hrmd/%s/%s/heart-rate" % (GATEWAY, STRAP)


class MQTTSpoofTest(harness.ServiceTestCase):
    shares_hrmd = False

    def setUp(self):
        missing = mqtt.requirements()
        if missing:
            harness.skip_or_fail(missing)
        self.work = tempfile.mkdtemp(prefix="hrmd-mqtt-spoof-")
        self.broker = mqtt.Broker(self.work)
        self.addCleanup(self.broker.stop)
        self.watcher = mqtt.Subscriber(self.broker, ["hrmd/#", "homeassistant/#"])
        self.addCleanup(self.watcher.stop)
        config = "[mqtt]\nbroker = %s\ngateway = %s\n" % (self.broker.url, GATEWAY)
        self.hrmd = harness.Hrmd(self.bus, sensors=("mock:id=%s,hz=4,bpm=70" % STRAP,), more_config=config)
        self.addCleanup(self.hrmd.stop)

    def grant(self, source, access):
        self.hrmd.proxy().SetAuthorization(source, HR, access, "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)

    def log(self):
        return "\n--- hrmd's output (last lines) ---\n" + self.hrmd.output()[-3000:]

    def strap_messages(self):
        return self.watcher.received(lambda message: message.topic == STRAP_TOPIC)

    def test_another_application_cannot_publish_for_a_strap(self):
        self.grant("hrmd", "share")
        self.grant("hrmd/mqtt", "read")
        spoofer = "nobody/" + SPOOF_APP
        self.grant(spoofer, "share")
        self.watcher.wait_for(lambda message: message.topic == STRAP_TOPIC, harness.START_TIMEOUT_S, count=2,
                              what="the strap's heart rate on %s" % STRAP_TOPIC)

        now_us = int(time.time() * 1_000_000)
        items = ", ".join("sample(%r, %d, device=%r)" % (SPOOF_BPM, now_us + index, identifier)
                          for index, identifier in enumerate(SPOOFS))
        reply = harness.call_as(NOBODY, self.bus, "health.SaveSamples(%r, samples(%s))" % (SPOOF_APP, items))
        self.assertTrue(reply.ok, "%r%s" % (reply, self.log()))

        # The publisher saw them: it says so once, naming the source in a field of its own.
        line = wait_until(lambda: next((text for text in self.hrmd.output().splitlines()
                                        if "only hrmd's own sensors are published" in text), None),
                          harness.START_TIMEOUT_S, "the publisher's line about other applications' samples")
        self.assertIn("source=%s" % spoofer, line)
        self.assertNotIn(spoofer, line.split("] ", 1)[1], "the source is a field, not part of the text")
        # The strap's samples after the spoof are published, and the broker has passed on
        # everything before them: what came of the spoof would have arrived by now.
        seen = len(self.strap_messages())
        self.watcher.wait_for(lambda message: message.topic == STRAP_TOPIC, harness.START_TIMEOUT_S, count=seen + 3,
                              what="three more of the strap's samples after the spoof")
        self.watcher.round_trip()

        received = self.watcher.received()
        self.assertFalse([message for message in received if message.payload.strip() == b"199"],
                         "the spoofed value was published")
        state_topics = {message.topic for message in received
                        if message.topic.startswith("hrmd/%s/" % GATEWAY) and message.topic.count("/") == 3}
        self.assertTrue(all(topic.startswith("hrmd/%s/%s/" % (GATEWAY, STRAP)) for topic in state_topics),
                        "topics of devices that are not hrmd's own: %s" % sorted(state_topics))
        documents = {message.topic for message in received
                     if message.topic.startswith("homeassistant/") and message.payload}
        strap_documents = {topic for topic in documents if "/hrmd_%s_%s/" % (GATEWAY, STRAP) in topic}
        gateway_documents = {topic for topic in documents if "/hrmd_%s/" % GATEWAY in topic}
        self.assertTrue(strap_documents, "the strap's discovery documents: %s" % sorted(documents))
        self.assertEqual(documents - strap_documents - gateway_documents, set(),
                         "discovery documents of devices that are not hrmd's own")


if __name__ == "__main__":
    unittest.main()
