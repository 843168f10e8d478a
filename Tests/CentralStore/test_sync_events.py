"""Events reach the central store as the gateway saves them: an event opened, extended and
ended on the gateway is one row centrally, as it now is; hrmctl events against the central
store lists every gateway's. Without read authorization of an event type, its events stay on
the gateway; a compromised gateway cannot write another's."""

import datetime
import json
import os

from sync_harness import SyncTest, wait_until

BASE = datetime.datetime(2026, 11, 20, 6, 0, 0, tzinfo=datetime.timezone.utc)


def trace(path, readings, device="AA:BB:CC:DD:EE:FF"):
    """A trace of one strap at 1 Hz from BASE: (bpm, contact) each."""
    with open(path, "w") as out:
        out.write('{"format":"hrmd-trace","version":1}\n')
        for second, (bpm, contact) in enumerate(readings):
            time = (BASE + datetime.timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            out.write('{"t":"%s","transport":"ble","device":"%s","kind":"notify","characteristic":"2a37","value":"%s%02x"}\n'
                      % (time, device, "06" if contact else "04", bpm))


class EventSyncTest(SyncTest):
    def replay(self, gateway, readings, device="AA:BB:CC:DD:EE:FF"):
        alerts = os.path.join(self.work, "alerts.conf")
        with open(alerts, "w") as out:
            out.write("[alerts]\nhigh = 120\nhigh-for = 30s\ncontact-lost-for = 10s\n")
        path = os.path.join(self.work, "%s.trace.jsonl" % gateway.name)
        trace(path, readings, device)
        gateway.hrmctl("replay", "--config", alerts, "--store", gateway.store, path)

    @staticmethod
    def events(gateway, store):
        out = gateway.hrmctl("events", "--output", "json", "--store", store).stdout
        return sorted((event["type"], event["device"], event["start"], event.get("end")) for event in map(json.loads, out.splitlines()))

    def test_events_reach_the_central_store_and_read_back_with_hrmctl(self):
        central = self.central()
        for name in ("gw1", "gw2"):
            central.add_gateway_role(name)
        gateways = [self.gateway(name, central.url(name), sensors=["mock:id=%s-strap,hz=2" % name]) for name in ("gw1", "gw2")]
        for number, gateway in enumerate(gateways):
            gateway.grant()
            for type_ in ("high-heart-rate-event", "sensor-contact-lost"):
                gateway.hrmctl("auth", "grant", "--store", gateway.store, "hrmd", type_)
                gateway.grant_read(type_)
            # 40 s above 120 (a high event), then 15 s without contact (contact lost).
            self.replay(gateway, [(80, True)] * 10 + [(130 + number, True)] * 40 + [(80, True)] * 5 + [(80, False)] * 15 + [(80, True)] * 5,
                        device="AA:BB:CC:DD:EE:0%d" % number)
            gateway.start()
        expected = sorted(sum((self.events(gateway, gateway.store) for gateway in gateways), []))
        self.assertEqual(len(expected), 4, expected)
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.event") == "4", 30, "both gateways' events centrally")
        self.assertEqual(self.events(gateways[0], central.url("analyst")), expected)
        self.assertEqual(central.sql("SELECT count(*) FROM hrmd.events WHERE gateway = 'gw2' AND type = 'sensor-contact-lost'"), "1")
        extreme = central.sql("SELECT extreme FROM hrmd.events WHERE gateway = 'gw2' AND type = 'high-heart-rate-event'")
        self.assertEqual(float(extreme), 131)
        # An event deleted on its gateway goes centrally too.
        out = gateways[0].hrmctl("events", "--type", "sensor-contact-lost", "--output", "json", "--store", gateways[0].store).stdout
        gone = json.loads(out.splitlines()[0])["id"]
        gateways[0].hrmctl("delete", "--event", gone, "--yes", "--store", gateways[0].store)
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.event") == "3", 30, "the deletion centrally")
        self.assertEqual(central.sql("SELECT count(*) FROM hrmd.event WHERE uuid = '%s'" % gone), "0")
        for gateway in gateways:
            self.assertEqual(gateway.stop(), 0)

    def test_without_read_authorization_an_event_type_stays(self):
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=e1,hz=2"])
        gateway.grant()
        gateway.hrmctl("auth", "grant", "--store", gateway.store, "hrmd", "high-heart-rate-event", "sensor-contact-lost")
        gateway.grant_read("sensor-contact-lost")
        self.replay(gateway, [(130, True)] * 40 + [(80, False)] * 15 + [(80, True)] * 2)
        gateway.start()
        gateway.wait_for_line("high-heart-rate-event stays on this machine until the user allows it", 20)
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.event") == "1", 30, "the contact event centrally")
        self.assertEqual(central.sql("SELECT type FROM hrmd.event"), "sensor-contact-lost")
        gateway.grant_read("high-heart-rate-event")
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.event") == "2", 30, "the high event once it may be read")
        self.assertEqual(gateway.stop(), 0)

    def test_a_compromised_gateway_cannot_touch_another_gateways_events(self):
        central = self.central()
        central.add_gateway_role("gw1")
        central.add_gateway_role("evil")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=e2,hz=2"])
        gateway.grant()
        gateway.hrmctl("auth", "grant", "--store", gateway.store, "hrmd", "high-heart-rate-event")
        gateway.grant_read("high-heart-rate-event")
        self.replay(gateway, [(130, True)] * 40 + [(80, True)] * 2)
        gateway.start()
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.event") == "1", 30, "the event centrally")
        self.assertEqual(gateway.stop(), 0)
        before = central.sql("SELECT uuid, type, extreme, end_time FROM hrmd.event")
        central.sql("INSERT INTO hrmd.gateway (name) VALUES ('evil')", user="evil")
        victim = central.sql("SELECT id FROM hrmd.gateway WHERE name = 'gw1'")
        uuid = before.split("|")[0]
        for statement in ("UPDATE hrmd.event SET extreme = 300", "DELETE FROM hrmd.event",
                          "SELECT hrmd.event_put(%s, '%s', 'high-heart-rate-event', 1, 'x', NULL, 0, 1, NULL, 120, 300, 1)" % (victim, uuid),
                          "SELECT hrmd.event_drop(%s, '{%s}')" % (victim, uuid)):
            result = central.sql(statement, user="evil", check=False)
            self.assertTrue(result.returncode != 0 or "0" in result.stdout.split(), "%s was allowed: %s" % (statement, result.stdout))
        self.assertEqual(central.sql("SELECT uuid, type, extreme, end_time FROM hrmd.event"), before)
        evil = central.sql("SELECT id FROM hrmd.gateway WHERE name = 'evil'")
        result = central.sql("SELECT hrmd.event_put(%s, 'x', 'strap-battery-low', 1, NULL, NULL, 0, 1, NULL, 10, 5, 1)" % evil,
                             user="evil", check=False)
        self.assertNotEqual(result.returncode, 0, "an event of nobody's was stored")
