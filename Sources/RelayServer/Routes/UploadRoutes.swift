import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WorkspaceCore

/// `PUT /research/NAME` with the file's bytes as the body → 201 `{"path", "bytes", "hash"}`.
///
/// The file is written the way `relay fs write` writes a person's drop (atomically, with
/// triggers on), so the daemon's watcher sees it settle in `Research/` and starts the research
/// relay exactly once — the same path as a file copied in, never a second trigger of the
/// server's own. A name that is not a plain file name, a file already there (409) or a body over
/// the upload cap (413) changes nothing.
struct UploadRoutes {
    let workspace: Workspace
    let maxUploadBytes: Int

    func add(to router: Router<BasicRequestContext>) {
        router.put("/research/{name}") { request, context in
            let name = try FileName.validated(context.parameters.get("name") ?? "", what: "the file name")
            let path = "Research/\(name)"
            var dropping = workspace
            dropping.writesTrigger = true  // a person's drop, as `relay fs write`
            let target: ResolvedPath
            do { target = try dropping.resolve(path) } catch let error as WorkspaceError {
                throw APIError(.invalidRequest, error.message)
            }
            if target.exists { throw APIError(.conflict, "\(target.relative) is already there; choose another name (an upload never replaces a file)") }
            let buffer: ByteBuffer
            do {
                buffer = try await request.body.collect(upTo: maxUploadBytes)
            } catch is NIOTooManyBytesError {
                throw APIError(.tooLarge, "the upload is larger than \(maxUploadBytes) bytes (--max-upload-bytes)")
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw APIError(.tooLarge, "the upload is larger than \(maxUploadBytes) bytes (--max-upload-bytes)")
            }
            guard buffer.readableBytes > 0 else { throw APIError(.invalidRequest, "the upload is empty; send the file's bytes as the body") }
            let bytes = Array(buffer.readableBytesView)
            let created: Bool
            do {
                created = try dropping.createIfAbsent(path, bytes: bytes)
            } catch let error as WorkspaceError {
                throw APIError(.invalidRequest, error.message)
            }
            guard created else { throw APIError(.conflict, "\(target.relative) is already there; choose another name (an upload never replaces a file)") }
            var response = JSONBody.response(["path": target.relative, "bytes": bytes.count, "hash": ContentHash(of: bytes).hex], status: .created)
            response.headers[.location] = "/research/\(name)"
            return response
        }
    }
}
