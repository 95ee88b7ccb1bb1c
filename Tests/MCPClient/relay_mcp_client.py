"""Drives `relay mcp` with the MCP Python SDK (PyPI `mcp`), a client nobody on Relay wrote.

Usage: relay_mcp_client.py RELAY WORKSPACE OUTSIDE full
       relay_mcp_client.py RELAY WORKSPACE OUTSIDE write PATH TEXT

Prints one JSON object of what it saw; RelayIntegrationTests/MCPServerTests.swift makes the
assertions. OUTSIDE is a folder outside the workspace that hostile paths aim at.
"""
import asyncio
import hashlib
import json
import os
import sys
import threading
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

relay, root, outside, mode = sys.argv[1:5]
seen = {}
notifications = []
updated = asyncio.Event()


def tree(folder, skip_state=True):
    """Every file under folder with its SHA-256 (engine state left out, except what must not change)."""
    out = {}
    for base, dirs, files in os.walk(folder):
        rel = os.path.relpath(base, folder)
        if skip_state and rel.split(os.sep)[0] == ".relay":
            continue
        for name in files:
            path = os.path.join(base, name)
            if os.path.islink(path):
                out[os.path.relpath(path, folder)] = "link:" + os.readlink(path)
                continue
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def summary(result):
    return {"isError": bool(result.is_error), "text": text_of(result), "structured": result.structured_content}


async def on_message(message):
    notifications.append(repr(message))
    if "ResourceUpdated" in type(message).__name__ or "resources/updated" in repr(message):
        updated.set()


async def full(session):
    init = await session.initialize()
    seen["protocolVersion"] = init.protocol_version
    seen["serverName"] = init.server_info.name
    seen["resourcesCapability"] = init.capabilities.resources.model_dump() if init.capabilities.resources else None
    await session.send_ping()

    tools = (await session.list_tools()).tools
    seen["tools"] = {t.name: {
        "readOnly": t.annotations.read_only_hint if t.annotations else None,
        "destructive": t.annotations.destructive_hint if t.annotations else None,
        "hasOutputSchema": t.output_schema is not None,
    } for t in tools}
    resources = (await session.list_resources()).resources
    seen["resources"] = [str(r.uri) for r in resources]
    context_uri = next(str(r.uri) for r in resources if str(r.uri).endswith("/context.md"))
    contents = (await session.read_resource(context_uri)).contents
    seen["contextResource"] = contents[0].text

    calls = seen["calls"] = {}

    async def call(label, name, arguments):
        result = summary(await session.call_tool(name, arguments))
        calls[label] = result
        return result

    # Each tool, as an agent would use it.
    await call("write", "write", {"path": "notes/mcp.md", "content": "hello from mcp\n"})
    await call("read", "read", {"path": "notes/mcp.md"})
    await call("append", "append", {"path": "notes/mcp.md", "text": "a second line"})
    await call("list", "list", {"path": "notes"})
    current = (await call("read-again", "read", {"path": "notes/mcp.md"}))["structured"]["version"]
    await call("edit-span", "edit", {"path": "notes/mcp.md", "oldText": "hello from mcp", "newText": "hi from mcp", "expectedVersion": current})
    with open(os.path.join(root, "notes/mcp.md"), "rb") as f:
        before_stale = f.read()
    await call("edit-stale", "edit", {"path": "notes/mcp.md", "oldText": "hi", "newText": "bye", "expectedVersion": current})
    with open(os.path.join(root, "notes/mcp.md"), "rb") as f:
        seen["staleEditChangedNothing"] = f.read() == before_stale
    seen["versionAfterEdit"] = hashlib.sha256(before_stale).hexdigest()
    await call("update_context", "update_context", {"section": "From MCP", "content": "Llamas hum when content."})
    await call("edit-section", "edit", {"path": "context.md", "section": "From MCP", "content": "Llamas hum when they are content."})
    await call("history", "history", {"path": "notes/mcp.md"})
    # The version the span edit replaced (an append changes a file in place: its versions are not kept).
    await call("restore", "restore", {"path": "notes/mcp.md", "version": current[:12]})
    with open(os.path.join(root, "notes/mcp.md")) as f:
        seen["afterRestore"] = f.read()
    await call("search", "search", {"query": "llamas hum"})
    await call("runs-before", "runs", {})
    await call("ask", "ask", {"message": "Tell me about llamas"})
    await call("runs-after", "runs", {"limit": 5})

    # Bad arguments: results with isError, never protocol errors.
    bad = seen["badArguments"] = {}
    for label, name, arguments in [
        ("missing", "write", {"path": "x.md"}),
        ("unknown", "read", {"path": "context.md", "mode": "fast"}),
        ("type", "search", {"query": "x", "limit": "many"}),
        ("no-such-tool", "delete_everything", {}),
        ("both-edits", "edit", {"path": "context.md", "oldText": "a", "newText": "b", "section": "c", "content": "d"}),
        ("bad-version", "write", {"path": "x.md", "content": "x", "expectedVersion": "zz"}),
    ]:
        bad[label] = summary(await session.call_tool(name, arguments))

    # Hostile paths through every tool that takes one: refused, and nothing changes.
    os.symlink(outside, os.path.join(root, "link"))
    before, outside_before = tree(root, skip_state=False), tree(outside)
    hostile = seen["hostile"] = {}
    for path in ["../escape.md", "/tmp/relay-mcp-absolute.md", outside + "/abs.md", ".relay/replica-id",
                 ".relay/evil.md", "link/through.md", "notes/\u0000.md", "notes/../../escape.md"]:
        for name, arguments in [
            ("read", {"path": path}), ("write", {"path": path, "content": "pwned"}), ("append", {"path": path, "text": "pwned"}),
            ("list", {"path": path}), ("history", {"path": path}), ("restore", {"path": path, "version": "abcdef"}),
            ("edit", {"path": path, "oldText": "a", "newText": "pwned"}),
        ]:
            hostile[f"{name} {path!r}"] = summary(await session.call_tool(name, arguments))
    for uri in ["relay://workspace/../escape.md", "relay://workspace/.relay/replica-id", "relay://workspace/link/through.md"]:
        try:
            await session.read_resource(uri)
            hostile["resource " + uri] = {"isError": False, "text": "read"}
        except Exception as error:  # an MCP error: the protocol's answer for a resource
            hostile["resource " + uri] = {"isError": True, "text": str(error)}
    seen["hostileChangedNothing"] = tree(root, skip_state=False) == before and tree(outside) == outside_before
    seen["escapedFiles"] = [p for p in ["/tmp/relay-mcp-absolute.md", os.path.join(os.path.dirname(root), "escape.md")] if os.path.exists(p)]
    os.unlink(os.path.join(root, "link"))

    # A resource changed by a person (not through MCP): the subscriber is told.
    await session.subscribe_resource(context_uri)
    with open(os.path.join(root, "context.md"), "a") as f:
        f.write("\nA person's line.\n")
    try:
        await asyncio.wait_for(updated.wait(), 60)
        seen["toldOfChange"] = True
    except asyncio.TimeoutError:
        seen["toldOfChange"] = False

    # An MCP edit racing a person's editor saves: neither loses.
    race = os.path.join(root, "race.md")
    with open(race, "w") as f:
        f.write("# Race\nEND\n")
    stop = threading.Event()
    saves = []

    def person():
        n = 0
        while not stop.is_set() or n < 20:
            with open(race) as f:
                current = f.read()
            with open(race, "r+") as f:  # an in-place save, as many editors do
                f.truncate(0)
                f.write(current + f"person {n}\n")
            saves.append(n)
            n += 1
            time.sleep(0.01 + (n % 3) * 0.01)

    thread = threading.Thread(target=person)
    thread.start()
    edits = []
    for k in range(40):
        edits.append(summary(await session.call_tool("edit", {"path": "race.md", "oldText": "END\n", "newText": f"mcp {k}\nEND\n"})))
    stop.set()
    thread.join()
    last = summary(await session.call_tool("edit", {"path": "race.md", "oldText": "END\n", "newText": "mcp last\nEND\n"}))
    with open(race) as f:
        final = f.read()
    seen["race"] = {
        "saves": len(saves),
        "lostSaves": [n for n in saves if f"person {n}\n" not in final],
        "editErrors": [e["text"] for e in edits + [last] if e["isError"]],
        "lastEditKept": "mcp last\n" in final,
    }
    seen["notifications"] = len(notifications)


async def write_one(session, path, text):
    await session.initialize()
    seen["write"] = summary(await session.call_tool("write", {"path": path, "content": text}))


async def main():
    env = {key: value for key, value in os.environ.items() if key.startswith("RELAY_")}
    params = StdioServerParameters(command=relay, args=["mcp", "-w", root], env=env)
    with open(os.path.join(outside, "..", "mcp-server.log"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                if mode == "full":
                    await full(session)
                else:
                    await write_one(session, sys.argv[5], sys.argv[6])
    print(json.dumps(seen))


asyncio.run(main())
