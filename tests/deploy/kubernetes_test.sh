#!/usr/bin/env bash
# ctest "kubernetes": deploy/kubernetes/ checked without a cluster.
#   kubernetes_test.sh SOURCE_DIR
# 1. `kubectl apply --dry-run=client -f deploy/kubernetes/`. A client dry
#    run still needs an API server: kubectl asks it which kinds exist and GETs
#    each object to compare. Offline it gets them from k8s_api_stub.py (the
#    discovery API of the built-in groups, 404 for every object, 405 for any
#    write). --validate=false, since field validation needs the server's
#    OpenAPI schema. So this checks: the YAML parses, every object's
#    apiVersion/kind is one Kubernetes serves, kubectl builds each apply,
#    and it writes nothing. Not: field names and types (a server dry run).
# 2. The controller Job's init container script against the stub's pod list.
# 3. check_manifests.py: that the objects agree with each other and with
#    Lockstep (selectors, roles, volumes, references, RBAC, the plan).
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when kubectl, python3 or
# python3-yaml is missing.
set -euo pipefail
src="$1"
here="$(cd "$(dirname "$0")" && pwd)"
skip() { echo "SKIPPED: $*"; exit 77; }
command -v kubectl >/dev/null || skip "no kubectl (Debian: apt-get install kubernetes-client)"
command -v python3 >/dev/null || skip "no python3"
python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml (apt-get install python3-yaml)"

work="$(mktemp -d -t lockstep-k8s.XXXXXX)"
stub_pid=""
cleanup() {
    [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# Two Ready agent pods, for the controller Job's init container below.
cat >"$work/pods.json" <<'PODS'
{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [
 {"metadata": {"name": "lockstep-agent-client-a"},
  "status": {"hostIP": "10.0.0.11", "conditions": [{"type": "Ready", "status": "True"}]}},
 {"metadata": {"name": "lockstep-agent-oss-b"},
  "status": {"hostIP": "10.0.0.21", "conditions": [{"type": "Ready", "status": "True"}]}}]}
PODS
python3 "$here/k8s_api_stub.py" "$work/port" "$work/requests.log" "$work/pods.json" &
stub_pid=$!
for _ in $(seq 100); do
    [ -s "$work/port" ] && break
    kill -0 "$stub_pid" 2>/dev/null || { echo "FAIL: k8s_api_stub.py exited"; exit 1; }
    sleep 0.1
done
[ -s "$work/port" ] || { echo "FAIL: k8s_api_stub.py wrote no port in 10 s"; exit 1; }
cat >"$work/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: stub
  cluster:
    server: http://127.0.0.1:$(cat "$work/port")
contexts:
- name: stub
  context:
    cluster: stub
    namespace: lockstep
current-context: stub
users: []
KUBECONFIG

echo "== $(kubectl version --client 2>/dev/null | head -n 1)"
echo "== kubectl apply --dry-run=client --validate=false -f deploy/kubernetes/ (against k8s_api_stub.py)"
KUBECONFIG="$work/kubeconfig" kubectl apply --dry-run=client --validate=false \
    -f "$src/deploy/kubernetes/" | tee "$work/applied"
objects="$(python3 -c 'import glob, sys, yaml
print(sum(1 for p in glob.glob(sys.argv[1] + "/*.yaml")
          for d in yaml.safe_load_all(open(p)) if d))' "$src/deploy/kubernetes")"
applied="$(grep -c ' created (dry run)$' "$work/applied" || true)"
if [ "$applied" != "$objects" ]; then
    echo "FAIL: $objects objects in deploy/kubernetes/, $applied applied (dry run)"
    exit 1
fi
if grep -v '^GET ' "$work/requests.log"; then
    echo "FAIL: kubectl sent the requests above (not GET) in a client dry run"
    exit 1
fi
echo "== $applied objects, $(wc -l <"$work/requests.log") GET requests, no writes"

# 2. The controller Job's init container script, run here with this kubectl
#    against the stub's pod list (its /run/lockstep moved to a scratch dir):
#    it must select the agent pods and write HOST_IP:7070 per Ready pod.
echo "== the controller Job's init container (kubectl get pods -o jsonpath) against the stub"
mkdir "$work/run"
python3 - "$src/deploy/kubernetes/controller-job.yaml" "$work/run" >"$work/init.sh" <<'EXTRACT'
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Job")
init = job["spec"]["template"]["spec"]["initContainers"][0]
assert init["command"] == ["/bin/sh", "-c"], init["command"]
print(init["args"][0].replace("/run/lockstep", sys.argv[2]))
EXTRACT
: >"$work/requests.log"
KUBECONFIG="$work/kubeconfig" sh "$work/init.sh" || { echo "FAIL: the init container script exited $?"; exit 1; }
printf '10.0.0.11:7070\n10.0.0.21:7070\n' | diff -u - "$work/run/hostfile" ||
    { echo "FAIL: the hostfile is not the pods' HOST_IP:7070 (- expected, + written)"; exit 1; }
grep -q 'labelSelector=app.kubernetes.io%2Fname%3Dlockstep-agent' "$work/requests.log" ||
    { cat "$work/requests.log"; echo "FAIL: the pods were not listed by app.kubernetes.io/name=lockstep-agent"; exit 1; }

echo "== check_manifests.py deploy/kubernetes/"
python3 "$here/check_manifests.py" "$src/deploy/kubernetes"
