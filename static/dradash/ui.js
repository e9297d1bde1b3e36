// Small page behaviours wired by data attributes (the policy allows no inline handlers):
// - <button data-copy="#selector">: copies that element's text to the clipboard.
// - A live fragment (data-live-kinds, refreshed by htmx) that fails to refresh says so inside itself and
//   keeps the last data it had; the next successful refresh replaces the message.
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
    note.textContent = "Could not refresh (" + why + " at " + at + " UTC); showing the data from before.";
    box.dataset.liveError = "true";
  }
  document.body.addEventListener("htmx:responseError", failed);
  document.body.addEventListener("htmx:sendError", failed);
})();
