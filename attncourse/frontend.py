"""Where the notebook is shown: can it display Jupyter widgets, and is it Colab?

Quizzes appear as forms and training shows a live progress line only in a frontend that
displays Jupyter widgets: a Jupyter kernel (JupyterLab, Notebook, VS Code, Colab). Its shell is
ipykernel's ``ZMQInteractiveShell`` or a subclass of it — Colab's shell is one — so the test is
``isinstance``, never a comparison of class names. Plain IPython in a terminal and plain Python
get text instead.

Colab shows widgets of its own built-in set; for ipywidgets 8 it needs its "custom widget
manager" switched on, which :func:`prepare_colab` does once (Google's documented switch,
``google.colab.output.enable_custom_widget_manager``). Nothing here imports a heavy module.
"""

import html
import os
import sys

_colab_ready = False


def shell():
    """The running IPython shell, or ``None`` outside IPython."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def in_colab():
    """True inside a Google Colab runtime."""
    return "google.colab" in sys.modules


def widgets_available():
    """True where Jupyter widgets are displayed: a kernel (ipykernel or a subclass, as Colab's).

    ``ATTNCOURSE_WIDGETS=0`` forces the text fallback (``=1`` forces widgets)."""
    forced = os.environ.get("ATTNCOURSE_WIDGETS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    current = shell()
    if current is None:
        return False
    zmqshell = sys.modules.get("ipykernel.zmqshell")  # loaded in every ipykernel kernel
    if zmqshell is None or not isinstance(current, zmqshell.ZMQInteractiveShell):
        return False
    prepare_colab()
    return True


def prepare_colab():
    """In Colab with ipywidgets 8 or newer, turn on Colab's widget manager (once)."""
    global _colab_ready
    if _colab_ready or not in_colab():
        return
    _colab_ready = True
    try:
        import ipywidgets
        from google.colab import output

        if int(ipywidgets.__version__.split(".")[0]) >= 8:
            output.enable_custom_widget_manager()
    except Exception:  # an older Colab, or none after all: widgets fall back as they can
        pass


def verdict_box(passed, heading, message):
    """The box a check or a quiz answer shows in Jupyter: green when ``passed``, orange when
    not yet; ``heading`` in bold, then ``message`` (its line breaks kept)."""
    colour, border = ("#e8f5e9", "#2e7d32") if passed else ("#fff3e0", "#e65100")
    body = html.escape(message).replace("\n", "<br>")
    return (f'<div style="background:{colour};border-left:6px solid {border};'
            f'padding:8px 12px;margin:4px 0;font-family:sans-serif;color:#222">'
            f"<b>{html.escape(heading)}</b><br>{body}</div>")
