"""`python -m simcluster --topology demo --listen 127.0.0.1:PORT --kubeconfig PATH [--pki-dir DIR]`

and `python -m simcluster ctl --kubeconfig PATH ACTION [key=value …]`: the `/_simcluster/` fault hooks
(device-unhealthy, device-healthy, compact, drop-watches, latency, restart), called with the kubeconfig's
admin credentials.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any

from dra.allocator import AllocationError
from dra.allocator.features import parse_feature_list
from simcluster.app import start_simcluster
from simcluster.ctl import main as ctl_main

STOP_POLL_SECONDS = 0.2  # how soon a SIGTERM or SIGINT starts the stop


def _listen(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--listen must be HOST:PORT, got {value!r}")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ctl"]:
        return ctl_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m simcluster", description="A simulated Kubernetes v1.37 DRA cluster."
    )
    parser.add_argument(
        "--topology", default="demo", help="topology name under simcluster/topologies, or 'none'"
    )
    parser.add_argument(
        "--listen", type=_listen, default=("127.0.0.1", 6443), help="HOST:PORT (default 127.0.0.1:6443)"
    )
    parser.add_argument(
        "--kubeconfig", type=Path, default=None, help="write a kubeconfig for this server here"
    )
    parser.add_argument(
        "--no-controllers", action="store_true", help="serve the topology without controllers"
    )
    parser.add_argument(
        "--bookmark-interval", type=float, default=10.0, help="seconds between watch bookmarks"
    )
    parser.add_argument(
        "--workload-pods", type=int, default=0, help="add that many one-GPU pods (benchmarks)"
    )
    parser.add_argument(
        "--rule-status-period",
        type=float,
        default=10.0,
        help="seconds between DeviceTaintRule status updates of the eviction controller",
    )
    parser.add_argument(
        "--pki-dir",
        type=Path,
        default=None,
        help="keep the CA, serving certificate and signing keys here and reuse them on restart "
        "(default: a temporary directory)",
    )
    parser.add_argument(
        "--insecure-http",
        action="store_true",
        help="serve plain HTTP with no authentication or authorization (debugging only)",
    )
    parser.add_argument(
        "--features",
        default="",
        help="DRA feature gates to turn on beside the 1.37 defaults, comma-separated (DRA prefix optional), "
        "or 'all' for every 1.37 beta and alpha the scheduler knows; the scheduler and the validation of new "
        "CEL selectors follow them",
    )
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    host, port = args.listen
    extra: dict[str, Any] = {"workload_pods": args.workload_pods} if args.workload_pods else {}
    if args.features:
        extra["features"] = _features(args.features)
    try:
        cluster = start_simcluster(
            topology=args.topology,
            kubeconfig_path=args.kubeconfig,
            host=host,
            port=port,
            controllers=not args.no_controllers,
            bookmark_interval=args.bookmark_interval,
            rule_status_period=args.rule_status_period,
            pki_dir=args.pki_dir,
            insecure_http=args.insecure_http,
            freeze_world=True,
            **extra,
        )
    except OSError as error:
        print(f"simcluster: cannot listen on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 2
    received: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        # Only noted: a handler runs in this thread between two bytecodes, perhaps while it holds a lock
        # (an Event's, inside Event.wait); one that set an Event deadlocked, and simcluster outlived its parent.
        signal.signal(signum, lambda number, _frame: received.append(number))
    print(f"simcluster serving {cluster.url}" + (f" (kubeconfig {args.kubeconfig})" if args.kubeconfig else ""),
          flush=True)  # fmt: skip
    try:
        while not received:
            time.sleep(STOP_POLL_SECONDS)
    finally:
        cluster.stop()
    return 0


def _features(text: str) -> frozenset[str]:
    """The 1.37 defaults plus the named gates ("all": every allocation and neutral feature)."""
    try:
        return parse_feature_list(text)
    except AllocationError as error:
        raise SystemExit(f"simcluster: --features: {error}") from None


if __name__ == "__main__":
    sys.exit(main())
