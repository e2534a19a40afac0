// evalstore: sort a table by a column when its header is clicked (no other script on the pages).
// A cell sorts by its data-v attribute when it has one (numbers in full precision), else by its text;
// numbers compare as numbers, empty values go last. A second click reverses the order.
(function () {
  "use strict";
  function key(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim() : v;
  }
  function compare(a, b) {
    if (a === b) return 0;
    if (a === "") return 1;
    if (b === "") return -1;
    var x = Number(a), y = Number(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    return a < b ? -1 : 1;
  }
  function sortBy(table, th, index) {
    var body = table.tBodies[0];
    if (!body) return;
    var descending = th.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, i) { return { row: row, k: key(row.cells[index]), i: i }; });
    keyed.sort(function (p, q) {
      var c = compare(p.k, q.k);
      if (c !== 0 && p.k !== "" && q.k !== "") c = descending ? -c : c;
      return c !== 0 ? c : p.i - q.i;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var frag = document.createDocumentFragment();
    keyed.forEach(function (p) { frag.appendChild(p.row); });
    body.appendChild(frag);
  }
  function setUp(table) {
    if (!table.tHead || !table.tHead.rows.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.setAttribute("tabindex", "0");
      th.setAttribute("title", "sort by this column");
      th.addEventListener("click", function () { sortBy(table, th, index); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, index); }
      });
    });
  }
  function autoSubmit(form) {
    Array.prototype.forEach.call(form.querySelectorAll("select"), function (s) {
      s.addEventListener("change", function () {
        if (s.name === "qrels") {
          var m = form.querySelector("select[name=metric]");
          if (m) m.disabled = true; // another qrels set: its own default metric
        }
        form.submit();
      });
    });
  }
  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setUp);
    Array.prototype.forEach.call(document.querySelectorAll("form.pickers"), autoSubmit);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
