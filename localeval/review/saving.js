// The review page's labels on their way to the app: each label and undo is kept here until
// the app has saved it, sent one at a time in the order made; the first is sent again and
// again while the database is busy (or the server does not answer), so nothing is lost and
// nothing is said to be saved before it is. Loaded before review.js, whose functions it calls.
"use strict";

// labels and undos not saved yet, in the order they were made
const outbox = [];
const sending = { busy: false, failures: 0, error: "", refused: [], timer: null };

// the mark a label not saved yet gives the item, if any (the latest one made)
function unsavedMark(key) {
  for (let n = outbox.length - 1; n >= 0; n -= 1) {
    if (outbox[n].kind === "label" && outbox[n].key === key) return outbox[n].body.mark;
  }
  return null;
}

// the app said no to this change: sending it again would not help
class Refused extends Error {}

async function post(path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch {
    throw new Error("the review server does not answer (is it still running?)");
  }
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (response.ok) return data;
  const message = data.error || `HTTP ${response.status}`;
  // 503: the database is busy; 408, 429: the server is; anything else of 4xx stays so
  if (response.status < 500 && ![408, 429].includes(response.status)) throw new Refused(message);
  throw new Error(message);
}

// the status line says "saved" only when every change made has been saved
function showStatus(said = "saved") {
  const labels = outbox.filter((change) => change.kind === "label").length;
  const undos = outbox.length - labels;
  const waiting = [labels && plural(labels, "label"), undos && plural(undos, "undo")].filter(Boolean).join(" and ");
  let text = said;
  if (outbox.length && sending.error) text = `${waiting} not saved yet: ${sending.error}; trying again`;
  else if (outbox.length) text = `saving ${waiting}…`;
  if (sending.refused.length) text += ` · not saved: ${sending.refused.join("; ")}`;
  $("status").textContent = text;
  $("status").className = (outbox.length && sending.error) || sending.refused.length ? "status error" : "status";
}

function send() {
  if (sending.busy || sending.timer !== null || !outbox.length) return;
  sending.busy = true;
  const change = outbox[0];
  post(change.kind === "label" ? "/api/labels" : "/api/undo", change.body).then(
    (data) => {
      sending.busy = false;
      sending.failures = 0;
      sending.error = "";
      outbox.shift();
      document.body.dataset.saves = String(Number(document.body.dataset.saves || 0) + 1);
      if (change.kind === "label") {
        setMine(change.key, data.saved);
        render();
        showStatus();
      } else undone(data);
      // every change saved: the corrected means as the labels now make them (estimate.js)
      if (!outbox.length) refreshCorrected();
      send();
    },
    (error) => {
      sending.busy = false;
      if (error instanceof Refused) {
        outbox.shift();
        sending.refused.push(`${change.kind === "label" ? change.body.metric : "undo"}: ${error.message}`);
        render();
        showStatus();
        send();
        return;
      }
      // 1, 2, 4 s, then every 5 s, for as long as the page is open
      sending.failures += 1;
      sending.error = error.message;
      showStatus();
      sending.timer = setTimeout(() => {
        sending.timer = null;
        send();
      }, Math.min(5000, 500 * 2 ** sending.failures));
    },
  );
}

function label(item, mark) {
  if (item.kind === "verdict" && !["right", "wrong"].includes(mark)) return;
  if (item.kind === "score" && !["too_high", "right", "too_low"].includes(mark)) return;
  const body = { sample_id: state.data.samples[state.sample].id, metric: item.metric, verdict: item.verdict, mark };
  outbox.push({ kind: "label", key: item.key, body });
  if (index.items[state.sample].findIndex((i) => i.key === item.key) === state.item) step(1);
  else render();
  showStatus();
  send();
}

function showItem(key) {
  const at = index.sampleOf.get(key);
  if (at !== undefined) show(at, Math.max(0, index.items[at].findIndex((i) => i.key === key)));
}

function undo() {
  const last = outbox[outbox.length - 1];
  const inFlight = sending.busy && outbox.length === 1;
  if (last && last.kind === "label" && !inFlight) {
    // not saved yet: taken back here, the app never hears of it
    outbox.pop();
    showItem(last.key);
    showStatus(`undone: ${last.body.metric} ${MARK_WORDS[last.body.mark]} (it was not saved yet)`);
    return;
  }
  outbox.push({ kind: "undo", body: {} });
  showStatus();
  send();
}

function undone(data) {
  const u = data.undone;
  if (!u) {
    render();
    showStatus("nothing to undo");
    return;
  }
  const key = keyOf(u.sample_id, u.metric, u.verdict);
  setMine(key, data.current);
  showItem(key);
  showStatus(`undone: ${u.metric} ${MARK_WORDS[u.mark] || u.label}`);
}
