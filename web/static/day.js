// The day view (/day?date=YYYY-MM-DD[&source=SOURCE]): the day's samples per source and device,
// the hourly minimum, average and maximum, and the time in each zone.

import { allSamples, get, hasToken, tokenFragment } from "./api.js";
import { showError, showStatus } from "./status.js";
import { ZONE_COLOURS, ZONE_NAMES, maxFor, useSettings, zoneBounds } from "./zones.js";

const SERIES_COLOURS = ["#7cc0ff", "#ffb454", "#c792ea", "#7fd962", "#ff7a90", "#5ee0d0", "#e6db74", "#b0b8c0"];
const MAX_POINTS = 4000; // per series: samples are averaged over bins beyond that

const params = new URLSearchParams(location.search);
const source = params.get("source") || "";

function pad(number) {
  return String(number).padStart(2, "0");
}

function isoDay(date) {
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
}

function parseDay(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text || "");
  if (!match) return null;
  const day = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(day.getTime()) ? null : day;
}

const day = parseDay(params.get("date")) || parseDay(isoDay(new Date()));
const nextDay = new Date(day.getFullYear(), day.getMonth(), day.getDate() + 1);
const since = day.toISOString();
const until = nextDay.toISOString();

function pageFor(date, sourceName = source) {
  const query = new URLSearchParams({ date: isoDay(date) });
  if (sourceName) query.set("source", sourceName);
  return "/day?" + query + tokenFragment();
}

function navigation() {
  const previousDay = new Date(day.getFullYear(), day.getMonth(), day.getDate() - 1);
  document.getElementById("previous").href = pageFor(previousDay);
  document.getElementById("next").href = pageFor(nextDay);
  document.getElementById("dashboard-link").href = "/" + tokenFragment();
  const input = document.getElementById("date");
  input.value = isoDay(day);
  input.addEventListener("change", () => {
    const chosen = parseDay(input.value);
    if (chosen) location.href = pageFor(chosen);
  });
  document.title = "hrmd — " + isoDay(day) + (source ? " — " + source : "");
}

let severalSources = false;

// A line per source and device ("source · device" when the day has several sources).
function seriesName(sample) {
  const device = sample.device ? sample.device.name || sample.device.identifier : "";
  if (!device) return sample.source;
  return severalSources ? sample.source + " · " + device : device;
}

// Rows for dygraphs: [Date, value per series…], samples averaged over bins of equal width so
// that the series share their rows (a missing bin is a gap in its line).
function rows(samples) {
  const names = [...new Set(samples.map(seriesName))].sort();
  const times = samples.map((sample) => Date.parse(sample.start));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const counts = new Map();
  for (const sample of samples) counts.set(seriesName(sample), (counts.get(seriesName(sample)) || 0) + 1);
  const most = Math.max(...counts.values());
  const bin = Math.max(1000, Math.ceil((last - first + 1) / Math.min(MAX_POINTS, Math.max(1, most))));
  const bins = new Map(); // bin index → [sums, counts]
  samples.forEach((sample, i) => {
    const index = Math.floor((times[i] - first) / bin);
    let entry = bins.get(index);
    if (!entry) bins.set(index, (entry = [new Array(names.length).fill(0), new Array(names.length).fill(0)]));
    const column = names.indexOf(seriesName(sample));
    entry[0][column] += Number(sample.value);
    entry[1][column] += 1;
  });
  const result = [...bins.keys()].sort((a, b) => a - b).map((index) => {
    const [sums, numbers] = bins.get(index);
    return [new Date(first + index * bin), ...sums.map((sum, column) => (numbers[column] ? Math.round((sum / numbers[column]) * 10) / 10 : null))];
  });
  return { names, rows: result };
}

function zoneUnderlay(max) {
  return (canvas, area, graph) => {
    for (const { zone, lower, upper } of zoneBounds(max)) {
      const top = graph.toDomYCoord(zone === 5 ? 1000 : upper);
      const bottom = graph.toDomYCoord(lower);
      canvas.fillStyle = ZONE_COLOURS[zone] + "22";
      canvas.fillRect(area.x, Math.max(area.y, top), area.w, Math.min(area.y + area.h, bottom) - Math.max(area.y, top));
    }
  };
}

const CHART_OPTIONS = {
  axisLineColor: "#3a444f",
  gridLineColor: "#262e37",
  axisLabelFontSize: 13,
  labelsUTC: false,
  legend: "follow",
  strokeWidth: 1.6,
  ylabel: "count/min",
};

// The day's workouts as bands over the chart, a line at each lap, and links to their pages.
function workoutUnderlay(workouts) {
  return (canvas, area, graph) => {
    for (const workout of workouts) {
      const from = graph.toDomXCoord(Date.parse(workout.start));
      const to = graph.toDomXCoord(workout.end ? Date.parse(workout.end) : Date.now());
      canvas.fillStyle = "rgba(255, 255, 255, 0.07)";
      canvas.fillRect(from, area.y, to - from, area.h);
      canvas.fillStyle = "rgba(255, 255, 255, 0.35)";
      for (const event of workout.events || []) {
        if (event.type === "lap") canvas.fillRect(graph.toDomXCoord(Date.parse(event.time)), area.y, 1, area.h);
      }
    }
  };
}

function workoutLinks(workouts) {
  const box = document.getElementById("workouts");
  const links = workouts.slice().reverse().map((workout) => {
    const link = document.createElement("a");
    link.href = "/workout?id=" + encodeURIComponent(workout.id) + tokenFragment();
    link.className = "workout-link";
    link.textContent = new Date(workout.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + " " + workout.activity +
      (workout.person ? " · " + workout.person : "");
    return link;
  });
  box.replaceChildren(...(links.length ? ["Workouts: "] : []), ...links.flatMap((link, i) => (i ? [" · ", link] : [link])));
  box.dataset.count = String(links.length);
}

const EVENT_NAMES = {
  "high-heart-rate-event": "high heart rate",
  "low-heart-rate-event": "low heart rate",
  "sensor-contact-lost": "contact lost",
  "strap-battery-low": "battery low",
  "strap-disconnected": "disconnected",
};

// The day's events as bands over the chart (red for heart rate, amber for the strap's).
function eventUnderlay(events) {
  return (canvas, area, graph) => {
    for (const event of events) {
      const from = graph.toDomXCoord(Date.parse(event.start));
      const to = graph.toDomXCoord(Date.parse(event.end || event.latest));
      const heart = event.type === "high-heart-rate-event" || event.type === "low-heart-rate-event";
      canvas.fillStyle = heart ? "rgba(229, 57, 53, 0.22)" : "rgba(249, 168, 37, 0.18)";
      canvas.fillRect(from, area.y, Math.max(2, to - from), area.h);
    }
  };
}

function time(text) {
  return new Date(text).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// The day's events, oldest first: when, what, whose, how far.
function eventList(events) {
  const box = document.getElementById("events");
  const items = events.slice().reverse().map((event) => {
    const item = document.createElement("span");
    item.className = "event";
    item.dataset.type = event.type;
    const metadata = event.metadata || {};
    const extreme = metadata.extreme !== undefined ? " (" + Math.round(metadata.extreme) + (event.type === "strap-battery-low" ? " %" : " bpm") + ")" : "";
    item.textContent = time(event.start) + "–" + (event.end ? time(event.end) : "now") + " " + (EVENT_NAMES[event.type] || event.type) + extreme +
      " · " + (event.person || event.device || "");
    return item;
  });
  box.replaceChildren(...(items.length ? ["Events: "] : []), ...items.flatMap((item, i) => (i ? [" · ", item] : [item])));
  box.dataset.count = String(items.length);
}

function samplesChart(samples, max, workouts = [], events = []) {
  const chart = document.getElementById("chart");
  if (!samples.length) {
    chart.className = "empty";
    chart.textContent = "No heart-rate samples on " + isoDay(day) + (source ? " from " + source : "") + ".";
    return;
  }
  const { names, rows: data } = rows(samples);
  new Dygraph(chart, data, {
    ...CHART_OPTIONS,
    labels: ["time", ...names],
    colors: names.map((_, i) => SERIES_COLOURS[i % SERIES_COLOURS.length]),
    underlayCallback: (canvas, area, graph) => {
      zoneUnderlay(max)(canvas, area, graph);
      workoutUnderlay(workouts)(canvas, area, graph);
      eventUnderlay(events)(canvas, area, graph);
    },
    legend: "always",
    labelsDiv: document.getElementById("legend"),
    labelsSeparateLines: false,
  });
  chart.dataset.points = String(data.length);
  chart.dataset.series = String(names.length);
}

function hourlyChart(buckets) {
  const chart = document.getElementById("hourly");
  const filled = buckets.filter((bucket) => bucket.count > 0);
  if (!filled.length) {
    chart.className = "empty";
    chart.textContent = "No statistics for this day.";
    return;
  }
  const data = filled.map((bucket) => [new Date(bucket.start), [bucket.min, Math.round(bucket.avg * 10) / 10, bucket.max]]);
  new Dygraph(chart, data, {
    ...CHART_OPTIONS,
    labels: ["hour", "min · avg · max"],
    customBars: true,
    colors: ["#ffb454"],
    drawPoints: true,
    pointSize: 3,
    dateWindow: [day.getTime(), nextDay.getTime()],
  });
  chart.dataset.points = String(data.length);
}

function summary(buckets, samples) {
  const box = document.getElementById("summary");
  const filled = buckets.filter((bucket) => bucket.count > 0);
  const count = filled.reduce((total, bucket) => total + bucket.count, 0);
  const figures = [];
  if (count) {
    const avg = filled.reduce((total, bucket) => total + bucket.avg * bucket.count, 0) / count;
    figures.push(["minimum", Math.min(...filled.map((bucket) => bucket.min))]);
    figures.push(["average", Math.round(avg)]);
    figures.push(["maximum", Math.max(...filled.map((bucket) => bucket.max))]);
  }
  figures.push(["samples", samples.length]);
  box.replaceChildren(...figures.map(([label, value]) => {
    const item = document.createElement("div");
    const number = document.createElement("b");
    number.textContent = String(value);
    const text = document.createElement("span");
    text.textContent = label;
    item.append(number, text);
    return item;
  }));
}

function minutes(seconds) {
  if (seconds < 60) return Math.round(seconds) + " s";
  const total = Math.round(seconds / 60);
  return total < 60 ? total + " min" : Math.floor(total / 60) + " h " + pad(total % 60) + " min";
}

function zonesView(zones) {
  const bar = document.getElementById("zonebar");
  const table = document.getElementById("zones");
  const total = zones.reduce((sum, zone) => sum + (zone.seconds || 0), 0);
  bar.replaceChildren(...zones.filter((zone) => zone.seconds > 0).map((zone) => {
    const part = document.createElement("div");
    part.style.width = ((zone.seconds / total) * 100).toFixed(2) + "%";
    part.style.background = ZONE_COLOURS[zone.zone] || ZONE_COLOURS[0];
    part.title = (ZONE_NAMES[zone.zone] || "zone " + zone.zone) + ": " + minutes(zone.seconds);
    return part;
  }));
  const head = document.createElement("tr");
  for (const title of ["zone", "count/min", "time", "share"]) {
    const cell = document.createElement("th");
    cell.textContent = title;
    head.append(cell);
  }
  table.replaceChildren(head, ...zones.map((zone) => {
    const row = document.createElement("tr");
    const name = document.createElement("td");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = ZONE_COLOURS[zone.zone] || ZONE_COLOURS[0];
    name.append(swatch, ZONE_NAMES[zone.zone] || "zone " + zone.zone);
    const range = document.createElement("td");
    const bound = (value) => (typeof value === "number" ? String(Math.round(value)) : "");
    range.textContent = zone.upper === null || zone.upper === undefined ? bound(zone.lower) + "+" : bound(zone.lower) + "–" + bound(zone.upper);
    const time = document.createElement("td");
    time.textContent = minutes(zone.seconds || 0);
    const share = document.createElement("td");
    share.textContent = total ? Math.round(((zone.seconds || 0) / total) * 100) + " %" : "–";
    row.append(name, range, time, share);
    return row;
  }));
}

function sourceLinks(samples) {
  const box = document.getElementById("sources");
  const names = [...new Set(samples.map((sample) => sample.source))].sort();
  if (!source && names.length < 2) return;
  const links = [];
  const all = document.createElement("a");
  all.href = pageFor(day, "");
  all.textContent = "all sources";
  links.push(all);
  for (const name of source ? [source] : names) {
    const link = document.createElement("a");
    link.href = pageFor(day, name);
    link.textContent = name;
    links.push(link);
  }
  box.replaceChildren(...links.flatMap((link, i) => (i ? [" · ", link] : [link])));
}

async function main() {
  navigation();
  if (!hasToken()) {
    showStatus("no-token");
    return;
  }
  document.getElementById("samples-title").textContent = "Heart rate on " + isoDay(day) + (source ? " from " + source : "");
  try {
    const whoami = await get("whoami");
    document.getElementById("who").textContent = whoami.source;
    const settings = await get("settings");
    useSettings(settings);
    const max = maxFor(null);
    const [samples, statistics, zones, workouts, events] = await Promise.all([
      allSamples({ type: "heart-rate", since, until, limit: 5000 }, 100),
      get("statistics", { type: "heart-rate", by: "1h", since, until, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone }),
      get("zones", { since, until, max }),
      // the day's workouts the token may read (none shown when it may not)
      get("workouts", { since, until, limit: 100 }).then((answer) => answer.workouts || [], () => []),
      // the day's events the token may read
      get("events", { since, until, limit: 1000 }).then((answer) => answer.events || [], () => []),
    ]);
    const shown = source ? samples.filter((sample) => sample.source === source) : samples;
    severalSources = new Set(shown.map((sample) => sample.source)).size > 1;
    sourceLinks(samples);
    summary(statistics.buckets || [], shown);
    samplesChart(shown, max, workouts, events);
    workoutLinks(workouts);
    eventList(events);
    hourlyChart(statistics.buckets || []);
    zonesView(zones.zones || []);
    showStatus("ok");
    document.body.dataset.ready = "true";
  } catch (error) {
    showError(error);
    document.body.dataset.ready = "error";
  }
}

main();
