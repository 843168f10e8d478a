// The page's one-line status: no token, token rejected, server unreachable, or nothing.
// The line is the element #status; its data-state says which (tests read it).

const MESSAGES = {
  "no-token": "No token: open this page with #token=… at the end of its address (hrmctl auth token create USER/APP)",
  rejected: "Token rejected",
  forbidden: "Not allowed",
  unreachable: "Server unreachable",
  reconnecting: "Connection lost",
  error: "Server error",
};

export function showStatus(state, detail) {
  const line = document.getElementById("status");
  if (!line) return;
  if (!state || state === "ok" || state === "live") {
    line.hidden = true;
    line.dataset.state = "ok";
    line.textContent = "";
    document.body.dataset.connection = "ok";
    return;
  }
  let text = MESSAGES[state] || state;
  if (detail && state !== "no-token") text += ": " + detail;
  line.textContent = text;
  line.dataset.state = state;
  line.hidden = false;
  document.body.dataset.connection = state;
}

// Shows an ApiError (or any error) thrown by api.get.
export function showError(error) {
  if (error && error.status === 401) showStatus("rejected", error.message);
  else if (error && error.status === 403) showStatus("forbidden", error.message);
  else if (error && error.status === 0) showStatus("unreachable", "retrying");
  else showStatus("error", error && error.message ? error.message : String(error));
}
