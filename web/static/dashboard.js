// The dashboard (/) and the group view (/?view=group): a tile per strap, live.

import { allSamples, follow, get, hasToken, tokenFragment } from "./api.js";
import { showError, showStatus } from "./status.js";
import { TileBoard } from "./tiles.js";
import { useSettings } from "./zones.js";
import { showRequests } from "./requests.js";
import { ClassBar } from "./classbar.js";

const params = new URLSearchParams(location.search);
const group = params.get("view") === "group";
document.body.classList.toggle("group", group);
document.title = group ? "hrmd — group" : "hrmd — heart rate";

function fitGroupGrid() {
  // Columns and rows that make the tiles as large as they can be on this screen.
  const grid = document.getElementById("tiles");
  const count = Math.max(1, grid.children.length);
  const width = grid.clientWidth || window.innerWidth;
  const height = grid.clientHeight || window.innerHeight;
  let best = { columns: 1, size: 0 };
  for (let columns = 1; columns <= count; columns++) {
    const rows = Math.ceil(count / columns);
    const tileWidth = width / columns;
    const tileHeight = height / rows;
    const size = Math.min(tileWidth, tileHeight * 1.6); // tiles read best a little wider than tall
    if (size > best.size) best = { columns, rows, size };
  }
  grid.style.setProperty("--columns", String(best.columns));
  grid.style.setProperty("--rows", String(best.rows));
  // the digits scale with the tile: half its height, or 36 % of its width (three digits fit)
  const tileHeight = height / best.rows;
  const tileWidth = width / best.columns;
  grid.style.setProperty("--digits", Math.floor(Math.min(tileHeight * 0.5, tileWidth * 0.36)) + "px");
}

async function main() {
  if (!hasToken()) {
    showStatus("no-token");
    return;
  }
  const dayLink = document.getElementById("day-link");
  if (dayLink) dayLink.href = "/day" + tokenFragment();
  const workoutLink = document.getElementById("workout-link");
  if (workoutLink) workoutLink.href = "/workout" + tokenFragment();

  let whoami;
  try {
    whoami = await get("whoami");
    useSettings(await get("settings"));
  } catch (error) {
    showError(error);
    if (error.status === 0) setTimeout(main, 5000); // try again while the server is away
    return;
  }
  const who = document.getElementById("who");
  if (who) who.textContent = whoami.source + (whoami.manager ? " (manager)" : "");

  const board = new TileBoard(document.getElementById("tiles"), (device) => {
    // the last ten minutes once, for the trend; live samples follow
    allSamples({ type: "heart-rate", device, since: "10m", limit: 1000 }, 5)
      .then((samples) => board.backfill(device, samples))
      .catch(() => {});
  });
  if (group) {
    new ClassBar(document.body, board);
    fitGroupGrid();
    document.addEventListener("tiles-changed", fitGroupGrid);
    window.addEventListener("resize", fitGroupGrid);
  }

  let requests = null;
  if (whoami.manager && !group) requests = showRequests(document.getElementById("requests-strip"));

  const live = follow({
    sample: (sample) => {
      if (sample.type === "heart-rate") board.sample(sample);
    },
    state: (state) => board.sensorState(state),
    workout: (workout) => board.workout(workout),
    event: (event) => board.event(event),
    status: (kind, message) => {
      showStatus(kind, message);
      if (kind === "rejected" || kind === "forbidden") {
        board.stop();
        board.update();
        if (requests) requests.stop();
        document.body.classList.add("ended");
      }
    },
  });
  window.addEventListener("pagehide", () => live.stop());
}

main();
