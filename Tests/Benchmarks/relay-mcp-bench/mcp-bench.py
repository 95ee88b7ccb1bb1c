"""`make bench` for issue 30: `relay mcp` and retention, each next to a peer run in the same script.

Usage: mcp-bench.py RELAY   (RELAY: the release binary)

- MCP: a tool call's round trip (read, write) over one `relay mcp` session, against the same
  primitive through the command line (`relay fs read`, `relay fs write`: a process per call).
- gc: `relay gc` of 10,000 versions of one file (keepLast 10), time and space, against deleting
  the same number of files with `find -delete`.
- `relay runs` and `relay status` at 100 and at 10,000 runs, against listing the run folder.

Raw JSON-RPC lines over pipes (not an SDK): the figure is the server's, not a client library's.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

relay = sys.argv[1]


def timed(command, repeat, **kwargs):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def du(path):
    """Bytes on disk (allocated blocks), as the space a person would get back."""
    return int(subprocess.run(["du", "-s", "-B1", path], capture_output=True, text=True, check=True).stdout.split()[0])


class Session:
    def __init__(self, root):
        self.process = subprocess.Popen([relay, "mcp", "-w", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next = 0
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def call(self, method, params):
        self.next += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        response = json.loads(self.process.stdout.readline())
        if "error" in response or response.get("result", {}).get("isError"):
            raise RuntimeError(f"{method}: {response}")
        return response["result"]

    def tool(self, name, arguments):
        return self.call("tools/call", {"name": name, "arguments": arguments})

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def workspace(base, name):
    root = os.path.join(base, name)
    subprocess.run([relay, "init", root], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root


def set_relay_json(root, **members):
    path = os.path.join(root, "relay.json")
    with open(path) as f:
        document = json.load(f)
    document.update(members)
    with open(path, "w") as f:
        json.dump(document, f, indent=2)


def bench_mcp(base):
    root = workspace(base, "mcp")
    session = Session(root)
    session.tool("write", {"path": "notes.md", "content": "warm\n"})
    rounds = 300
    start = time.perf_counter()
    for _ in range(rounds):
        session.tool("read", {"path": "context.md"})
    mcp_read = (time.perf_counter() - start) / rounds
    start = time.perf_counter()
    for n in range(rounds):
        session.tool("write", {"path": "notes.md", "content": f"note {n}\n"})
    mcp_write = (time.perf_counter() - start) / rounds
    session.close()
    cli_read = timed([relay, "fs", "read", "-w", root, "context.md"], 30)
    cli_write = timed([relay, "fs", "write", "-w", root, "notes.md"], 30, input=b"note\n")
    print(f"mcp: read round trip {mcp_read * 1000:.2f} ms vs `relay fs read` {cli_read * 1000:.1f} ms ({mcp_read / cli_read:.3f}x)")
    print(f"mcp: write round trip {mcp_write * 1000:.2f} ms vs `relay fs write` {cli_write * 1000:.1f} ms ({mcp_write / cli_write:.3f}x)")


def bench_gc(base):
    root = workspace(base, "gc")
    set_relay_json(root, retention={"versions": {"keepLast": 10, "keepWithinDays": 0}})
    session = Session(root)
    for n in range(10_001):
        session.tool("write", {"path": "notes.md", "content": f"version {n} " + "x" * 200 + "\n"})
    session.close()
    objects = os.path.join(root, ".relay", "objects")
    before = du(os.path.join(root, ".relay"))
    files = len(os.listdir(objects))
    copy = os.path.join(base, "objects-copy")
    shutil.copytree(objects, copy)
    # Both on disk before either is timed: on a file system mounted with `discard` an unlink
    # of blocks not yet written is free, and one of blocks on disk waits for the trim.
    os.sync()
    start = time.perf_counter()
    subprocess.run([relay, "gc", "-w", root], check=True, stdout=subprocess.DEVNULL)
    gc = time.perf_counter() - start
    after = du(os.path.join(root, ".relay"))
    start = time.perf_counter()
    subprocess.run(["find", copy, "-type", "f", "-delete"], check=True)
    plain = time.perf_counter() - start
    print(f"gc: {files} versions -> {len(os.listdir(objects))} in {gc:.2f} s vs find -delete of the same files {plain:.2f} s "
          f"({gc / plain:.2f}x); .relay/ {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")


def bench_runs(base):
    root = workspace(base, "runs")
    with open(os.path.join(root, "script.json"), "w") as f:
        json.dump({"repeat": True, "replies": [{"text": "Llamas are camelids."}]}, f)
    set_relay_json(root, model={"provider": "scripted", "script": "script.json"})
    subprocess.run([relay, "ask", "-w", root, "Llamas?"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = os.path.join(root, ".relay", "runs")
    template = next(name for name in os.listdir(runs) if os.path.isfile(os.path.join(runs, name, "run.json")))
    made = 1
    for target in (100, 10_000):
        while made < target:
            new = f"2025{1 + made // 2_000 % 12:02d}{1 + made // 80 % 25:02d}-{made // 3600 % 24:02d}{made // 60 % 60:02d}{made % 60:02d}-{made % 65536:04x}"
            shutil.copytree(os.path.join(runs, template), os.path.join(runs, new))
            manifest = os.path.join(runs, new, "run.json")
            with open(manifest) as f:
                document = json.load(f)
            document["id"] = new
            with open(manifest, "w") as f:
                json.dump(document, f)
            made += 1
        subprocess.run([relay, "status", "-w", root], check=True, stdout=subprocess.DEVNULL)  # the index of finished runs, once
        listing = timed(["ls", runs], 5)
        runs_time = timed([relay, "runs", "-w", root], 5)
        status_time = timed([relay, "status", "-w", root], 5)
        print(f"runs: at {made} runs `relay runs` {runs_time * 1000:.1f} ms, `relay status` {status_time * 1000:.1f} ms "
              f"vs `ls` of the run folder {listing * 1000:.1f} ms ({runs_time / listing:.1f}x, {status_time / listing:.1f}x)")


with tempfile.TemporaryDirectory() as base:
    print("relay mcp and retention (issue 30)")
    bench_mcp(base)
    bench_gc(base)
    bench_runs(base)
