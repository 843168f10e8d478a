// A tile per strap: the heart rate in large digits in its zone's colour, the trend of the last
// ten minutes, battery, contact and sensor state; "stale" when no sample came for 10 s; who
// wears it and their workout (activity and time, or paused) when one is open.
// Each tile is <article class="tile" data-device="ID">; its digits are <span class="bpm">.

import { serverClockOffset } from "./api.js";
import { Sparkline } from "./sparkline.js";
import { ZONE_NAMES, maxFor, zoneOf } from "./zones.js";

export const STALE_MS = 10 * 1000;

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The key of a sample's device: its identifier, else its source (samples without a device).
export function deviceKey(sample) {
  return (sample.device && sample.device.identifier) || sample.source || "unknown";
}

export function clock(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  const minutes = Math.floor(whole / 60);
  const hours = Math.floor(minutes / 60);
  const rest = String(whole % 60).padStart(2, "0");
  return hours > 0 ? hours + ":" + String(minutes % 60).padStart(2, "0") + ":" + rest : minutes + ":" + rest;
}

// A workout as the live stream and the API give it, with what a tile needs.
function workoutState(workout) {
  const toggles = (workout.events || []).filter((event) => event.type === "pause" || event.type === "resume");
  return {
    id: workout.id,
    device: workout.device,
    person: workout.person,
    activity: workout.activity,
    startTime: Date.parse(workout.start),
    open: !workout.end,
    paused: toggles.length > 0 && toggles[toggles.length - 1].type === "pause",
    // seconds paused before the last resume, and since when it is paused (ms) if it is
    pausedSeconds: pausedSeconds(workout.events || []),
    pausedSince: toggles.length > 0 && toggles[toggles.length - 1].type === "pause" ? Date.parse(toggles[toggles.length - 1].time) : null,
  };
}

function pausedSeconds(events) {
  let total = 0;
  let since = null;
  for (const event of events) {
    if (event.type === "pause") since = Date.parse(event.time);
    else if (event.type === "resume" && since !== null) {
      total += (Date.parse(event.time) - since) / 1000;
      since = null;
    }
  }
  return total;
}

function age(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return seconds + " s";
  if (seconds < 3600) return Math.round(seconds / 60) + " min";
  return Math.round(seconds / 3600) + " h";
}

// Open events as the tile's banner says them, the most pressing first.
const ALERT_ORDER = ["high-heart-rate-event", "low-heart-rate-event", "strap-disconnected", "sensor-contact-lost", "strap-battery-low"];
const ALERT_TEXT = {
  "high-heart-rate-event": "High heart rate",
  "low-heart-rate-event": "Low heart rate",
  "sensor-contact-lost": "Contact lost",
  "strap-battery-low": "Battery low",
  "strap-disconnected": "Disconnected",
};

class Tile {
  constructor(id) {
    this.id = id;
    this.lastTime = 0; // server time of the newest sample, ms
    this.node = element("article", "tile");
    this.node.dataset.device = id;
    this.node.dataset.zone = "0";
    const head = element("header", "tile-head");
    this.name = element("h2", "name", id);
    this.person = element("span", "person", "");
    this.samplePerson = ""; // who wore the strap at its newest sample (a manager's stream says)
    this.workoutPerson = ""; // whose its latest workout is
    head.append(this.name, this.person);
    const reading = element("div", "reading");
    this.bpm = element("span", "bpm", "--");
    this.zone = element("div", "zone-label", "");
    reading.append(this.bpm, element("span", "unit", "bpm"));
    this.canvas = element("canvas", "trend");
    this.sparkline = new Sparkline(this.canvas);
    this.sparkline.max = maxFor(id);
    const foot = element("footer", "tile-foot");
    this.battery = element("span", "battery", "");
    this.contact = element("span", "contact", "");
    this.state = element("span", "state", "");
    foot.append(this.contact, this.battery, this.state);
    this.session = element("div", "workout", "");
    this.banner = element("div", "alert", "");
    this.banner.setAttribute("role", "alert");
    this.node.append(head, this.banner, reading, this.zone, this.session, this.canvas, foot);
    this.current = null;
    this.openEvents = new Map(); // event id → the strap's open event
    this.update(Date.now());
  }

  // A sample S of this device, live or from the last ten minutes.
  sample(sample) {
    const time = Date.parse(sample.end || sample.start);
    const value = Math.round(Number(sample.value));
    if (Number.isNaN(time) || Number.isNaN(value)) return;
    this.sparkline.add(time, value);
    if (sample.device && sample.device.name) this.name.textContent = sample.device.name;
    this.name.title = this.id;
    if (time < this.lastTime) return;
    this.lastTime = time;
    this.samplePerson = sample.person || "";
    this.showPerson();
    this.bpm.textContent = String(value);
    const max = maxFor(this.id);
    const zone = zoneOf(value, max);
    this.node.dataset.zone = String(zone);
    this.zone.textContent = ZONE_NAMES[zone] + " · " + Math.round((value / max) * 100) + " %";
    const metadata = sample.metadata || {};
    if (metadata.sensorContact) {
      this.contact.textContent = metadata.sensorContact === "detected" ? "contact" : "no contact";
      this.contact.dataset.ok = String(metadata.sensorContact === "detected");
    }
  }

  // The wearer: the newest sample's person, else the latest workout's.
  showPerson() {
    this.person.textContent = this.samplePerson || this.workoutPerson;
  }

  sensorState(state) {
    if (state.battery !== null && state.battery !== undefined) {
      this.battery.textContent = "battery " + state.battery + " %";
      this.battery.dataset.low = String(state.battery <= 15);
    }
    this.sensorStateName = state.state || "";
    this.node.dataset.state = this.sensorStateName;
  }

  // The strap's workout W (as workoutState gives it), or null when it has none open.
  workout(workout) {
    this.current = workout && workout.open ? workout : null;
    if (workout && workout.person) this.workoutPerson = workout.person;
    this.showPerson();
    this.node.dataset.workout = this.current ? (this.current.paused ? "paused" : "active") : "";
  }

  // An event of this strap, as the live stream sends each save of it: open ones make the
  // banner (the most pressing first), an ended one leaves it.
  event(event) {
    if (event.end || event.deleted) this.openEvents.delete(event.id);
    else this.openEvents.set(event.id, event);
    const shown = [...this.openEvents.values()].sort((a, b) => ALERT_ORDER.indexOf(a.type) - ALERT_ORDER.indexOf(b.type))[0];
    if (!shown) {
      delete this.node.dataset.alert;
      this.banner.textContent = "";
      return;
    }
    this.node.dataset.alert = shown.type;
    const since = new Date(shown.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const metadata = shown.metadata || {};
    const extreme = metadata.extreme !== undefined && metadata.extreme !== null ? " · " + Math.round(metadata.extreme) + (shown.type === "strap-battery-low" ? " %" : " bpm") : "";
    this.banner.textContent = ALERT_TEXT[shown.type] + extreme + " · since " + since;
  }

  update(now) {
    const serverNow = now + serverClockOffset;
    if (this.current) {
      const until = this.current.paused ? this.current.pausedSince : serverNow;
      const active = (until - this.current.startTime) / 1000 - this.current.pausedSeconds;
      this.session.textContent = this.current.activity + " " + clock(active) + (this.current.paused ? " · paused" : "");
    } else {
      this.session.textContent = "";
    }
    const silent = this.lastTime ? serverNow - this.lastTime : Infinity;
    const stale = silent > STALE_MS;
    this.node.classList.toggle("stale", stale);
    let text = this.sensorStateName && this.sensorStateName !== "streaming" ? this.sensorStateName : "";
    if (stale) text = this.lastTime ? "no signal for " + age(silent) : text || "no reading yet";
    this.state.textContent = text;
    this.sparkline.draw(serverNow);
  }
}

const byName = new Intl.Collator(undefined, { numeric: true }).compare;

// The tiles of a page, kept in order of their device identifiers.
export class TileBoard {
  constructor(container, onNewDevice) {
    this.container = container;
    this.tiles = new Map();
    this.onNewDevice = onNewDevice;
    this.timer = setInterval(() => this.update(), 1000);
  }

  tile(id) {
    let tile = this.tiles.get(id);
    if (!tile) {
      tile = new Tile(id);
      this.tiles.set(id, tile);
      const ids = [...this.tiles.keys()].sort(byName);
      const next = ids[ids.indexOf(id) + 1];
      this.container.insertBefore(tile.node, next ? this.tiles.get(next).node : null);
      this.container.dataset.count = String(this.tiles.size);
      document.dispatchEvent(new CustomEvent("tiles-changed", { detail: this.tiles.size }));
      if (this.onNewDevice) this.onNewDevice(id, tile);
    }
    return tile;
  }

  sample(sample) {
    const tile = this.tile(deviceKey(sample));
    tile.sample(sample);
    tile.update(Date.now());
  }

  // Samples of one device, oldest first (the trend's backfill).
  backfill(id, samples) {
    const tile = this.tile(id);
    for (const sample of samples) tile.sample(sample);
    tile.update(Date.now());
  }

  sensorState(state) {
    if (!state || !state.device) return;
    const tile = this.tile(state.device);
    tile.sensorState(state);
    tile.update(Date.now());
  }

  // A workout from the live stream or a button's answer; {id, deleted} when deleted.
  workout(workout) {
    if (!this.workouts) this.workouts = new Map();
    if (workout.deleted) {
      const gone = this.workouts.get(workout.id);
      this.workouts.delete(workout.id);
      if (gone && gone.device && this.tiles.has(gone.device)) this.tiles.get(gone.device).workout(null);
      return;
    }
    const state = workoutState(workout);
    if (state.open) this.workouts.set(state.id, state);
    else this.workouts.delete(state.id);
    if (state.device) {
      const tile = this.tile(state.device);
      if (state.open || (tile.current && tile.current.id === state.id)) tile.workout(state);
      tile.update(Date.now());
    }
  }

  // An event from the live stream: the banner of its strap's tile.
  event(event) {
    if (!event || !event.device || !ALERT_TEXT[event.type]) return;
    if ((event.end || event.deleted) && !this.tiles.has(event.device)) return;
    this.tile(event.device).event(event);
  }

  // The open workouts, as workoutState gives them.
  openWorkouts() {
    return this.workouts ? [...this.workouts.values()] : [];
  }

  // The devices with a tile, in order.
  devices() {
    return [...this.tiles.keys()].sort(byName);
  }

  // The server's clock now, in ms.
  now() {
    return Date.now() + serverClockOffset;
  }

  update() {
    const now = Date.now();
    for (const tile of this.tiles.values()) tile.update(now);
  }

  stop() {
    clearInterval(this.timer);
  }
}
