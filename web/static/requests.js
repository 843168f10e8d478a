// The strip of pending authorization requests, for a manager's token: who asks for what, and
// the command that answers.

import { get } from "./api.js";

function commandFor(request) {
  return "hrmctl auth grant " + request.source + " " + request.type + (request.access === "read" ? " --read" : "");
}

export function showRequests(strip) {
  let timer = null;
  async function refresh() {
    try {
      const answer = await get("authorization/requests");
      const requests = answer.requests || [];
      const list = strip.querySelector("ul");
      list.replaceChildren();
      for (const request of requests) {
        const item = document.createElement("li");
        item.className = "request";
        const what = document.createElement("span");
        what.textContent = request.source + (request.verified ? " (verified)" : "") + " asks to " + (request.access === "read" ? "read " : "store ") + request.type;
        const command = document.createElement("code");
        command.textContent = commandFor(request);
        item.append(what, command);
        list.append(item);
      }
      strip.hidden = requests.length === 0;
      strip.dataset.count = String(requests.length);
    } catch (error) {
      strip.hidden = true;
      if (error.status === 401 || error.status === 403) return; // final: the status line says so
    }
    timer = setTimeout(refresh, 30000);
  }
  refresh();
  return { stop: () => clearTimeout(timer) };
}
