"""The course on a real JupyterHub: three learners log in, get the course, run a notebook.

The hub runs deploy/jupyterhub_config.py — the recipe's own file, loaded as a subconfig —
with what only a test may use on top: any password logs in (``DummyAuthenticator``) and each
learner's server is a local process with a home under a temporary folder
(``SimpleLocalProcessSpawner``). Everything binds to 127.0.0.1 on free ports. The test speaks
only HTTP and websockets, as a browser would: it logs in through the hub's REST API, starts
the servers, reads each learner's files and runs 00_welcome in each one's kernel through the
Jupyter server API. It stops every process it started, by PID, and checks none is left.

Selected with ``pytest -m hub`` (deselected by default): it needs ``pip install -e ".[hub]"``
and configurable-http-proxy (``npm install configurable-http-proxy``) on PATH; .ci/run
installs both.
"""

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

requests = pytest.importorskip("requests")  # with JupyterLab, as is tornado

pytestmark = pytest.mark.hub

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "deploy" / "jupyterhub_config.py"
COLLECT = ROOT / "deploy" / "collect.py"
ARTIFACTS = ROOT / "artifacts" / "hub"  # the hub's log, kept for a look after a failure
USERS = ("ada", "alan", "grace")
NOTEBOOK = "attention-course/notebooks/00_welcome.ipynb"
# grace has a course folder already, with her own notes in 00: her first login must keep it
GRACES_NOTE = {"cell_type": "markdown", "id": "graces-note", "metadata": {},
               "source": "Grace's notes: the softmax sums to one."}
TIMEOUT = 120  # seconds, for the hub, a server, or a notebook to be ready


def _unavailable(reason):
    """Say why in one line: a failure under CI (it must run there), a skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"hub test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(condition, what, timeout=TIMEOUT, every=0.5):
    """Poll ``condition()`` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# --------------------------------------------------------------------------------------
# The hub and the processes it starts.
# --------------------------------------------------------------------------------------


def hub_config(work, proxy_command):
    """The hub's configuration — the recipe, then what only a test may use — and the hub's
    public URL."""
    ports = {name: _free_port() for name in ("public", "hub", "proxy_api")}
    return f"http://127.0.0.1:{ports['public']}", f"""
load_subconfig({str(RECIPE)!r})
c.JupyterHub.bind_url = "http://127.0.0.1:{ports['public']}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{ports['hub']}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{ports['proxy_api']}"
c.ConfigurableHTTPProxy.command = [{proxy_command!r}]
c.ConfigurableHTTPProxy.pid_file = {str(work / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{work / "hub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(work / "cookie_secret")!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {set(USERS)!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{work / "homes"}/{{username}}"
c.Spawner.start_timeout = c.Spawner.http_timeout = {TIMEOUT}
c.Spawner.args = {["--allow-root"] if os.geteuid() == 0 else []!r}  # CI runs as root
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}  # start the three at once
"""


@dataclass
class Hub:
    """A running hub: its public URL, the temporary folder that holds all of its state (and
    the learners' homes), and its process."""

    url: str
    work: Path
    process: subprocess.Popen

    def processes(self):
        """The hub and every process it started that still runs: the proxy, the learners'
        servers and their kernels. Found by descent from the hub, and — for one whose parent
        has gone — by a working folder or an argument inside ``work``."""
        try:
            hub = psutil.Process(self.process.pid)
            found = {p.pid: p for p in [hub, *hub.children(recursive=True)]}
        except psutil.NoSuchProcess:
            found = {}
        for p in psutil.process_iter(["cwd", "cmdline"]):
            if any(str(self.work) in s for s in [p.info["cwd"] or "", *(p.info["cmdline"] or [])]):
                found.setdefault(p.pid, p)
        return [p for p in found.values() if _running(p)]

    def stop(self):
        """Stop the hub as its service manager would (SIGTERM: it stops the learners' servers
        and its proxy); returns the processes that outlived it."""
        started = self.processes()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        _, alive = psutil.wait_procs([p for p in started if p.pid != self.process.pid],
                                     timeout=20)
        return alive + [p for p in self.processes() if p not in alive]

    def kill_left(self):
        """SIGKILL, by PID, whatever :meth:`stop` left; returns what had to be killed."""
        left = self.stop()
        for p in left:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(left, timeout=10)
        return left


def _running(process):
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _course_with_a_note():
    """The course's 00 with Grace's note in it: her own work, as JSON."""
    notebook = json.loads((ROOT / "notebooks" / "00_welcome.ipynb").read_text())
    notebook["cells"].append(GRACES_NOTE)
    return json.dumps(notebook)


@pytest.fixture
def hub():
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        _unavailable("jupyterhub is not installed (pip install -e '.[hub]')")
    proxy = shutil.which("configurable-http-proxy")
    if not proxy:
        _unavailable("configurable-http-proxy is not on PATH (npm install configurable-http-proxy)")
    work = Path(tempfile.mkdtemp(prefix="attncourse-hub-"))
    url, config = hub_config(work, proxy)
    (work / "config.py").write_text(config)
    # the learners' servers find `attncourse` and `jupyterhub-singleuser` on the hub's PATH
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]))
    with open(work / "hub.log", "w") as log:
        process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", "config.py"],
                                   cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    running = Hub(url, work, process)
    try:
        _wait_for(lambda: _answers(f"{url}/hub/api/") or process.poll() is not None,
                  "the hub to answer")
        assert process.poll() is None, f"the hub exited:\n{(work / 'hub.log').read_text()}"
        yield running
    finally:
        killed = running.kill_left()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "hub.log", ARTIFACTS / "hub.log")
        shutil.rmtree(work, ignore_errors=True)
        assert not killed, f"had to kill processes the hub left behind: {killed}"


def _answers(url):
    try:
        return requests.get(url, timeout=5).ok
    except requests.ConnectionError:
        return False


# --------------------------------------------------------------------------------------
# A learner, as a browser would be: a token from logging in, then HTTP and websockets.
# --------------------------------------------------------------------------------------


@dataclass
class Learner:
    name: str
    token: str
    hub: Hub

    def call(self, method, path, expect=(200,), **kwargs):
        """One REST call with this learner's token; the response, checked."""
        response = requests.request(method, f"{self.hub.url}{path}", timeout=30,
                                    headers={"Authorization": f"token {self.token}"}, **kwargs)
        assert response.status_code in expect, (f"{method} {path} as {self.name}: "
                                                f"{response.status_code} {response.text[:300]}")
        return response

    def server(self, path):
        """A path on this learner's own Jupyter server."""
        return f"/user/{self.name}/{path}"

    def server_ready(self):
        return self.call("GET", f"/hub/api/users/{self.name}").json()["servers"].get(
            "", {}).get("ready")

    def server_gone(self):
        return "" not in self.call("GET", f"/hub/api/users/{self.name}").json()["servers"]


def log_in(hub, name):
    """Log in through the hub's REST API (the DummyAuthenticator takes any password)."""
    response = requests.post(f"{hub.url}/hub/api/users/{name}/tokens", timeout=30,
                             json={"auth": {"username": name, "password": "any"},
                                   "note": "tests/test_hub.py"})
    assert response.status_code in (200, 201), response.text
    return Learner(name, response.json()["token"], hub)


def _message(msg_type, content, session):
    return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": session,
                       "username": "test", "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "content": content, "channel": "shell",
            "buffers": []}


async def run_notebook(learner, cells, kernel_id):
    """Run ``cells`` (code) in order in the learner's kernel over the server's websocket;
    returns ``(index, error name)`` for each cell that raised without being tagged to."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = learner.hub.url.replace("http", "ws", 1) + learner.server(
        f"api/kernels/{kernel_id}/channels")
    socket_ = await websocket_connect(HTTPRequest(
        url, headers={"Authorization": f"token {learner.token}"}, request_timeout=TIMEOUT))
    session, errors = uuid.uuid4().hex, []
    try:
        for index, cell in enumerate(cells):
            request = _message("execute_request", {
                "code": cell["source"], "silent": False, "store_history": True,
                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}, session)
            socket_.write_message(json.dumps(request))
            while True:
                reply = json.loads(await asyncio.wait_for(socket_.read_message(), TIMEOUT))
                if reply["parent_header"].get("msg_id") != request["header"]["msg_id"]:
                    continue
                if reply["msg_type"] == "error" and "raises-exception" not in cell.get(
                        "metadata", {}).get("tags", []):
                    errors.append((index, reply["content"]["ename"]))
                if reply["msg_type"] == "execute_reply":
                    break
    finally:
        socket_.close()
    return errors


async def run_everywhere(learners):
    """00_welcome, read from each learner's home and run in a kernel of their own server,
    all at once; ``{name: errors}``."""
    runs = []
    for learner in learners:
        notebook = learner.call("GET", learner.server(f"api/contents/{NOTEBOOK}")).json()
        kernel = learner.call("POST", learner.server("api/kernels"), expect=(201,),
                              json={"name": "python3", "path": NOTEBOOK}).json()
        cells = [c for c in notebook["content"]["cells"] if c["cell_type"] == "code"]
        runs.append(run_notebook(learner, cells, kernel["id"]))
    return dict(zip([learner.name for learner in learners], await asyncio.gather(*runs)))


# --------------------------------------------------------------------------------------
# The test.
# --------------------------------------------------------------------------------------


def test_a_class_on_a_real_hub(hub, tmp_path):
    homes = hub.work / "homes"
    graces = homes / "grace" / "attention-course"
    graces_work = _course_with_a_note()
    (graces / "notebooks").mkdir(parents=True)
    (graces / "notebooks" / "00_welcome.ipynb").write_text(graces_work)

    learners = [log_in(hub, name) for name in USERS]
    for learner in learners:
        learner.call("POST", f"/hub/api/users/{learner.name}/server", expect=(201, 202))
    for learner in learners:
        _wait_for(learner.server_ready, f"{learner.name}'s server")

    course = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for learner in learners[:2]:  # a first login: the whole course, JupyterLab opens on 00
        listing = learner.call("GET", learner.server("api/contents/attention-course/notebooks"))
        assert sorted(item["name"] for item in listing.json()["content"]) == course
        assert (homes / learner.name / "attention-course" / "assets").is_dir()
        landing = learner.call("GET", learner.server(""), expect=(302,), allow_redirects=False)
        assert urlsplit(landing.headers["Location"]).path == f"/user/{learner.name}/lab/tree/{NOTEBOOK}"
    # grace had a folder of the course: it is left as it was
    assert (graces / "notebooks" / "00_welcome.ipynb").read_text() == graces_work
    assert [p.name for p in graces.rglob("*") if p.is_file()] == ["00_welcome.ipynb"]

    errors = asyncio.run(run_everywhere(learners))
    assert errors == {name: [] for name in USERS}
    running = {p: " ".join(p.cmdline()) for p in hub.processes()}  # what the end must stop
    assert [sum(what in line for line in running.values()) for what in (
        "configurable-http-proxy", "jupyterhub-singleuser", "ipykernel_launcher")] == [1, 3, 3]
    assert {p.environ().get("OMP_NUM_THREADS") for p, line in running.items()
            if "ipykernel_launcher" in line} == {"2"}  # the recipe's two threads per kernel
    for name in USERS:  # each learner's progress is kept in their own home
        assert list((homes / name).rglob("progress.json")), name

    for learner in learners:
        learner.call("DELETE", f"/hub/api/users/{learner.name}/server", expect=(202, 204))
    for learner in learners:
        _wait_for(learner.server_gone, f"{learner.name}'s server to stop")

    collected = subprocess.run(
        [sys.executable, str(COLLECT), f"{homes}/{{user}}/{NOTEBOOK}", str(tmp_path / "in")],
        capture_output=True, text=True, check=True)
    assert "collected 3 notebooks" in collected.stdout
    assert (tmp_path / "in" / "grace.ipynb").read_text() == graces_work

    left = hub.stop()
    assert not left, f"processes outlived the hub: {[p.cmdline()[:3] for p in left]}"
