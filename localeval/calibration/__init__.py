"""How far a judge can be trusted: agreement with labelled rows."""
