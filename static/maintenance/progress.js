// The live maintenance page: a websocket that receives the maintenance's live document on connect and
// after every coalesced change (polling the JSON endpoint if the socket cannot connect).
// - The actions (#m-live) were drawn at a version and for one preview state: when the document says
//   otherwise, every button in it is disabled at once and the fragment is fetched again, so the page
//   never offers an action that no longer applies (the server refuses those anyway, with a 409).
// - The progress bar's fill and its label come from the same two numbers.
(function () {
  "use strict";
  const panel = document.getElementById("progress-panel");
  if (!panel) return;
  const live = document.getElementById("progress-live");
  const track = document.getElementById("progress-track");
  const bar = document.getElementById("progress-bar");
  const counts = document.getElementById("progress-counts");
  const tbody = document.querySelector("#progress-pods tbody");
  const more = document.getElementById("progress-pods-more");
  const rulesBox = document.getElementById("progress-rules");
  const timeline = document.getElementById("progress-timeline");
  let doc = JSON.parse(document.getElementById("progress-initial").textContent);
  let receivedAt = Date.now();
  let refreshing = false;

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value == null ? "" : String(value);  // never innerHTML: names come from the cluster
    if (cls) el.className = cls;
    return el;
  }

  // A link to an object's page whose text is the object's name, set as text (never HTML: names come from the
  // cluster). A word (no whitespace, at most 63 characters, as dradash_format.WORD_MAX) stays whole in its
  // cell; "namespace/name" may break after its slash only, as {% pod_link %} renders it on the server.
  const WORD_MAX = 63;
  function isWord(s) { return s.length > 0 && s.length <= WORD_MAX && !/\s/.test(s); }
  function objectLink(path, namespace, name, shown, cls) {
    const a = document.createElement("a");
    a.className = "obj-link " + cls;
    a.href = "/" + path + "/" + encodeURIComponent(namespace) + "/" + encodeURIComponent(name) + "/";
    const bdi = document.createElement("bdi");
    const slash = shown.lastIndexOf("/");
    if (isWord(shown)) {
      bdi.className = "word";
      bdi.textContent = shown;
    } else if (slash > 0 && isWord(shown.slice(0, slash + 1)) && isWord(shown.slice(slash + 1))) {
      bdi.append(text("span", shown.slice(0, slash + 1), "word"), text("span", shown.slice(slash + 1), "word"));
    } else {
      bdi.textContent = shown;
    }
    a.append(bdi);
    return a;
  }
  function podLink(namespace, name, short) {
    return objectLink("pods", namespace, name, short ? name : namespace + "/" + name, "pod-link");
  }

  function podCell(pod) {
    const td = document.createElement("td");
    td.append(podLink(pod.namespace, pod.name, false));
    return td;
  }

  // A pod's claims, "namespace/name" (a namespace holds no "/"; a bare name is in the pod's namespace): each
  // links to its page.
  function claimsCell(pod) {
    const td = document.createElement("td");
    pod.claims.forEach((claim, i) => {
      const slash = claim.indexOf("/");
      const namespace = slash > 0 ? claim.slice(0, slash) : pod.namespace;
      if (i) td.append(", ");
      td.append(objectLink("claims", namespace, claim.slice(slash + 1), claim, "claim-link"));
    });
    return td;
  }

  function replacementCell(pod) {
    const td = document.createElement("td");
    const r = pod.replacement;
    if (!r) return td;
    td.append(podLink(r.namespace || pod.namespace, r.name, true), " · " + r.state);
    if (r.node) {
      const node = document.createElement("a");
      node.className = "obj-link node-link";
      node.href = "/nodes/" + encodeURIComponent(r.node) + "/";
      node.append(text("bdi", r.node, isWord(r.node) ? "word" : ""));
      td.append(" on ", node);
    }
    return td;
  }

  // The page's one time format: <time> with the relative text, the absolute UTC time on hover (time.js).
  function when(at) {
    const then = Date.parse(at);
    if (isNaN(then)) return text("span", at);
    const el = text("time", window.dradashTime ? window.dradashTime.relative(then, Date.now()) : at);
    el.dateTime = new Date(then).toISOString().replace(/\.\d+Z$/, "Z");
    el.title = el.dateTime.replace("T", " ").replace("Z", " UTC");
    el.dataset.time = "relative";
    return el;
  }

  function evictionTime(pod) {
    const td = document.createElement("td");
    td.append(pod.evict_at ? when(pod.evict_at) : text("span", "never (tolerated)"));
    return td;
  }

  function countdown(pod) {
    if (pod.state !== "waiting" || pod.seconds_left == null) return pod.state;
    const left = Math.max(0, pod.seconds_left - (Date.now() - receivedAt) / 1000);
    return "waiting · evicted in " + Math.ceil(left) + " s";
  }

  function renderBar() {
    const c = doc.counts;
    const done = c.evicted, of = c.to_evict;
    bar.style.width = (of ? (100 * done) / of : 0) + "%";
    track.setAttribute("aria-valuenow", String(done));
    track.setAttribute("aria-valuemax", String(of));
    let label = of ? done + " of " + of + " evicted" : "no pod to evict";
    if (c.evicting) label += " · " + c.evicting + " evicting";
    if (c.waiting) label += " · " + c.waiting + " waiting";
    if (c.tolerating) label += " · " + c.tolerating + " tolerate the taint";
    if (c.total) label += " · replacements: " + c.replacement_running + " running, " + c.replacement_pending +
      " pending, " + c.replacement_unschedulable + " unschedulable";
    if (of && doc.complete) label += " · complete";
    // #progress-counts is a polite live region: written only when the words change, so a screen reader
    // hears each eviction once, not the same line again on every second's redraw of the countdowns.
    if (counts.textContent !== label) counts.textContent = label;
    counts.dataset.complete = doc.complete ? "true" : "false";
    counts.dataset.evicted = String(done);
    counts.dataset.of = String(of);
  }

  // With a drain and no NoExecute, the drain panel is the eviction progress: the NoExecute bar and table
  // would only contradict it ("no pod to evict" while the drain evicts), so they fold away.
  // A draft has nothing to evict yet: a note says when evictions will show instead of an empty bar.
  function fold() {
    const drainOnly = !!doc.drain && !doc.enforced_at;
    const draftOnly = !doc.drain && !doc.enforced_at && doc.state === "draft";
    const section = document.getElementById("noexecute-progress");
    if (section) section.hidden = drainOnly || draftOnly;
    const note = document.getElementById("progress-drain-note");
    if (note) note.hidden = !drainOnly;
    const draftNote = document.getElementById("progress-draft-note");
    if (draftNote) draftNote.hidden = !draftOnly;
    const title = document.getElementById("progress-title");
    if (title) title.textContent = drainOnly || draftOnly ? "Timeline" : "Eviction progress (NoExecute)";
    const second = document.getElementById("timeline-title");
    if (second) second.hidden = drainOnly || draftOnly;
  }

  function render() {
    fold();
    renderBar();
    rulesBox.replaceChildren();
    for (const rule of doc.rules) {
      const p = text("p", "");
      p.append(text("code", rule.name), text("span", rule.present ? " effect " + rule.effect : " (not in the cluster)"));
      for (const cond of rule.conditions) {
        const reason = cond.reason ? " " + cond.reason : "";
        p.append(text("span", " · " + cond.type + "=" + cond.status + reason + (cond.message ? ": " + cond.message : ""), "cond"));
      }
      rulesBox.append(p);
    }
    if (doc.rules_total > doc.rules.length) rulesBox.append(text("p", "… and " + (doc.rules_total - doc.rules.length) + " more rules", "muted"));
    tbody.replaceChildren();
    for (const pod of doc.pods) {
      const tr = document.createElement("tr");
      tr.dataset.state = pod.state;
      tr.append(podCell(pod), claimsCell(pod), text("td", countdown(pod), "state-" + pod.state),
        evictionTime(pod), replacementCell(pod));
      tbody.append(tr);
    }
    if (!doc.pods.length) {
      const tr = document.createElement("tr");
      const td = text("td", doc.enforced_at ? "No pod held the selected devices when NoExecute was enforced." : "Nothing enforced with NoExecute yet.");
      td.colSpan = 5;
      tr.append(td);
      tbody.append(tr);
    }
    more.hidden = doc.pods_total <= doc.pods.length;
    more.textContent = "Showing " + doc.pods.length + " of " + doc.pods_total + " pods (those still in motion first); the API lists all: ?pods=all";
    timeline.replaceChildren();
    for (const item of doc.timeline.slice(-100)) {
      const li = document.createElement("li");
      li.append(when(item.at), text("span", " — " + item.what));
      timeline.append(li);
    }
    const undo = document.getElementById("undo-consequences");
    if (undo && doc.undo && doc.state === "applied") undo.textContent = doc.undo.text;
    checkActions();
  }

  // ---- the actions fragment follows the document
  function actionsBox() { return document.getElementById("m-live"); }

  function outOfDate(box) {
    return String(doc.version) !== box.dataset.version || doc.preview_key !== box.dataset.previewKey ||
      (doc.drift_key || "") !== (box.dataset.driftKey || "");  // a rule changed outside dradash
  }

  function checkActions() {
    const box = actionsBox();
    if (!box || !outOfDate(box) || refreshing) return;
    box.querySelectorAll("button, input, select").forEach((el) => { el.disabled = true; });
    box.dataset.outdated = "true";
    const note = document.getElementById("m-stale-note");
    if (note) note.hidden = false;
    refreshing = true;
    fetch(box.dataset.fragmentUrl, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error(String(r.status)))))
      .then((html) => {
        const holder = document.createElement("div");
        holder.innerHTML = html;  // our own server-rendered fragment (escaped by the template engine)
        const next = holder.querySelector("#m-live");
        if (next) { box.replaceWith(next); wireTyping(next); }
      })
      .catch(() => {})
      .finally(() => { refreshing = false; const b = actionsBox(); if (b && outOfDate(b)) setTimeout(checkActions, 500); });
  }

  // The typed confirmation: the button waits until the phrase matches (the server checks it too).
  function norm(s) { return s.split(/\s+/).filter(Boolean).join(" ").toLowerCase(); }
  function wireTyping(root) {
    root.querySelectorAll("form.enforce-form").forEach((form) => {
      const phrase = form.dataset.phrase || "";
      const button = form.querySelector("button[type=submit]");
      const typed = form.querySelector("input.enforce-typed");
      const confirm = form.querySelector("input.enforce-confirm");
      if (!button || !confirm) return;
      const update = () => {
        const ok = confirm.checked && (!phrase || (typed && norm(typed.value) === norm(phrase)));
        button.disabled = !ok;
      };
      form.addEventListener("input", update);
      form.addEventListener("change", update);
      update();
    });
  }

  function accept(next) {
    doc = next; receivedAt = Date.now(); render();
    document.dispatchEvent(new CustomEvent("maintenance-live", { detail: next }));  // drain.js draws the drain
  }

  function poll() {
    live.dataset.state = "polling"; live.textContent = "polling";
    const tick = () => fetch(panel.dataset.progressPoll, { credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : null)).then((d) => { if (d) accept(d); }).catch(() => {});
    tick();
    setInterval(tick, 3000);
  }

  function connect() {
    if (new URLSearchParams(location.search).get("live") === "poll" || !("WebSocket" in window)) return poll();
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    let opened = false;
    const ws = new WebSocket(scheme + location.host + panel.dataset.progressWs);
    ws.onopen = () => { opened = true; live.dataset.state = "live"; live.textContent = "live"; };
    ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === "progress") accept(m.progress); };
    ws.onclose = () => { if (!opened) { poll(); } else { live.dataset.state = "offline"; live.textContent = "reconnecting"; setTimeout(connect, 2000); } };
  }

  wireTyping(document);
  render();
  setInterval(() => { if (doc.counts.waiting) render(); }, 1000);
  connect();
})();
