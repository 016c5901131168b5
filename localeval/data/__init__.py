"""Reading evaluation inputs: sample files, rubric criteria files."""
