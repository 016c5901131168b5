// The review page's "label for the estimate" mode and what the mean corrected by labels
// needs: whole samples in the run's fixed random order (stopping anywhere leaves a random
// sample), the complete ones counted, the verdicts a sample still needs marked. Reads the
// page's state and index (review.js).
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

function drawCorrected() {
  const counted = index.estimate.filter((i) => index.random.has(i) && complete(i)).length;
  const lines = state.data.corrected.lines.map((line) => el("p", {}, line));
  const mode = $("estimate").checked
    ? el(
        "p",
        {},
        el("b", {}, "Label for the estimate: "),
        `${counted} complete samples labelled in this order (${state.data.min_labelled} give a corrected mean). `,
        "Label every verdict of each sample in turn; stop anywhere. Labels made in another order ",
        "are kept for calibrate, but do not count for the corrected mean.",
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
