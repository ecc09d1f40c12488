"""The course where learners meet it: JupyterLab in a real (headless) Chromium, and the site.

Selected with ``pytest -m browser`` (deselected by default: it needs Debian's ``chromium`` and
``pip install playwright``; .ci/run installs both). Screenshots go to artifacts/browser/.
"""

import html
import inspect
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from chromium import unavailable

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ARTIFACTS = ROOT / "artifacts" / "browser"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on a free port, serving a temporary copy of the course."""
    work = Path(tempfile.mkdtemp(prefix="attncourse-lab-"))
    for folder in ("notebooks", "assets"):  # the notebooks only, not their jupytext twins
        shutil.copytree(ROOT / folder, work / folder,
                        ignore=shutil.ignore_patterns("text", "jupytext.toml"))
    labconfig = work / "config" / "labconfig"  # no "Jupyter news?" toast over the page
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, ATTNCOURSE_HOME=str(work / "home"),
               JUPYTER_CONFIG_DIR=str(work / "config"), JUPYTER_RUNTIME_DIR=str(work / "rt"),
               JUPYTERLAB_WORKSPACES_DIR=str(work / "ws"))
    log = open(work / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={work}", "--allow-root",
         "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={work / 'ws'}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.time() > deadline:
                server.kill()
                pytest.fail(f"jupyter lab did not start; see its log: "
                            f"{(work / 'lab.log').read_text()[-500:]}", pytrace=False)
            time.sleep(0.5)
    yield base, token, work
    server.terminate()  # shut down our own server by its PID, nothing else
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()
    shutil.rmtree(work, ignore_errors=True)


KERNEL_IDLE = """(name) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && w.context.path.endsWith(name) && w.content.widgets.length > 0;
}"""

ERRORS_AND_COUNTS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.context.model.toJSON().cells.filter(c => c.cell_type === 'code');
  const errors = cells.flatMap(c => (c.outputs || []).filter(o => o.output_type === 'error')
                                      .map(o => o.ename + ': ' + o.evalue));
  return {errors, unrun: cells.filter(c => !c.execution_count).length};
}"""


def _open_and_run(page, base, token, name):
    # a workspace of its own for each notebook, reset: no tab of an earlier run is restored
    workspace = name.split("_")[0]
    page.goto(f"{base}/lab/workspaces/nb{workspace}/tree/notebooks/{name}?reset&token={token}")
    page.wait_for_function(KERNEL_IDLE, arg=name, timeout=120_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const cells = w.context.model.toJSON().cells.filter(c => c.cell_type === 'code');"
        " return cells.every(c => c.execution_count) && w.sessionContext.session.kernel.status"
        " === 'idle'; }", timeout=180_000)
    return page.evaluate(ERRORS_AND_COUNTS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_in_jupyterlab(browser, lab, path):
    base, token, _ = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        result = _open_and_run(page, base, token, path.name)
        assert result["errors"] == [], f"{path.name} shows errors: {result['errors']}"
        assert result["unrun"] == 0
        widgets = page.locator(".jp-Notebook .jupyter-widgets")
        widgets.first.wait_for(timeout=30_000)
        assert widgets.count() > 0, "no ipywidgets control rendered"
        if path.name.startswith("00_"):
            _use_quiz_and_slider(page)
    finally:
        page.screenshot(path=str(ARTIFACTS / f"{path.stem}.png"))
        page.close()


def _use_quiz_and_slider(page):
    """Answer a quiz question by clicking, and move a slider: both must visibly respond."""
    quiz = page.locator(".attncourse-quiz").filter(has_text="What happens to the cells").first
    quiz.scroll_into_view_if_needed()
    quiz.get_by_text("They run normally", exact=False).click()
    quiz.get_by_role("button", name="Check").click()
    quiz.get_by_text("✓ correct").wait_for(timeout=15_000)

    interact = page.locator(".widget-interact").first
    interact.scroll_into_view_if_needed()
    image = interact.locator("img").first
    image.wait_for(timeout=30_000)
    before = image.get_attribute("src")
    readout = interact.locator(".widget-readout").first  # type a new value, as a learner can
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(before) => { const img = document.querySelector('.widget-interact img');"
        " return img && img.getAttribute('src') !== before; }", arg=before, timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "00_welcome_after_interaction.png"))


# ---------------------------------------------------------------- the course website

AXE = Path(os.environ.get("ATTNCOURSE_AXE",
                          ROOT / "artifacts" / "node" / "node_modules" / "axe-core" / "axe.min.js"))
LOCAL = ("file:", "data:", "blob:", "about:")
RAW_TEX = r"/\\(frac|sqrt|mathrm|text|top|left|right|qquad)\b|\$\$|\\\(|\\\[/"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("sphinx", reason='the site needs pip install -e ".[site]"')
    from attncourse.site import build_site

    out = tmp_path_factory.mktemp("site") / "site"
    return out, build_site(out, ROOT)


@pytest.fixture
def offline(browser):
    """A page whose every request is recorded; any that would leave the machine is blocked."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests, leaving = [], []

    def route(r):
        url = r.request.url
        requests.append(url)
        if url.startswith(LOCAL):
            r.continue_()
        else:
            leaving.append(url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    yield page, requests, leaving
    context.close()


def _typeset(page):
    """Wait for MathJax; returns (formulas on the page, formulas typeset, raw TeX left)."""
    count = page.evaluate("() => document.querySelectorAll('.math').length")
    if count:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=30_000)
        page.evaluate("() => MathJax.startup.promise")
    return page.evaluate("""() => {
      const maths = Array.from(document.querySelectorAll('.math'));
      const article = document.querySelector('article') || document.body;
      const copy = article.cloneNode(true);
      copy.querySelectorAll('pre, code, script, mjx-container').forEach(e => e.remove());
      const raw = (copy.textContent.match(""" + RAW_TEX + """g) || []);
      return [maths.length, maths.filter(m => m.querySelector('mjx-container svg')).length, raw];
    }""")


def test_site_offline_formulas_navigation_search_and_colab(site, offline):
    from attncourse import links

    out, pages = site
    page, requests, leaving = offline
    names = [name for _, name in pages]
    assert names == [p.stem + ".html" for p in NOTEBOOKS]

    page.goto((out / "index.html").as_uri())
    contents = page.eval_on_selector_all(".bd-article .toctree-wrapper a",
                                         "els => els.map(e => e.getAttribute('href'))")
    assert contents == names, "the home page's contents list every notebook, in order"
    home_text = page.inner_text(".bd-article")
    assert links.install_command("lab") in home_text and "attncourse fetch" in home_text

    formulas = 0
    for i, name in enumerate(names):
        response = page.goto((out / name).as_uri())
        assert response is None or response.ok
        page.wait_for_load_state("load")
        broken = page.evaluate("() => Array.from(document.images)"
                               ".filter(i => !(i.complete && i.naturalWidth > 0))"
                               ".map(i => i.src.slice(-60))")
        assert broken == [], f"{name}: broken images {broken}"
        total, typeset, raw = _typeset(page)
        assert typeset == total and raw == [], f"{name}: {total - typeset} formulas not typeset, {raw}"
        formulas += total
        sidebar = page.eval_on_selector_all(".bd-sidenav a", "els => els.map(e => e.getAttribute('href'))")
        assert set(names) - {name} <= set(sidebar), f"{name}: the contents sidebar is incomplete"
        prev = page.get_attribute("a.left-prev", "href")
        assert prev == (names[i - 1] if i else "index.html"), f"{name}: previous link {prev}"
        if i + 1 < len(names):
            assert page.get_attribute("a.right-next", "href") == names[i + 1]
        colab = links.colab_url(Path(name).stem + ".ipynb")
        assert page.locator(f'a[href="{colab}"]').count() >= 1, f"{name}: no launch-in-Colab link"
    assert formulas > 100, f"only {formulas} formulas on the whole site"

    page.goto((out / names[0]).as_uri())  # previous/next links work when followed
    page.click("a.right-next")
    page.wait_for_url("**/" + names[1])
    page.click("a.left-prev")
    page.wait_for_url("**/" + names[0])

    page.goto((out / "search.html").as_uri() + "?q=softmax")
    page.wait_for_selector("#search-results li a", timeout=30_000)
    found = page.eval_on_selector_all("#search-results li a",
                                      "els => els.map(e => e.getAttribute('href').split('#')[0])")
    assert "00_welcome.html" in found and "02_scaled_dot_product.html" in found
    page.screenshot(path=str(ARTIFACTS / "site_search.png"))

    assert any(u.startswith("file:") for u in requests)
    assert leaving == [], f"requests that would leave the machine: {sorted(set(leaving))[:5]}"


def test_site_passes_an_accessibility_audit(site, offline):
    """axe-core (npm; .ci/run installs it) finds no serious or critical violation on any page."""
    if not AXE.is_file():
        unavailable(f"axe-core is not at {AXE} (npm install --prefix artifacts/node axe-core)")
    out, pages = site
    page, _, leaving = offline
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    script = AXE.read_text(encoding="utf-8")
    problems = {}
    for name in ["index.html", *(n for _, n in pages), "search.html"]:
        page.goto((out / name).as_uri())
        page.wait_for_load_state("load")
        _typeset(page)
        page.add_script_tag(content=script)
        violations = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']}))
            .violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))""")
        if violations:
            problems[name] = violations
    (ARTIFACTS / "site_axe.json").write_text(json.dumps(problems, indent=1), encoding="utf-8")
    assert problems == {}, f"serious or critical accessibility violations: {problems}"
    assert leaving == []


def test_static_site_leaks_no_answers_or_solutions(site):
    from attncourse.exercises import all_exercises
    from attncourse.quiz import all_questions

    out, _ = site
    text = "\n".join(p.read_text(encoding="utf-8") for p in out.glob("*.html"))
    assert "attncourse-quiz-static" in text, "quizzes appear as their questions"
    for question in all_questions():
        assert question.key not in text
        assert html.escape(question.explanation[:50]) not in text, f"{question.id} leaked"
    for exercise in all_exercises():  # the reference's last line of code must not appear
        lines = [ln.strip() for ln in inspect.getsource(exercise.reference).splitlines()]
        last = [ln for ln in lines if ln and not ln.startswith(("#", '"""'))][-1]
        assert len(last) < 20 or html.escape(last) not in text, f"{exercise.id} leaked"
