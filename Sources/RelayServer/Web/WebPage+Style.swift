extension WebPage {
    /// Dark, readable on a phone: below 720 px the chat list
    /// folds above the chat. An agent's colour marks its bubble, and its emoji and name always
    /// say who it is (colour is never the only signal).
    static let style = #"""
    :root {
      --bg: #14161a; --panel: #1c1f25; --bubble: #23272f; --text: #e8e9ec; --muted: #9aa0aa;
      --accent: #5b9dff; --border: #2e333c; --user: #2b4a78; --error: #ff8a80;
      font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
      font-size: 16px; line-height: 1.45; color-scheme: dark;
    }
    * { box-sizing: border-box; }
    html, body { margin: 0; height: 100%; background: var(--bg); color: var(--text); }
    #app { display: grid; grid-template-columns: 260px 1fr; height: 100vh; }
    #sidebar { background: var(--panel); border-right: 1px solid var(--border); display: flex; flex-direction: column; min-height: 0; }
    .brand { font-weight: 700; font-size: 1.2rem; padding: 14px 16px; }
    #new-chat { margin: 0 12px 8px; padding: 8px; border-radius: 8px; border: 1px solid var(--border); background: var(--bubble); color: var(--text); cursor: pointer; }
    nav { overflow-y: auto; flex: 1; }
    #chat-list { list-style: none; margin: 0; padding: 0 8px; }
    .chat { width: 100%; text-align: left; padding: 8px 10px; margin: 2px 0; border: 0; border-radius: 6px; background: transparent;
            color: var(--text); cursor: pointer; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font: inherit; font-size: 0.9rem; }
    .chat:hover { background: var(--bubble); }
    .chat.current { background: var(--user); font-weight: 600; }
    .hint { color: var(--muted); font-size: 0.8rem; padding: 8px 16px; margin: 0; }
    #main { display: flex; flex-direction: column; min-height: 0; min-width: 0; }
    #chat-header { display: flex; align-items: baseline; gap: 12px; padding: 12px 20px; border-bottom: 1px solid var(--border); }
    #chat-title { font-size: 1.05rem; margin: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    #status { color: var(--muted); font-size: 0.85rem; }
    #messages { flex: 1; overflow-y: auto; padding: 16px 20px; display: flex; flex-direction: column; gap: 10px; }
    .message { display: flex; gap: 10px; align-items: flex-start; max-width: 820px; flex: none; }
    .message.user { align-self: flex-end; }
    .message.user .bubble { background: var(--user); }
    .avatar { flex: none; width: 38px; height: 38px; border-radius: 50%; display: grid; place-items: center; font-size: 20px;
              background: color-mix(in srgb, var(--agent) 30%, transparent); border: 2px solid var(--agent); }
    .bubble { background: var(--bubble); border: 1px solid var(--border); border-radius: 12px; padding: 8px 12px; min-width: 0; overflow-wrap: anywhere; }
    .agent .bubble { border-left: 4px solid var(--agent); }
    .who { font-size: 0.85rem; margin-bottom: 2px; }
    .who .name { font-weight: 700; color: var(--agent, var(--text)); }
    .who .role, .meta { color: var(--muted); }
    .who .revision { color: var(--muted); font-style: italic; }
    .meta { font-size: 0.75rem; margin-top: 4px; }
    .md p { margin: 0.3em 0; }
    .md ul, .md ol { margin: 0.3em 0; padding-left: 1.4em; }
    .md pre, .tool pre { background: rgba(0,0,0,0.3); padding: 8px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; font-size: 0.85rem; }
    .md code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.9em; }
    .md blockquote { margin: 0.3em 0; padding-left: 10px; border-left: 3px solid var(--border); color: var(--muted); }
    .md h3, .md h4, .md h5, .md h6 { margin: 0.4em 0 0.2em; font-size: 1rem; }
    .md a { color: var(--accent); }
    .mention { color: var(--accent); font-weight: 600; }
    .typing { color: var(--muted); font-size: 0.85rem; }
    .typing .dots { animation: pulse 1.2s infinite; letter-spacing: 1px; }
    @keyframes pulse { 50% { opacity: 0.3; } }
    .tool { margin: 4px 0; font-size: 0.85rem; }
    .tool summary { cursor: pointer; color: var(--muted); }
    .tool .label { color: var(--muted); font-size: 0.75rem; margin-top: 4px; }
    .tool .error { color: var(--error); }
    .system { flex: none; align-self: center; color: var(--muted); font-size: 0.85rem; text-align: center; max-width: 90%; }
    .system.handoff { font-style: italic; }
    .system.error { color: var(--error); }
    #composer { position: relative; display: flex; gap: 8px; padding: 12px 20px; border-top: 1px solid var(--border); background: var(--panel); }
    #input { flex: 1; resize: none; padding: 10px; border-radius: 10px; border: 1px solid var(--border); background: var(--bg); color: var(--text); font: inherit; }
    #send, #stop { padding: 0 18px; border-radius: 10px; border: 0; font: inherit; font-weight: 600; cursor: pointer; }
    #send { background: var(--accent); color: #fff; }
    #stop { background: var(--error); color: #000; }
    #mentions { position: absolute; bottom: 100%; left: 20px; list-style: none; margin: 0; padding: 4px; background: var(--panel);
                border: 1px solid var(--border); border-radius: 8px; }
    #mentions li { padding: 4px 10px; cursor: pointer; border-radius: 4px; }
    #mentions li:hover, #mentions li:first-child { background: var(--bubble); }
    #drop-overlay { position: fixed; inset: 0; display: grid; place-items: center; background: rgba(20,40,80,0.7); color: #fff; font-size: 1.4rem; }
    #drop-overlay[hidden], [hidden] { display: none !important; }
    dialog { background: var(--panel); color: var(--text); border: 1px solid var(--border); border-radius: 10px; }
    @media (max-width: 720px) {
      #app { grid-template-columns: 1fr; grid-template-rows: auto 1fr; }
      #sidebar { border-right: 0; border-bottom: 1px solid var(--border); max-height: 30vh; }
      .hint { display: none; }
      #messages, #chat-header, #composer { padding-left: 10px; padding-right: 10px; }
    }
    """#
}
