// The reader's own highlights on the PDF. Text selected in the viewer's text layer (viewer.js)
// offers "Highlight" and "Add note…" in the viewer's bar; the choice is posted as JSON (the page,
// the selection's rectangles as fractions of the page, its text, the note) to
// POST /paper/<id>/highlights and the page reloads on that page with it drawn and listed. The
// highlights stored are drawn on the page shown, in their own colour (not the passage's).
(function () {
  "use strict";
  var viewer = document.getElementById("pdf");
  var tools = document.getElementById("selection-tools");
  if (!viewer || !tools) { return; }
  var frame = document.getElementById("page-frame");
  var layer = document.getElementById("text-layer");
  var label = document.getElementById("selection-label");
  var noteBox = document.getElementById("highlight-note-box");
  var noteText = document.getElementById("highlight-note-text");
  var status = document.getElementById("highlight-status");
  var stored = [];
  try { stored = JSON.parse(viewer.dataset.highlights || "[]"); } catch (e) { stored = []; }
  var pending = null;  // { page, rects, text } of the selection the tools were shown for

  function shownPage() { return parseInt(viewer.dataset.page, 10) || 1; }

  // ---- the stored highlights on the page shown ----------------------------------------------
  function draw() {
    frame.querySelectorAll(".own-hl").forEach(function (h) { h.remove(); });
    var page = shownPage();
    stored.forEach(function (h) {
      if (h.page !== page) { return; }
      h.rects.forEach(function (r) {
        var box = document.createElement("div");
        box.className = "own-hl";
        box.dataset.highlight = String(h.id);
        box.title = h.note ? "Your note: " + h.note : "Your highlight";
        box.style.left = (r[0] * 100) + "%";
        box.style.top = (r[1] * 100) + "%";
        box.style.width = ((r[2] - r[0]) * 100) + "%";
        box.style.height = ((r[3] - r[1]) * 100) + "%";
        frame.appendChild(box);
      });
    });
  }
  viewer.addEventListener("pageshown", draw);

  // ---- a selection in the text layer ------------------------------------------------------------
  // The part of the selection on the page's lines: its text, and each line's piece as a rectangle
  // of the page image (fractions of its width and height, kept inside the page); null when none
  // of the page's text is selected. A double click may end the selection past the layer, so each
  // line is cut to the selection rather than the selection taken whole.
  function selected() {
    var selection = window.getSelection();
    if (!selection.rangeCount || selection.isCollapsed) { return null; }
    var range = selection.getRangeAt(0);
    if (!range.intersectsNode(layer)) { return null; }
    var page = document.getElementById("page-image").getBoundingClientRect();
    if (!page.width || !page.height) { return null; }
    var rects = [], parts = [];
    layer.querySelectorAll("span").forEach(function (span) {
      var node = span.firstChild;
      if (!node || !range.intersectsNode(node)) { return; }
      var piece = document.createRange();
      piece.selectNodeContents(node);
      if (range.compareBoundaryPoints(Range.START_TO_START, piece) > 0) { piece.setStart(range.startContainer, range.startOffset); }
      if (range.compareBoundaryPoints(Range.END_TO_END, piece) < 0) { piece.setEnd(range.endContainer, range.endOffset); }
      var text = piece.toString();
      if (piece.collapsed || !text.trim()) { return; }
      parts.push(text);
      Array.prototype.forEach.call(piece.getClientRects(), function (r) {
        var x0 = Math.max(0, (r.left - page.left) / page.width), x1 = Math.min(1, (r.right - page.left) / page.width);
        var y0 = Math.max(0, (r.top - page.top) / page.height), y1 = Math.min(1, (r.bottom - page.top) / page.height);
        if (x1 > x0 && y1 > y0) { rects.push([x0, y0, x1, y1]); }
      });
    });
    // joined as the viewer copies it: a word broken at a line's end whole, ligatures as letters
    var joined = window.readerViewer ? window.readerViewer.joinLines(parts) : parts.join(" ");
    var text = joined.replace(/\s+/g, " ").trim();
    return text && rects.length ? { page: shownPage(), rects: rects.slice(0, 400), text: text } : null;
  }

  function hide() {
    pending = null;
    tools.hidden = true;
    noteBox.hidden = true;
  }

  function offer() {
    if (!noteBox.hidden) { return; }  // writing a note: the selection it is for is kept
    var found = selected();
    if (!found) { hide(); return; }
    pending = found;
    label.textContent = "“" + (found.text.length > 60 ? found.text.slice(0, 57) + "…" : found.text) + "”";
    status.textContent = "";
    tools.hidden = false;
  }
  // offered once a drag has ended (the pointer's selection), or as the keyboard changes it
  var dragging = false;
  document.addEventListener("pointerdown", function (event) { dragging = !tools.contains(event.target); });
  document.addEventListener("pointerup", function () {
    if (dragging) { dragging = false; window.requestAnimationFrame(offer); }
  });
  document.addEventListener("selectionchange", function () {
    if (!dragging) { window.requestAnimationFrame(offer); }
  });
  // the tools' buttons keep the selection (a press on a button would take it away)
  tools.addEventListener("mousedown", function (event) {
    if (event.target.closest("button")) { event.preventDefault(); }
  });

  function save(note) {
    if (!pending) { return; }
    var body = { page: pending.page, rects: pending.rects, text: pending.text, note: note || "", csrf_token: tools.dataset.csrf };
    status.textContent = "Saving…";
    fetch("/paper/" + encodeURIComponent(viewer.dataset.paper) + "/highlights", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json", "Content-Type": "application/json" },
      body: JSON.stringify(body)
    })
      .then(function (r) { return r.json().then(function (data) { return { ok: r.ok, data: data }; }); })
      .then(function (r) {
        if (!r.ok) { status.textContent = r.data.error || "The highlight was not kept."; return; }
        window.location.assign("/paper/" + encodeURIComponent(viewer.dataset.paper) + "?page=" + r.data.page + "&highlight=" + r.data.id + "#pdf");
      })
      .catch(function () { status.textContent = "The highlight could not be sent; is the server running?"; });
  }

  document.getElementById("highlight-add").addEventListener("click", function () { save(""); });
  document.getElementById("highlight-note").addEventListener("click", function () {
    if (!pending) { return; }
    noteBox.hidden = false;
    noteText.focus();
  });
  document.getElementById("highlight-save").addEventListener("click", function () { save(noteText.value); });
  // from the keyboard: lines selected with Shift+↓ in the page (viewer.js), then H highlights
  // them and N opens the note's box
  document.addEventListener("keydown", function (event) {
    if (!viewer.contains(event.target) || event.ctrlKey || event.metaKey || event.altKey || tools.hidden || !pending) { return; }
    if (/^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(event.target.tagName)) { return; }
    var key = event.key.toLowerCase();
    if (key === "h") { event.preventDefault(); save(""); }
    else if (key === "n") { event.preventDefault(); noteBox.hidden = false; noteText.focus(); }
  });
  document.getElementById("highlight-cancel").addEventListener("click", function () {
    noteText.value = "";
    hide();
  });
  noteText.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); save(noteText.value); }
    if (event.key === "Escape") { hide(); }
  });

  // ---- a page link in "Your highlights" turns the viewer to that page ----------------------------
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("#highlights a.hl-page") : null;
    if (!link) { return; }
    event.preventDefault();
    viewer.dispatchEvent(new CustomEvent("showpage", { detail: { page: parseInt(link.dataset.page, 10) || 1 } }));
    viewer.scrollIntoView({ block: "start" });
  });

  draw();
})();
