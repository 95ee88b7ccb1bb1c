#!/usr/bin/env python3
"""A fake OpenAI-compatible model server for Relay's integration tests — a test double, not a
model. It answers POST /v1/chat/completions (streamed or not, plain or with a json_schema
response_format, as llama-server does) with a deterministic reply naming the agent whose system
prompt it got, and appends one JSON line per request to a log, so a test can prove which model
calls a crashed-and-resumed run repeated.

usage: fake-model-server.py PORT LOGFILE [DELAY_SECONDS]
"""
import hashlib
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOG = sys.argv[2]
DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
lock = threading.Lock()
count = 0
# A plan worker whose subtask holds "(slow)" waits this long the first time (a worker still busy when
# a test kills the relay); asked again, it answers at once.
SLOW = 60.0
slow_seen = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.endswith("/models"):
            self.send(200, json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}))
        elif self.path == "/props":
            # As llama-server says how many requests it takes at once (its slots).
            self.send(200, json.dumps({"total_slots": 2, "default_generation_settings": {"n_ctx": 4096}}))
        elif self.path.endswith("/health"):
            self.send(200, json.dumps({"status": "ok"}))
        else:
            self.send(404, json.dumps({"error": {"message": "not found"}}))

    def do_POST(self):
        global count
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages", [])
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        match = re.search(r"You are (\w+)", system)
        agent = match.group(1) if match else "someone"
        with lock:
            count += 1
            number = count
            with open(LOG, "a") as log:
                log.write(json.dumps({"n": number, "agent": agent, "user": user, "messages": len(messages)}) + "\n")
        digest = hashlib.sha1(user.encode()).hexdigest()[:8]
        text = f"{agent} answers ({digest}): llamas are camelids."
        if agent == "Wren" or agent == "Paige":
            text += " They live in the Andes."
        schema = json.dumps(request.get("response_format") or {})
        if '"subtasks"' in schema:
            # A plan relay's planner: three subtasks; the second is slow the first time it is asked,
            # unless the request says "(no slow part)" (a test about something else than a crash).
            second = "second part" if "(no slow part)" in user else "second part (slow)"
            content = json.dumps({"subtasks": ["first part", second, "third part"]})
        else:
            content = json.dumps({"answer": text}) if request.get("response_format") else text
        delay = DELAY
        if re.search(r"\[Your Subtask[^\]]*\]:\n[^\n]*\(slow\)", user):
            with lock:
                first_time = digest not in slow_seen
                slow_seen.add(digest)
            if first_time:
                delay += SLOW
        time.sleep(delay)
        usage = {"prompt_tokens": sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1, "completion_tokens": len(text) // 4 + 1}
        if not request.get("stream"):
            self.send(200, json.dumps({"id": "fake", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "usage": usage}))
            return
        pieces = [content[i:i + 12] for i in range(0, len(content), 12)]
        events = [{"id": "fake", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
        events.append({"id": "fake", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        events.append({"id": "fake", "object": "chat.completion.chunk", "choices": [], "usage": usage})
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self.send(200, body, "text/event-stream")


ThreadingHTTPServer.allow_reuse_address = True
server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"fake model server on 127.0.0.1:{PORT}", flush=True)
server.serve_forever()
