"""`localeval review`: a local web page to check the judge's verdicts on a run and label
them (the Starlette app, its page, and the server that serves it on 127.0.0.1)."""
