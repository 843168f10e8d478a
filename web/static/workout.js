// The workout page (/workout?id=ID): a workout's figures (heart rate, recovery, energy, TRIMP),
// the curve of its heart rate with its pauses shaded, time in the person's zones, and its laps.
// Without an id it shows the newest workout; the menu lists the latest hundred.

import { get, hasToken, tokenFragment } from "./api.js";
import { showError, showStatus } from "./status.js";
import { clock, element } from "./tiles.js";
import { ZONE_COLOURS, ZONE_NAMES } from "./zones.js";

// Whole seconds as m:ss (or h:mm:ss), rounded to the nearest second.
const duration = (seconds) => clock(Math.round(seconds));

const round = (value) => (value === undefined || value === null ? "–" : String(Math.round(value)));

// The pauses of a workout: [start ms, end ms] each (an unresumed pause runs to the end).
function pauses(workout) {
  const spans = [];
  let since = null;
  for (const event of workout.events || []) {
    if (event.type === "pause") since = Date.parse(event.time);
    else if (event.type === "resume" && since !== null) {
      spans.push([since, Date.parse(event.time)]);
      since = null;
    }
  }
  if (since !== null) spans.push([since, Date.parse(workout.end || new Date().toISOString())]);
  return spans;
}

function summaryView(workout) {
  const who = workout.person || workout.device || "";
  document.getElementById("title").textContent =
    workout.activity + (who ? " · " + who : "") + " · " + new Date(workout.start).toLocaleString();
  const figures = [
    ["elapsed", duration(workout.elapsedSeconds)],
    ["active", duration(workout.activeSeconds)],
    ["average", round(workout.heartRate && workout.heartRate.average) + " bpm"],
    ["maximum", round(workout.heartRate && workout.heartRate.maximum) + " bpm"],
    ["recovery (1 min)", workout.recoveryOneMinute === undefined ? "–" : round(workout.recoveryOneMinute) + " bpm"],
    ["energy", workout.energyKilocalories === undefined ? "–" : round(workout.energyKilocalories) + " kcal"],
    ["TRIMP", round(workout.trimp)],
  ];
  document.getElementById("summary").replaceChildren(...figures.map(([name, value]) => {
    const figure = element("div", "figure");
    figure.dataset.figure = name;
    figure.append(element("span", "value", value), element("span", "name", name));
    return figure;
  }));
}

function curveView(workout, samples) {
  const chart = document.getElementById("chart");
  const data = samples.map((sample) => [new Date(sample.time), sample.value]);
  if (!data.length) {
    chart.replaceChildren(element("p", "empty", "no heart-rate samples in this workout"));
    return;
  }
  const shaded = pauses(workout);
  new Dygraph(chart, data, {
    labels: ["time", "heart rate"],
    colors: ["#ef4040"],
    axisLineColor: "#3a444f",
    gridLineColor: "#262e37",
    axisLabelFontSize: 13,
    strokeWidth: 1.6,
    ylabel: "count/min",
    legend: "follow",
    underlayCallback: (canvas, area, graph) => {
      canvas.fillStyle = "rgba(154, 163, 173, 0.25)";
      for (const [from, to] of shaded) {
        const left = graph.toDomXCoord(from);
        canvas.fillRect(left, area.y, graph.toDomXCoord(to) - left, area.h);
      }
    },
  });
  chart.dataset.pauses = String(shaded.length);
  chart.dataset.points = String(data.length);
}

function zonesView(zones) {
  const bar = document.getElementById("zonebar");
  const total = (zones || []).reduce((sum, zone) => sum + zone.seconds, 0);
  bar.replaceChildren(...(zones || []).filter((zone) => zone.seconds > 0).map((zone) => {
    const part = element("div");
    part.style.width = ((zone.seconds / total) * 100).toFixed(2) + "%";
    part.style.background = ZONE_COLOURS[zone.zone] || ZONE_COLOURS[0];
    part.title = (ZONE_NAMES[zone.zone] || "zone " + zone.zone) + " (" + zone.lower + "–" + zone.upper + "): " + duration(zone.seconds);
    part.dataset.zone = String(zone.zone);
    return part;
  }));
}

function lapsView(laps) {
  const table = document.getElementById("laps");
  const head = element("tr");
  for (const title of ["lap", "active", "average", "maximum"]) head.append(element("th", "", title));
  table.replaceChildren(head, ...laps.map((lap, index) => {
    const row = element("tr", "lap");
    for (const text of [String(index + 1), duration(lap.activeSeconds), round(lap.heartRate && lap.heartRate.average),
      round(lap.heartRate && lap.heartRate.maximum)]) {
      row.append(element("td", "", text));
    }
    return row;
  }));
}

async function main() {
  if (!hasToken()) {
    showStatus("no-token");
    return;
  }
  document.getElementById("dashboard-link").href = "/" + tokenFragment();
  try {
    const whoami = await get("whoami");
    document.getElementById("who").textContent = whoami.source + (whoami.manager ? " (manager)" : "");
    const listed = (await get("workouts", { limit: 100 })).workouts || [];
    const id = new URLSearchParams(location.search).get("id") || (listed[0] && listed[0].id);
    const choose = document.getElementById("choose");
    choose.replaceChildren(...listed.map((workout) =>
      new Option(new Date(workout.start).toLocaleString() + " · " + workout.activity + " · " + (workout.person || workout.device || ""),
        workout.id, false, workout.id === id)));
    choose.addEventListener("change", () => {
      location.href = "/workout?id=" + encodeURIComponent(choose.value) + tokenFragment();
    });
    if (!id) {
      document.getElementById("title").textContent = "No workouts yet";
      return;
    }
    const workout = await get("workouts/heart-rate", { id });
    summaryView(workout);
    curveView(workout, workout.samples || []);
    zonesView(workout.zones);
    lapsView(workout.laps || []);
    document.body.dataset.loaded = "true";
  } catch (error) {
    showError(error);
  }
}

main();
