// The group view's class controls: start a workout on every strap on screen, a lap, pause and
// resume, end the class; and the class timer (from the earliest start of the open workouts).
// The buttons call POST /api/v1/workouts/start|event|end for each strap; what the store
// refuses (a token that may not share workouts, a strap with a workout already) is said in the
// status line. The workouts themselves come back on the live stream, so every screen showing
// the class follows it.

import { post } from "./api.js";
import { showError } from "./status.js";
import { clock, element } from "./tiles.js";

const ACTIVITIES = ["cycling", "rowing", "running", "hiit", "strength-training", "yoga", "other"];

export class ClassBar {
  // BOARD is the page's TileBoard: its devices and their open workouts.
  constructor(container, board) {
    this.board = board;
    this.node = element("section", "classbar");
    this.node.setAttribute("aria-label", "class");
    this.activity = element("select", "activity");
    for (const name of ACTIVITIES) this.activity.append(new Option(name, name));
    this.start = this.button("start", "Start class", () => this.startClass());
    this.lap = this.button("lap", "Lap", () => this.event("lap"));
    this.pause = this.button("pause", "Pause", () => this.event(this.paused() ? "resume" : "pause"));
    this.end = this.button("end", "End class", () => this.endClass());
    this.timer = element("span", "class-timer", "");
    this.node.append(this.activity, this.start, this.lap, this.pause, this.end, this.timer);
    container.prepend(this.node);
    this.interval = setInterval(() => this.update(), 1000);
    this.update();
  }

  button(name, label, action) {
    const node = element("button", "class-" + name, label);
    node.type = "button";
    node.addEventListener("click", async () => {
      node.disabled = true;
      try {
        await action();
      } finally {
        node.disabled = false;
        this.update();
      }
    });
    return node;
  }

  open() {
    return this.board.openWorkouts();
  }

  paused() {
    const open = this.open();
    return open.length > 0 && open.every((workout) => workout.paused);
  }

  // Calls REQUEST for each item, one after the other; the first refusal is said.
  async each(items, request) {
    let failure = null;
    for (const item of items) {
      try {
        this.board.workout(await request(item));
      } catch (error) {
        failure = failure || error;
      }
    }
    if (failure) showError(failure);
  }

  async startClass() {
    const busy = new Set(this.open().map((workout) => workout.device));
    const devices = this.board.devices().filter((device) => !busy.has(device));
    await this.each(devices, (device) => post("workouts/start", { device, activity: this.activity.value }));
  }

  async event(type) {
    await this.each(this.open(), (workout) => post("workouts/event", { id: workout.id, type }));
  }

  async endClass() {
    await this.each(this.open(), (workout) => post("workouts/end", { id: workout.id }));
  }

  update() {
    const open = this.open();
    this.node.dataset.running = String(open.length > 0);
    this.lap.disabled = this.pause.disabled = this.end.disabled = open.length === 0;
    this.pause.textContent = this.paused() ? "Resume" : "Pause";
    const first = open.reduce((earliest, workout) => Math.min(earliest, workout.startTime), Infinity);
    this.timer.textContent = open.length ? clock(this.board.now() / 1000 - first / 1000) : "";
  }
}
