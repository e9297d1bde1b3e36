// Server-rendered tables, made sortable, with sticky headers and a column chooser: <table data-table="KEY">.
// - Every header with text becomes a <button> (keyboard reachable) and carries aria-sort.
// - Client-side sort by default (cells' data-sort, a <time datetime>, a number, or the text, in that order);
//   with data-sort-param="sort" on the table the server sorts every page instead: the button changes
//   ?sort=KEY / ?sort=-KEY (headers name their key in data-sort-key; data-sort-current is the current one).
// - "Columns": checkboxes that hide columns, remembered per table in localStorage ("dradash.columns.KEY");
//   headers with data-default-hidden start hidden.
// - The table scrolls inside its own box so its header can stick (position: sticky in CSS).
// Live refreshes replace tables: htmx:afterSettle enhances the new ones and re-applies the sort and columns.
(function () {
  "use strict";
  const sorts = {};  // table key -> {index, dir}, kept across live refreshes of the same table

  function store(key, value) {
    try {
      if (value === undefined) return JSON.parse(localStorage.getItem("dradash.columns." + key) || "null");
      localStorage.setItem("dradash.columns." + key, JSON.stringify(value));
    } catch (e) { return null; }
    return null;
  }

  function label(th) { return (th.dataset.label || th.textContent || "").trim(); }

  function rows(table) {
    const body = table.tBodies[0];
    if (!body) return [];
    const width = table.tHead ? table.tHead.rows[0].cells.length : 0;
    return Array.from(body.rows).filter(function (r) { return r.cells.length === width; });
  }

  function value(cell) {
    if (!cell) return "";
    if (cell.dataset.sort !== undefined) {
      const n = Number(cell.dataset.sort);
      return isNaN(n) ? cell.dataset.sort : n;
    }
    const time = cell.querySelector("time[datetime]");
    if (time) return Date.parse(time.getAttribute("datetime"));
    const text = cell.textContent.trim();
    const number = text.replace(/[,\s%+]/g, "");
    if (number !== "" && !isNaN(Number(number))) return Number(number);
    return text.toLowerCase();
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    if (typeof a === "number") return -1;
    if (typeof b === "number") return 1;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function sortClient(table, index, dir) {
    const body = table.tBodies[0];
    const list = rows(table);
    if (!body || list.length < 2) return;
    const keyed = list.map(function (r, i) { return [value(r.cells[index]), i, r]; });
    keyed.sort(function (x, y) {
      const c = compare(x[0], y[0]);
      return c ? (dir === "descending" ? -c : c) : x[1] - y[1];
    });
    const rest = Array.from(body.rows).filter(function (r) { return list.indexOf(r) < 0; });
    keyed.forEach(function (k) { body.appendChild(k[2]); });
    rest.forEach(function (r) { body.appendChild(r); });  // empty-state and detail rows stay last
  }

  function mark(headers, index, dir) {
    headers.forEach(function (th, i) {
      if (th.querySelector(".th-sort")) th.setAttribute("aria-sort", i === index ? dir : "none");
    });
  }

  function enhanceSorting(table, key, headers) {
    const param = table.dataset.sortParam;
    const current = table.dataset.sortCurrent || "";
    headers.forEach(function (th, index) {
      const text = label(th);
      if (!text || th.dataset.sortable === "false" || th.querySelector(".th-sort")) return;
      if (param && !th.dataset.sortKey) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "th-sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      if (param && (current === th.dataset.sortKey || current === "-" + th.dataset.sortKey)) {
        th.setAttribute("aria-sort", current.charAt(0) === "-" ? "descending" : "ascending");
      }
      button.addEventListener("click", function () {
        const dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        if (param) {
          const url = new URL(location.href);
          url.searchParams.set(param, (dir === "descending" ? "-" : "") + th.dataset.sortKey);
          url.searchParams.delete("page");
          location.assign(url.toString());
          return;
        }
        sorts[key] = { index: index, dir: dir };
        sortClient(table, index, dir);
        mark(headers, index, dir);
      });
    });
    const kept = sorts[key];
    if (!param && kept) { sortClient(table, kept.index, kept.dir); mark(headers, kept.index, kept.dir); }
  }

  function applyColumns(table, headers, hidden) {
    headers.forEach(function (th, index) {
      const off = hidden.indexOf(label(th)) >= 0;
      th.classList.toggle("col-hidden", off);
      rows(table).forEach(function (r) { if (r.cells[index]) r.cells[index].classList.toggle("col-hidden", off); });
    });
  }

  function enhanceColumns(table, key, headers, box) {
    const named = headers.filter(function (th) { return label(th); });
    if (named.length < 4 || table.dataset.columns === "false") return;
    let hidden = store(key);
    if (!Array.isArray(hidden)) hidden = named.filter(function (th) { return th.dataset.defaultHidden !== undefined; }).map(label);
    applyColumns(table, headers, hidden);
    const details = document.createElement("details");
    details.className = "col-chooser";
    const summary = document.createElement("summary");
    summary.textContent = "Columns";
    summary.setAttribute("aria-label", "Choose columns");
    details.appendChild(summary);
    const list = document.createElement("div");
    list.className = "col-list";
    named.forEach(function (th, i) {
      const name = label(th);
      const row = document.createElement("label");
      const box2 = document.createElement("input");
      box2.type = "checkbox";
      box2.checked = hidden.indexOf(name) < 0;
      box2.disabled = i === 0;  // the first column names the row: always shown
      box2.addEventListener("change", function () {
        hidden = hidden.filter(function (n) { return n !== name; });
        if (!box2.checked) hidden.push(name);
        store(key, hidden);
        applyColumns(table, headers, hidden);
      });
      row.append(box2, document.createTextNode(" " + name));
      list.appendChild(row);
    });
    details.appendChild(list);
    box.parentNode.insertBefore(details, box);
  }

  function enhance(table) {
    if (table.dataset.enhanced) return;
    table.dataset.enhanced = "true";
    const key = table.dataset.table || "table";
    if (!table.tHead || !table.tHead.rows.length) return;
    const headers = Array.from(table.tHead.rows[0].cells);
    let box = table.parentElement;
    if (!box.classList.contains("table-scroll")) {
      box = document.createElement("div");
      box.className = "table-scroll";
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    }
    enhanceSorting(table, key, headers);
    enhanceColumns(table, key, headers, box);
  }

  function enhanceAll(root) {
    (root && root.querySelectorAll ? root : document).querySelectorAll("table[data-table]").forEach(enhance);
    if (root && root.matches && root.matches("table[data-table]")) enhance(root);
  }

  window.dradashTables = { enhanceAll: enhanceAll };
  document.addEventListener("DOMContentLoaded", function () { enhanceAll(document); });
  document.addEventListener("htmx:afterSettle", function (e) { enhanceAll(e.target); });
  document.addEventListener("htmx:load", function (e) { enhanceAll(e.target); });  // new content of a swap
})();
