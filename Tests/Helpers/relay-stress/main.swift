import WorkspaceCore
print("x")
