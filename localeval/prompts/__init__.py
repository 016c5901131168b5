"""The words localeval says to its judge, kept in versioned prompt sets (sets): each
set holds every wording (rag, rubric, pairwise, generate) and its name is its version,
which a run records. Changing any wording changes scores: it is a new set, never an edit
of a released one. `chat` puts a prompt through a chat template, in token segments."""
