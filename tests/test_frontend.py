"""Widgets wherever Jupyter widgets work: a kernel's shell or any subclass of it (Colab's is
one), text in plain IPython and plain Python; Colab gets its widget manager for ipywidgets 8."""

import sys
import types

import pytest

from attncourse import frontend, quiz


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv("ATTNCOURSE_WIDGETS", raising=False)
    monkeypatch.setattr(frontend, "_colab_ready", False)


def _instance_of(cls):
    return cls.__new__(cls)  # the class is what counts; no shell is started


def test_plain_python_gets_text(no_override, monkeypatch):
    monkeypatch.setattr(frontend, "shell", lambda: None)
    assert not frontend.widgets_available()
    assert not quiz.widgets_available()


def test_a_kernel_and_a_subclass_of_its_shell_get_widgets(no_override, monkeypatch):
    from ipykernel.zmqshell import ZMQInteractiveShell

    class ColabLikeShell(ZMQInteractiveShell):  # Colab's shell subclasses ipykernel's
        pass

    for cls in (ZMQInteractiveShell, ColabLikeShell):
        monkeypatch.setattr(frontend, "shell", lambda cls=cls: _instance_of(cls))
        assert frontend.widgets_available(), cls.__name__


def test_terminal_ipython_gets_text(no_override, monkeypatch):
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    monkeypatch.setattr(frontend, "shell", lambda: _instance_of(TerminalInteractiveShell))
    assert not frontend.widgets_available()


def test_the_environment_can_force_either(monkeypatch):
    monkeypatch.setattr(frontend, "shell", lambda: None)
    monkeypatch.setenv("ATTNCOURSE_WIDGETS", "1")
    assert frontend.widgets_available()
    monkeypatch.setenv("ATTNCOURSE_WIDGETS", "0")
    assert not frontend.widgets_available()


def test_colab_turns_on_its_widget_manager_once(no_override, monkeypatch):
    calls = []
    output = types.ModuleType("google.colab.output")
    output.enable_custom_widget_manager = lambda: calls.append("on")
    colab = types.ModuleType("google.colab")
    colab.output = output
    google = types.ModuleType("google")
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    frontend.prepare_colab()
    frontend.prepare_colab()
    assert calls == ["on"]  # ipywidgets >= 8 is what the course requires


def test_nothing_happens_outside_colab(no_override):
    frontend.prepare_colab()  # no google.colab module: a no-op that does not fail
    assert "google.colab" not in sys.modules


def test_the_installed_ipywidgets_builds_every_widget_the_course_uses(monkeypatch):
    """Run by CI with the oldest ipywidgets the course supports (8.0.0, .ci/floor.txt) too."""
    import ipywidgets

    from attncourse import viz

    assert int(ipywidgets.__version__.split(".")[0]) >= 8
    monkeypatch.setenv("ATTNCOURSE_WIDGETS", "1")
    for number in ("00", "02", "05"):
        assert isinstance(quiz.show(number), ipywidgets.VBox)
    box = viz.interact(lambda k: None, k=ipywidgets.IntSlider(1, 0, 3))
    assert isinstance(box, ipywidgets.interactive)
