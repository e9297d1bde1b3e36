// The drain panel of a maintenance page: every affected pod's state (and why), the PodDisruptionBudgets
// with their current disruptionsAllowed, the ETA — drawn from the live document progress.js receives
// (the "maintenance-live" event, over the websocket). And the drain form's forecast follows the
// concurrency chosen. Cluster names are set as text, never as HTML.
(function () {
  "use strict";
  const panel = document.getElementById("drain-panel");
  if (!panel) return;

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value == null ? "" : String(value);
    if (cls) el.className = cls;
    return el;
  }

  function render(drain) {
    if (!drain) { panel.hidden = true; return; }
    panel.hidden = false;
    const state = document.getElementById("drain-state");
    state.textContent = drain.state;
    state.dataset.state = drain.state;
    const summary = document.getElementById("drain-summary");
    summary.textContent = drain.summary;  // the server's words (ETA none while a budget blocks)
    summary.dataset.complete = drain.complete ? "true" : "false";
    const message = document.getElementById("drain-message");
    message.textContent = drain.message || "";
    message.hidden = !drain.message;
    const budgets = document.querySelector("#drain-budgets tbody");
    budgets.replaceChildren();
    for (const b of drain.budgets) {
      const tr = document.createElement("tr");
      const name = document.createElement("td");
      name.append(text("bdi", b.namespace + "/" + b.name));
      tr.append(name, text("td", b.rule), text("td", b.current_healthy == null ? "?" : b.current_healthy),
        text("td", b.disruptions_allowed == null ? "?" : b.disruptions_allowed, "budget-allowed"), text("td", b.pods));
      budgets.append(tr);
    }
    const pods = document.querySelector("#drain-pods tbody");
    pods.replaceChildren();
    for (const p of drain.pods) {
      const tr = document.createElement("tr");
      tr.dataset.state = p.state;
      const who = document.createElement("td");
      who.append(text("bdi", p.namespace + "/" + p.name));
      const node = document.createElement("td");
      node.append(text("bdi", p.node));
      const repl = document.createElement("td");
      if (p.replacement) repl.append(text("bdi", p.replacement.name + (p.replacement.node ? " on " + p.replacement.node : "")));
      tr.append(text("td", p.order + 1), who, node, text("td", p.label, "state-" + p.state), text("td", p.reason), repl);
      pods.append(tr);
    }
  }

  document.addEventListener("maintenance-live", (e) => render(e.detail.drain));
  document.addEventListener("change", (e) => {
    if (!e.target || e.target.id !== "drain-concurrency") return;
    document.querySelectorAll("#drain-forecast .drain-forecast").forEach((li) => {
      li.hidden = li.dataset.concurrency !== e.target.value;
    });
  });
  const initial = document.getElementById("progress-initial");
  if (initial) render(JSON.parse(initial.textContent).drain);
})();
