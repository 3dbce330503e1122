// Paper page: tooltips (click or Enter pins one), the verdict toggle, the PDF's pages beside
// the analyses with a passage highlighted, and a reload when a running review finishes.
(function () {
  "use strict";
  var toggle = document.getElementById("show-all");
  var analyses = document.getElementById("analyses");
  var viewer = document.getElementById("pdf");

  // Only flagged sentences are in the Tab order, unless every verdict is shown.
  if (toggle && analyses) {
    toggle.addEventListener("change", function () {
      analyses.classList.toggle("show-all", toggle.checked);
      analyses.querySelectorAll(".sent:not(.flagged)").forEach(function (s) {
        s.tabIndex = toggle.checked ? 0 : -1;
      });
    });
  }

  // ---- the PDF's pages ---------------------------------------------------------
  var current = { page: 1, rects: [], passage: null };
  function pageCount() { return viewer ? parseInt(viewer.dataset.pages, 10) || 1 : 1; }

  function drawHighlights() {
    var frame = document.getElementById("page-frame");
    frame.querySelectorAll(".hl").forEach(function (h) { h.remove(); });
    var first = null;
    current.rects.forEach(function (r) {
      if (r[0] !== current.page) { return; }
      var box = document.createElement("div");
      box.className = "hl";
      box.style.left = (r[1] * 100) + "%";
      box.style.top = (r[2] * 100) + "%";
      box.style.width = ((r[3] - r[1]) * 100) + "%";
      box.style.height = ((r[4] - r[2]) * 100) + "%";
      frame.appendChild(box);
      if (!first) { first = box; }
    });
    return first;
  }

  function showPage(n) {
    if (!viewer) { return null; }
    n = Math.max(1, Math.min(pageCount(), n));
    current.page = n;
    var img = document.getElementById("page-image");
    var src = "/paper/" + encodeURIComponent(viewer.dataset.paper) + "/page/" + n + ".png";
    if (img.getAttribute("src") !== src) { img.setAttribute("src", src); }
    img.alt = "Page " + n + " of the paper";
    document.getElementById("page-label").textContent = "Page " + n + " of " + pageCount();
    viewer.dataset.page = String(n);
    var first = drawHighlights();
    viewer.dispatchEvent(new CustomEvent("pageshown", { detail: { page: n } }));  // viewer.js
    return first;
  }

  function showPassage(passage, page, scroll) {
    if (!viewer) { return false; }
    current.rects = [];
    current.passage = passage;
    showPage(page || 1);
    var label = document.getElementById("passage-label");
    label.textContent = "";
    fetch("/api/passage/" + encodeURIComponent(passage), { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (box) {
        if (!box || current.passage !== passage) { return; }
        current.rects = box.rects || [];
        var first = showPage(box.page || page || 1);
        label.textContent = current.rects.length ? "passage highlighted" : "passage not located on the page";
        viewer.dataset.highlighted = String(passage);
        if (scroll) {
          var wide = window.matchMedia("(min-width: 1100px)").matches;
          (wide && first ? first : viewer).scrollIntoView({ block: wide ? "nearest" : "start" });
          if (wide && first) { first.scrollIntoView({ block: "center" }); }
        }
      })
      .catch(function () { label.textContent = "the passage could not be loaded"; });
    return true;
  }

  if (viewer) {
    document.getElementById("page-prev").addEventListener("click", function () { showPage(current.page - 1); });
    document.getElementById("page-next").addEventListener("click", function () { showPage(current.page + 1); });
    viewer.addEventListener("showpage", function (event) { showPage(event.detail.page); });  // viewer.js
    var params = new URLSearchParams(window.location.search);
    if (params.get("passage")) {
      showPassage(params.get("passage"), parseInt(params.get("page"), 10) || 1, true);
    } else if (params.get("page")) {
      showPage(parseInt(params.get("page"), 10) || 1);
    }
  }

  // ---- tooltips ----------------------------------------------------------------
  // A tooltip sits just above its sentence's first line, touching it (the pointer moves into it
  // without leaving the sentence), or below its last line where the screen has no room above.
  function place(sentence) {
    var tip = sentence.querySelector(":scope > .tip");
    var box = sentence.closest(".analysis");
    var lines = sentence.getClientRects();
    if (!tip || !box || !lines.length) { return; }
    tip.classList.add("measuring");
    var width = tip.offsetWidth, height = tip.offsetHeight;
    tip.classList.remove("measuring");
    var outer = box.getBoundingClientRect();
    var first = lines[0], last = lines[lines.length - 1];
    var top = first.top - height >= 0 ? first.top - height : last.bottom;
    var left = Math.max(8, Math.min(first.left - outer.left, box.clientWidth - width - 8));
    tip.style.top = (top - outer.top - box.clientTop) + "px";
    tip.style.left = (left - box.clientLeft) + "px";
  }
  document.addEventListener("mouseover", function (event) {
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence && !sentence.contains(event.relatedTarget)) { place(sentence); }
  });
  document.addEventListener("focusin", function (event) {
    if (event.target.classList && event.target.classList.contains("sent")) { place(event.target); }
  });
  // A focused sentence also shows its tooltip (keyboard users), so closing one drops focus too.
  function closeAll() {
    document.querySelectorAll(".sent.open").forEach(function (s) { s.classList.remove("open"); });
    var active = document.activeElement;
    if (active && active.closest && active.closest(".sent")) { active.blur(); }
  }
  function pin(sentence) {
    var wasOpen = sentence.classList.contains("open");
    closeAll();
    var shown = sentence.classList.contains("flagged") || (analyses && analyses.classList.contains("show-all"));
    if (!wasOpen && shown) {
      sentence.classList.add("open");
      place(sentence);
      sentence.focus();
      // a flagged sentence opens its closest passage, a supported one the passage that supports it
      if (sentence.dataset.passage) { showPassage(sentence.dataset.passage, parseInt(sentence.dataset.page, 10), false); }
    }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-passage]") : null;
    if (link && viewer) {
      event.preventDefault();
      showPassage(link.dataset.passage, parseInt(link.dataset.page, 10), true);
      return;
    }
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence) {
      if (!event.target.closest(".tip")) { pin(sentence); }  // selecting text in a tooltip keeps it
      return;
    }
    if (viewer && viewer.contains(event.target)) { return; }
    closeAll();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.classList && event.target.classList.contains("sent")) {
      pin(event.target);
    }
    if (event.key === "Escape") { closeAll(); }
  });

  // ---- a review still running: say so, and reload when it is done ------------------
  var running = document.getElementById("review-running");
  if (running) {
    var timer = setInterval(function () {
      fetch(running.dataset.statusUrl, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (data) {
          if (!data.reviewing) { clearInterval(timer); window.location.reload(); return; }
          running.textContent = "This paper is being reviewed now (" + data.status + "). This page updates itself when the review is done.";
        })
        .catch(function () { /* retried on the next tick */ });
    }, 2000);
  }
})();
