"""The parts several metrics are built of, kept apart from the metrics themselves so that
`localeval/metrics/` lists one module per metric.

- `statements`: a text's statements judged against passages (faithfulness, context recall,
  answer correctness), with `StatementsMetric`, the class those built on it share
- `claims`: a sentence's claims, as the judge writes them, and their weights
- `evidence`: the sentences of long passages closest to a statement
- `hard_facts`: numbers and quantities that contradict a "yes"
- `long_context`: fitting passages into the judge's window
- `diagnosis`: answer correctness' claims sorted by who is to blame
- `explain`: what changed in a sample's evidence between two runs, and why it scored low
- `reference`: `ReferenceMetric`, the class of the metrics that compare the answer with
  the reference answer (BLEU, ROUGE-L, answer similarity)
- `reference_tokens`: words and CJK characters, for those metrics and for claims

A part imports no metric module (tests/test_architecture.py): metrics build on parts,
never the other way.
"""
