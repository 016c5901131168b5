"""The words localeval says to its judge. Changing any of them changes scores: bump
PROMPT_VERSION so that runs made with different prompts are not compared as equals."""

PROMPT_VERSION = "rag-3"
