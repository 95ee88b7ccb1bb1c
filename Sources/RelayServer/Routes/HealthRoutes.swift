import Hummingbird

/// `GET /health`: answers without a token, and says nothing about the workspace.
struct HealthRoutes {
    func add(to router: Router<BasicRequestContext>) {
        router.get("/health") { _, _ in
            JSONBody.response(["status": "ok"])
        }
    }
}
