"""Model backends: what runs a judge or an embedder."""
