"""ACME's own checks for localeval, one metric per module (see pyproject.toml's entry
points): `policy_ids`, a domain check that needs no model, and `plain_language`, a company
rubric asked of the judge."""
