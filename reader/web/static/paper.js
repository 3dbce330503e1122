// Paper page: tooltips (click or Enter pins one), the verdict toggle, the PDF's pages beside
// the analyses with a passage highlighted, and a reload when a running review finishes.
(function () {
  "use strict";
  var toggle = document.getElementById("show-all");
  var analyses = document.getElementById("analyses");
  var viewer = document.getElementById("pdf");

  // A sentence's own text, without its tooltip.
  function ownText(sentence) {
    return Array.prototype.filter.call(sentence.childNodes, function (n) {
      return !(n.classList && n.classList.contains("tip"));
    }).map(function (n) { return n.textContent; }).join("").replace(/\s+/g, " ").trim();
  }
  var VERDICT_NAMES = { supported: "Supported", unanswered: "Not answered by the verifier", unchecked: "Not checked", unsupported: "Flagged" };

  // Only flagged sentences are in the Tab order (buttons that open their tooltip), unless every
  // verdict is shown; then every sentence is one, named by its verdict and its text.
  if (toggle && analyses) {
    toggle.addEventListener("change", function () {
      analyses.classList.toggle("show-all", toggle.checked);
      analyses.querySelectorAll(".sent:not(.flagged):not(.tool-finding)").forEach(function (s) {
        s.tabIndex = toggle.checked ? 0 : -1;
        if (toggle.checked) {
          s.setAttribute("role", "button");
          s.setAttribute("aria-expanded", String(s.classList.contains("open")));
          s.setAttribute("aria-label", (VERDICT_NAMES[s.dataset.verdict] || s.dataset.verdict) + ": " + ownText(s));
        } else {
          ["role", "aria-expanded", "aria-label"].forEach(function (a) { s.removeAttribute(a); });
        }
      });
    });
  }

  // ---- the PDF's pages ---------------------------------------------------------
  // rects: the passage's; sentence: the evidence sentence's within it (drawn strongly, the
  // passage then faintly)
  var current = { page: 1, rects: [], sentence: [], passage: null };
  function pageCount() { return viewer ? parseInt(viewer.dataset.pages, 10) || 1 : 1; }

  function drawHighlights() {
    var frame = document.getElementById("page-frame");
    frame.querySelectorAll(".hl").forEach(function (h) { h.remove(); });
    var first = null, strong = null;
    var faint = current.sentence.length > 0;
    // the sentence's boxes first: the first box is the one brought on screen
    current.sentence.concat(current.rects).forEach(function (r, i) {
      if (r[0] !== current.page) { return; }
      var isSentence = i < current.sentence.length;
      var box = document.createElement("div");
      box.className = isSentence ? "hl hl-sentence" : faint ? "hl hl-faint" : "hl";
      box.style.left = (r[1] * 100) + "%";
      box.style.top = (r[2] * 100) + "%";
      box.style.width = ((r[3] - r[1]) * 100) + "%";
      box.style.height = ((r[4] - r[2]) * 100) + "%";
      frame.appendChild(box);
      if (!first) { first = box; }
      if (isSentence && !strong) { strong = box; }
    });
    return strong || first;
  }

  // The page holding most of a passage (the largest area of its rectangles), so one that starts
  // with a line at the foot of a page opens where it is read; null when it has none.
  function mainPage(rects) {
    var area = {}, best = null;
    rects.forEach(function (r) { area[r[0]] = (area[r[0]] || 0) + (r[3] - r[1]) * (r[4] - r[2]); });
    Object.keys(area).forEach(function (p) {
      if (best === null || area[p] > area[best]) { best = p; }
    });
    return best === null ? null : parseInt(best, 10);
  }

  // The bar says whether the passage is on the page shown, and where else it goes on: a button
  // "continues on p. N" / "continued from p. N" turns to that page.
  function describePassage() {
    var label = document.getElementById("passage-label");
    if (!label || current.passage === null || !current.rects.length) { return; }
    var pages = [];
    current.rects.forEach(function (r) { if (pages.indexOf(r[0]) < 0) { pages.push(r[0]); } });
    pages.sort(function (a, b) { return a - b; });
    var before = pages.filter(function (p) { return p < current.page; });
    var after = pages.filter(function (p) { return p > current.page; });
    label.textContent = pages.indexOf(current.page) >= 0 ? "passage highlighted" : "the passage is on p. " + pages.join(", ");
    function turn(text, page, cls) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link-button passage-turn " + cls;
      button.textContent = text + page;
      button.addEventListener("click", function () { showPage(page); });
      label.appendChild(document.createTextNode(" · "));
      label.appendChild(button);
    }
    if (before.length) { turn("continued from p. ", before[before.length - 1], "from"); }
    if (after.length) { turn("continues on p. ", after[0], "on"); }
  }

  // The address keeps the page (viewer.js); a passage in it is dropped once its pages are left,
  // so a reload opens the page that was read.
  function forgetPassageAway() {
    var url = new URL(window.location.href);
    if (!url.searchParams.get("passage") || !current.rects.length) { return; }
    if (current.rects.concat(current.sentence).some(function (r) { return r[0] === current.page; })) { return; }
    url.searchParams.delete("passage");
    history.replaceState(history.state, "", url.href);
  }

  function showPage(n) {
    if (!viewer) { return null; }
    n = Math.max(1, Math.min(pageCount(), n));
    current.page = n;
    var img = document.getElementById("page-image");
    // at the scale viewer.js asked for (the zoom and the screen's pixel ratio)
    var src = "/paper/" + encodeURIComponent(viewer.dataset.paper) + "/page/" + n + ".png" + (viewer.dataset.scaleQuery || "");
    if (img.getAttribute("src") !== src) { img.setAttribute("src", src); }
    img.alt = "Page " + n + " of the paper";
    document.getElementById("page-label").textContent = "Page " + n + " of " + pageCount();
    viewer.dataset.page = String(n);
    var first = drawHighlights();
    describePassage();
    forgetPassageAway();
    viewer.dispatchEvent(new CustomEvent("pageshown", { detail: { page: n } }));  // viewer.js
    return first;
  }

  // On a phone the page is below the analyses: a page link scrolls to the highlight, and a
  // button fixed at the foot of the screen goes back to where the link was.
  var back = document.getElementById("back-to-text");
  var backTo = null;
  function showBack(from) {
    if (!back || !from) { return; }
    backTo = from;
    back.hidden = false;
  }
  if (back) {
    back.addEventListener("click", function () {
      back.hidden = true;
      if (!backTo) { return; }
      var target = backTo.closest(".sent") || backTo;
      target.scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
      backTo = null;
    });
    if (window.IntersectionObserver) {  // gone once the pages are out of sight
      new IntersectionObserver(function (entries) {
        if (!entries[0].isIntersecting) { back.hidden = true; }
      }).observe(viewer);
    }
  }
  // The viewer scrolls in itself to bring the highlight to the middle of the part of it on screen.
  function scrollViewerTo(first) {
    var style = window.getComputedStyle(viewer);
    if (!first || !/(auto|scroll)/.test(style.overflowY) || viewer.scrollHeight <= viewer.clientHeight) { return; }
    var box = viewer.getBoundingClientRect(), at = first.getBoundingClientRect();
    var middle = (Math.max(box.top, 0) + Math.min(box.bottom, window.innerHeight)) / 2;
    viewer.scrollTop += at.top + at.height / 2 - middle;
  }
  // The highlight brought on screen. Beside the text (a wide screen) the viewer scrolls, and the
  // window as little as it takes while the sentence or link it came from stays in sight. On a
  // phone the pages are below the text: only a page link (moveWindow) scrolls the window down to
  // the highlight, and a button fixed at the foot of the screen goes back.
  function revealBeside(first, keep) {
    scrollViewerTo(first);
    var at = first.getBoundingClientRect();
    if (at.top < 0 || at.bottom > window.innerHeight) {
      window.scrollBy(0, at.top < 0 ? at.top - 24 : at.bottom - window.innerHeight + 24);
      scrollViewerTo(first);  // the viewer may have come to stick at the top on the way
      if (keep) { keep.scrollIntoView({ block: "nearest" }); }
    }
  }
  function revealHighlight(first, from, moveWindow) {
    var keep = from ? (from.closest(".sent") || from) : null;
    var beside = window.matchMedia("(min-width: 1100px)").matches;
    if (!first && beside) {
      if (moveWindow) { viewer.scrollIntoView({ block: "nearest" }); }
      return;
    }
    if (!beside && !moveWindow) { return; }
    var go = beside
      ? function () { revealBeside(first, keep); }
      : function () { (first || viewer).scrollIntoView({ block: first ? "center" : "start" }); };
    go();
    // the image may come after (its room is kept, but a page of another size moves the highlight)
    var img = document.getElementById("page-image");
    if (first && img && !img.complete) { img.addEventListener("load", go, { once: true }); }
    if (!beside) { showBack(from); }
  }

  // `claim`: the analysis's sentence, whose evidence sentence in the passage is drawn strongly
  function showPassage(passage, page, scroll, from, claim) {
    if (!viewer) { return false; }
    current.rects = [];
    current.sentence = [];
    current.passage = passage;
    showPage(page || 1);
    var label = document.getElementById("passage-label");
    label.textContent = "";
    var url = "/api/passage/" + encodeURIComponent(passage) + (claim ? "?sentence=" + encodeURIComponent(claim.slice(0, 1000)) : "");
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (box) {
        if (!box || current.passage !== passage) { return; }
        current.rects = box.rects || [];
        current.sentence = box.sentence_rects || [];
        if (!current.rects.length) { label.textContent = "passage not located on the page"; }
        // the sentence's page first (a footnote opens on its own page), else the passage's
        var first = showPage(mainPage(current.sentence) || mainPage(current.rects) || box.page || page || 1);
        viewer.dataset.highlighted = String(passage);
        viewer.dataset.sentence = current.sentence.length ? "placed" : "";
        revealHighlight(first, from, scroll);
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
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence && (sentence === event.target || !event.target.closest(".tip"))) { place(sentence); }
  });
  // A focused sentence also shows its tooltip (keyboard users): Esc hides it and leaves the focus
  // where it is, so Tab goes on to the next item.
  function closeAll() {
    document.querySelectorAll(".sent.open").forEach(function (s) {
      s.classList.remove("open");
      if (s.hasAttribute("aria-expanded")) { s.setAttribute("aria-expanded", "false"); }
    });
    var active = document.activeElement;
    var focused = active && active.closest ? active.closest(".sent") : null;
    if (focused) { focused.classList.add("tip-closed"); }  // hidden till it loses the focus
  }
  document.addEventListener("focusout", function (event) {
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence && !sentence.contains(event.relatedTarget)) { sentence.classList.remove("tip-closed"); }
  });
  function pinnable(sentence) {
    return sentence.classList.contains("flagged") || sentence.classList.contains("tool-finding") ||
      (analyses && analyses.classList.contains("show-all"));
  }
  // whether `node` is the first thing of the sentence's text (its [待验证] mark aside)
  function startsWith(sentence, node) {
    var range = document.createRange();
    range.setStart(sentence, 0);
    range.setEndBefore(node);
    return !range.toString().replace("[待验证]", "").trim();
  }
  function pin(sentence, keepOpen) {
    var wasOpen = sentence.classList.contains("open") && !keepOpen;
    closeAll();
    // a flagged sentence and the tool's own finding open on their own; the others when every verdict is shown
    var shown = sentence.classList.contains("flagged") || sentence.classList.contains("tool-finding") ||
      (analyses && analyses.classList.contains("show-all"));
    if (!wasOpen && shown) {
      sentence.classList.remove("tip-closed");
      sentence.classList.add("open");
      if (sentence.hasAttribute("aria-expanded")) { sentence.setAttribute("aria-expanded", "true"); }
      place(sentence);
      sentence.focus();
      // a flagged sentence opens its closest passage, a supported one the passage that supports it
      if (sentence.dataset.passage) { showPassage(sentence.dataset.passage, parseInt(sentence.dataset.page, 10), false, sentence, ownText(sentence)); }
    }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-passage]") : null;
    if (link && viewer) {
      event.preventDefault();
      var of = link.closest(".sent");
      showPassage(link.dataset.passage, parseInt(link.dataset.page, 10), true, link, of ? ownText(of) : "");
      return;
    }
    // a citation marker goes to its row of the references cited (the list opened)
    var cite = event.target.closest ? event.target.closest("a.cite[href^='#']") : null;
    // a pointer's click on the marker a sentence starts with opens the sentence (its passage),
    // as a click on its words does; the keyboard's Enter on the marker still goes to the list
    var opens = cite && event.detail > 0 ? cite.closest(".sent") : null;
    if (opens && startsWith(opens, cite) && pinnable(opens)) {
      event.preventDefault();
      pin(opens);
      return;
    }
    if (cite) {
      var row = document.getElementById(cite.getAttribute("href").slice(1));
      var list = row && row.closest("details");
      if (list) { list.open = true; }
      return;
    }
    // a flagged sentence in the list: the page goes to it, its tooltip opens and the viewer
    // shows its passage, as a click on the sentence does
    var listed = event.target.closest ? event.target.closest("#flagged-list a[href^='#s-']") : null;
    if (listed) {
      var target = document.getElementById(listed.getAttribute("href").slice(1));
      if (target) {
        event.preventDefault();
        history.replaceState(null, "", listed.getAttribute("href"));
        target.scrollIntoView({ block: "center" });
        pin(target, true);
      }
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
