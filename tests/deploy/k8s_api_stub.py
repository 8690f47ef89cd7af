#!/usr/bin/env python3
"""A stand-in for a Kubernetes API server's discovery endpoints, so that
`kubectl apply --dry-run=client` can run with no cluster (it asks the server
which kinds exist, and GETs each object to compare, even in client mode).

Serves /version, /api, /apis and the resource lists of the built-in groups
below (the kinds are the API's own names); every object GET answers 404
NotFound (nothing exists yet). Any request that is not a GET is answered 405
and logged: a client dry run must never write.

  k8s_api_stub.py PORT_FILE LOG_FILE [PODS_JSON]
Listens on 127.0.0.1, a free port written to PORT_FILE; one line per request
("METHOD PATH") appended to LOG_FILE. With PODS_JSON (a PodList), a list of
the pods of any namespace answers it, whatever the selector. Runs until
killed.
"""
import http.server
import os
import json
import sys

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]

# group/version -> [(resource, kind, namespaced)]
GROUPS = {
    "v1": [("pods", "Pod", True), ("configmaps", "ConfigMap", True),
           ("secrets", "Secret", True), ("serviceaccounts", "ServiceAccount", True),
           ("services", "Service", True),
           ("persistentvolumeclaims", "PersistentVolumeClaim", True),
           ("namespaces", "Namespace", False), ("nodes", "Node", False)],
    "apps/v1": [("daemonsets", "DaemonSet", True), ("deployments", "Deployment", True),
                ("statefulsets", "StatefulSet", True)],
    "batch/v1": [("jobs", "Job", True), ("cronjobs", "CronJob", True)],
    "rbac.authorization.k8s.io/v1": [
        ("roles", "Role", True), ("rolebindings", "RoleBinding", True),
        ("clusterroles", "ClusterRole", False),
        ("clusterrolebindings", "ClusterRoleBinding", False)],
}


def resource_list(group_version):
    return {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
        "resources": [{"name": r, "singularName": k.lower(), "namespaced": ns, "kind": k,
                       "verbs": VERBS} for r, k, ns in GROUPS[group_version]],
    }


def group_list():
    groups = []
    for gv in GROUPS:
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        entry = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [entry], "preferredVersion": entry})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def answer(path):
    """(status, body) for a GET of path."""
    path = path.split("?", 1)[0].rstrip("/")
    if path == "/version":
        return 200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-stub"}
    if path == "/api":
        return 200, {"kind": "APIVersions", "versions": ["v1"],
                     "serverAddressByClientCIDRs": [
                         {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
    if path == "/apis":
        return 200, group_list()
    if path == "/api/v1":
        return 200, resource_list("v1")
    if path.startswith("/apis/") and path[len("/apis/"):] in GROUPS:
        return 200, resource_list(path[len("/apis/"):])
    parts = path.split("/")
    if len(sys.argv) > 3 and len(parts) == 6 and parts[1:4] == ["api", "v1", "namespaces"] \
            and parts[5] == "pods":
        with open(sys.argv[3], encoding="utf-8") as f:
            return 200, json.load(f)
    return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                 "reason": "NotFound", "code": 404, "message": f"{path} not found"}


class Handler(http.server.BaseHTTPRequestHandler):
    def _log(self):
        with open(sys.argv[2], "a", encoding="utf-8") as log:
            log.write(f"{self.command} {self.path}\n")

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self._log()
        self._send(*answer(self.path))

    def _refuse(self):
        self._log()
        self._send(405, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "code": 405, "message": "the stub accepts no writes"})

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))

    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
