"""Test hosts on this machine: Linux network namespaces joined by one bridge, for tests of what crosses a network.

``network_create`` makes a namespace of its own for the bridge (the hub, which holds the gateway's
address) and one namespace per host, each with a veth pair into the bridge, all on one /24. Every name
carries a random tag, so the leftovers of a crashed run collide with nothing. Each host also gets a host
name of its own (a UTS namespace per process), as the engine records which host ran what.

Nothing of it is made in this machine's own namespace, where its other programs live. There, a bridge
or an address coming or going is a network change: Chromium fails each request still waiting for a
connection with ERR_NETWORK_CHANGED, which stops a page's module scripts half-loaded in a browser test
running beside this one (or in the developer's own browser).

The two sides meet through Unix sockets, which network namespaces do not divide: ``Network.relay``
starts a relay on each side. The hosts reach this machine's services (listening on its loopback) at
the gateway's address; this namespace reaches each exposed port of a host at a loopback port of its
own. ``python -m tests.netns relay LISTEN=TARGET...`` is that relay; an endpoint is ``HOST:PORT`` or a
Unix socket's path.

Needs root and iproute2; ``NetnsUnavailable`` says why a network could not be made. ``Network.close``
stops every process the network started (by process group) and deletes the namespaces.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

from tests.redis_server import free_port

STOP_TIMEOUT = 10.0
RELAY_TIMEOUT = 10.0
RELAY_READY = "relaying"
# Only the hub and its hosts hold it, so it cannot clash with a network of this machine's.
SUBNET = "10.77.0"


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
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: list[subprocess.Popen] = field(default_factory=list)
    relays: list[subprocess.Popen] = field(default_factory=list)
    sockets: Path | None = None

    subnet = SUBNET

    @property
    def hub(self) -> str:
        return f"{self.tag}-hub"

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

    def relay(self, *, services: dict[int, tuple[str, int]], exposed: list[tuple[Host, int]], log_dir: Path,
              cwd: Path) -> dict[tuple[str, int], int]:
        """Let the hosts reach each port of ``services`` at the gateway's address (``(host, port)`` as this
        namespace reaches it), and this namespace reach each ``exposed`` port of a host at a loopback port:
        returned by the host's name and its port."""
        # A Unix socket's path is bounded (108 bytes): a short folder of its own, not the test's tmp_path.
        self.sockets = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        here, hub, reached = [], [], {}
        for port, (address, target) in services.items():
            meeting = self.sockets / f"service-{port}"
            hub.append(f"{self.gateway}:{port}={meeting}")
            here.append(f"{meeting}={address}:{target}")
        for host, port in exposed:
            meeting = self.sockets / f"{host.name}-{port}"
            reached[(host.name, port)] = free_port()
            here.append(f"127.0.0.1:{reached[(host.name, port)]}={meeting}")
            hub.append(f"{meeting}={host.address}:{port}")
        relay = [sys.executable, "-m", "tests.netns", "relay"]
        self._relay_started([*relay, *here], log_path=log_dir / "relay-here.log", cwd=cwd)
        self._relay_started(["ip", "netns", "exec", self.hub, *relay, *hub], log_path=log_dir / "relay-hub.log",
                            cwd=cwd)
        return reached

    def _relay_started(self, command: list[str], *, log_path: Path, cwd: Path) -> None:
        process = _start(command, env={**os.environ, "PYTHONUNBUFFERED": "1"}, log_path=log_path, cwd=cwd)
        self.relays.append(process)
        deadline = time.monotonic() + RELAY_TIMEOUT
        while RELAY_READY not in log_path.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the relay did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the hosts' processes, then the relays (SIGTERM, then SIGKILL after a bound); then delete
        the namespaces, the bridge and the veth pairs with them."""
        _stop(self.processes)
        _stop(self.relays)
        for namespace in [host.namespace for host in self.hosts.values()] + [self.hub]:
            # Anything still in the namespace was started here (by a process of the network).
            for pid in _ip("netns", "pids", namespace, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _ip("netns", "del", namespace, check=False)
        if self.sockets is not None:
            shutil.rmtree(self.sockets, ignore_errors=True)


def network_create(names: list[str]) -> Network:
    """A hub with its bridge and one host per name (``<subnet>.11`` upwards); cleaned up again if any step fails."""
    if os.geteuid() != 0:
        raise NetnsUnavailable(f"making network namespaces needs root (running as uid {os.geteuid()})")
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        raise NetnsUnavailable("iproute2's ip and util-linux's unshare are needed (apt-get install iproute2)")
    network = Network(tag=f"wg{random.getrandbits(16):04x}")
    try:
        _setup(network, names)
    except BaseException:
        network.close()
        raise
    return network


def _setup(network: Network, names: list[str]) -> None:
    hub = ("-n", network.hub)
    _ip("netns", "add", network.hub)
    _ip(*hub, "link", "add", "bridge", "type", "bridge")
    _ip(*hub, "addr", "add", f"{network.gateway}/24", "dev", "bridge")
    _ip(*hub, "link", "set", "bridge", "up")
    _ip(*hub, "link", "set", "lo", "up")
    for index, name in enumerate(names):
        host = Host(name=name, namespace=f"{network.tag}-{name}", hostname=f"{network.tag}-{name}",
                    address=f"{network.subnet}.{11 + index}", veth=name)
        _ip("netns", "add", host.namespace)
        network.hosts[name] = host
        inside = f"{host.veth}p"
        _ip(*hub, "link", "add", host.veth, "type", "veth", "peer", "name", inside, "netns", host.namespace)
        _ip(*hub, "link", "set", host.veth, "master", "bridge", "up")
        _ip("-n", host.namespace, "link", "set", inside, "name", "eth0")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")
        _ip("-n", host.namespace, "link", "set", "lo", "up")
        route = _ip("-n", host.namespace, "-4", "route", "get", network.gateway).stdout
        if "dev eth0" not in route:
            raise RuntimeError(f"{network.gateway} is not routed over {host.name}'s eth0: {route}")


def _ip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *arguments], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetnsUnavailable(f"`ip {' '.join(arguments)}` failed: {result.stderr.strip()}")
    return result


def answers(url: str) -> bool:
    """Whether an HTTP server answers at ``url`` (any status): through a relay, whose own port always
    accepts, a connection alone says nothing."""
    try:
        urlopen(url, timeout=2).close()
    except HTTPError:
        return True
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


# --- the relay ---------------------------------------------------------------------------------------


async def _relays(routes: list[tuple[str, str]]) -> None:
    servers = [await _listening(listen, functools.partial(_relay, target)) for listen, target in routes]
    print(RELAY_READY, " ".join(listen for listen, _ in routes), flush=True)
    async with asyncio.TaskGroup() as group:
        for server in servers:
            group.create_task(server.serve_forever())


async def _listening(endpoint: str, handler) -> asyncio.Server:
    if endpoint.startswith("/"):
        return await asyncio.start_unix_server(handler, endpoint)
    address, _, port = endpoint.rpartition(":")
    return await asyncio.start_server(handler, address, int(port))


async def _relay(target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        if target.startswith("/"):
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(target)
        else:
            address, _, port = target.rpartition(":")
            upstream_reader, upstream_writer = await asyncio.open_connection(address, int(port))
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # None of the clients relayed (PostgreSQL's, Redis's, HTTP and WebSocket ones) half-closes: one
    # side's end is the connection's end.
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


def _main(arguments: list[str]) -> int:
    if len(arguments) < 2 or arguments[0] != "relay":
        print("usage: python -m tests.netns relay LISTEN=TARGET... (HOST:PORT or a socket's path)", file=sys.stderr)
        return 2
    asyncio.run(_relays([tuple(route.split("=", 1)) for route in arguments[1:]]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
