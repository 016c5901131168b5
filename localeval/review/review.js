// The review page: every verdict of the judge on a run, marked right or wrong by keyboard
// or mouse, each label sent to the app (and saved there) as it is made (saving.js). Text
// from the run is only ever set as textContent, never parsed as markup.
"use strict";

const state = {
  data: null, // the run: samples, verdicts, reviewer
  sample: 0, // index into data.samples of the sample shown
  item: 0, // index into that sample's items
};

// what the page knows of the run, indexed once when it loads: a key press reads these and
// redraws only what it changed, whatever the number of samples and labels
const index = {
  items: [], // per sample: its items (verdicts, then judged scores), each with its key
  sampleOf: new Map(), // item key -> index of its sample
  lowest: [], // per sample: its lowest score
  failing: [], // per sample: whether it fails a gate
  mine: new Map(), // item key -> this reviewer's saved label
  others: new Map(), // item key -> the other reviewers' labels
  marked: [], // per sample: how many of its items this reviewer's saved labels mark
  verdicts: 0, // this reviewer's saved labels: of verdicts, of scores
  scores: 0,
  carried: new Map(), // item key -> a label carried over from an earlier run of the sample
  estimate: [], // the samples' indexes in the run's fixed random order
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const fmt = (x, digits = 3) => (typeof x === "number" ? x.toFixed(digits) : "–");
const keyOf = (sampleId, metric, verdict) =>
  JSON.stringify([sampleId, metric, verdict === undefined ? null : verdict]);
const MARK_WORDS = { right: "right", wrong: "wrong", too_high: "too high", too_low: "too low" };
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// --- items and labels --------------------------------------------------------------------

function itemsOf(sample) {
  const items = sample.verdicts.map((v) => ({ kind: "verdict", metric: v.metric, verdict: v.index, v }));
  for (const score of sample.scores) {
    if (score.judged) items.push({ kind: "score", metric: score.metric, verdict: null, score });
  }
  return items.map((item) => ({ ...item, key: keyOf(sample.id, item.metric, item.verdict) }));
}

function lowestScore(sample) {
  const scores = sample.scores.filter((s) => typeof s.score === "number").map((s) => s.score);
  return scores.length ? Math.min(...scores) : Infinity;
}

function indexRun(labels) {
  state.data.samples.forEach((sample, i) => {
    const items = itemsOf(sample);
    index.items.push(items);
    for (const item of items) index.sampleOf.set(item.key, i);
    index.lowest.push(lowestScore(sample));
    index.failing.push(sample.scores.some((s) => s.passes === false));
    index.marked.push(0);
  });
  for (const label of labels) {
    const key = keyOf(label.sample_id, label.metric, label.verdict);
    if (label.reviewer === state.data.reviewer) setMine(key, label);
    else if (index.others.has(key)) index.others.get(key).push(label);
    else index.others.set(key, [label]);
  }
  for (const label of state.data.corrected.carried) {
    index.carried.set(keyOf(label.sample_id, label.metric, label.verdict), label);
  }
  const at = new Map(state.data.samples.map((s, i) => [s.id, i]));
  index.estimate = state.data.estimate_order.map((id) => at.get(id));
}


// this reviewer's saved label of an item (null: none), with the counts that depend on it
function setMine(key, label) {
  const sample = index.sampleOf.get(key);
  const known = sample !== undefined;
  const change = (label ? 1 : 0) - (index.mine.has(key) ? 1 : 0);
  if (label) index.mine.set(key, label);
  else index.mine.delete(key);
  if (!known || !change) return;
  index.marked[sample] += change;
  if (JSON.parse(key)[2] === null) index.scores += change;
  else index.verdicts += change;
}

const finished = (i) => index.items[i].length > 0 && index.marked[i] === index.items[i].length;

// what a label says in the reviewer's words: its mark, or (an imported label) the mark that
// gives the same label on this run
function markOf(label, item) {
  if (!label) return null;
  if (label.mark) return label.mark;
  if (item.kind === "verdict") {
    if (label.label !== 0 && label.label !== 1) return null;
    return (label.label === 1) === item.v.says_yes ? "right" : "wrong";
  }
  const passes = item.score.passes;
  if (label.label >= 0.5) return passes ? "right" : "too_low";
  return passes ? "too_high" : "right";
}

// --- which samples are listed ------------------------------------------------------------

function listed() {
  const category = $("category").value;
  const failing = $("failing").checked;
  const todo = $("todo").checked;
  // the run's fixed random order, whole samples, no filter: a random sample wherever it stops
  if ($("estimate").checked) return index.estimate;
  let order = [];
  state.data.samples.forEach((sample, i) => {
    if (i !== state.sample) {
      // the sample shown stays listed until left
      if (category && sample.category !== category) return;
      if (failing && !index.failing[i]) return;
      if (todo && finished(i)) return;
    }
    order.push(i);
  });
  if ($("lowest").checked) order = order.sort((a, b) => index.lowest[a] - index.lowest[b]);
  return order;
}

// --- drawing -----------------------------------------------------------------------------

// what is on screen: the list's entries (each made once, when first shown), the samples
// listed, the few of them drawn (those in and near the list's view), the sample drawn
const drawn = { entries: [], order: [], shown: [], first: -1, current: -1, sample: -1, rows: [] };
// the height of an entry of the list (fixed in review.css), and entries drawn beyond its view
const list = { row: 0, margin: 12 };

function render() {
  renderList();
  const text = `${index.verdicts} of ${state.data.n_verdicts} verdicts reviewed · ${index.scores} of ${state.data.n_scores} scores`;
  if ($("progress").textContent !== text) $("progress").textContent = text;
  if (drawn.sample !== state.sample) drawSample();
  else updateRows();
  drawCorrected();
}

function entry(i) {
  if (!drawn.entries[i]) {
    const sample = state.data.samples[i];
    const lowest = index.lowest[i] === Infinity ? null : index.lowest[i];
    drawn.entries[i] = el(
      "li",
      { "data-sample": sample.id, onclick: () => show(i, 0) },
      el("div", { class: "id" }, sample.id),
      el(
        "div",
        { class: "sub" },
        `${sample.category || ""} lowest ${fmt(lowest, 2)}`,
        index.failing[i] ? el("span", { class: "fail" }, " · fails a gate") : null,
      ),
    );
  }
  return drawn.entries[i];
}

// the list holds every sample listed, but only those in and near its view are drawn: a
// key press costs the same with 20 samples or 20,000
function renderList() {
  const order = listed();
  const ol = $("samples");
  if (order.length !== drawn.order.length || order.some((i, n) => drawn.order[n] !== i)) {
    drawn.order = order;
    drawn.shown = [];
    ol.style.height = `${order.length * list.row}px`;
    ol.dataset.listed = String(order.length);
  }
  const view = ol.parentElement; // the aside scrolls
  if (drawn.current !== state.sample) {
    // a sample chosen by key or click is brought into the list's view
    drawn.current = state.sample;
    const top = drawn.order.indexOf(state.sample) * list.row;
    if (top < view.scrollTop) view.scrollTop = top;
    else if (top + list.row > view.scrollTop + view.clientHeight) {
      view.scrollTop = top + list.row - view.clientHeight;
    }
  }
  const first = Math.max(0, Math.floor(view.scrollTop / list.row) - list.margin);
  const count = Math.ceil(view.clientHeight / list.row) + 2 * list.margin;
  const shown = drawn.order.slice(first, first + count);
  if (first !== drawn.first || shown.length !== drawn.shown.length || shown.some((i, n) => drawn.shown[n] !== i)) {
    shown.forEach((i, n) => {
      const li = entry(i);
      li.style.top = `${(first + n) * list.row}px`;
      li.setAttribute("aria-posinset", String(first + n + 1));
      li.setAttribute("aria-setsize", String(order.length));
    });
    ol.replaceChildren(...shown.map(entry));
    drawn.shown = shown;
    drawn.first = first;
  }
  for (const i of shown) {
    const wanted = [i === state.sample ? "current" : "", finished(i) ? "done" : ""].join(" ").trim();
    if (drawn.entries[i].className !== wanted) drawn.entries[i].className = wanted;
  }
}

function marksFor(item) {
  const choices = item.kind === "verdict" ? ["right", "wrong"] : ["too_high", "right", "too_low"];
  const keys = { right: "r", wrong: "w", too_high: "h", too_low: "l" };
  return el(
    "td",
    { class: "marks" },
    choices.map((choice) =>
      el(
        "button",
        {
          type: "button",
          class: choice,
          "data-mark": choice,
          "aria-pressed": "false",
          title: `${MARK_WORDS[choice]} (${keys[choice]})`,
          onclick: (event) => {
            event.stopPropagation();
            label(item, choice);
          },
        },
        MARK_WORDS[choice],
      ),
    ),
  );
}

function othersNote(list, item) {
  if (!list || !list.length) return null;
  const words = list.map((l) => `${l.reviewer}: ${MARK_WORDS[markOf(l, item)] || l.label}`);
  return el("div", { class: "others" }, `also labelled by ${words.join(", ")}`);
}

function rowOf(item, n) {
  const attrs = {
    class: "item",
    "data-item": item.key,
    onclick: () => {
      state.item = n;
      render();
    },
  };
  const others = othersNote(index.others.get(item.key), item);
  if (item.kind === "verdict") {
    const carried = index.carried.get(item.key);
    // shown by updateRows while the sample has other verdicts labelled and not this one
    const note = carried
      ? el("div", { class: "carried" }, `labelled in ${carried.source} (the same statement against the same text)`)
      : el("div", { class: "missing", hidden: true }, "needs a label: the sample counts for the corrected mean only with every verdict labelled");
    const v = item.v;
    const said = el("span", { class: v.says_yes ? "yes" : "no" }, v.says_yes ? "yes" : "no");
    return el(
      "tr",
      attrs,
      el("td", {}, v.metric),
      el(
        "td",
        {},
        el("div", { class: "text" }, `${v.noun}: `, el("b", {}, v.text)),
        v.rests_on ? el("div", { class: "rests" }, "rests on: ", el("q", {}, v.rests_on)) : null,
        others,
        note,
      ),
      el("td", { class: "said" }, `${v.question} `, said),
      el("td", { class: "num", title: `raw P(yes) ${fmt(v.raw)}` }, fmt(v.probability)),
      marksFor(item),
    );
  }
  const s = item.score;
  return el(
    "tr",
    attrs,
    el("td", {}, s.metric),
    el("td", {}, el("b", {}, "the sample's score"), others),
    el(
      "td",
      { class: "said" },
      s.gate === null ? "no gate" : `gate ${fmt(s.gate, 2)} `,
      s.passes === null ? null : el("span", { class: s.passes ? "pass" : "fail" }, s.passes ? "passes" : "fails"),
    ),
    el("td", { class: "num" }, fmt(s.score)),
    marksFor(item),
  );
}

// each row's focus and mark: the saved label's, or a label not saved yet (marked so)
function updateRows() {
  const items = index.items[state.sample];
  drawn.rows.forEach((row, n) => {
    const item = items[n];
    const unsaved = unsavedMark(item.key);
    const mark = unsaved || markOf(index.mine.get(item.key), item) || "";
    row.className = `item${n === state.item ? " focused" : ""}${unsaved ? " unsaved" : ""}`;
    row.dataset.state = mark;
    if (unsaved) row.dataset.unsaved = "true";
    else delete row.dataset.unsaved;
    row.title = unsaved ? "not saved yet" : "";
    const needs = row.querySelector(".missing");
    if (needs) needs.hidden = Boolean(unsaved) || labelled(item.key) || !missing(state.sample);
    for (const button of row.querySelectorAll(".marks button")) {
      button.setAttribute("aria-pressed", String(button.dataset.mark === mark));
    }
  });
  const focused = drawn.rows[state.item];
  if (focused) focused.scrollIntoView({ block: "nearest" });
}

function drawSample() {
  const main = $("sample");
  const sample = state.data.samples[state.sample];
  const items = index.items[state.sample];
  const part = (title, text) =>
    typeof text === "string" ? [el("h3", {}, title), el("div", { class: "text" }, text)] : [];
  const texts = el(
    "div",
    { class: "texts" },
    el("div", {}, part("Question", sample.question), part("Answer", sample.answer), part("Reference answer", sample.reference_answer)),
    el(
      "div",
      {},
      el("h3", {}, "Contexts"),
      el("ol", { class: "chunks" }, sample.contexts.map((c) => el("li", { class: "text" }, c))),
    ),
  );
  drawn.rows = items.map(rowOf);
  drawn.sample = state.sample;
  const scores = sample.scores.map((s) =>
    el(
      "span",
      { class: s.passes === false ? "fail" : "" },
      `${s.metric} ${fmt(s.score)}${s.undefined_reason ? ` (undefined: ${s.undefined_reason})` : ""}   `,
    ),
  );
  main.replaceChildren(
    el("h2", {}, `${sample.id}`, sample.category ? el("span", { class: "muted" }, ` · ${sample.category}`) : null),
    el("div", {}, scores),
    texts,
    el("h3", {}, "The judge's verdicts and the scores they make"),
    items.length
      ? el(
          "table",
          { class: "verdicts" },
          el("tr", {}, ["metric", "what was judged", "the judge said", "P(yes)", "your label"].map((h) => el("th", {}, h))),
          drawn.rows,
        )
      : el("p", { class: "muted" }, "The judge gave no verdict on this sample."),
  );
  updateRows();
}

// --- navigating --------------------------------------------------------------------------

function show(sampleIndex, itemIndex) {
  state.sample = sampleIndex;
  state.item = itemIndex;
  render();
  window.scrollTo({ top: 0 });
}

function step(delta) {
  const next = state.item + delta;
  if (next >= 0 && next < index.items[state.sample].length) {
    state.item = next;
    render();
  } else {
    moveSample(delta, delta > 0 ? 0 : -1);
  }
}

function moveSample(delta, item) {
  const order = listed();
  const target = order[order.indexOf(state.sample) + delta];
  if (target === undefined) return;
  const count = index.items[target].length;
  show(target, item < 0 ? Math.max(0, count - 1) : 0);
}

function toggle(id) {
  $(id).checked = !$(id).checked;
  if (id === "estimate") startEstimate();
  else render();
}


// --- keys and start ----------------------------------------------------------------------

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName) && event.key !== "Escape") {
    if (event.target.type !== "checkbox") return;
  }
  const item = index.items[state.sample][state.item];
  const marks = { r: "right", w: "wrong", h: "too_high", l: "too_low" };
  const actions = {
    j: () => step(1),
    ArrowDown: () => step(1),
    k: () => step(-1),
    ArrowUp: () => step(-1),
    n: () => moveSample(1, 0),
    ArrowRight: () => moveSample(1, 0),
    p: () => moveSample(-1, 0),
    ArrowLeft: () => moveSample(-1, 0),
    u: undo,
    f: () => toggle("failing"),
    t: () => toggle("todo"),
    s: () => toggle("lowest"),
    e: () => toggle("estimate"),
    "?": () => ($("help").hidden = !$("help").hidden),
    Escape: () => ($("help").hidden = true),
  };
  if (marks[event.key] && item) {
    event.preventDefault();
    label(item, marks[event.key]);
  } else if (actions[event.key]) {
    event.preventDefault();
    actions[event.key]();
  }
}

async function start() {
  try {
    const response = await fetch("/api/run");
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    state.data = data;
    indexRun(data.labels);
  } catch (error) {
    showStatus(`cannot load the run: ${error.message}`);
    $("status").className = "status error";
    return;
  }
  const categories = [...new Set(state.data.samples.map((s) => s.category).filter(Boolean))].sort();
  for (const c of categories) $("category").append(el("option", { value: c }, c));
  for (const id of ["category", "failing", "todo", "lowest", "estimate"]) {
    // a filter set by mouse gives the keys back to the page
    $(id).addEventListener("change", (event) => {
      event.target.blur();
      if (id === "estimate") startEstimate();
      else render();
    });
  }
  $("undo").addEventListener("click", undo);
  $("help-button").addEventListener("click", () => ($("help").hidden = !$("help").hidden));
  document.addEventListener("keydown", onKey);
  // the list's entries that scroll into view are drawn before the next frame
  let scrolled = false;
  $("samples").parentElement.addEventListener(
    "scroll",
    () => {
      if (scrolled) return;
      scrolled = true;
      requestAnimationFrame(() => {
        scrolled = false;
        renderList();
      });
    },
    { passive: true },
  );
  window.addEventListener("resize", renderList);
  $("samples").append(entry(0));
  list.row = entry(0).getBoundingClientRect().height || 46;
  // leaving with labels not saved yet: the browser asks first
  window.addEventListener("beforeunload", (event) => {
    if (outbox.length) event.preventDefault();
  });
  render();
  document.body.dataset.ready = "true";
}

start();
