#!/usr/bin/env python3
"""The Kubernetes manifests of deploy/k8s, checked without a cluster.

Every document parses and is an object of its intended kind with the fields
that kind needs; together they are the set the docs describe (config map,
claim, init Job, workers, trainer Job and its headless Service, gatekeeper),
with no namespace; every pod mounts the ReadWriteMany claim and runs the
program on the same run directory; the trainer is an indexed Job whose ranks
meet at index 0 through the Service; every subcommand and option used exists
in the program (its --help), the workers' tag made from a pod name is one the
program accepts, and the config map holds configs/gpu.yaml as it is.

Usage: k8s_manifests_test.py ULTIMA K8S_DIR CONFIGS_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ultima, k8s_dir, configs_dir = sys.argv[1:4]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


API_VERSIONS = {
    "ConfigMap": "v1",
    "PersistentVolumeClaim": "v1",
    "Service": "v1",
    "Job": "batch/v1",
    "Deployment": "apps/v1",
}
EXPECTED = {
    ("ConfigMap", "ultima-config"),
    ("PersistentVolumeClaim", "ultima-run"),
    ("Job", "ultima-init"),
    ("Deployment", "ultima-selfplay"),
    ("Service", "ultima-trainer"),
    ("Job", "ultima-trainer"),
    ("Deployment", "ultima-gate"),
}
RUN_DIR = "/data/run"

objects = {}
files = sorted(f for f in os.listdir(k8s_dir) if f.endswith(".yaml"))
kustomization = None
for name in files:
    with open(os.path.join(k8s_dir, name)) as f:
        documents = [d for d in yaml.safe_load_all(f) if d is not None]
    check(documents, f"{name}: no document")
    for doc in documents:
        if not check(isinstance(doc, dict), f"{name}: a document is not a mapping"):
            continue
        kind = doc.get("kind")
        if kind == "Kustomization":
            kustomization = doc
            continue
        where = f"{name}: {kind} {doc.get('metadata', {}).get('name')}"
        check(kind in API_VERSIONS, f"{where}: unexpected kind")
        check(doc.get("apiVersion") == API_VERSIONS.get(kind), f"{where}: apiVersion {doc.get('apiVersion')}")
        meta = doc.get("metadata") or {}
        check(isinstance(meta.get("name"), str) and meta["name"], f"{where}: no metadata.name")
        check("namespace" not in meta, f"{where}: names a namespace")
        check(doc.get("spec") or doc.get("data"), f"{where}: neither spec nor data")
        key = (kind, meta.get("name"))
        check(key not in objects, f"{where}: defined twice")
        objects[key] = doc

check(set(objects) == EXPECTED, f"objects {sorted(set(objects) ^ EXPECTED)} missing or unexpected")
if check(kustomization is not None, "no kustomization.yaml"):
    listed = kustomization.get("resources", [])
    check(sorted(listed) == [f for f in files if f != "kustomization.yaml"],
          f"kustomization lists {listed}, the folder holds {files}")


def get(kind, name):
    return objects.get((kind, name)) or {}


pvc = get("PersistentVolumeClaim", "ultima-run")
check("ReadWriteMany" in pvc.get("spec", {}).get("accessModes", []), "the claim is not ReadWriteMany")
check(pvc.get("spec", {}).get("resources", {}).get("requests", {}).get("storage"), "the claim requests no storage")

with open(os.path.join(configs_dir, "gpu.yaml")) as f:
    check(get("ConfigMap", "ultima-config").get("data", {}).get("config.yaml") == f.read(),
          "the config map's config.yaml is not configs/gpu.yaml")

helps = {}


def options_of(subcommand):
    if subcommand not in helps:
        out = subprocess.run([ultima, subcommand, "--help"], capture_output=True, text=True)
        check(out.returncode == 0, f"ultima {subcommand} --help failed")
        helps[subcommand] = set(re.findall(r"--[a-z][a-z-]*", out.stdout))
    return helps[subcommand]


def ultima_words(container):
    """The program's arguments: args under the image's entrypoint, or the words after `ultima` in sh -c."""
    if "command" not in container:
        return list(container.get("args", []))
    script = " ".join(container["command"])
    match = re.search(r"\bexec ultima (.*)", script)
    check(match, f"container {container.get('name')}: its command runs no ultima")
    return match.group(1).split() if match else []


def pod_checks(where, template, subcommand, needed):
    """Checks a pod template; returns its ultima container."""
    spec = template.get("spec", {})
    volumes = {v.get("name"): v for v in spec.get("volumes", [])}
    run_volume = [n for n, v in volumes.items()
                  if v.get("persistentVolumeClaim", {}).get("claimName") == "ultima-run"]
    check(len(run_volume) == 1, f"{where}: no volume of the claim ultima-run")
    containers = spec.get("containers", [])
    check(len(containers) == 1, f"{where}: {len(containers)} containers")
    for c in containers + spec.get("initContainers", []):
        check(c.get("name") and c.get("image"), f"{where}: a container without name or image")
        mounts = c.get("volumeMounts", [])
        for m in mounts:
            check(m.get("name") in volumes, f"{where}: {c.get('name')} mounts unknown volume {m.get('name')}")
        check(any(m.get("name") in run_volume and m.get("mountPath") == "/data" for m in mounts),
              f"{where}: {c.get('name')} does not mount the run at /data")
    if not containers:
        return {}
    words = ultima_words(containers[0])
    check(words[:1] == [subcommand], f"{where}: runs ultima {words[:1]}, not {subcommand}")
    check(words[1:3] == ["--run-dir", RUN_DIR], f"{where}: not on --run-dir {RUN_DIR}")
    options = [w for w in words if w.startswith("--")]
    for option in options:
        check(option in options_of(subcommand), f"{where}: ultima {subcommand} has no {option}")
    for option in needed:
        check(option in options, f"{where}: ultima {subcommand} without {option}")
    return containers[0]


def env_of(container):
    return {e.get("name"): e for e in container.get("env", [])}


# The init Job: the config map's config.
init = get("Job", "ultima-init")
c = pod_checks("init Job", init.get("spec", {}).get("template", {}), "init", ["--config"])
words = ultima_words(c) if c else []
check("/etc/ultima/config.yaml" in words, "init Job: not on the config map's config.yaml")
init_volumes = init.get("spec", {}).get("template", {}).get("spec", {}).get("volumes", [])
check(any(v.get("configMap", {}).get("name") == "ultima-config" for v in init_volumes), "init Job: no config map volume")
check(any(m.get("mountPath") == "/etc/ultima" for m in c.get("volumeMounts", [])), "init Job: config not at /etc/ultima")
check(init.get("spec", {}).get("template", {}).get("spec", {}).get("restartPolicy") in ("OnFailure", "Never"),
      "init Job: restartPolicy")


def deployment_checks(name, subcommand, needed):
    d = get("Deployment", name)
    spec = d.get("spec", {})
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    selector = spec.get("selector", {}).get("matchLabels", {})
    check(selector and all(labels.get(k) == v for k, v in selector.items()),
          f"{name}: the selector does not match the pod labels")
    return spec, pod_checks(name, spec.get("template", {}), subcommand, needed)


# Workers: the tag from the pod name, one the program accepts.
_, worker = deployment_checks("ultima-selfplay", "selfplay", ["--watch", "--tag"])
pod_name = env_of(worker).get("POD_NAME", {})
check(pod_name.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name",
      "workers: POD_NAME is not the pod's name (downward API)")
if worker.get("command"):
    with tempfile.TemporaryDirectory() as bin_dir:
        fake = os.path.join(bin_dir, "ultima")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\nprintf "%s\\n" "$@"\n')
        os.chmod(fake, 0o755)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                   POD_NAME="ultima-selfplay-7d9f8b6c5-x2x4z")
        out = subprocess.run(worker["command"], env=env, capture_output=True, text=True).stdout.split("\n")
        tag = out[out.index("--tag") + 1] if "--tag" in out else ""
        check(re.fullmatch(r"[A-Za-z0-9_]+", tag), f"workers: tag {tag!r} from a pod name")
        # The real program takes it (refused only for the run that does not exist).
        probe = subprocess.run([ultima, "selfplay", "--run-dir", os.path.join(bin_dir, "none"), "--tag", tag,
                                "--games", "1"], capture_output=True, text=True)
        check("--tag" not in probe.stderr, f"workers: ultima refuses tag {tag!r}: {probe.stderr.strip()}")

# The gatekeeper: one replica, never two at once.
gate_spec, _ = deployment_checks("ultima-gate", "gate", ["--watch"])
check(gate_spec.get("replicas") == 1, "gate: replicas is not 1")
check(gate_spec.get("strategy", {}).get("type") == "Recreate", "gate: two could overlap in a rollout")

# The trainer: an indexed Job, rank from the completion index, rendezvous at
# index 0 through the headless Service.
job = get("Job", "ultima-trainer")
spec = job.get("spec", {})
check(spec.get("completionMode") == "Indexed", "trainer: not an indexed Job")
template = spec.get("template", {})
trainer = pod_checks("trainer", template, "train", ["--watch"])
env = env_of(trainer)
for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
    check(name in env, f"trainer: no {name}")
world = int(env.get("WORLD_SIZE", {}).get("value", "0"))
check(world >= 1 and spec.get("completions") == world and spec.get("parallelism") == world,
      f"trainer: completions {spec.get('completions')}, parallelism {spec.get('parallelism')}, WORLD_SIZE {world}")
check(env.get("RANK", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "metadata.annotations['batch.kubernetes.io/job-completion-index']",
      "trainer: RANK is not the completion index")
service = get("Service", "ultima-trainer")
subdomain = template.get("spec", {}).get("subdomain")
check(subdomain == "ultima-trainer", f"trainer: subdomain {subdomain}, not the headless Service")
check(service.get("spec", {}).get("clusterIP") == "None", "trainer Service is not headless (clusterIP None)")
labels = template.get("metadata", {}).get("labels", {})
selector = service.get("spec", {}).get("selector", {})
check(selector and all(labels.get(k) == v for k, v in selector.items()), "trainer Service selects no trainer pod")
check(env.get("MASTER_ADDR", {}).get("value") == f"{job.get('metadata', {}).get('name')}-0.{subdomain}",
      f"trainer: MASTER_ADDR {env.get('MASTER_ADDR', {}).get('value')} is not index 0's name")
port = env.get("MASTER_PORT", {}).get("value")
check(port and any(str(p.get("port")) == port for p in service.get("spec", {}).get("ports", [])),
      f"trainer: MASTER_PORT {port} is no port of the Service")

# kubectl, where there is one, renders the set offline.
kubectl = shutil.which("kubectl")
if kubectl:
    out = subprocess.run([kubectl, "kustomize", k8s_dir], capture_output=True, text=True)
    check(out.returncode == 0, f"kubectl kustomize: {out.stderr.strip()}")
    rendered = [d for d in yaml.safe_load_all(out.stdout) if d]
    check(len(rendered) == len(EXPECTED), f"kubectl kustomize renders {len(rendered)} objects")
else:
    print("no kubectl: the kustomization was not rendered")

if failures:
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    sys.exit(1)
print(f"PASS: {len(objects)} objects in {len(files)} files, trainer world size {world}")
