"""Replay: one submission's notebook run from the top in a fresh kernel, each exercise
evaluated and judged right after its cell.

A cell that never finishes or crashes the kernel is skipped: the kernel is restarted and the
notebook replayed without it, so one bad cell costs no exercise that does not depend on it.
A function that fails where its cell stands is called once more at the end of the notebook
(cells may have been reordered), and the better verdict counts.
"""

import time

from attncourse.instructor.evaluate import Stopped
from attncourse.instructor.judge import failure, judge_results
from attncourse.instructor.kernel import KernelStartError, Status
from attncourse.instructor.transport import CallMode, TransportError

_STOPPED = {Status.TIMEOUT: "did not finish in time", Status.DIED: "crashed the kernel"}


class Replay:
    """Runs one notebook; ``cells`` maps each exercise id to its cell, ``exercises`` ids to
    the course's exercises; ``start_kernel()`` starts a fresh kernel."""

    def __init__(self, nb, cells, exercises, evaluator, start_kernel, limits):
        self.nb, self.cells, self.exercises = nb, cells, exercises
        self.evaluator, self.start_kernel, self.limits = evaluator, start_kernel, limits
        self.code_cells = [i for i, c in enumerate(nb.cells)
                           if c.cell_type == "code" and c.source.strip()]
        self.verdicts = {}  # exercise id -> Verdict
        self.final = set()  # ids whose function hung or crashed: no second call
        self.skip = set()  # cells that hung or crashed the kernel
        self.trouble = {}  # cell index -> what went wrong with it
        self.notes = []
        self.starved = False  # a cell or a function hit its limit with less than its core
        self.kernel = None
        self.deadline = time.monotonic() + limits.notebook_timeout

    def time_left(self, cap=None):
        left = self.deadline - time.monotonic()
        return max(0.0, min(left, cap) if cap else left)

    def _stop_kernel(self):
        if self.kernel is not None:
            self.kernel.close()
            self.kernel = None

    def run(self):
        """Run the notebook (restarting after cells that hang or crash) and judge every
        exercise; returns ``{id: Verdict}``."""
        unreached = "not graded: the notebook ran out of time before this exercise's cell."
        try:
            while True:
                try:
                    self.kernel = self.start_kernel()
                except KernelStartError as exc:
                    self.notes.append(f"the kernel did not start ({exc})")
                    unreached = f"not graded: the kernel did not start ({exc})."
                    break
                if self._replay():
                    self._second_look()
                    break
                if self.time_left() <= 0:
                    self.notes.append(f"the notebook ran past its "
                                      f"{self.limits.notebook_timeout:g} s limit")
                    break
        finally:
            self._stop_kernel()
        for exercise_id, index in self.cells.items():
            self.verdicts.setdefault(exercise_id,
                                     failure(self.trouble.get(index, unreached)))
        return self.verdicts

    def _replay(self):
        """Run the code cells from the top in a fresh kernel. True when it reached the end;
        False after a cell or a function hung or crashed the kernel (now stopped)."""
        by_cell = {}
        for exercise_id, index in self.cells.items():
            by_cell.setdefault(index, []).append(exercise_id)
        for index in self.code_cells:
            if index in self.skip:
                continue
            left = self.time_left(self.limits.cell_timeout)
            if left <= 0:
                self._stop_kernel()
                return False
            reply = self.kernel.run(self.nb.cells[index].source, left)
            if reply.status in _STOPPED:
                self.starved |= reply.starved
                what = ("crashed the kernel" if reply.status is Status.DIED else
                        f"did not finish within {self.limits.cell_timeout:g} s"
                        if left >= self.limits.cell_timeout else
                        "did not finish before the notebook's time ran out")
                self.notes.append(f"cell {index + 1} {what}")
                self.trouble[index] = f"the exercise cell {what}."
                self.skip.add(index)
                self._stop_kernel()
                return False
            if reply.status is Status.ERROR:
                self.notes.append(f"cell {index + 1} raised {reply.error}")
            for exercise_id in by_cell.get(index, []):
                if not self._after_exercise_cell(exercise_id, reply):
                    self._stop_kernel()
                    return False
        return True

    def _after_exercise_cell(self, exercise_id, reply):
        """Judge the function the exercise cell just defined (on a replay, only keep it for
        the second look). False if calling it hung or crashed the kernel."""
        exercise = self.exercises[exercise_id]
        mode = CallMode.CAPTURE if exercise_id in self.verdicts else CallMode.NOW
        try:
            verdict = self._evaluate(exercise, mode)
        except Stopped as stop:
            self.starved |= stop.starved
            what = _STOPPED[stop.status]
            self.verdicts[exercise_id] = failure(
                f"calling your `{exercise.function_name}` on the grader's cases {what}.")
            self.final.add(exercise_id)
            self.notes.append(f"{exercise_id}: the function {what}")
            return False
        if mode is CallMode.NOW:
            self.verdicts[exercise_id] = verdict or failure((
                f"the exercise cell raised {reply.error}, so `{exercise.function_name}` was "
                f"never defined." if reply.status is Status.ERROR else
                f"the exercise cell does not define `{exercise.function_name}`."))
        return True

    def _second_look(self):
        """Call each failing function again now that the whole notebook has run (a learner
        may have moved the cells its function needs below it)."""
        for exercise_id, verdict in list(self.verdicts.items()):
            if verdict.passed or exercise_id in self.final or self.time_left() <= 0:
                continue
            try:
                again = self._evaluate(self.exercises[exercise_id], CallMode.CAPTURED)
            except Stopped:
                return
            if again is not None and again.passed:
                self.verdicts[exercise_id] = again

    def _evaluate(self, exercise, mode):
        """The :class:`Verdict` on calling ``exercise``'s function as ``mode`` says, or
        ``None`` when there is no such function (or nothing was called); raises
        :class:`Stopped`."""
        try:
            results = self.evaluator.call(self.kernel, exercise, mode,
                                          self.time_left(self.limits.cell_timeout))
        except TransportError as exc:
            return failure(f"the grader could not read what your function returned: "
                                  f"{exc}.")
        return None if results is None else judge_results(exercise, self.evaluator.case_sets[
            exercise.id], results)
