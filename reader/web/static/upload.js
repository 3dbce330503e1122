// Upload page: one request per file (so each gets its own message), then poll /api/jobs
// until every review has finished. Text from the server is only ever set as textContent.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  var input = document.getElementById("file-input");
  var messages = document.getElementById("upload-messages");
  var tbody = document.querySelector("#jobs tbody");
  var noJobs = document.getElementById("no-jobs");
  var overall = document.getElementById("overall");
  var serverStatus = document.getElementById("server-status");
  var polling = null;
  var missed = 0;  // polls in a row that got no answer from the server
  var MISSED_BEFORE_SAYING = 2;
  var POLL_TIMEOUT_MS = 5000;
  var batch = {};  // job id -> true: the jobs the overall bar follows
  if (overall.dataset.follow) { batch[overall.dataset.follow] = true; }  // a new review's landing

  function say(text, kind) {
    var li = document.createElement("li");
    li.className = "message " + (kind || "error");
    li.textContent = text;
    messages.appendChild(li);
    return li;
  }

  function cell(cls, label) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    if (label) { td.dataset.label = label; }
    return td;
  }

  function rowFor(job) {
    var row = tbody.querySelector('tr[data-job="' + job.id + '"]');
    if (row) { return row; }
    row = document.createElement("tr");
    row.dataset.job = job.id;
    var progressCell = cell("", "Progress");
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.setAttribute("aria-label", "Review of " + job.name);
    var pct = document.createElement("span");
    pct.className = "job-percent";
    progressCell.appendChild(bar);
    progressCell.appendChild(document.createTextNode(" "));
    progressCell.appendChild(pct);
    row.appendChild(cell("job-name"));
    row.appendChild(cell("job-stage", "Stage"));
    row.appendChild(progressCell);
    row.appendChild(cell("job-status", "Status"));
    tbody.insertBefore(row, tbody.firstChild);
    if (noJobs) { noJobs.hidden = true; }
    return row;
  }

  function render(job) {
    var row = rowFor(job);
    row.className = "job status-" + job.status;
    var name = row.querySelector(".job-name");
    name.textContent = "";
    if (job.paper_id && job.status === "done") {
      var link = document.createElement("a");
      link.href = "/paper/" + encodeURIComponent(job.paper_id);
      link.textContent = job.name;
      name.appendChild(link);
    } else {
      name.textContent = job.name;
    }
    row.querySelector(".job-stage").textContent = job.stage;
    row.querySelector("progress").value = job.percent;
    row.querySelector(".job-percent").textContent = job.percent + "%";
    var status = row.querySelector(".job-status");
    status.textContent = job.status + (job.error ? ": " + job.error : "");
    if (job.similar) { status.appendChild(similarNote(job.similar)); }
  }

  // A finished upload that looks like a version of a stored paper (it is kept all the same).
  function similarNote(similar) {
    var note = document.createElement("span");
    note.className = "job-similar hint";
    var link = document.createElement("a");
    link.href = "/paper/" + encodeURIComponent(similar.paper_id);
    link.textContent = similar.title;
    note.appendChild(document.createTextNode("Looks like a version of "));
    note.appendChild(link);
    note.appendChild(document.createTextNode(" (" + similar.reason + "); kept as a paper of its own."));
    return note;
  }

  // After MISSED_BEFORE_SAYING polls without an answer the page says so, and keeps trying.
  function answered(ok) {
    missed = ok ? 0 : missed + 1;
    var down = missed >= MISSED_BEFORE_SAYING;
    serverStatus.hidden = !down;
    serverStatus.textContent = down ? "The server is not answering; retrying…" : "";
  }

  // One bar for the papers being reviewed: the server sums them up, time left included
  // (reader.web.progress.batch_summary).
  function summarize(summary) {
    if (!summary || !summary.total) { overall.hidden = true; return; }
    overall.hidden = false;
    overall.querySelector("progress").value = summary.percent;
    document.getElementById("overall-text").textContent = summary.text;
  }

  function poll() {
    var followed = Object.keys(batch).join(",");
    // a server that takes the connection but never answers counts as not answering too
    var abort = window.AbortController ? new AbortController() : null;
    if (abort) { setTimeout(function () { abort.abort(); }, POLL_TIMEOUT_MS); }
    fetch("/api/jobs?batch=" + encodeURIComponent(followed), {
      headers: { "Accept": "application/json" }, credentials: "same-origin", signal: abort ? abort.signal : undefined
    })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }  // a proxy's error page, say
        return r.json();
      })
      .then(function (data) {
        answered(true);
        var running = false;
        (data.jobs || []).forEach(function (job) {
          render(job);
          if (job.status !== "done" && job.status !== "error") { running = true; batch[job.id] = true; }
        });
        summarize(data.batch);
        if (!running && polling) { clearInterval(polling); polling = null; }
      })
      .catch(function () { answered(false); /* and tried again on the next tick */ });
  }

  function startPolling() {
    if (!polling) { polling = setInterval(poll, 1000); }
    poll();
  }

  function sayKnown(known) {
    var li = say("", "info known");
    li.appendChild(document.createTextNode(known.name + " is already in the library (" + known.status + "): "));
    var link = document.createElement("a");
    link.href = known.url;
    link.textContent = known.title;
    li.appendChild(link);
    li.appendChild(document.createTextNode(". "));
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary review-again";
    button.textContent = "Review again…";
    // the page that says what a new review does and asks about the model's cached answers
    button.addEventListener("click", function () { window.location.assign(known.review_url); });
    li.appendChild(button);
  }

  function send(file) {
    var body = new FormData();
    body.append("files", file, file.name);
    return fetch("/upload", {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (r) {
      return r.json().catch(function () { return { errors: [file.name + ": upload failed (HTTP " + r.status + ")"] }; });
    }).then(function (data) {
      (data.errors || []).forEach(function (e) { say(e, "error"); });
      if (data.error) { say(file.name + ": " + data.error, "error"); }
      (data.known || []).forEach(sayKnown);
      var jobs = data.jobs || [];
      jobs.forEach(function (job) {
        batch[job.id] = true;
        render(job);
        if (job.notice) { say(job.notice, "info"); }
      });
      return jobs.filter(function (job) { return !job.notice; }).length;
    }).catch(function () { say(file.name + ": the upload did not reach the server.", "error"); return 0; });
  }

  function sendAll(files) {
    messages.textContent = "";  // a new batch: the last one's messages are stale
    var sent = Array.prototype.map.call(files, send);
    Promise.all(sent).then(function (counts) {
      var queued = counts.reduce(function (a, b) { return a + b; }, 0);
      if (queued) {
        var status = say(queued + " paper" + (queued === 1 ? "" : "s") + " queued for review.", "info");
        messages.insertBefore(status, messages.firstChild);
        startPolling();
      }
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!input.files.length) { input.click(); return; }  // nothing chosen yet: open the picker
    sendAll(input.files);
    input.value = "";
  });
  input.addEventListener("change", function () {
    if (input.files.length) { sendAll(input.files); input.value = ""; }
  });
  ["dragenter", "dragover"].forEach(function (name) {
    form.addEventListener(name, function (event) { event.preventDefault(); form.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    form.addEventListener(name, function (event) { event.preventDefault(); form.classList.remove("over"); });
  });
  form.addEventListener("drop", function (event) {
    if (event.dataTransfer && event.dataTransfer.files.length) { sendAll(event.dataTransfer.files); }
  });
  if (tbody.querySelector("tr.status-running, tr.status-queued")) { startPolling(); }
})();
