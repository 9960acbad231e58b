"""Test hosts on this machine: Linux network namespaces joined by one bridge, for tests of what crosses a network.

``network_create`` makes a bridge whose address (the gateway) lives in this namespace, and one
namespace per host, each with a veth pair into the bridge, all on one /24. Every name carries a random
tag, so the leftovers of a crashed run collide with nothing. Each host also gets a host name of its
own (a UTS namespace per process), as the engine records which host ran what.

The services of this machine listen on its loopback, which another namespace cannot reach:
``Network.forward`` starts a TCP forwarder bound to the gateway's address. ``python -m tests.netns
forward ADDRESS PORT=HOST:PORT...`` is that forwarder.

Needs root and iproute2; ``NetnsUnavailable`` says why a network could not be made. ``Network.close``
stops every process the network started (by process group) and deletes the namespaces and the bridge.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

STOP_TIMEOUT = 10.0
FORWARDER_TIMEOUT = 10.0
FORWARDER_READY = "forwarding"


class NetnsUnavailable(Exception):
    """Network namespaces cannot be made here (not root, no iproute2, or the kernel refused)."""


@dataclass(frozen=True)
class Host:
    name: str
    namespace: str
    hostname: str
    address: str
    veth: str  # the end of the host's veth pair that stays on the bridge


@dataclass
class Network:
    tag: str
    subnet: str
    bridge: str
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: list[subprocess.Popen] = field(default_factory=list)
    forwarders: list[subprocess.Popen] = field(default_factory=list)

    @property
    def gateway(self) -> str:
        return f"{self.subnet}.1"

    def spawn(self, host: Host, argv: list[str], *, env: dict[str, str], log_path: Path, cwd: Path) -> subprocess.Popen:
        """Start ``argv`` on ``host`` (its namespace and host name), in a session of its own."""
        # ip netns exec, unshare (without --fork) and sh all exec: the process keeps its pid and group.
        command = ["ip", "netns", "exec", host.namespace, "unshare", "--uts",
                   "sh", "-c", 'hostname "$0" && exec "$@"', host.hostname, *argv]
        process = _start(command, env=env, log_path=log_path, cwd=cwd)
        self.processes.append(process)
        return process

    def forward(self, routes: dict[int, tuple[str, int]], *, log_path: Path, cwd: Path) -> None:
        """Forward each port of the gateway's address to ``(host, port)`` as this namespace reaches it."""
        command = [sys.executable, "-m", "tests.netns", "forward", self.gateway,
                   *(f"{port}={host}:{target}" for port, (host, target) in routes.items())]
        process = _start(command, env={**os.environ, "PYTHONUNBUFFERED": "1"}, log_path=log_path, cwd=cwd)
        self.forwarders.append(process)
        deadline = time.monotonic() + FORWARDER_TIMEOUT
        while FORWARDER_READY not in log_path.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the forwarder did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the hosts' processes, then the forwarders (SIGTERM, then SIGKILL after a bound); then delete
        the namespaces and the bridge."""
        _stop(self.processes)
        _stop(self.forwarders)
        for host in self.hosts.values():
            # Anything still in the namespace was started here (by a process of the network).
            pids = _ip("netns", "pids", host.namespace, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            # Deleting one end deletes the pair now; a namespace's own devices go when the kernel gets to it.
            _ip("link", "del", host.veth, check=False)
            _ip("netns", "del", host.namespace, check=False)
        _ip("link", "del", self.bridge, check=False)


def network_create(names: list[str]) -> Network:
    """A bridge and one host per name (``<subnet>.11`` upwards); cleaned up again if any step fails."""
    if os.geteuid() != 0:
        raise NetnsUnavailable(f"making network namespaces needs root (running as uid {os.geteuid()})")
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        raise NetnsUnavailable("iproute2's ip and util-linux's unshare are needed (apt-get install iproute2)")
    tag = f"wg{random.getrandbits(16):04x}"
    network = Network(tag=tag, subnet=_free_subnet(), bridge=f"{tag}br")
    try:
        _setup(network, names)
    except BaseException:
        network.close()
        raise
    return network


def _setup(network: Network, names: list[str]) -> None:
    _ip("link", "add", network.bridge, "type", "bridge")
    _ip("addr", "add", f"{network.gateway}/24", "dev", network.bridge)
    _ip("link", "set", network.bridge, "up")
    for index, name in enumerate(names):
        host = Host(name=name, namespace=f"{network.tag}-{name}", hostname=f"{network.tag}-{name}",
                    address=f"{network.subnet}.{11 + index}", veth=f"{network.tag}{name}")
        _ip("netns", "add", host.namespace)
        network.hosts[name] = host
        inside = f"{host.veth}p"
        _ip("link", "add", host.veth, "type", "veth", "peer", "name", inside, "netns", host.namespace)
        _ip("link", "set", host.veth, "master", network.bridge, "up")
        _ip("-n", host.namespace, "link", "set", inside, "name", "eth0")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")
        _ip("-n", host.namespace, "link", "set", "lo", "up")
        # Traffic to a host must stay on the bridge: never let it follow the default route off the machine.
        route = _ip("-4", "route", "get", host.address).stdout
        if f"dev {network.bridge}" not in route:
            raise RuntimeError(f"{host.address} is not routed over {network.bridge}: {route}")


def _free_subnet() -> str:
    """A 10.x.y /24 that no address or route of this machine uses yet."""
    taken = _ip("-4", "-o", "addr", "show").stdout + _ip("-4", "route", "show", "table", "all").stdout
    for _ in range(100):
        subnet = f"10.{random.randint(64, 250)}.{random.randint(0, 255)}"
        if f"{subnet}." not in taken:
            return subnet
    raise NetnsUnavailable("no free 10.x.y.0/24 subnet found")


def _ip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *arguments], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetnsUnavailable(f"`ip {' '.join(arguments)}` failed: {result.stderr.strip()}")
    return result


def listening(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=0.5).close()
    except OSError:
        return False
    return True


def _start(command: list[str], *, env: dict[str, str], log_path: Path, cwd: Path) -> subprocess.Popen:
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        _signal_group(process, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        # Children may outlive their group leader; the group goes in any case.
        _signal_group(process, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT)


def _signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


# --- the forwarder ---------------------------------------------------------------------------------


async def _forward(address: str, routes: dict[int, tuple[str, int]]) -> None:
    servers = [
        await asyncio.start_server(functools.partial(_relay, target), address, port)
        for port, target in routes.items()
    ]
    print(FORWARDER_READY, address, " ".join(map(str, routes)), flush=True)
    async with asyncio.TaskGroup() as group:
        for server in servers:
            group.create_task(server.serve_forever())


async def _relay(target: tuple[str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(*target)
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # PostgreSQL's and Redis's clients never half-close: one side's end is the connection's end.
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


def _main(arguments: list[str]) -> int:
    if len(arguments) < 3 or arguments[0] != "forward":
        print("usage: python -m tests.netns forward ADDRESS PORT=HOST:PORT...", file=sys.stderr)
        return 2
    routes = {}
    for route in arguments[2:]:
        port, _, target = route.partition("=")
        host, _, target_port = target.rpartition(":")
        routes[int(port)] = (host, int(target_port))
    asyncio.run(_forward(arguments[1], routes))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
