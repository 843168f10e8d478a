// The stream overlay (/overlay?device=ID): the newest heart rate of one strap, live. Without
// device=, the first strap that sends a sample.

import { follow, get, hasToken, serverClockOffset } from "./api.js";
import { showError, showStatus } from "./status.js";
import { deviceKey, STALE_MS } from "./tiles.js";
import { maxFor, useSettings, zoneOf } from "./zones.js";

const overlay = document.getElementById("overlay");
const digits = document.getElementById("bpm");
let device = new URLSearchParams(location.search).get("device");
let lastTime = 0;

function refresh() {
  const stale = !lastTime || Date.now() + serverClockOffset - lastTime > STALE_MS;
  overlay.classList.toggle("stale", stale);
}

function sample(sample) {
  if (sample.type !== "heart-rate") return;
  const key = deviceKey(sample);
  if (!device) device = key;
  if (key !== device) return;
  const time = Date.parse(sample.end || sample.start);
  if (time < lastTime) return;
  lastTime = time;
  const value = Math.round(Number(sample.value));
  digits.textContent = String(value);
  overlay.dataset.zone = String(zoneOf(value, maxFor(device)));
  overlay.style.setProperty("--beat", (60 / Math.max(30, value)).toFixed(3) + "s");
  refresh();
}

async function main() {
  if (!hasToken()) {
    showStatus("no-token");
    return;
  }
  try {
    useSettings(await get("settings"));
  } catch (error) {
    showError(error);
    if (error.status === 0) setTimeout(main, 5000);
    return;
  }
  const timer = setInterval(refresh, 1000);
  follow({
    sample,
    status: (kind, message) => {
      // the overlay stays quiet while it reconnects; a rejected token is said
      if (kind === "rejected" || kind === "forbidden") {
        clearInterval(timer);
        showStatus(kind, message);
        overlay.classList.add("stale");
      } else if (kind === "live") {
        showStatus("ok");
      } else if (kind === "unreachable" && !lastTime) {
        showStatus(kind, message);
      }
    },
  });
}

main();
