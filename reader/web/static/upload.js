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
    if (job.status === "near-duplicate" && job.similar && job.paper_id) {
      status.appendChild(nearDuplicateNote(job.similar, job.paper_id));
    } else if (job.similar) {
      status.appendChild(similarNote(job.similar, job.paper_id));
    }
  }

  // A note on an upload that looks like a version of a stored paper: `before`, a link to that
  // paper, why it looks so, `after`.
  function versionNote(className, similar, before, after) {
    var note = document.createElement("span");
    note.className = className;
    var link = document.createElement("a");
    link.href = "/paper/" + encodeURIComponent(similar.paper_id);
    link.textContent = similar.title;
    note.appendChild(document.createTextNode(before));
    note.appendChild(link);
    note.appendChild(document.createTextNode(" (" + similar.reason + ")" + after));
    return note;
  }

  // "Remove this copy…": the upload's delete page, which asks first.
  function removeLink(paperId) {
    var remove = document.createElement("a");
    remove.className = "button secondary similar-remove";
    remove.href = "/paper/" + encodeURIComponent(paperId) + "/delete";
    remove.textContent = "Remove this copy…";
    return remove;
  }

  // An upload not reviewed because it is a version of a reviewed paper: a link to that paper's
  // review, "Review anyway" (queues it again, as the paper page's "Review again" does) and
  // "Remove this copy…".
  function nearDuplicateNote(similar, paperId) {
    var note = versionNote("job-similar job-near-duplicate hint", similar, "A version of ",
      ", whose review is there: this copy was not reviewed. ");
    var again = document.createElement("form");
    again.method = "post";
    again.action = "/paper/" + encodeURIComponent(paperId) + "/review";
    again.className = "inline";
    [["csrf_token", form.querySelector('input[name="csrf_token"]').value], ["cache", "reuse"]].forEach(function (pair) {
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = pair[0];
      field.value = pair[1];
      again.appendChild(field);
    });
    var button = document.createElement("button");
    button.type = "submit";
    button.className = "secondary review-anyway";
    button.textContent = "Review anyway";
    again.appendChild(button);
    note.appendChild(again);
    note.appendChild(document.createTextNode(" "));
    note.appendChild(removeLink(paperId));
    return note;
  }

  // A finished upload that looks like a version of a stored paper (it is kept all the same).
  // It offers to remove this copy or to compare the two.
  function similarNote(similar, paperId) {
    var note = versionNote("job-similar hint", similar, "Looks like a version of ", "; kept as a paper of its own. ");
    if (paperId) {
      var compare = document.createElement("a");
      compare.className = "similar-compare";
      compare.href = "/table?paper=" + encodeURIComponent(similar.paper_id) + "&paper=" + encodeURIComponent(paperId);
      compare.textContent = "compare the two";
      note.appendChild(removeLink(paperId));
      note.appendChild(document.createTextNode(" or "));
      note.appendChild(compare);
      note.appendChild(document.createTextNode("; the library tells them apart by file and date."));
    }
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
  // The time left is steadied here: the last one shown counts down, and a new estimate moves it
  // a third of the way (a review's percent moves by stages, so each estimate alone swings).
  var shownLeft = null;  // { seconds, at } of the time left shown last
  function steady(previous, estimate, now) {
    if (estimate === null || estimate === undefined) { return null; }
    if (!previous) { return { seconds: estimate, at: now }; }
    var counted = Math.max(0, previous.seconds - (now - previous.at) / 1000);
    return { seconds: counted + (estimate - counted) / 3, at: now };
  }
  function duration(seconds) {  // as reader.web.progress.duration
    if (seconds < 60) { return Math.max(5, Math.round(seconds / 5) * 5) + " s"; }
    var minutes = Math.round(seconds / 60);
    return minutes < 90 ? minutes + " min" : Math.round(minutes / 6) / 10 + " h";
  }
  window.readerUpload = { steady: steady, duration: duration };
  function summarize(summary) {
    if (!summary || !summary.total) { overall.hidden = true; return; }
    overall.hidden = false;
    overall.querySelector("progress").value = summary.percent;
    var text = summary.text;
    if (summary.head && summary.left_s !== null && summary.left_s !== undefined) {
      shownLeft = steady(shownLeft, summary.left_s, Date.now());
      text = summary.head + " · about " + duration(shownLeft.seconds) + " left";
    } else if (summary.done === summary.total) {
      shownLeft = null;
    }
    document.getElementById("overall-text").textContent = text;
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
          if (["done", "error", "near-duplicate"].indexOf(job.status) < 0) { running = true; batch[job.id] = true; }
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

  // The file sent with its progress shown (a message with a bar: how much has gone, at what rate);
  // the message goes once the server has answered.
  function megabytes(n) { return (n / 1048576).toFixed(n < 10485760 ? 1 : 0) + " MB"; }
  function post(file, body) {
    var li = say(file.name + ": sending…", "info sending");
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.setAttribute("aria-label", "Sending " + file.name);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(bar);
    var started = Date.now();
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/upload");
      xhr.withCredentials = true;
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.addEventListener("progress", function (event) {
        if (!event.lengthComputable) { return; }
        var percent = Math.round(event.loaded * 100 / event.total);
        bar.value = percent;
        var rate = event.loaded / Math.max(0.001, (Date.now() - started) / 1000);
        var left = rate > 0 ? (event.total - event.loaded) / rate : 0;
        li.firstChild.textContent = file.name + ": sending " + percent + "% (" + megabytes(event.loaded) + " of " +
          megabytes(event.total) + (percent < 100 && left >= 1 ? ", about " + duration(left) + " left" : "") + ")";
        if (percent >= 100) { li.firstChild.textContent = file.name + ": sent; the server is reading it…"; }
      });
      xhr.addEventListener("load", function () {
        li.remove();
        var data;
        try { data = JSON.parse(xhr.responseText); } catch (e) { data = { errors: [file.name + ": upload failed (HTTP " + xhr.status + ")"] }; }
        resolve(data);
      });
      xhr.addEventListener("error", function () { li.remove(); reject(new Error("network")); });
      xhr.addEventListener("abort", function () { li.remove(); reject(new Error("aborted")); });
      xhr.send(body);
    });
  }

  function send(file) {
    var body = new FormData();
    body.append("files", file, file.name);
    return post(file, body).then(function (data) {
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

  // The files chosen, sent, and the input emptied for the next choice; false when none is chosen.
  function sendChosen() {
    if (!input.files.length) { return false; }
    sendAll(input.files);
    input.value = "";
    return true;
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!sendChosen()) { input.click(); }  // nothing chosen yet: open the picker
  });
  input.addEventListener("change", sendChosen);
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
