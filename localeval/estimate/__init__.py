"""Know the cost before you run (`--estimate`): the work a piece of work would ask of the
models, counted by running its own code against counting stand-ins (`counting`), priced at
the speeds measured once per model and machine (`speed`), and dealt to a Ray cluster's
actors as the run would deal it (`division`). Each command's estimate is a thin caller:
localeval.evaluation.estimate (`evaluate`), localeval.pairwise.comparing (`compare-answers`),
localeval.testset.generation (`generate`); localeval.reports.estimate_text shows one."""
