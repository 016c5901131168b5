"""Test sets from a team's own documents, and running their RAG pipeline over them.

`localeval generate DOCS...` reads documents (documents), splits them into chunks
(chunking), picks chunks spread over the corpus (selection), has the judge write questions
and reference answers in each chunk's language (kinds; the words are the judge's prompt
set's) and checks its work (filters), writing a dataset `localeval evaluate` reads
(generate, output; run loads the models as the command does). `localeval answer` fills
the dataset's answers and contexts by calling the user's own pipeline (answer). The
package stands beside runs/: it loads its models through localeval.tools and its cache.
"""
