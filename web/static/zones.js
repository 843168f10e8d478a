// Heart-rate zones from the maximum heart rate: zone 1 is 50–60 % of the maximum, 2 60–70 %,
// 3 70–80 %, 4 80–90 %, 5 90 % and above; below 50 % is zone 0 (neutral).

export const DEFAULT_MAX = 190;

// Zone colours, 0 (neutral) to 5; style.css uses the same through --zone-N.
export const ZONE_COLOURS = ["#c9d1d9", "#8aa4bd", "#3d8ef2", "#33b864", "#f59f1c", "#ef4040"];
export const ZONE_NAMES = ["rest", "zone 1", "zone 2", "zone 3", "zone 4", "zone 5"];

let settings = { maxHeartRate: DEFAULT_MAX, devices: {} };

export function useSettings(value) {
  if (value && typeof value === "object") {
    settings = {
      maxHeartRate: Number(value.maxHeartRate) || DEFAULT_MAX,
      devices: value.devices || {},
    };
  }
}

// The maximum heart rate of a device: its own when configured, else the default.
export function maxFor(device) {
  const own = device && settings.devices[device] && Number(settings.devices[device].maxHeartRate);
  return own || settings.maxHeartRate;
}

export function zoneOf(bpm, max) {
  if (!(bpm > 0) || !(max > 0)) return 0;
  const fraction = bpm / max;
  if (fraction < 0.5) return 0;
  return Math.min(5, Math.floor((fraction - 0.5) * 10 + 1e-9) + 1);
}

// The lower bound in count/min of each zone 1…5 for a maximum.
export function zoneBounds(max) {
  return [1, 2, 3, 4, 5].map((zone) => ({ zone, lower: Math.round(max * (0.4 + zone / 10)), upper: Math.round(max * (0.5 + zone / 10)) }));
}
