// Sortable tables: a click on a header (or Enter on it) sorts the rows by that column, ascending first,
// then descending. Each cell's data-sort holds the value (numbers for data-type="num"); empty values sort last.
(function () {
  "use strict";

  function key(cell, type) {
    var value = cell ? cell.getAttribute("data-sort") : null;
    if (value === null || value === "") return null;
    if (type === "num") {
      var number = parseFloat(value);
      return isNaN(number) ? null : number;
    }
    return value.toLowerCase();
  }

  function sortRows(table, index, type, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[index], type);
      var y = key(b.cells[index], type);
      if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
      var order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, index) {
      header.tabIndex = 0;
      header.addEventListener("click", function () {
        var descending = header.getAttribute("aria-sort") === "ascending";
        Array.prototype.forEach.call(headers, function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", descending ? "descending" : "ascending");
        sortRows(table, index, header.getAttribute("data-type") || "text", descending);
      });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter") header.click();
      });
    });
  });
})();
