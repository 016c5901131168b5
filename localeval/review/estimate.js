// The review page's "label for the estimate" mode and what the mean corrected by labels
// needs: whole samples in the run's fixed random order (stopping anywhere leaves a random
// sample), the complete ones counted, the verdicts a sample still needs marked. Reads the
// page's state and index (review.js). The corrected means themselves are the app's
// (GET /api/corrected): the formula lives in Python only, and the page asks again as labels
// are saved.
"use strict";

// whether a verdict has a label of anyone's, made on this run or carried over to it
const labelled = (key) => index.mine.has(key) || index.others.has(key) || index.carried.has(key);

// every verdict of the sample labelled: the sample has a person's value for the estimate
function complete(i) {
  const verdicts = index.items[i].filter((item) => item.kind === "verdict");
  return verdicts.length > 0 && verdicts.every((item) => labelled(item.key));
}

// the verdicts still to label of a sample that has some labelled: what the estimate needs
function missing(i) {
  const verdicts = index.items[i].filter((item) => item.kind === "verdict");
  const done = verdicts.filter((item) => labelled(item.key)).length;
  return done ? verdicts.length - done : 0;
}

// the samples from the start of the estimate order with every verdict labelled, up to the
// first one without (samples without verdicts passed over): those the estimate counts
function completeStart() {
  let counted = 0;
  for (const i of index.estimate) {
    if (!index.items[i].some((item) => item.kind === "verdict")) continue;
    if (!complete(i)) break;
    counted += 1;
  }
  return counted;
}

function drawCorrected() {
  const counted = completeStart();
  const lines = state.data.corrected.lines.map((line) => el("p", {}, line));
  const mode = $("estimate").checked
    ? el(
        "p",
        {},
        el("b", {}, "Label for the estimate: "),
        `${counted} complete samples from the start of this order (${state.data.min_labelled} give a corrected mean). `,
        "Label every verdict of each sample in turn, skipping none; stop anywhere. Samples ",
        "labelled elsewhere count only where this order reaches them.",
      )
    : null;
  $("corrected").replaceChildren(mode, ...lines);
}

// the estimate's order starts at its first sample not yet complete
function startEstimate() {
  if (!$("estimate").checked) return render();
  const next = index.estimate.find((i) => !complete(i));
  show(next === undefined ? index.estimate[0] : next, 0);
}

// one request for the corrected lines at a time; changes saved meanwhile ask once more after
// it. body[data-corrected] holds the number of saves the lines shown take in (tests wait on it)
const correcting = { busy: false, again: false };

async function refreshCorrected() {
  if (correcting.busy) {
    correcting.again = true;
    return;
  }
  correcting.busy = true;
  const saves = document.body.dataset.saves || "0";
  try {
    const response = await fetch("/api/corrected");
    const data = await response.json();
    if (response.ok) {
      state.data.corrected.lines = data.lines;
      drawCorrected();
      document.body.dataset.corrected = saves;
    }
  } catch {
    // the server is gone: the lines stay as they were, and the status line says why
  }
  correcting.busy = false;
  if (correcting.again) {
    correcting.again = false;
    refreshCorrected();
  }
}
