"""Quiz questions, one module per notebook (answers sealed; see attncourse.quiz)."""
