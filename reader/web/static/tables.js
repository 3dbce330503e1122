// The paper's tables: selecting a cell shows its page in the viewer with the cell highlighted
// (its rectangle as fractions of the page, from the parser), until another cell or page is shown.
(function () {
  var viewer = document.getElementById("pdf");
  var shown = null;  // {page, rect, cell}

  function draw() {
    var frame = document.getElementById("page-frame");
    if (!frame) { return null; }
    frame.querySelectorAll(".cell-hl").forEach(function (h) { h.remove(); });
    var label = document.getElementById("passage-label");
    var current = parseInt(viewer.dataset.page || "0", 10);  // paper.js keeps it
    if (!shown || (current && current !== shown.page)) { return null; }
    var r = shown.rect;
    var box = document.createElement("div");
    box.className = "cell-hl";
    box.style.left = (r[0] * 100) + "%";
    box.style.top = (r[1] * 100) + "%";
    box.style.width = ((r[2] - r[0]) * 100) + "%";
    box.style.height = ((r[3] - r[1]) * 100) + "%";
    frame.appendChild(box);
    if (label) { label.textContent = "table cell highlighted"; }
    return box;
  }

  function show(cell) {
    if (!viewer) { return; }
    var rect = (cell.dataset.rect || "").split(",").map(parseFloat);
    if (rect.length !== 4 || rect.some(isNaN)) { return; }
    document.querySelectorAll(".cell-on-page.shown").forEach(function (c) { c.classList.remove("shown"); });
    cell.classList.add("shown");
    shown = { page: parseInt(cell.dataset.page, 10) || 1, rect: rect, cell: cell };
    viewer.dispatchEvent(new CustomEvent("showpage", { detail: { page: shown.page } }));  // paper.js
    var box = draw();
    (box || viewer).scrollIntoView({ block: box ? "center" : "start" });
  }

  if (viewer) {
    viewer.addEventListener("pageshown", function (event) {
      if (shown && event.detail.page !== shown.page) {
        shown.cell.classList.remove("shown");
        shown = null;
      }
      draw();
    });
  }
  document.addEventListener("click", function (event) {
    var cell = event.target.closest && event.target.closest(".cell-on-page");
    if (cell) { show(cell); }
  });
  document.addEventListener("keydown", function (event) {
    var cell = event.target.closest && event.target.closest(".cell-on-page");
    if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); show(cell); }
  });
})();
