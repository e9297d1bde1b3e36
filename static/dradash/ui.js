// Small page behaviours wired by data attributes (the policy allows no inline handlers):
// - <button data-copy="#selector">: copies that element's text to the clipboard.
// - A live fragment (data-live-kinds, refreshed by htmx) that fails to refresh says so inside itself and
//   keeps the last data it had; the next successful refresh replaces the message. A 404 is an object deleted
//   while its page was open, and reads so.
// - A filter form (<form class="filters" method="get">) leaves its empty fields out of the URL, so a
//   shared link says only what was chosen (?driver=gpu.example.com, not ?q=&driver=…&pool=&node=…).
// - A page answering a POST that must not be sent twice (data-no-resubmit: a new API token) turns its history
//   entry into a plain GET: a reload shows the page again instead of posting the form a second time (which
//   refused the name as taken, and lost the key shown once).
// - A form's refusal (data-error-focus: the message a refused POST is answered with) is brought into view and
//   given the focus when the page loads: under a form far down the page (the what-if's third form) it was
//   below the first screen, and the page, back at its top, looked as if the button had done nothing.
// - A form with data-confirm (revoking an API token) asks first, in the words of that attribute; "Cancel" sends
//   nothing. One click on the wrong row's button took a token away from the scripts that use it.
// - A "Columns" chooser (details.col-chooser, a list over the table) closes like a menu: Escape closes it and
//   gives the focus back to its button, and a click elsewhere closes it; it stayed open over the rows.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    }, function () {});
  });

  function liveBox(event) {
    const el = event.detail && event.detail.elt;
    return el && el.closest ? el.closest("[data-live-kinds]") : null;
  }
  function failed(event) {
    const box = liveBox(event);
    if (!box) return;
    const xhr = event.detail.xhr;
    const why = xhr && xhr.status ? "the server answered " + xhr.status : "the server did not answer";
    let note = box.querySelector(":scope > .live-error");
    if (!note) {
      note = document.createElement("div");
      note.className = "alert bad live-error";
      note.setAttribute("role", "status");
      box.prepend(note);
    }
    const at = new Date().toISOString().slice(11, 19);
    // A detail page's object that is gone answers 404: say so, not as if the server had failed.
    note.textContent = xhr && xhr.status === 404
      ? "No longer in the cluster (deleted, as of " + at + " UTC): showing the data from before."
      : "Could not refresh (" + why + " at " + at + " UTC); showing the data from before.";
    box.dataset.liveError = "true";
  }
  document.addEventListener("formdata", function (event) {
    const form = event.target;
    if (!form.matches || !form.matches("form.filters") || form.method !== "get") return;
    const kept = [];
    for (const [name, value] of event.formData) if (value !== "") kept.push([name, value]);
    for (const name of new Set(Array.from(event.formData.keys()))) event.formData.delete(name);
    for (const [name, value] of kept) event.formData.append(name, value);
  });
  if (document.querySelector("[data-no-resubmit]") && window.history.replaceState) {
    window.history.replaceState(window.history.state, "", window.location.href);
  }
  const refusal = document.querySelector("[data-error-focus]");
  if (refusal) {
    if (!refusal.hasAttribute("tabindex")) refusal.setAttribute("tabindex", "-1");
    refusal.focus({ preventScroll: true });
    refusal.scrollIntoView({ block: "center" });
  }
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });
  function openChoosers() { return document.querySelectorAll("details.col-chooser[open]"); }
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    openChoosers().forEach(function (details) {
      const inside = details.contains(document.activeElement);
      details.open = false;
      if (inside) details.querySelector("summary").focus();
    });
  });
  document.addEventListener("click", function (event) {
    openChoosers().forEach(function (details) { if (!details.contains(event.target)) details.open = false; });
  });
  document.body.addEventListener("htmx:responseError", failed);
  document.body.addEventListener("htmx:sendError", failed);
})();
