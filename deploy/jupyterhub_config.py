"""The course on a JupyterHub: what every learner's server gets, whatever runs the hub.

This file sets only what the course needs, so one copy serves every deployment (see
deploy/README.md):

- The Littlest JupyterHub: copy it to ``/opt/tljh/config/jupyterhub_config.d/attncourse.py``;
- Zero to JupyterHub: ``--set-file hub.extraFiles.attncourse.stringData=deploy/jupyterhub_config.py``
  with deploy/z2jh-values.yaml, which mounts it in ``jupyterhub_config.d``;
- a plain hub: ``jupyterhub -f deploy/jupyterhub_config.py``, or ``load_subconfig`` it from
  your own config (tests/test_hub.py does, with a dummy login and local servers).

Authentication, the spawner and the limits of each server stay with the deployment. Whoever
loads this file provides ``c``, the hub's configuration.
"""

#: the learner's copy of the course, in their home
COURSE_FOLDER = "attention-course"

#: the notebook JupyterLab opens on
FIRST_NOTEBOOK = "notebooks/00_welcome.ipynb"

#: PyTorch's threads per kernel, unless the deployment sets OMP_NUM_THREADS: the course is
#: sized for two cores (deploy/README.md), and PyTorch would otherwise start one thread per
#: core of the whole machine, however few of them a learner's CPU limit allows
THREADS = 2


def fetch_course_first(server_cmd, folder=COURSE_FOLDER, threads=THREADS):
    """``server_cmd`` run by a shell that first gives the learner the course: on their first
    login, ``attncourse fetch`` copies it into ``$HOME/<folder>``; once that folder exists it
    is theirs and is never written to again (``attncourse fetch`` there adds new notebooks).
    The shell runs as the learner, on their server (their machine, container or pod), so it
    works with every spawner. A failed fetch is logged, and the server starts anyway."""
    script = (f'export OMP_NUM_THREADS="${{OMP_NUM_THREADS:-{threads}}}"; '
              f'[ -e "$HOME/{folder}" ] || attncourse fetch "$HOME/{folder}" '
              f'|| echo "attncourse: could not fetch the course into $HOME/{folder}" >&2; '
              'exec "$@"')
    return ["sh", "-c", script, "fetch-course-first", *server_cmd]


c.Spawner.cmd = fetch_course_first(["jupyterhub-singleuser"])  # noqa: F821
c.Spawner.default_url = f"/lab/tree/{COURSE_FOLDER}/{FIRST_NOTEBOOK}"  # noqa: F821
