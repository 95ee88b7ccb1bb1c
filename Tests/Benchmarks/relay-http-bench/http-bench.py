#!/usr/bin/env python3
"""`make bench`: the HTTP API of `relay serve` on a scratch workspace with the scripted model,
measured by one client (Python's http.client, keep-alive) against a peer in the same run:

- per-request time of GET /health, next to llama-server's own /health (127.0.0.1:8080) when one
  answers, and to a bare TCP connect+close on the relay's port;
- a one-agent turn (POST /v1/chat/completions, model chat/writer) on the scripted model;
- SSE events per second when 1 and 100 clients replay a finished run's events, next to reading
  the same events.jsonl from the file;
- the daemon's resident memory idle, and at its peak while 100 clients stream.

Printed, never asserted. usage: http-bench.py RELAY_BINARY
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

relay = sys.argv[1]
base = tempfile.mkdtemp(prefix="relay-http-bench-")
root = os.path.join(base, "ws")
subprocess.run([relay, "init", root], check=True, stdout=subprocess.DEVNULL)
roster = [{"id": a, "name": n, "emoji": e, "color": c, "order": i, "tools": [], "grounding": False,
           "systemPrompt": f"You are {n}."} for i, (a, n, e, c) in enumerate(
    [("planner", "Paige", "📋", "#4A90D9"), ("researcher", "Remy", "🔎", "#2E9E6B"), ("writer", "Wren", "✍️", "#E67E22")])]
json.dump(roster, open(os.path.join(root, "AgentConfiguration.json"), "w"))
words = " ".join(f"word{i}" for i in range(400))  # 400 text deltas per agent
json.dump({"repeat": True, "replies": [{"text": words}]}, open(os.path.join(root, "script.json"), "w"))
config = json.load(open(os.path.join(root, "relay.json")))
config["model"] = {"provider": "scripted", "script": "script.json"}
config["triggers"] = []
json.dump(config, open(os.path.join(root, "relay.json"), "w"))

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
daemon = subprocess.Popen([relay, "serve", "-w", root, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def request(connection, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


def per_request(host, port, path, count):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    request(connection, "GET", path)  # warm up, connect
    start = time.perf_counter()
    for _ in range(count):
        request(connection, "GET", path)
    return (time.perf_counter() - start) / count


def connects(port, count):
    start = time.perf_counter()
    for _ in range(count):
        socket.create_connection(("127.0.0.1", port)).close()
    return (time.perf_counter() - start) / count


try:
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline or daemon.poll() is not None:
                raise SystemExit("relay serve did not start")
            time.sleep(0.05)
    time.sleep(0.5)
    idle = rss_kib(daemon.pid)

    print(f"relay-http-bench — {relay}")
    n = 1000
    relay_health = per_request("127.0.0.1", port, "/health", n)
    print(f"GET /health               relay {relay_health * 1e6:8.0f} µs/request  ({n} on one keep-alive connection)")
    print(f"  peer: TCP connect+close       {connects(port, 200) * 1e6:8.0f} µs")
    try:
        peer = per_request("127.0.0.1", 8080, "/health", n)
        print(f"  peer: llama-server /health    {peer * 1e6:8.0f} µs/request  → relay/llama-server = {relay_health / peer:.2f}×")
    except OSError:
        print("  peer: llama-server /health    (no server on 127.0.0.1:8080; `make model` starts one)")

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    turns = 20
    start = time.perf_counter()
    for i in range(turns):
        status, _ = request(connection, "POST", "/v1/chat/completions",
                            {"model": "chat/writer", "chat": f"bench-{i}", "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200, status
    turn = (time.perf_counter() - start) / turns
    print(f"one-agent turn (scripted)       {turn * 1e3:8.1f} ms/turn  ({turns} turns, 400-word reply, journaled and fsynced)"
          f"  → {turn / relay_health:.0f}× a /health")

    status, body = request(connection, "POST", "/runs", {"message": "hi", "chat": "bench-sse"})
    run = json.loads(body)["run"]
    while json.loads(request(connection, "GET", f"/runs/{run}")[1])["state"] != "done":
        time.sleep(0.05)
    log = os.path.join(root, ".relay", "runs", run, "events.jsonl")

    def replay(results, index):
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        client.request("GET", f"/runs/{run}/events")
        data = client.getresponse().read()
        results[index] = data.count(b"\nid: ") + data.startswith(b"id: ")

    start = time.perf_counter()
    with open(log, "rb") as file:
        lines = file.read().count(b"\n")
    file_time = time.perf_counter() - start
    for clients in (1, 100):
        results = [0] * clients
        peak = [0]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_kib(daemon.pid))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        threads = [threading.Thread(target=replay, args=(results, i)) for i in range(clients)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
        stop.set()
        sampler.join()
        total = sum(results)
        assert all(r == lines for r in results), (results[:3], lines)
        print(f"SSE replay to {clients:3d} client(s)  {total / elapsed:10.0f} events/s  ({lines} events each, {elapsed * 1e3:.0f} ms)"
              f"  peak RSS {peak[0] / 1024:.1f} MiB")
    print(f"  peer: read events.jsonl       {lines / file_time:10.0f} events/s")
    print(f"daemon RSS idle                 {idle / 1024:8.1f} MiB")
finally:
    daemon.terminate()
    daemon.wait()
    shutil.rmtree(base, ignore_errors=True)
