"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests.

It answers POST /v1/chat/completions and GET /v1/models. Each request takes the
next scripted fault or answer from a queue; when the queue is empty, `respond`
(a function of the last user message) gives the answer. It records every
request and the highest number of requests in flight at once.

As llama-server does, it can add llama.cpp's `timings` object to each completion
(`timings=`: a dict, or a function of the last user message returning one or None;
`usage` then counts prompt_n + cache_n prompt and predicted_n generated tokens),
and, as OpenAI does, `usage.prompt_tokens_details.cached_tokens` (`cached_tokens=`).

    with LoopbackOpenAI(respond=lambda prompt: "[1] YES") as server:
        server.enqueue(Fault.status(429, headers={"Retry-After": "1"}), Fault.answer("hello"))
        llm = OpenAICompatLLM(LLMSettings(base_url=server.base_url, model="m", api_key="k"))

Every hang is bounded (it waits at most `seconds`, or until the server stops),
so a test can never hang on it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Fault:
    """One scripted reply. Build with the class methods."""

    kind: str  # answer | status | hang | raw | trickle
    text: str = ""
    status_code: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    seconds: float = 0.0
    logprobs: list | None = None  # choices[0].logprobs.content, as the server sends it
    for_s: float = 0.0  # a trickle's longest run

    @classmethod
    def answer(cls, text: str, *, logprobs: list | None = None) -> Fault:
        """A completion of `text`; with `logprobs`, `choices[0].logprobs.content` is that list,
        sent as given (a test may put what no model would into it)."""
        return cls("answer", text=text, logprobs=logprobs)

    @classmethod
    def trickle(cls, text: str, every_s: float = 0.02, *, for_s: float = 20.0) -> Fault:
        """The completion of `text`, status line and headers included, one byte every `every_s`
        seconds (stopping after `for_s` seconds or when the client leaves)."""
        return cls("trickle", text=text, seconds=every_s, for_s=for_s)

    @classmethod
    def status(cls, code: int, message: str = "", *, headers: dict | None = None) -> Fault:
        body = json.dumps(
            {"error": {"message": message or f"status {code}", "type": "error", "code": code}}
        ).encode()
        return cls("status", status_code=code, body=body, headers=headers or {})

    @classmethod
    def hang(cls, seconds: float, then: str = "too late") -> Fault:
        """Wait `seconds` before answering `then` (a client timeout should fire first)."""
        return cls("hang", text=then, seconds=seconds)

    @classmethod
    def raw(cls, body: bytes, code: int = 200, content_type: str = "application/json") -> Fault:
        """Send these bytes as the body, e.g. malformed JSON."""
        return cls("raw", status_code=code, body=body, headers={"Content-Type": content_type})


class LoopbackOpenAI:
    def __init__(
        self,
        respond: Callable[[str], str] | None = None,
        *,
        models: tuple[str, ...] = ("test-model",),
        api_key: str | None = None,
        delay_s: float = 0.0,
        timings: dict | Callable[[str], dict | None] | None = None,
        cached_tokens: int | None = None,
    ):
        self.respond = respond or (lambda prompt: "ok")
        self.timings = timings
        self.cached_tokens = cached_tokens
        self.models = list(models)
        self.api_key = api_key
        self.delay_s = delay_s
        self.requests: list[dict] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._queue: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------
    def enqueue(self, *faults: Fault) -> LoopbackOpenAI:
        with self._lock:
            self._queue.extend(faults)
        return self

    @property
    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    # -- lifecycle ---------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> LoopbackOpenAI:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                server._handle(self, None)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                server._handle(self, self.rfile.read(length))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> LoopbackOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- request handling --------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes | None) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            self._dispatch(handler, raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _dispatch(self, handler: BaseHTTPRequestHandler, raw: bytes | None) -> None:
        body = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        with self._lock:
            self.requests.append(
                {
                    "path": handler.path,
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "json": body,
                    "time": time.monotonic(),
                }
            )
        if self.api_key is not None:
            if handler.headers.get("Authorization") != f"Bearer {self.api_key}":
                return self._send(handler, 401, _error("Incorrect API key provided.", "invalid_api_key"))
        if handler.command == "GET":
            if handler.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "owned_by": "loopback"} for m in self.models]
                return self._send(handler, 200, {"object": "list", "data": data})
            return self._send(handler, 404, _error(f"no route {handler.path}", "not_found"))
        if not handler.path.rstrip("/").endswith("/chat/completions") or body is None:
            return self._send(handler, 404, _error(f"no route {handler.path}", "not_found"))
        model = body.get("model")
        if model not in self.models:
            return self._send(
                handler,
                404,
                _error(
                    f"The model `{model}` does not exist or you do not have access to it.", "model_not_found"
                ),
            )

        with self._lock:
            fault = self._queue.popleft() if self._queue else None
        if self.delay_s:
            self._stopping.wait(self.delay_s)
        prompt = _last_user(body)
        if fault is None:
            return self._send(handler, 200, self._completion(model, self.respond(prompt), prompt))
        if fault.kind == "answer":
            reply = self._completion(model, fault.text, prompt)
            if fault.logprobs is not None:
                reply["choices"][0]["logprobs"] = {"content": fault.logprobs}
            return self._send(handler, 200, reply)
        if fault.kind == "trickle":
            return self._trickle(handler, self._completion(model, fault.text, prompt), fault)
        if fault.kind == "hang":
            self._stopping.wait(fault.seconds)
            return self._send(handler, 200, self._completion(model, fault.text, prompt))
        if fault.kind == "status":
            return self._send_bytes(
                handler, fault.status_code, fault.body, {"Content-Type": "application/json", **fault.headers}
            )
        return self._send_bytes(handler, fault.status_code, fault.body, fault.headers)

    def _completion(self, model: str, text: str, prompt: str) -> dict:
        reply = _completion(model, text)
        timings = self.timings(prompt) if callable(self.timings) else self.timings
        if timings is not None:
            reply["timings"] = dict(timings)
            # llama-server counts usage from the same figures: the whole prompt is the tokens
            # it processed plus those it reused from its prompt cache
            usage = reply["usage"]
            if "prompt_n" in timings:
                usage["prompt_tokens"] = timings["prompt_n"] + timings.get("cache_n", 0)
            if "predicted_n" in timings:
                usage["completion_tokens"] = timings["predicted_n"]
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.cached_tokens is not None:
            reply["usage"]["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return reply

    def _trickle(self, handler, payload: dict, fault: Fault) -> None:
        body = json.dumps(payload).encode()
        reply = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        until = time.monotonic() + fault.for_s
        for n in range(len(reply)):
            if time.monotonic() > until or self._stopping.is_set():
                handler.close_connection = True
                return
            handler.wfile.write(reply[n : n + 1])
            handler.wfile.flush()
            self._stopping.wait(fault.seconds)

    def _send(self, handler, code: int, payload: dict) -> None:
        self._send_bytes(handler, code, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    @staticmethod
    def _send_bytes(handler, code: int, body: bytes, headers: dict) -> None:
        handler.send_response(code)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()


def _error(message: str, code: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _last_user(body: dict) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return message.get("content") or ""
    return ""


def _completion(model: str, text: str) -> dict:
    prompt_tokens, completion_tokens = 11, max(1, len(text.split()))
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
