// A trend line of the last minutes drawn on a canvas, each stretch in its zone's colour.

import { ZONE_COLOURS, zoneOf } from "./zones.js";

export const WINDOW_MS = 10 * 60 * 1000;

export class Sparkline {
  constructor(canvas) {
    this.canvas = canvas;
    this.points = []; // [time in ms, bpm], oldest first
    this.max = 190;
    // one colour for the whole line (the group view's tiles are already in their zone's colour)
    this.colour = document.body.classList.contains("group") ? "rgba(255, 255, 255, 0.8)" : null;
  }

  add(time, bpm) {
    const last = this.points[this.points.length - 1];
    if (last && time <= last[0]) {
      if (time === last[0]) return;
      // out of order (a backfill after live samples): insert in place
      const index = this.points.findIndex((point) => point[0] >= time);
      if (this.points[index][0] !== time) this.points.splice(index, 0, [time, bpm]);
      return;
    }
    this.points.push([time, bpm]);
  }

  draw(now) {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) return;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const context = canvas.getContext("2d");
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    const start = now - WINDOW_MS;
    while (this.points.length > 1 && this.points[1][0] < start) this.points.shift();
    // one point per two pixels: the average of the readings in its stretch of time
    const stretch = WINDOW_MS / Math.max(1, width / 2);
    const points = [];
    let sum = 0;
    let count = 0;
    let bin = null;
    for (const [time, bpm] of this.points) {
      if (time < start - 5000) continue;
      const index = Math.floor((time - start) / stretch);
      if (index !== bin && count) {
        points.push([start + (bin + 0.5) * stretch, sum / count]);
        sum = 0;
        count = 0;
      }
      bin = index;
      sum += bpm;
      count += 1;
    }
    if (count) points.push([start + (bin + 0.5) * stretch, sum / count]);
    if (points.length < 2) return;
    let low = Infinity;
    let high = -Infinity;
    for (const [, bpm] of points) {
      low = Math.min(low, bpm);
      high = Math.max(high, bpm);
    }
    const middle = (low + high) / 2;
    const span = Math.max(high - low, 20) / 2 + 3;
    low = middle - span;
    high = middle + span;
    const x = (time) => ((time - start) / WINDOW_MS) * width;
    const y = (bpm) => height - 2 - ((bpm - low) / (high - low)) * (height - 4);
    context.lineWidth = 2.5;
    context.lineJoin = "round";
    context.lineCap = "round";
    for (let i = 1; i < points.length; i++) {
      const [t0, b0] = points[i - 1];
      const [t1, b1] = points[i];
      if (t1 - t0 > Math.max(15000, 2.5 * stretch)) continue; // no line across a gap in the readings
      context.strokeStyle = this.colour || ZONE_COLOURS[zoneOf(b1, this.max)];
      context.beginPath();
      context.moveTo(x(t0), y(b0));
      context.lineTo(x(t1), y(b1));
      context.stroke();
    }
  }
}
