// Paper page: click (or Enter) pins a sentence's tooltip; the checkbox shows every verdict.
(function () {
  "use strict";
  var toggle = document.getElementById("show-all");
  var analyses = document.getElementById("analyses");
  if (toggle && analyses) {
    toggle.addEventListener("change", function () {
      analyses.classList.toggle("show-all", toggle.checked);
    });
  }
  // A focused sentence also shows its tooltip (keyboard users), so closing one drops focus too.
  function closeAll() {
    document.querySelectorAll(".sent.open").forEach(function (s) { s.classList.remove("open"); });
    var active = document.activeElement;
    if (active && active.classList && active.classList.contains("sent")) { active.blur(); }
  }
  function pin(sentence) {
    var wasOpen = sentence.classList.contains("open");
    closeAll();
    var shown = sentence.classList.contains("flagged") || (analyses && analyses.classList.contains("show-all"));
    if (!wasOpen && shown) { sentence.classList.add("open"); sentence.focus(); }
  }
  document.addEventListener("click", function (event) {
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence) {
      if (!event.target.closest(".tip")) { pin(sentence); }  // selecting text in a tooltip keeps it
      return;
    }
    closeAll();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.classList && event.target.classList.contains("sent")) {
      pin(event.target);
    }
    if (event.key === "Escape") { closeAll(); }
  });
})();
