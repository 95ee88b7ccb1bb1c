extension WebPage {
    /// The page's behaviour. Every piece of text from the server (a model's reply, a chat file,
    /// a tool's result) becomes DOM text nodes through `textContent` and `createTextNode`,
    /// never markup: Markdown is parsed here into elements built one by one.
    static let script = #"""
    "use strict";
    const $ = (id) => document.getElementById(id);
    const state = {
      chat: null,            // the open chat's name (null: a new chat)
      run: null,             // the run whose events this page follows
      lastEventID: 0,
      controller: null,      // aborts the event stream
      agents: new Map(),     // agent id -> {name, emoji, color}
      mentionNames: [],
      chatSignature: "",
      streaming: new Set(),  // runs whose messages come from the stream, not the transcript
    };

    // ---------- the API ----------
    function token() { return sessionStorage.getItem("relay-token") || ""; }
    async function api(path, options = {}) {
      const headers = Object.assign({}, options.headers || {});
      if (token()) headers["Authorization"] = "Bearer " + token();
      if (options.json !== undefined) {
        headers["Content-Type"] = "application/json";
        options.body = JSON.stringify(options.json);
      }
      const response = await fetch(path, Object.assign({}, options, { headers }));
      if (response.status === 401) { askForToken(); throw new Error("this server wants its API token"); }
      return response;
    }
    async function apiJSON(path, options) {
      const response = await api(path, options);
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error((body.error && body.error.message) || ("HTTP " + response.status));
      return body;
    }
    function askForToken() {
      const dialog = $("token-dialog");
      if (!dialog.open) dialog.showModal();
    }
    $("token-form").addEventListener("submit", () => {
      sessionStorage.setItem("relay-token", $("token-input").value.trim());
      refreshChats(); openChat(state.chat);
    });

    // ---------- Markdown, safely: elements and text nodes only ----------
    function inline(parent, text) {
      const pattern = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\([^)\s]+\))|(@[A-Za-z][\w-]*)/g;
      let last = 0, match;
      while ((match = pattern.exec(text)) !== null) {
        if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
        const token = match[0];
        let node;
        if (match[1]) { node = document.createElement("code"); node.textContent = token.slice(1, -1); }
        else if (match[2]) { node = document.createElement("strong"); inline(node, token.slice(2, -2)); }
        else if (match[3]) { node = document.createElement("em"); inline(node, token.slice(1, -1)); }
        else if (match[4]) {
          const label = token.slice(1, token.indexOf("]("));
          const href = token.slice(token.indexOf("](") + 2, -1);
          if (/^https?:\/\//i.test(href)) {
            node = document.createElement("a");
            node.href = href; node.rel = "noopener noreferrer nofollow"; node.target = "_blank";
            node.textContent = label;
          } else {
            node = document.createTextNode(token);
          }
        } else { node = document.createElement("span"); node.className = "mention"; node.textContent = token; }
        parent.appendChild(node);
        last = match.index + token.length;
      }
      if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
    }
    function markdown(text) {
      const root = document.createElement("div");
      root.className = "md";
      const lines = String(text || "").replace(/<!--[\s\S]*?-->/g, "").split("\n");
      let i = 0;
      while (i < lines.length) {
        const line = lines[i];
        if (/^```/.test(line)) {
          const pre = document.createElement("pre"), code = document.createElement("code");
          const body = [];
          i++;
          while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
          i++;
          code.textContent = body.join("\n"); pre.appendChild(code); root.appendChild(pre);
          continue;
        }
        const heading = /^(#{1,6})\s+(.*)$/.exec(line);
        if (heading) {
          const h = document.createElement("h" + Math.min(6, heading[1].length + 2));
          inline(h, heading[2]); root.appendChild(h); i++; continue;
        }
        if (/^\s*([-*]|\d+[.)])\s+/.test(line)) {
          const ordered = /^\s*\d+[.)]/.test(line);
          const list = document.createElement(ordered ? "ol" : "ul");
          while (i < lines.length && /^\s*([-*]|\d+[.)])\s+/.test(lines[i])) {
            const item = document.createElement("li");
            inline(item, lines[i].replace(/^\s*([-*]|\d+[.)])\s+/, ""));
            list.appendChild(item); i++;
          }
          root.appendChild(list); continue;
        }
        if (/^>\s?/.test(line)) {
          const quote = document.createElement("blockquote");
          const body = [];
          while (i < lines.length && /^>\s?/.test(lines[i])) body.push(lines[i++].replace(/^>\s?/, ""));
          inline(quote, body.join(" ")); root.appendChild(quote); continue;
        }
        if (line.trim() === "") { i++; continue; }
        const paragraph = document.createElement("p");
        const body = [];
        while (i < lines.length && lines[i].trim() !== "" && !/^(```|#{1,6}\s|>\s?|\s*([-*]|\d+[.)])\s+)/.test(lines[i])) body.push(lines[i++]);
        body.forEach((part, index) => {
          if (index > 0) paragraph.appendChild(document.createElement("br"));
          inline(paragraph, part);
        });
        root.appendChild(paragraph);
      }
      return root;
    }

    // ---------- the group chat ----------
    function element(tag, className, text) {
      const node = document.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined) node.textContent = text;
      return node;
    }
    function agentInfo(agent) {
      if (!agent) return { id: "relay", name: "Relay", emoji: "🏃", color: "#888888" };
      if (typeof agent === "string") return state.agents.get(agent) || { id: agent, name: agent, emoji: "🤖", color: "#888888" };
      state.agents.set(agent.id, agent);
      return agent;
    }
    function safeColor(color) { return /^#[0-9a-fA-F]{3,8}$/.test(color || "") ? color : "#888888"; }
    function scrollDown() { const m = $("messages"); m.scrollTop = m.scrollHeight; }

    function userBubble(text, note) {
      const row = element("article", "message user");
      const bubble = element("div", "bubble");
      bubble.appendChild(element("div", "who", "You"));
      bubble.appendChild(markdown(text));
      if (note) bubble.appendChild(element("div", "meta", note));
      row.appendChild(bubble);
      $("messages").appendChild(row);
      scrollDown();
      return row;
    }
    function systemLine(text, className) {
      const line = element("div", "system " + (className || ""), text);
      $("messages").appendChild(line);
      scrollDown();
      return line;
    }
    function handOff(agent) { systemLine("→ handed off to " + agentInfo(agent).emoji + " " + agentInfo(agent).name, "handoff"); }

    function agentBubble(agent, revisionBy) {
      const info = agentInfo(agent);
      const color = safeColor(info.color);
      const row = element("article", "message agent");
      row.dataset.agent = info.id;
      row.style.setProperty("--agent", color);
      const avatar = element("div", "avatar", info.emoji || "🤖");
      avatar.setAttribute("aria-hidden", "true");
      const bubble = element("div", "bubble");
      const who = element("div", "who");
      who.appendChild(element("span", "name", info.name));
      who.appendChild(element("span", "role", " · " + info.id));
      if (revisionBy) who.appendChild(element("span", "revision", " (revision requested by " + revisionBy + ")"));
      bubble.appendChild(who);
      const tools = element("div", "tools");
      const body = element("div", "body");
      const typing = element("div", "typing");
      typing.appendChild(element("span", "dots", "● ● ●"));
      typing.appendChild(element("span", "label", " " + info.name + " is typing…"));
      bubble.appendChild(tools); bubble.appendChild(body); bubble.appendChild(typing);
      row.appendChild(avatar); row.appendChild(bubble);
      $("messages").appendChild(row);
      scrollDown();
      return { row, bubble, body, tools, typing, text: "" };
    }
    function toolBlock(target, name, args, result, isError) {
      const details = element("details", "tool");
      details.appendChild(element("summary", "", "🔧 " + name));
      details.appendChild(element("div", "label", "arguments"));
      details.appendChild(element("pre", "args", args || ""));
      const out = element("pre", "result" + (isError ? " error" : ""), result === undefined ? "…" : result);
      details.appendChild(element("div", "label", "result"));
      details.appendChild(out);
      target.tools.appendChild(details);
      return out;
    }
    function finishBubble(target, message) {
      target.typing.remove();
      target.body.replaceChildren(markdown(message.text || "(no answer)"));
      const parts = [];
      const tokens = message.tokens ? message.tokens.prompt + message.tokens.completion : (message.promptTokens || 0) + (message.completionTokens || 0);
      if (tokens) parts.push(tokens + " tokens");
      if (message.milliseconds) parts.push((message.milliseconds / 1000).toFixed(1) + " s");
      if (message.verdict) parts.push("verdict");
      if (message.answer) parts.push("answer");
      if (parts.length) target.bubble.appendChild(element("div", "meta", parts.join(" · ")));
    }

    // The finished messages of a chat, from its transcript.
    function renderTranscript(body) {
      const box = $("messages");
      box.replaceChildren();
      let previousTurn = null, previousWasAgent = false;
      for (const message of body.messages || []) {
        if (state.streaming.has(message.turn)) continue;
        if (message.turn !== previousTurn) previousWasAgent = false;
        previousTurn = message.turn;
        if (message.role === "user") { userBubble(message.text || ""); previousWasAgent = false; continue; }
        const agent = agentInfo(message.agent);
        if (previousWasAgent && !message.revisionRequestedBy) handOff(agent);
        const target = agentBubble(agent, message.revisionRequestedBy);
        for (const call of message.toolCalls || []) toolBlock(target, call.name, call.arguments, call.result, call.error);
        finishBubble(target, message);
        previousWasAgent = true;
      }
      if (body.unanswered && !body.running) userBubble(body.unanswered, "waiting for the relay");
    }

    // ---------- a run's events (SSE over fetch, so the token can go in a header) ----------
    function follow(run, fromStart) {
      if (state.controller) state.controller.abort();
      state.run = run;
      state.streaming.add(run);
      if (fromStart) state.lastEventID = 0;
      const controller = new AbortController();
      state.controller = controller;
      $("stop").hidden = false;
      $("send").disabled = true;  // one turn at a time in a chat
      setStatus("working…");
      const view = { current: null, byStep: new Map(), lastAgent: null };
      (async () => {
        for (let attempt = 0; attempt < 30 && !controller.signal.aborted; attempt++) {
          try {
            const headers = state.lastEventID ? { "Last-Event-ID": String(state.lastEventID) } : {};
            const response = await api("/runs/" + encodeURIComponent(run) + "/events", { headers, signal: controller.signal });
            if (!response.ok) throw new Error("HTTP " + response.status);
            const reader = response.body.getReader();
            const decoder = new TextDecoder();
            let buffer = "";
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              buffer += decoder.decode(value, { stream: true });
              let split;
              while ((split = buffer.indexOf("\n\n")) >= 0) {
                const block = buffer.slice(0, split); buffer = buffer.slice(split + 2);
                let id = null, data = [];
                for (const line of block.split("\n")) {
                  if (line.startsWith("id: ")) id = parseInt(line.slice(4), 10);
                  else if (line.startsWith("data: ")) data.push(line.slice(6));
                }
                if (!data.length) continue;
                if (id) state.lastEventID = id;
                let event;
                try { event = JSON.parse(data.join("\n")); } catch { continue; }
                if (event.event === "end") { ended(run, event); return; }
                show(event, view);
              }
            }
          } catch (error) {
            if (controller.signal.aborted) return;
          }
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      })();
    }
    function show(event, view) {
      switch (event.event) {
        case "runStarted":
          for (const agent of event.agents || []) agentInfo(agent);
          if (!event.resumed && !view.userShown) { userBubble(event.request); view.userShown = true; }
          if (event.resumed) systemLine("↻ the run resumed", "note");
          break;
        case "agentStarted": {
          const agent = agentInfo(event.agent);
          if (view.lastAgent && !event.revisionRequestedBy) handOff(agent);
          const by = event.revisionRequestedBy ? agentInfo(event.revisionRequestedBy).name : null;
          view.current = agentBubble(agent, by);
          view.byStep.set(event.step, view.current);
          view.lastAgent = agent.id;
          break;
        }
        case "textDelta": {
          const target = view.byStep.get(event.step) || view.current;
          if (!target) break;
          target.text += event.text;
          target.body.replaceChildren(markdown(target.text));
          scrollDown();
          break;
        }
        case "toolCall": {
          const target = view.byStep.get(event.step) || view.current;
          if (target) target.pending = toolBlock(target, event.tool, event.arguments);
          break;
        }
        case "toolResult": {
          const target = view.byStep.get(event.step) || view.current;
          if (target && target.pending) {
            target.pending.textContent = event.result;
            if (event.error) target.pending.classList.add("error");
            target.pending = null;
          }
          break;
        }
        case "revisionRequested":
          systemLine("🔁 " + agentInfo(event.by).name + (event.accepted ? " asked " : " could not ask ") + event.target + " for a revision: " + event.request + (event.reason ? " (" + event.reason + ")" : ""), "revision-note");
          break;
        case "agentFinished": {
          let target = view.byStep.get(event.step);
          if (!target) {  // restored from the journal after a resume, or a plan's worker
            const agent = agentInfo(event.agent);
            if (view.lastAgent) handOff(agent);
            target = agentBubble(agent, event.revisionRequestedBy);
            view.lastAgent = agent.id;
          }
          finishBubble(target, event);
          view.byStep.delete(event.step);
          break;
        }
        case "grounding":
          systemLine("🧭 Relay's check (" + agentInfo(event.agent).name + "): " + event.request, "note");
          break;
        case "selected":
          systemLine("🧭 " + event.reason, "note");
          break;
        case "planned":
          systemLine("📋 plan: " + (event.subtasks || []).join(" · "), "note");
          break;
        case "workerStarted":
          systemLine("⚙ worker " + event.worker + "/" + event.workers + " (" + agentInfo(event.agent).name + "): " + event.subtask, "note");
          break;
        case "refused":
          systemLine("⛔ " + event.message, "error");
          break;
        case "note":
          systemLine("ℹ " + event.text, "note");
          break;
        case "final":
          setStatus("answered");
          break;
        case "error":
          systemLine("⚠ " + event.message, "error");
          break;
      }
    }
    function ended(run, event) {
      if (state.run === run) { state.run = null; state.controller = null; }
      $("stop").hidden = true;
      $("send").disabled = false;
      const words = { done: "done", cancelled: "stopped", interrupted: "interrupted — it resumes when the daemon starts again", failed: "failed" };
      setStatus(words[event.state] || event.state);
      if (event.state === "cancelled") systemLine("■ stopped — `relay resume " + run + "` continues it", "note");
      if (event.state === "failed" && event.message) systemLine("⚠ " + event.message, "error");
      state.streaming.delete(run);
      refreshChats();
      // Redrawn from the transcript; `data-shown` on the messages names the run once it is (the
      // web chat's tests wait for that, not for a time).
      if (event.state === "done") { setTimeout(() => openChat(state.chat, true).then(() => { $("messages").dataset.shown = run; }), 300); return; }
      // Keep what the stream drew (and the stop notice) until the chat changes again.
      const name = state.chat;
      if (name) apiJSON("/chats/" + encodeURIComponent(name)).then((body) => {
        if (state.chat === name) state.chatSignature = JSON.stringify(body);
      }).catch(() => {});
    }
    function setStatus(text) { $("status").textContent = text; }

    // ---------- chats ----------
    async function refreshChats() {
      let body;
      try { body = await apiJSON("/chats"); } catch (error) { setStatus(error.message); return; }
      const list = $("chat-list");
      list.replaceChildren();
      for (const chat of body.chats || []) {
        const item = element("li");
        const button = element("button", chat.name === state.chat ? "chat current" : "chat", chat.name);
        button.type = "button";
        button.addEventListener("click", () => openChat(chat.name));
        item.appendChild(button);
        list.appendChild(item);
      }
    }
    async function openChat(name, quiet) {
      if (name !== state.chat && state.controller) {
        state.controller.abort(); state.controller = null; state.run = null;
        $("stop").hidden = true; $("send").disabled = false;
      }
      state.chat = name || null;
      if (name && location.hash !== "#chat=" + encodeURIComponent(name)) history.replaceState(null, "", "#chat=" + encodeURIComponent(name));
      if (!name && location.hash) history.replaceState(null, "", location.pathname);
      $("chat-title").textContent = name || "New chat";
      document.querySelectorAll("#chat-list .chat").forEach((b) => b.classList.toggle("current", b.textContent === name));
      if (!name) { $("messages").replaceChildren(); state.chatSignature = ""; if (!quiet) setStatus(""); return; }
      let body;
      try { body = await apiJSON("/chats/" + encodeURIComponent(name)); } catch (error) { setStatus(error.message); return; }
      if (state.chat !== name) return;
      const signature = JSON.stringify(body);
      if (signature === state.chatSignature && quiet) return;
      state.chatSignature = signature;
      if (state.run && body.running === state.run) return;  // the stream is drawing this run
      if (body.running) {
        renderTranscript(Object.assign({}, body, { messages: (body.messages || []).filter((m) => m.turn !== body.running) }));
        follow(body.running, true);  // a reload mid-turn: the run's events from its start
        return;
      }
      renderTranscript(body);
    }

    // ---------- the composer, with @mentions ----------
    async function loadAgents() {
      try {
        const body = await apiJSON("/v1/models");
        const names = new Set();
        for (const model of body.data || []) {
          if (!model.id.includes("/")) continue;
          const name = (model.description || "").split(" ").slice(1).join(" ") || model.id.split("/")[1];
          names.add(name);
        }
        state.mentionNames = [...names];
      } catch { state.mentionNames = []; }
    }
    function mentionQuery() {
      const input = $("input");
      const before = input.value.slice(0, input.selectionStart);
      const match = /(^|\s)@([\w-]*)$/.exec(before);
      return match ? match[2] : null;
    }
    function updateMentions() {
      const list = $("mentions");
      const query = mentionQuery();
      list.replaceChildren();
      if (query === null) { list.hidden = true; return; }
      const matches = state.mentionNames.filter((name) => name.toLowerCase().startsWith(query.toLowerCase()));
      for (const name of matches) {
        const item = element("li", "", "@" + name);
        item.setAttribute("role", "option");
        item.addEventListener("mousedown", (event) => { event.preventDefault(); insertMention(name); });
        list.appendChild(item);
      }
      list.hidden = matches.length === 0;
    }
    function insertMention(name) {
      const input = $("input");
      const position = input.selectionStart;
      const before = input.value.slice(0, position).replace(/@([\w-]*)$/, "@" + name + " ");
      input.value = before + input.value.slice(position);
      input.selectionStart = input.selectionEnd = before.length;
      $("mentions").hidden = true;
      input.focus();
    }
    $("input").addEventListener("input", updateMentions);
    $("input").addEventListener("keydown", (event) => {
      const list = $("mentions");
      if (!list.hidden && (event.key === "Tab" || event.key === "Enter") && list.firstChild) {
        event.preventDefault();
        insertMention(list.firstChild.textContent.slice(1));
        return;
      }
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
    });
    $("composer").addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = $("input").value.trim();
      if (!text) return;
      $("send").disabled = true;
      try {
        const body = await apiJSON("/runs", { method: "POST", json: state.chat ? { message: text, chat: state.chat } : { message: text } });
        $("input").value = "";
        if (body.chat !== state.chat) {
          state.chat = body.chat;
          history.replaceState(null, "", "#chat=" + encodeURIComponent(body.chat));
          $("chat-title").textContent = body.chat;
          $("messages").replaceChildren();
        }
        follow(body.run, true);
        refreshChats();
      } catch (error) {
        setStatus(error.message);
      } finally {
        if (!state.run) $("send").disabled = false;
      }
    });
    $("stop").addEventListener("click", async () => {
      if (!state.run) return;
      $("stop").disabled = true;
      try {
        await apiJSON("/runs/" + encodeURIComponent(state.run) + "/cancel", { method: "POST", json: {} });
      } catch (error) {
        setStatus(error.message);
      } finally {
        $("stop").disabled = false;
      }
    });
    $("new-chat").addEventListener("click", () => { openChat(null); $("input").focus(); });

    // ---------- files dropped on the page go to Research/ ----------
    let dragDepth = 0;
    window.addEventListener("dragenter", (event) => { event.preventDefault(); dragDepth++; $("drop-overlay").hidden = false; });
    window.addEventListener("dragleave", () => { if (--dragDepth <= 0) { dragDepth = 0; $("drop-overlay").hidden = true; } });
    window.addEventListener("dragover", (event) => event.preventDefault());
    window.addEventListener("drop", async (event) => {
      event.preventDefault();
      dragDepth = 0; $("drop-overlay").hidden = true;
      for (const file of event.dataTransfer.files) {
        try {
          const response = await api("/research/" + encodeURIComponent(file.name), { method: "PUT", body: file });
          const body = await response.json().catch(() => ({}));
          if (!response.ok) throw new Error((body.error && body.error.message) || ("HTTP " + response.status));
          systemLine("📎 " + body.path + " — the research relay will read it", "note");
        } catch (error) {
          systemLine("⚠ " + file.name + ": " + error.message, "error");
        }
      }
    });

    // ---------- start: the chat in the address (#chat=NAME), and a look every two seconds ----------
    function chatFromAddress() {
      const match = /^#chat=(.+)$/.exec(location.hash);
      return match ? decodeURIComponent(match[1]) : null;
    }
    window.addEventListener("hashchange", () => openChat(chatFromAddress()));
    loadAgents();
    refreshChats();
    openChat(chatFromAddress());
    setInterval(() => {
      refreshChats();
      if (state.chat && !state.run) openChat(state.chat, true);
    }, 2000);
    """#
}
