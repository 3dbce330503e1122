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
  function pin(sentence) {
    var wasOpen = sentence.classList.contains("open");
    document.querySelectorAll(".sent.open").forEach(function (s) { s.classList.remove("open"); });
    var shown = sentence.classList.contains("flagged") || (analyses && analyses.classList.contains("show-all"));
    if (!wasOpen && shown) { sentence.classList.add("open"); }
  }
  document.addEventListener("click", function (event) {
    var sentence = event.target.closest ? event.target.closest(".sent") : null;
    if (sentence) { pin(sentence); return; }
    document.querySelectorAll(".sent.open").forEach(function (s) { s.classList.remove("open"); });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.classList && event.target.classList.contains("sent")) {
      pin(event.target);
    }
    if (event.key === "Escape") {
      document.querySelectorAll(".sent.open").forEach(function (s) { s.classList.remove("open"); });
    }
  });
})();
