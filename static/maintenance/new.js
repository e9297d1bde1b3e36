// New maintenance: say what is selected as the operator ticks (the server decides; this only tells).
(function () {
  "use strict";
  const form = document.getElementById("maintenance-form");
  const status = document.getElementById("selected-count");
  if (!form || !status) return;
  const all = document.getElementById("select-all");
  const tickPage = document.getElementById("tick-page");
  const boxes = () => Array.from(form.querySelectorAll("input[name=device]"));

  function update() {
    const ticked = boxes().filter((b) => b.checked).length;
    if (all && all.checked) {
      const n = document.getElementById("select-all-count").textContent;
      status.textContent = "All " + n + " matching devices are selected";
      status.dataset.count = n;
    } else if (ticked) {
      status.textContent = ticked + " device" + (ticked === 1 ? " is" : "s are") + " selected";
      status.dataset.count = String(ticked);
    } else {
      status.textContent = "Nothing is selected yet";
      status.dataset.count = "0";
    }
    // How to select is said only while nothing is ("8 devices are selected: tick devices below" misread).
    const hint = document.getElementById("selection-hint");
    if (hint) hint.hidden = status.dataset.count !== "0";
    // Ticks that cover only part of the matching devices: say so, loudly (the rest are not selected).
    const partial = document.getElementById("partial-selection");
    if (partial) {
      const matching = Number(partial.dataset.matching || "0");
      const rest = matching - ticked;
      const show = !(all && all.checked) && ticked > 0 && rest > 0;
      partial.hidden = !show;
      if (show) {
        const pages = Number(partial.dataset.pages || "1");
        document.getElementById("partial-selection-text").textContent = "Only the " + ticked + " ticked device" +
          (ticked === 1 ? " goes" : "s go") + " into the draft: " + rest + " more match these filters" +
          (pages > 1 ? " (on this page and " + (pages - 1) + " other page" + (pages > 2 ? "s" : "") + ")" : "") +
          ", and are not selected.";
      }
    }
    boxes().forEach((b) => { b.disabled = !!(all && all.checked); });
    if (tickPage) tickPage.disabled = !!(all && all.checked);
  }

  form.addEventListener("change", update);
  if (tickPage) tickPage.addEventListener("change", () => { boxes().forEach((b) => { b.checked = tickPage.checked; }); update(); });
  update();
})();
