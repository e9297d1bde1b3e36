// The Overview's devices-per-class chart (Chart.js), drawn again after every live refresh of the summary.
(function () {
  "use strict";
  let chart = null;
  function size(box) {
    // One bar per class: the box grows with the number of classes (its CSS default fits six).
    const rows = Number(box.dataset.rows || 0);
    box.style.height = rows > 6 ? (rows + 2) * 22 + "px" : "";
  }
  function draw() {
    const el = document.getElementById("class-chart-data");
    const canvas = document.getElementById("class-chart");
    if (!el || !canvas || !window.Chart) return;
    if (canvas.parentElement) size(canvas.parentElement);
    const d = JSON.parse(el.textContent);
    const css = getComputedStyle(document.documentElement);
    const ink = css.getPropertyValue("--muted").trim() || "#5d6677";
    const line = css.getPropertyValue("--line").trim() || "#dde1e8";
    const datasets = [
      { label: "allocated", data: d.allocated, backgroundColor: "#5b84d9" },
      { label: "free", data: d.free, backgroundColor: "#6cc08b" },
      { label: "not allocatable", data: d.blocked, backgroundColor: "#e58a7f" },  // said in full below the chart
    ];
    if (chart && chart.canvas === canvas) {
      chart.data.labels = d.labels;
      chart.data.datasets.forEach(function (ds, i) { ds.data = datasets[i].data; });
      chart.update("none");
      return;
    }
    if (chart) chart.destroy();
    chart = new window.Chart(canvas, {
      type: "bar",
      data: { labels: d.labels, datasets: datasets },
      options: {
        indexAxis: "y", animation: false, maintainAspectRatio: false,
        scales: {
          x: { stacked: true, ticks: { precision: 0, color: ink }, grid: { color: line } },
          y: { stacked: true, ticks: { color: ink }, grid: { color: line } },
        },
        plugins: { legend: { position: "bottom", labels: { color: ink } } },
      },
    });
  }
  window.addEventListener("load", draw);
  document.body.addEventListener("htmx:afterSettle", draw);
  // The theme changed: redraw with the new colours.
  document.addEventListener("dradash:theme", function () { if (chart) { chart.destroy(); chart = null; } draw(); });
})();
