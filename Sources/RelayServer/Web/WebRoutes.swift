import HTTPTypes
import Hummingbird
import NIOCore

/// The web group chat, embedded in the binary: `GET /` (the page), `/app.js` and `/app.css`.
/// Plain HTML, CSS and JavaScript, no framework, nothing fetched from elsewhere. They hold no
/// workspace data, so they answer without a token; the page asks for the token (when the
/// server has one) and sends it with each API call. The Content-Security-Policy allows only
/// this server's own script, style and API, so even a slip in the page could not run text a
/// model or a file wrote.
struct WebRoutes {
    static let securityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func add(to router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Self.response(WebPage.html, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in Self.response(WebPage.script, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.response(WebPage.style, type: "text/css; charset=utf-8") }
    }

    static func response(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = securityPolicy
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The page's three files (`WebPage+HTML.swift`, `+Script`, `+Style`).
enum WebPage {}
