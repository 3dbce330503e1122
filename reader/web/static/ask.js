// Ask page: the question is answered in the background; the page shows what is being done
// and for how long, then opens the stored answer (its own, bookmarkable address).
(function () {
  "use strict";
  var form = document.getElementById("ask-form");
  if (!form || !window.fetch) { return; }
  var wait = document.getElementById("ask-wait");
  var button = document.getElementById("ask-button");
  var failed = document.getElementById("ask-failed");

  function busy(on) {
    button.disabled = on;
    button.textContent = on ? "Answering…" : "Ask";
    form.setAttribute("aria-busy", on ? "true" : "false");
  }

  function follow(job) {
    wait.hidden = false;
    wait.textContent = job.words + "… " + Math.round(job.elapsed_s) + " s";
    if (job.status === "done" && job.url) { window.location.assign(job.url); return; }
    if (job.status === "error") {
      busy(false);
      wait.hidden = true;
      failed.hidden = false;
      failed.textContent = job.error;
      return;
    }
    setTimeout(function () {
      fetch("/api/ask/" + encodeURIComponent(job.id), { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(follow)
        .catch(function () { setTimeout(function () { follow(job); }, 1000); });
    }, 500);
  }

  // Ctrl+Enter (Cmd+Enter on a Mac) in the question box asks; a plain Enter is a new line
  document.getElementById("question").addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.isComposing) { return; }
    event.preventDefault();
    if (button.disabled) { return; }
    if (form.requestSubmit) { form.requestSubmit(button); } else { button.click(); }
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var previous = document.getElementById("answer");
    if (previous) { previous.hidden = true; }  // the last answer is not this question's
    var stale = document.getElementById("ask-error");
    if (stale) { stale.hidden = true; }
    failed.hidden = true;
    busy(true);
    wait.hidden = false;
    wait.textContent = "Sending the question…";
    fetch("/api/ask", { method: "POST", body: new FormData(form), credentials: "same-origin",
                        headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (job) {
        if (job.error && !job.id) { throw new Error(job.error); }
        follow(job);
      })
      .catch(function (err) {
        busy(false);
        wait.hidden = true;
        failed.hidden = false;
        failed.textContent = err && err.message ? err.message : "The question did not reach the server.";
      });
  });
})();
