// Ask page: asking takes a while (grading, correction, a groundedness check); say so.
(function () {
  "use strict";
  var form = document.getElementById("ask-form");
  if (!form) { return; }
  form.addEventListener("submit", function () {
    var wait = document.getElementById("ask-wait");
    var button = document.getElementById("ask-button");
    if (wait) { wait.hidden = false; }
    if (button) { button.disabled = true; }
  });
})();
