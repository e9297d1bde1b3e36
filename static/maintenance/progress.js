// Live eviction progress: a websocket that receives the whole progress document on connect and after
// every coalesced change; if the socket cannot connect, poll the JSON endpoint instead.
(function () {
  "use strict";
  const panel = document.getElementById("progress-panel");
  if (!panel) return;
  const live = document.getElementById("progress-live");
  const bar = document.getElementById("progress-bar");
  const counts = document.getElementById("progress-counts");
  const tbody = document.querySelector("#progress-pods tbody");
  const rulesBox = document.getElementById("progress-rules");
  const timeline = document.getElementById("progress-timeline");
  let doc = JSON.parse(document.getElementById("progress-initial").textContent);
  let receivedAt = Date.now();

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value == null ? "" : String(value);  // never innerHTML: names come from the cluster
    if (cls) el.className = cls;
    return el;
  }

  function countdown(pod) {
    if (pod.state !== "waiting" || pod.seconds_left == null) return pod.state;
    const left = Math.max(0, pod.seconds_left - (Date.now() - receivedAt) / 1000);
    return "waiting · evicted in " + Math.ceil(left) + " s";
  }

  function render() {
    const c = doc.counts;
    bar.style.width = doc.percent + "%";
    counts.textContent = c.gone + " of " + c.total + " evicted" +
      (c.evicting ? " · " + c.evicting + " evicting" : "") +
      (c.waiting ? " · " + c.waiting + " waiting" : "") +
      (c.tolerating ? " · " + c.tolerating + " tolerate the taint" : "") +
      " · replacements: " + c.replacement_running + " running, " + c.replacement_pending + " pending, " +
      c.replacement_unschedulable + " unschedulable" + (doc.complete && c.total ? " · complete" : "");
    counts.dataset.complete = doc.complete ? "true" : "false";
    counts.dataset.gone = c.gone;
    counts.dataset.total = c.total;
    rulesBox.replaceChildren();
    for (const rule of doc.rules) {
      const p = text("p", "");
      p.append(text("code", rule.name), text("span", rule.present ? " effect " + rule.effect : " (not in the cluster)"));
      for (const cond of rule.conditions) {
        p.append(text("span", " · " + cond.type + "=" + cond.status + " " + (cond.reason || "") + ": " + (cond.message || ""), "cond"));
      }
      rulesBox.append(p);
    }
    tbody.replaceChildren();
    for (const pod of doc.pods) {
      const tr = document.createElement("tr");
      tr.dataset.state = pod.state;
      tr.append(text("td", pod.namespace + "/" + pod.name), text("td", pod.claims.join(", ")),
        text("td", countdown(pod), "state-" + pod.state), text("td", pod.evict_at || "never (tolerated)"),
        text("td", pod.replacement ? pod.replacement.name + " · " + pod.replacement.state +
          (pod.replacement.node ? " on " + pod.replacement.node : "") : ""));
      tbody.append(tr);
    }
    timeline.replaceChildren();
    for (const item of doc.timeline.slice(-100)) timeline.append(text("li", item.at + " — " + item.what));
  }

  function accept(next) { doc = next; receivedAt = Date.now(); render(); }

  let pollTimer = null;
  function poll() {
    live.dataset.state = "polling"; live.textContent = "polling";
    const tick = () => fetch(panel.dataset.progressPoll, {credentials: "same-origin"})
      .then((r) => r.ok ? r.json() : null).then((d) => { if (d) accept(d); }).catch(() => {});
    tick();
    pollTimer = setInterval(tick, 3000);
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

  render();
  setInterval(() => { if (doc.counts.waiting) render(); }, 1000);
  connect();
})();
