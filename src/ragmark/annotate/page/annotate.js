// ragmark annotate: one item at a time, keyboard first. Every text of an item is put on
// the page with textContent (never parsed as HTML); every request goes to this server.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const KEY = "ragmark-annotator";
  // the token, once exchanged for this server's cookie, leaves the address bar (and
  // the history, and what is copied from it)
  if (new URLSearchParams(location.search).has("token")) {
    history.replaceState(null, "", location.pathname);
  }
  const FOLD = 2000;  // a text longer than this many characters is shown folded
  let name = document.body.dataset.annotator || localStorage.getItem(KEY) || "";
  let state = null;
  let current = null;

  function api(path, body) {
    const options = body === undefined ? {} : {
      method: "POST", body: JSON.stringify(body),
      headers: {"Content-Type": "application/json", "X-Ragmark": "1"}};
    return fetch(path, options).then((r) => r.json().then((j) => {
      if (!r.ok) { throw new Error(j.error || r.statusText); }
      return j;
    }));
  }

  // a long text is folded: its box keeps a few lines' height and a button below it
  // shows the whole (a 340,000-character answer is not a page 81,000 px tall)
  function fold(el, length) {
    const next = el.nextElementSibling;
    if (next && next.classList.contains("unfold")) { next.remove(); }
    el.classList.toggle("folded", length > FOLD);
    if (length <= FOLD) { return; }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "unfold";
    b.textContent = "Show all (" + length.toLocaleString("en") + " characters)";
    b.addEventListener("click", () => {
      const folded = el.classList.toggle("folded");
      b.textContent = folded ? "Show all (" + length.toLocaleString("en") +
        " characters)" : "Fold";
    });
    el.after(b);
  }

  function text(id, value) {
    const el = $(id);
    el.textContent = value == null ? "" : String(value);
    if (el.tagName === "P") { fold(el, el.textContent.length); }
  }

  function say(message, error) {
    text("status", message);
    $("status").className = error ? "error" : "";
  }

  function showProgress() {
    $("bar").max = Math.max(state.total, 1);
    $("bar").value = state.labelled;
    text("progress", state.labelled + " of " + state.total + " labelled (you: " +
         state.done + ")");
  }

  let shown = null;  // the item on the page

  // the label kept for a choice: its value, or for a preference A's score (1 when the
  // answer preferred is A, whichever side it was shown on; a tie 0.5)
  function kept(c) {
    if (!c.side || !shown) { return c.value; }
    return (c.side === "first") === (shown.first !== "B") ? 1 : 0;
  }

  function mark(value) {
    for (const b of document.querySelectorAll("#choices button")) {
      const c = state.choices[Number(b.dataset.index)];
      b.setAttribute("aria-pressed", String(value !== null && kept(c) === value));
    }
  }

  function fill(id, texts) {
    const list = $(id);
    list.replaceChildren();
    for (const c of texts || []) {
      const li = document.createElement("li");
      const p = document.createElement("div");
      p.dir = "auto";
      p.textContent = c;
      li.appendChild(p);
      list.appendChild(li);
      fold(p, p.textContent.length);
    }
  }

  // the answer with the judge's claims marked where they occur in it word for word
  // (supported or not); every piece is a text node or a <mark> made here, never HTML
  function markClaims(id, answer, claims) {
    const box = $(id);
    box.replaceChildren();
    const spans = [];
    for (const c of claims || []) {
      const t = (c.text || "").trim().replace(/[.!?]+$/, "");  // "... [1]." holds "..."
      const at = t ? answer.indexOf(t) : -1;
      if (at >= 0 && !spans.some((s) => at < s.end && s.start < at + t.length)) {
        spans.push({start: at, end: at + t.length, supported: c.supported});
      }
    }
    spans.sort((a, b) => a.start - b.start);
    let pos = 0;
    for (const s of spans) {
      box.appendChild(document.createTextNode(answer.slice(pos, s.start)));
      const m = document.createElement("mark");
      m.className = s.supported ? "supported" : "unsupported";
      m.textContent = answer.slice(s.start, s.end);
      box.appendChild(m);
      pos = s.end;
    }
    box.appendChild(document.createTextNode(answer.slice(pos)));
    fold(box, answer.length);
  }

  function showClaims(it) {
    const list = $("claims");
    list.replaceChildren();
    for (const c of it.claims || []) {
      const li = document.createElement("li");
      li.className = c.supported ? "supported" : "unsupported";
      li.dir = "auto";
      li.textContent = c.text + (c.supported ? " (supported)" : " (not supported)");
      list.appendChild(li);
    }
    list.hidden = !(it.claims && it.claims.length);
  }

  function judgeText(it) {
    if (!("judge" in it)) { return ""; }
    if (!("answer_b" in it)) { return "The judge's " + state.task + ": " + it.judge; }
    const side = it.judge === 0.5 ? "a tie" : ((it.judge === 1) === (it.first !== "B") ?
      "the first" : "the second");
    return "The judge (" + state.task + ") preferred " + side;
  }

  function load(id) {
    showProgress();
    if (id == null) {
      current = null;
      $("main").hidden = true;
      $("done").hidden = false;
      return Promise.resolve();
    }
    const query = "?id=" + encodeURIComponent(id) + "&annotator=" + encodeURIComponent(name);
    return api("/api/item" + query).then((got) => {
      const it = got.item;
      current = id;
      shown = it;
      text("position", (state.order.indexOf(id) + 1) + " / " + state.order.length);
      text("question", it.question);
      const pair = "answer_b" in it;  // a preference: two answers, A on the drawn side
      const swap = pair && it.first === "B";
      text("answer-head", pair ? "First answer" : "Answer");
      text("contexts-head", pair ? "Contexts of the first answer" : "Contexts");
      text("answer", swap ? it.answer_b : it.answer);
      $("answer-box").hidden = !it.answer;  // a passage's relevance: no answer to show
      text("second", pair ? (swap ? it.answer : it.answer_b) : "");
      $("second-box").hidden = !pair;
      fill("second-contexts", pair ? (swap ? it.contexts : it.contexts_b) : []);
      text("claim", it.claim);
      $("claim-box").hidden = !it.claim;  // one claim of the answer (--per-claim)
      text("expected", it.expected_answer);
      $("expected-box").hidden = !it.expected_answer;
      fill("contexts", swap ? it.contexts_b : it.contexts);
      $("note").value = got.note || "";
      mark(got.label);
      $("judge").hidden = !("judge" in it);
      text("judge", judgeText(it));
      if (it.claims && !pair) { markClaims("answer", it.answer, it.claims); }
      showClaims(it);
      $("main").hidden = false;
      $("done").hidden = true;
    });
  }

  function after(item) {
    // the next item after this one the person has not labelled, else the first left
    const order = state.order;
    for (let k = order.indexOf(item) + 1; k < order.length; k++) {
      if (!(order[k] in state.mine)) { return order[k]; }
    }
    return state.next;
  }

  function give(value) {
    if (current == null) { return; }
    const item = current;
    api("/api/label", {annotator: name, item: item, value: value, note: $("note").value})
      .then((s) => {
        state = s;
        say(value === null ? "Skipped." : "Saved.");
        return load(after(item));
      })
      .catch((e) => say("Not saved: " + e.message, true));
  }

  function move(step) {
    const order = state.order;
    const at = current == null ? order.length : order.indexOf(current);
    const to = at + step;
    if (to >= 0 && to < order.length) { load(order[to]).catch((e) => say(e.message, true)); }
  }

  function undo() {
    api("/api/undo", {annotator: name})
      .then((s) => {
        state = s;
        say(s.undone == null ? "Nothing to undo." : "Undone.");
        return s.undone == null ? null : load(s.undone);
      })
      .catch((e) => say("Not undone: " + e.message, true));
  }

  function start() {
    api("/api/state?annotator=" + encodeURIComponent(name))
      .then((s) => {
        state = s;
        text("ask", s.ask);
        const box = $("choices");
        box.replaceChildren();
        s.choices.forEach((c, i) => {
          const b = document.createElement("button");
          b.type = "button";
          b.dataset.index = String(i);
          b.textContent = c.key + " " + c.text;
          b.addEventListener("click", () => give(kept(c)));
          box.appendChild(b);
        });
        return load(s.next);
      })
      .catch((e) => say(e.message, true));
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    const t = e.target;
    if (t && (t.id === "note" || t.id === "name")) {
      if (t.id === "note" && (e.key === "Escape" || (e.key === "Enter" && !e.shiftKey))) {
        e.preventDefault();
        t.blur();
      }
      return;
    }
    if (!state) { return; }
    const choice = state.choices.find((c) => c.key === e.key);
    if (choice) { e.preventDefault(); give(kept(choice)); }
    else if (e.key === "j") { move(1); }
    else if (e.key === "k") { move(-1); }
    else if (e.key === "u") { undo(); }
    else if (e.key === "s") { give(null); }
    else if (e.key === "n") { e.preventDefault(); $("note").focus(); }
    else if (e.key === "f") {  // the first folded (or unfolded) long text of the item
      const b = document.querySelector("#main button.unfold");
      if (b) { b.click(); }
    }
  });

  $("who").addEventListener("submit", (e) => {
    e.preventDefault();
    const given = $("name").value.trim();
    if (!given) { return; }
    name = given;
    localStorage.setItem(KEY, given);
    $("who").hidden = true;
    start();
  });

  if (name) { start(); } else { $("who").hidden = false; $("name").focus(); }
})();
