"""Workouts reach the central store exactly once, whole, with their events: each changed workout
replaces the gateway's copy of it (the same id, one row), each deletion removes it, and a batch
commits with its cursor or not at all, so hrmd SIGKILLed at random moments while workouts change
leaves the central store holding what the gateway holds, no more, no less. Without read
authorization of `workout`, none leaves the gateway."""

import datetime
import json
import os
import random
import time

from sync_harness import SyncTest, wait_until

KILLS = int(os.environ.get("HRMD_SYNC_WORKOUT_KILLS", "8"))
BASE = datetime.datetime(2026, 11, 20, 6, 0, 0, tzinfo=datetime.timezone.utc)


def at(seconds):
    return (BASE + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WorkoutSyncTest(SyncTest):
    def local(self, gateway):
        """(id, activity, start µs, end µs or None, ((type, time µs), …)) of every local workout."""
        out = gateway.hrmctl("workout", "list", "--store", gateway.store, "--limit", "1000", "--output", "json").stdout
        rows = set()
        for line in out.splitlines():
            workout = json.loads(line)
            micros = lambda text: round(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1_000_000)
            rows.add((workout["id"], workout["activity"], micros(workout["start"]),
                      micros(workout["end"]) if "end" in workout else None,
                      tuple((event["type"], micros(event["time"])) for event in workout["events"])))
        return rows

    @staticmethod
    def central_rows(central, gateway="gw1"):
        out = central.sql("SELECT w.uuid, w.activity, w.start_time, coalesce(w.end_time::text, ''), "
                          "array_to_json(w.event_types), array_to_json(w.event_times) FROM hrmd.workout w "
                          "JOIN hrmd.gateway g ON g.id = w.gateway_id WHERE g.name = '%s'" % gateway)
        rows = []
        for line in out.splitlines():
            uuid, activity, start, end, types, times = line.split("|")
            rows.append((uuid, activity, int(start), int(end) if end else None, tuple(zip(json.loads(types), json.loads(times)))))
        return rows

    def test_workouts_sync_once_through_kills_changes_and_deletions(self):
        seed = int(os.environ.get("HRMD_SYNC_KILL_SEED", str(int(time.time() * 1000) % 1_000_000)))
        print("\n  kill seed: %d (HRMD_SYNC_KILL_SEED=%d repeats it)" % (seed, seed), flush=True)
        chance = random.Random(seed)
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=w1,hz=4"], sync=["batch = 3", "retry-max = 1"])
        gateway.grant()
        ctl = lambda *arguments: gateway.hrmctl(*arguments, "--store", gateway.store).stdout
        ctl("auth", "grant", "hrmd/sync", "workout", "--read")
        ctl("person", "add", "ann")
        ids = []

        def workout(number, laps=2):
            start = number * 600
            workout_id = ctl("workout", "start", "--person", "ann", "--activity", "rowing", "--at", at(start)).splitlines()[-1]
            for lap in range(laps):
                ctl("workout", "lap", workout_id, "--at", at(start + 60 * (lap + 1)))
            ctl("workout", "pause", workout_id, "--at", at(start + 200))
            ctl("workout", "resume", workout_id, "--at", at(start + 230))
            ctl("workout", "end", workout_id, "--at", at(start + 500))
            ids.append(workout_id)

        for number in range(12):
            workout(number)
        for kill in range(KILLS):
            gateway.start()
            gateway.wait_for_line("sync: connected", 20)
            time.sleep(chance.uniform(0, 0.3))   # the random moment of the kill, not a wait for anything
            gateway.kill()
            self.assertEqual(gateway.process.returncode, -9, gateway.output.text()[-3000:])
            # Between runs the workouts change: a new one, and every other run a deletion.
            workout(12 + kill, laps=chance.randrange(0, 4))
            if kill % 2 == 1:
                ctl("workout", "delete", ids.pop(chance.randrange(len(ids))))
        # One left open, that takes an event while hrmd runs.
        opened = ctl("workout", "start", "--person", "ann", "--at", at(100 * 600)).splitlines()[-1]
        gateway.start()
        gateway.wait_for_line("sync: connected", 20)
        ctl("workout", "marker", opened, "--at", at(100 * 600 + 5))
        expected = self.local(gateway)
        self.assertEqual(len(expected), len(ids) + 1)
        wait_until(lambda: set(self.central_rows(central)) == expected, 60, "the central workouts to be the gateway's")
        self.assertEqual(gateway.stop(), 0)
        rows = self.central_rows(central)
        self.assertEqual(len(rows), len(set(rows)), "a workout twice")
        self.assertEqual(set(rows), expected)
        self.assertIn(("marker", (BASE.timestamp() + 100 * 600 + 5) * 1_000_000),
                      [event for row in rows if row[0] == opened for event in row[4]])
        self.assertEqual(central.sql("SELECT count(*) FROM hrmd.workouts WHERE gateway = 'gw1'"),
                         str(len(expected)), "the view shows each workout")

    def test_without_read_authorization_no_workout_leaves(self):
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=w2,hz=4"])
        gateway.grant()
        gateway.hrmctl("workout", "start", "--device", "w2", "--at", at(0), "--store", gateway.store)
        gateway.start()
        gateway.wait_for_line("workout stays on this machine until the user allows it", 20)
        self.caught_up(central, gateway)
        self.assertEqual(central.sql("SELECT count(*) FROM hrmd.workout"), "0")
        gateway.hrmctl("auth", "grant", "hrmd/sync", "workout", "--read", "--store", gateway.store)
        gateway.wait_for_line("may read workout: sending it", 20)
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.workout") == "1", 30, "the workout to reach the central store")
        self.assertEqual(gateway.stop(), 0)

    def test_a_compromised_gateway_cannot_touch_another_gateways_workouts(self):
        central = self.central()
        central.add_gateway_role("gw1")
        central.add_gateway_role("evil")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=w3,hz=4"])
        gateway.grant()
        gateway.hrmctl("auth", "grant", "hrmd/sync", "workout", "--read", "--store", gateway.store)
        gateway.hrmctl("workout", "start", "--device", "w3", "--at", at(0), "--store", gateway.store)
        gateway.start()
        wait_until(lambda: central.sql("SELECT count(*) FROM hrmd.workout") == "1", 30, "the workout to reach the central store")
        self.assertEqual(gateway.stop(), 0)
        before = central.sql("SELECT uuid, activity, event_types FROM hrmd.workout")
        central.sql("INSERT INTO hrmd.gateway (name) VALUES ('evil')", user="evil")
        victim = central.sql("SELECT id FROM hrmd.gateway WHERE name = 'gw1'")
        uuid = before.split("|")[0]
        for statement in ("UPDATE hrmd.workout SET activity = 'yoga'", "DELETE FROM hrmd.workout",
                          "SELECT hrmd.workout_put(%s, '%s', 1, NULL, 'w3', 'yoga', 0, 1, '{}', '{}', 1)" % (victim, uuid),
                          "SELECT hrmd.workout_drop(%s, '{%s}')" % (victim, uuid)):
            result = central.sql(statement, user="evil", check=False)
            self.assertTrue(result.returncode != 0 or "0" in result.stdout.split(), "%s was allowed: %s" % (statement, result.stdout))
        self.assertEqual(central.sql("SELECT uuid, activity, event_types FROM hrmd.workout"), before)
        # Its own gateway's rows it may write, within the bounds.
        evil = central.sql("SELECT id FROM hrmd.gateway WHERE name = 'evil'")
        huge = "{%s}" % ",".join(["lap"] * 5000)
        result = central.sql("SELECT hrmd.workout_put(%s, 'x', 1, NULL, 'w', 'yoga', 0, 1, '%s', '{%s}', 1)"
                             % (evil, huge, ",".join(["0"] * 5000)), user="evil", check=False)
        self.assertNotEqual(result.returncode, 0, "5000 events were stored")

