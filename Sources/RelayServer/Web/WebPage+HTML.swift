extension WebPage {
    /// The page: a list of chats beside the open chat, a composer, a token prompt.
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="dark">
    <title>Relay</title>
    <link rel="stylesheet" href="/app.css">
    <script src="/app.js" defer></script>
    </head>
    <body>
    <div id="app">
      <aside id="sidebar" aria-label="Chats">
        <header class="brand"><span aria-hidden="true">🏃</span> Relay</header>
        <button id="new-chat" type="button">+ New chat</button>
        <nav><ul id="chat-list"></ul></nav>
        <p class="hint">Drop a file anywhere on the page to put it in <code>Research/</code>.</p>
      </aside>
      <main id="main">
        <header id="chat-header"><h1 id="chat-title">New chat</h1><span id="status" role="status" aria-live="polite"></span></header>
        <section id="messages" aria-live="polite" aria-label="Messages"></section>
        <form id="composer" autocomplete="off">
          <ul id="mentions" role="listbox" hidden></ul>
          <textarea id="input" rows="2" placeholder="Write a message — @Name to ask one agent" aria-label="Message"></textarea>
          <button id="send" type="submit">Send</button>
          <button id="stop" type="button" hidden>■ Stop</button>
        </form>
      </main>
    </div>
    <dialog id="token-dialog">
      <form id="token-form" method="dialog">
        <p>This server wants its API token (<code>RELAY_API_TOKEN</code> or <code>.relay/api-token</code>).</p>
        <input id="token-input" type="password" aria-label="API token" autocomplete="off">
        <button type="submit">Use token</button>
      </form>
    </dialog>
    <div id="drop-overlay" hidden>Drop to put the file in Research/</div>
    </body>
    </html>
    """#
}
