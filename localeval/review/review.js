// The review page: every verdict of the judge on a run, marked right or wrong by keyboard
// or mouse, each label sent to the app (and saved there) as it is made. Text from the run
// is only ever set as textContent, never parsed as markup.
"use strict";

const state = {
  data: null, // the run: samples, verdicts, reviewer
  labels: [], // every reviewer's current label of each item
  sample: 0, // index into data.samples of the sample shown
  item: 0, // index into that sample's items
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

// --- items and labels --------------------------------------------------------------------

function itemsOf(sample) {
  const items = sample.verdicts.map((v) => ({ kind: "verdict", metric: v.metric, verdict: v.index, v }));
  for (const score of sample.scores) {
    if (score.judged) items.push({ kind: "score", metric: score.metric, verdict: null, score });
  }
  return items.map((item) => ({ ...item, key: keyOf(sample.id, item.metric, item.verdict) }));
}

function labelIndex() {
  const mine = new Map();
  const others = new Map();
  for (const label of state.labels) {
    const key = keyOf(label.sample_id, label.metric, label.verdict);
    if (label.reviewer === state.data.reviewer) mine.set(key, label);
    else others.set(key, [...(others.get(key) || []), label]);
  }
  return { mine, others };
}

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

function lowestScore(sample) {
  const scores = sample.scores.filter((s) => typeof s.score === "number").map((s) => s.score);
  return scores.length ? Math.min(...scores) : Infinity;
}

function listed() {
  const { mine } = labelIndex();
  const category = $("category").value;
  let order = state.data.samples.map((_, i) => i).filter((i) => {
    const sample = state.data.samples[i];
    if (i === state.sample) return true; // the sample shown stays listed until left
    if (category && sample.category !== category) return false;
    if ($("failing").checked && !sample.scores.some((s) => s.passes === false)) return false;
    if ($("todo").checked && itemsOf(sample).every((item) => mine.has(item.key))) return false;
    return true;
  });
  if ($("lowest").checked) {
    order = order.sort((a, b) => lowestScore(state.data.samples[a]) - lowestScore(state.data.samples[b]));
  }
  return order;
}

// --- drawing -----------------------------------------------------------------------------

function render() {
  const { mine, others } = labelIndex();
  const run = state.data.run;
  $("run").textContent = `run ${run.id} · ${run.dataset || ""} · judge ${run.judge || "–"} · reviewing as ${state.data.reviewer}`;
  let verdicts = 0;
  let scores = 0;
  for (const sample of state.data.samples) {
    for (const item of itemsOf(sample)) {
      if (!mine.has(item.key)) continue;
      if (item.kind === "verdict") verdicts += 1;
      else scores += 1;
    }
  }
  $("progress").textContent =
    `${verdicts} of ${state.data.n_verdicts} verdicts reviewed · ${scores} of ${state.data.n_scores} scores`;
  renderList(mine);
  renderSample(mine, others);
}

function renderList(mine) {
  const list = $("samples");
  list.replaceChildren();
  for (const i of listed()) {
    const sample = state.data.samples[i];
    const items = itemsOf(sample);
    const done = items.length > 0 && items.every((item) => mine.has(item.key));
    const failing = sample.scores.some((s) => s.passes === false);
    list.append(
      el(
        "li",
        {
          class: [i === state.sample ? "current" : "", done ? "done" : ""].join(" ").trim() || null,
          "data-sample": sample.id,
          onclick: () => show(i, 0),
        },
        el("div", { class: "id" }, sample.id),
        el(
          "div",
          { class: "sub" },
          `${sample.category || ""} lowest ${fmt(lowestScore(sample) === Infinity ? null : lowestScore(sample), 2)}`,
          failing ? el("span", { class: "fail" }, " · fails a gate") : null,
        ),
      ),
    );
  }
}

function marksFor(item, mark) {
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
          "aria-pressed": String(mark === choice),
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

function renderSample(mine, others) {
  const main = $("sample");
  const sample = state.data.samples[state.sample];
  const items = itemsOf(sample);
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
  const rows = items.map((item, n) => {
    const mark = markOf(mine.get(item.key), item);
    const attrs = {
      class: `item${n === state.item ? " focused" : ""}`,
      "data-item": item.key,
      "data-state": mark || "",
      onclick: () => {
        state.item = n;
        render();
      },
    };
    if (item.kind === "verdict") {
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
          othersNote(others.get(item.key), item),
        ),
        el("td", { class: "said" }, `${v.question} `, said),
        el("td", { class: "num", title: `raw P(yes) ${fmt(v.raw)}` }, fmt(v.probability)),
        marksFor(item, mark),
      );
    }
    const s = item.score;
    return el(
      "tr",
      attrs,
      el("td", {}, s.metric),
      el("td", {}, el("b", {}, "the sample's score"), othersNote(others.get(item.key), item)),
      el(
        "td",
        { class: "said" },
        s.gate === null ? "no gate" : `gate ${fmt(s.gate, 2)} `,
        s.passes === null ? null : el("span", { class: s.passes ? "pass" : "fail" }, s.passes ? "passes" : "fails"),
      ),
      el("td", { class: "num" }, fmt(s.score)),
      marksFor(item, mark),
    );
  });
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
          rows,
        )
      : el("p", { class: "muted" }, "The judge gave no verdict on this sample."),
  );
  const focused = main.querySelector("tr.focused");
  if (focused) focused.scrollIntoView({ block: "nearest" });
}

// --- acting ------------------------------------------------------------------------------

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "status error" : "status";
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function show(sampleIndex, itemIndex) {
  state.sample = sampleIndex;
  state.item = itemIndex;
  render();
  window.scrollTo({ top: 0 });
}

function step(delta) {
  const items = itemsOf(state.data.samples[state.sample]);
  const next = state.item + delta;
  if (next >= 0 && next < items.length) {
    state.item = next;
    render();
  } else {
    moveSample(delta, delta > 0 ? 0 : -1);
  }
}

function moveSample(delta, item) {
  const order = listed();
  const at = order.indexOf(state.sample);
  const target = order[at + delta];
  if (target === undefined) return;
  const count = itemsOf(state.data.samples[target]).length;
  show(target, item < 0 ? Math.max(0, count - 1) : 0);
}

// labels and undos are sent one after another, in the order they were asked for; the next
// item is selected at once, so a reviewer can keep typing while a label is being saved
let queue = Promise.resolve();

function enqueue(work) {
  queue = queue.then(work).catch(() => {});
  return queue;
}

function saved(data) {
  state.labels = data.labels;
  document.body.dataset.saves = String(Number(document.body.dataset.saves || 0) + 1);
}

function label(item, mark) {
  if (item.kind === "verdict" && !["right", "wrong"].includes(mark)) return;
  if (item.kind === "score" && !["too_high", "right", "too_low"].includes(mark)) return;
  const body = { sample_id: state.data.samples[state.sample].id, metric: item.metric, verdict: item.verdict, mark };
  const items = itemsOf(state.data.samples[state.sample]);
  if (items.findIndex((i) => i.key === item.key) === state.item) step(1);
  status("saving…");
  enqueue(async () => {
    try {
      saved(await post("/api/labels", body));
      status("saved");
    } catch (error) {
      status(`not saved: ${error.message}`, true);
    }
    render();
  });
}

function undo() {
  enqueue(async () => {
    try {
      const data = await post("/api/undo", {});
      saved(data);
      if (data.undone) {
        const u = data.undone;
        const index = state.data.samples.findIndex((s) => s.id === u.sample_id);
        const items = itemsOf(state.data.samples[index]);
        const at = items.findIndex((i) => i.key === keyOf(u.sample_id, u.metric, u.verdict));
        status(`undone: ${u.metric} ${MARK_WORDS[u.mark] || u.label}`);
        show(index, Math.max(0, at));
      } else {
        status("nothing to undo");
        render();
      }
    } catch (error) {
      status(`not undone: ${error.message}`, true);
    }
  });
}

function toggle(id) {
  $(id).checked = !$(id).checked;
  render();
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName) && event.key !== "Escape") {
    if (event.target.type !== "checkbox") return;
  }
  const items = itemsOf(state.data.samples[state.sample]);
  const item = items[state.item];
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
    state.labels = data.labels;
  } catch (error) {
    status(`cannot load the run: ${error.message}`, true);
    return;
  }
  const categories = [...new Set(state.data.samples.map((s) => s.category).filter(Boolean))].sort();
  for (const c of categories) $("category").append(el("option", { value: c }, c));
  for (const id of ["category", "failing", "todo", "lowest"]) {
    // a filter set by mouse gives the keys back to the page
    $(id).addEventListener("change", (event) => {
      event.target.blur();
      render();
    });
  }
  $("undo").addEventListener("click", undo);
  $("help-button").addEventListener("click", () => ($("help").hidden = !$("help").hidden));
  document.addEventListener("keydown", onKey);
  render();
  document.body.dataset.ready = "true";
}

start();
