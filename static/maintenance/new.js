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
    boxes().forEach((b) => { b.disabled = !!(all && all.checked); });
    if (tickPage) tickPage.disabled = !!(all && all.checked);
  }

  form.addEventListener("change", update);
  if (tickPage) tickPage.addEventListener("change", () => { boxes().forEach((b) => { b.checked = tickPage.checked; }); update(); });
  update();
})();
