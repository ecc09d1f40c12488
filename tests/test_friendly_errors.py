"""In a notebook, a package error reads as one sentence, not a traceback wall."""

import nbformat
from nbclient import NotebookClient


def test_course_error_in_a_kernel_prints_one_line(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import torch\nimport attncourse as ac"),
        nbformat.v4.new_code_cell("q = torch.zeros(3, 4)\nk = torch.zeros(5, 6)\n"
                                  "ac.attention(q, k, k)"),
        nbformat.v4.new_code_cell("print('still running')"),
    ])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[1].outputs
    text = "".join(o.get("text", "") for o in outputs)
    assert "share their last size d_k" in text
    assert "in your cell, line 3: ac.attention(q, k, k)" in text
    assert not any(o.output_type == "error" for o in outputs), "no traceback is shown"
    assert "Traceback" not in text and "attncourse/attention.py" not in text
    assert nb.cells[2].outputs[0]["text"] == "still running\n"
