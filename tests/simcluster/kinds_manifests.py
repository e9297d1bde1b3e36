"""Manifests of the workload, networking and storage kinds as a user writes them for kubectl."""

from __future__ import annotations

DAEMON_SET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ops, labels: {app: x}}
spec:
  selector: {matchLabels: {name: agent}}
  template:
    metadata: {labels: {name: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: agent, image: registry.example.com/agent:1.0}]
"""
STATEFUL_SET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ops, labels: {app: x}}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {name: db}}
  template:
    metadata: {labels: {name: db}}
    spec:
      containers: [{name: db, image: registry.example.com/db:1.0}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""
CRON_JOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ops, labels: {app: x}}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: job, image: registry.example.com/job:1.0}]
"""
REPLICATION_CONTROLLER = """\
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: ops}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: web, image: registry.example.com/web:1.0}]
"""
INGRESS = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ops, labels: {app: x}}
spec:
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: ops, labels: {app: x}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
"""
VOLUME = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  hostPath: {path: /data/a}
"""
ENDPOINTS = """\
apiVersion: v1
kind: Endpoints
metadata: {name: ext, namespace: ops}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{port: 8080}]
"""
ENDPOINT_SLICE = """\
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ext-abcde, namespace: ops, labels: {kubernetes.io/service-name: ext}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}, {addresses: [10.0.0.2]}]
ports: [{port: 8080}]
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops}\n"

EVERY_KIND = "---\n".join(
    [NAMESPACE, DAEMON_SET, STATEFUL_SET, CRON_JOB, REPLICATION_CONTROLLER, INGRESS, CLAIM, VOLUME, ENDPOINTS,
     ENDPOINT_SLICE]
)  # fmt: skip
