// Upload page: one request per file (so each gets its own message), then poll /api/jobs
// until every review has finished. Text from the server is only ever set as textContent.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  var input = document.getElementById("file-input");
  var messages = document.getElementById("upload-messages");
  var tbody = document.querySelector("#jobs tbody");
  var noJobs = document.getElementById("no-jobs");
  var polling = null;

  function say(text, kind) {
    var li = document.createElement("li");
    li.className = "message " + (kind || "error");
    li.textContent = text;
    messages.appendChild(li);
  }

  function cell(cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    return td;
  }

  function rowFor(job) {
    var row = tbody.querySelector('tr[data-job="' + job.id + '"]');
    if (row) { return row; }
    row = document.createElement("tr");
    row.dataset.job = job.id;
    var progressCell = cell("");
    var bar = document.createElement("progress");
    bar.max = 100;
    var pct = document.createElement("span");
    pct.className = "job-percent";
    progressCell.appendChild(bar);
    progressCell.appendChild(document.createTextNode(" "));
    progressCell.appendChild(pct);
    row.appendChild(cell("job-name"));
    row.appendChild(cell("job-stage"));
    row.appendChild(progressCell);
    row.appendChild(cell("job-status"));
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
    row.querySelector(".job-status").textContent = job.status + (job.error ? ": " + job.error : "");
  }

  function poll() {
    fetch("/api/jobs", { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        var running = false;
        (data.jobs || []).forEach(function (job) {
          render(job);
          if (job.status !== "done" && job.status !== "error") { running = true; }
        });
        if (!running && polling) { clearInterval(polling); polling = null; }
      })
      .catch(function () { /* a missed poll is retried on the next tick */ });
  }

  function startPolling() {
    if (!polling) { polling = setInterval(poll, 1000); }
    poll();
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
      (data.jobs || []).forEach(render);
      if ((data.jobs || []).length) { startPolling(); }
    }).catch(function () { say(file.name + ": the upload did not reach the server.", "error"); });
  }

  function sendAll(files) {
    messages.textContent = "";
    Array.prototype.forEach.call(files, send);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!input.files.length) { say("Choose one or more PDF files first.", "error"); return; }
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
