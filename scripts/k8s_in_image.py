#!/usr/bin/env python3
"""Runs the containers of the Kubernetes manifests inside a built image.

Each container (init containers included) of every Job and Deployment in
K8S_DIR is run with `buildah run` in the working container CONTAINER (made
from the runtime image), with the shared folder DATA at the manifests' run
volume and CONFIG at the config map's mount, its command and arguments as
the manifest gives them (arguments alone run the image's entrypoint,
`ultima`) and its environment. Indexed Jobs run one copy per completion
index, all at once (the trainer's ranks meet at index 0, named here by
127.0.0.1 instead of the headless Service's DNS name). The init Job runs
first and must finish with status 0; then the workers, the trainer and the
gatekeeper, each for SECONDS (a container still running then has started as it should; one
that exits with an error fails the check).

Usage: k8s_in_image.py K8S_DIR CONTAINER DATA CONFIG [SECONDS]
"""
import os
import subprocess
import sys
import time

import yaml

k8s_dir, container, data, config = sys.argv[1:5]
seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 45
logs = data.rstrip("/") + "-logs"  # each container's output, beside the shared folder
os.makedirs(logs, exist_ok=True)

INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def workloads():
    """(kind, name, pod spec, completions) of every Job and Deployment."""
    found = []
    for name in sorted(os.listdir(k8s_dir)):
        if not name.endswith(".yaml") or name == "kustomization.yaml":
            continue
        with open(os.path.join(k8s_dir, name)) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get("kind") not in ("Job", "Deployment"):
                    continue
                spec = doc["spec"]
                completions = spec.get("completions", 1) if spec.get("completionMode") == "Indexed" else 1
                found.append((doc["kind"], doc["metadata"]["name"], spec["template"]["spec"], completions))
    # As a deployment comes up: the init Job (everything needs its run
    # directory), the workers (they make the samples), the trainer, the
    # gatekeeper (it judges the trainer's candidates).
    order = ["-init", "-selfplay", "-trainer", "-gate"]
    found.sort(key=lambda w: next((i for i, end in enumerate(order) if w[1].endswith(end)), len(order)))
    return found


def environment(container_spec, index):
    env = []
    for item in container_spec.get("env", []):
        value = item.get("value")
        ref = item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if ref == INDEX_FIELD:
            value = str(index)
        elif ref == "metadata.name":
            value = f"{container_spec['name']}-pod-{index}"  # a pod name as a Deployment makes them
        elif value is None:
            raise SystemExit(f"{container_spec['name']}: env {item['name']} has a source this check cannot fill")
        if item["name"] == "MASTER_ADDR":
            value = "127.0.0.1"  # the Service's DNS name has no meaning outside a cluster
        env.append(f"{item['name']}={value}")
    return env


def mounts(pod, container_spec):
    """-v options: the run claim at DATA, the config map at CONFIG."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    options = []
    for m in container_spec.get("volumeMounts", []):
        volume = volumes.get(m["name"], {})
        if "persistentVolumeClaim" in volume:
            options += ["-v", f"{data}:{m['mountPath']}"]
        elif "configMap" in volume:
            options += ["-v", f"{config}:{m['mountPath']}:ro"]
        else:
            raise SystemExit(f"{container_spec['name']}: volume {m['name']} is neither the run claim nor the config map")
    return options


def command(container_spec):
    return list(container_spec.get("command", ["ultima"])) + [str(a) for a in container_spec.get("args", [])]


def start(label, pod, container_spec, index):
    argv = (["buildah", "run", "--isolation", "chroot"] + mounts(pod, container_spec) +
            [x for e in environment(container_spec, index) for x in ("--env", e)] +
            [container, "--"] + command(container_spec))
    log = open(os.path.join(logs, f"{label}.log"), "w")
    print(f"-- {label}: {' '.join(command(container_spec))}", flush=True)
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)


def tail(label):
    with open(os.path.join(logs, f"{label}.log")) as f:
        return "".join(f.readlines()[-5:])


failures = []
for kind, name, pod, completions in workloads():
    for phase in ("initContainers", "containers"):
        for spec in pod.get(phase, []):
            runs = []
            for index in range(completions):
                label = f"{name}-{spec['name']}" + (f"-{index}" if completions > 1 else "")
                runs.append((label, start(label, pod, spec, index)))
            to_end = name.endswith("-init") or phase == "initContainers"
            deadline = None if to_end else time.time() + seconds
            for label, process in runs:
                try:
                    timeout = None if deadline is None else max(0.1, deadline - time.time())
                    status = process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    process.terminate()
                    try:
                        process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        process.kill()
                    print(f"   {label}: still running after {seconds:.0f} s (started as it should)")
                    continue
                if status != 0:
                    failures.append(f"{label} exited with status {status}:\n{tail(label)}")
                else:
                    print(f"   {label}: finished")

for failure in failures:
    print(f"k8s_in_image: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
