#!/usr/bin/env python3
"""What kubectl's client-side dry run cannot see in deploy/kubernetes/ (it has
no schema without a server): the manifests agree with each other and with
what Lockstep needs.

  check_manifests.py DIR
Prints one line per check; exits 1 naming the file, object and field of the
first failures, 0 when all hold.
"""
import glob
import os
import re
import sys
import tomllib

import yaml

# Secrets the README tells a site to create; everything else a manifest
# refers to must be defined in DIR.
EXTERNAL_SECRETS = {"lockstep-agent-tls", "lockstep-controller-tls"}
ROLE_LABEL = "lockstep.io/role"
AGENT_PORT = "7070"

failures = []


def fail(where, why):
    failures.append(f"{where}: {why}")


def load(directory):
    docs = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    docs.append((os.path.basename(path), doc))
    return docs


def name_of(file, doc):
    return f"{file}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


def check_pod(where, spec, defined):
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mounted = set()
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        if not c.get("image"):
            fail(where, f"container {c.get('name')} has no image")
        for m in c.get("volumeMounts", []):
            mounted.add(m["name"])
            if m["name"] not in volumes:
                fail(where, f"container {c['name']} mounts volume {m['name']}, which is not in volumes")
    for name, v in volumes.items():
        if name not in mounted:
            fail(where, f"volume {name} is mounted by no container")
        if "configMap" in v and v["configMap"]["name"] not in defined["ConfigMap"]:
            fail(where, f"volume {name}: ConfigMap {v['configMap']['name']} is not defined here")
        if "secret" in v and v["secret"]["secretName"] not in EXTERNAL_SECRETS:
            fail(where, f"volume {name}: Secret {v['secret']['secretName']} is not one the README makes")
        claim = v.get("persistentVolumeClaim", {}).get("claimName")
        if claim and claim not in defined["PersistentVolumeClaim"]:
            fail(where, f"volume {name}: PersistentVolumeClaim {claim} is not defined here")
    sa = spec.get("serviceAccountName")
    if sa and sa not in defined["ServiceAccount"]:
        fail(where, f"serviceAccountName {sa} is not defined here")


def check_daemonset(where, doc):
    labels = doc["spec"]["template"]["metadata"].get("labels", {})
    for k, v in doc["spec"]["selector"]["matchLabels"].items():
        if labels.get(k) != v:
            fail(where, f"selector {k}={v} does not match the pod template's labels")
    spec = pod_spec(doc)
    if spec.get("hostNetwork") is not True:
        fail(where, "hostNetwork must be true (the controller dials the node's address)")
    role = spec.get("nodeSelector", {}).get(ROLE_LABEL)
    if role not in ("client", "oss", "mds"):
        fail(where, f"nodeSelector {ROLE_LABEL} must be client, oss or mds, not {role}")
    agent = spec["containers"][0]
    args = agent.get("command", []) + agent.get("args", [])
    if f"--role={role}" not in args:
        fail(where, f"the agent's --role is not its nodeSelector's {role}: {args}")
    if f"--listen=0.0.0.0:{AGENT_PORT}" not in args:
        fail(where, f"the agent does not listen on port {AGENT_PORT}: {args}")
    if not any(a.startswith("--root=") for a in args):
        fail(where, "the agent has no --root")
    mounts = {m["mountPath"] for m in agent.get("volumeMounts", [])}
    if agent.get("securityContext", {}).get("privileged") and "/proc/sys/vm" not in mounts:
        fail(where, "privileged for drop_caches but /proc/sys/vm is not mounted")
    for path in (a.split("=", 1)[1] for a in args if a.startswith("--root=")):
        if path != "/tmp" and path not in mounts:
            fail(where, f"--root {path} is not a mounted volume (files would stay in the container)")
    return labels


def check_job(where, doc, agent_labels):
    spec = pod_spec(doc)
    script = "\n".join(spec["initContainers"][0].get("args", []))
    m = re.search(r"selector=(\S+)", script)
    if not m:
        fail(where, "the init container names no agent pod selector")
    else:
        k, _, v = m.group(1).partition("=")
        if not all(labels.get(k) == v for labels in agent_labels):
            fail(where, f"selector {m.group(1)} does not select every agent DaemonSet's pods")
    if f":{AGENT_PORT}" not in script:
        fail(where, f"the hostfile does not use the agents' port {AGENT_PORT}")
    args = spec["containers"][0].get("args", [])
    for flag in ("--hostfile=", "--tls_dir=", "--out="):
        if not any(a.startswith(flag) for a in args):
            fail(where, f"lockstep run has no {flag[:-1]}")


def check_role(where, doc):
    rules = doc.get("rules", [])
    if rules != [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]:
        fail(where, f"the Role must allow only get and list on pods, not {rules}")


def main():
    docs = load(sys.argv[1])
    defined = {k: set() for k in ("ConfigMap", "PersistentVolumeClaim", "ServiceAccount", "Role")}
    for file, doc in docs:
        where = name_of(file, doc)
        for key in ("apiVersion", "kind"):
            if key not in doc:
                fail(where, f"no {key}")
        if "namespace" in doc.get("metadata", {}):
            fail(where, "metadata.namespace is set: the manifests are namespace-free (kubectl -n)")
        if doc.get("kind") in defined:
            defined[doc["kind"]].add(doc["metadata"]["name"])
    agent_labels = []
    for file, doc in docs:
        where, kind = name_of(file, doc), doc.get("kind")
        if kind == "DaemonSet":
            agent_labels.append(check_daemonset(where, doc))
        if kind in ("DaemonSet", "Job"):
            check_pod(where, pod_spec(doc), defined)
        if kind == "Role":
            check_role(where, doc)
        if kind == "RoleBinding":
            if doc["roleRef"]["name"] not in defined["Role"]:
                fail(where, f"roleRef {doc['roleRef']['name']} is not defined here")
            for s in doc.get("subjects", []):
                if s["kind"] == "ServiceAccount" and s["name"] not in defined["ServiceAccount"]:
                    fail(where, f"subject {s['name']} is not defined here")
        if kind == "ConfigMap":
            for key, text in doc.get("data", {}).items():
                if key.endswith(".toml"):
                    try:
                        plan = tomllib.loads(text)
                    except tomllib.TOMLDecodeError as e:
                        fail(where, f"{key}: not TOML: {e}")
                        continue
                    if "agent" in plan:
                        fail(where, f"{key}: [[agent]] tables: the Job gives the agents")
    roles = sorted(pod_spec(d)["nodeSelector"][ROLE_LABEL] for _, d in docs if d.get("kind") == "DaemonSet")
    if roles != ["client", "mds", "oss"]:
        fail(sys.argv[1], f"one agent DaemonSet per role client, oss, mds expected; found {roles}")
    for _, doc in docs:
        if doc.get("kind") == "Job":
            check_job(name_of("controller", doc), doc, agent_labels)
    print(f"checked {len(docs)} objects: selectors and labels, roles, volumes and mounts, "
          "references (ConfigMap, Secret, PVC, ServiceAccount, Role), RBAC verbs, the plan's TOML")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
