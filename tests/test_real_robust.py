"""Real-model checks of the robustness rules: contexts longer than the judge's window.

The default judge is loaded with a small window (n_ctx 300) so that nine ordinary chunks
(about 430 tokens) overflow it; the facts the answer needs sit late in the context, in a
later window.
"""

from __future__ import annotations

import dataclasses

import pytest

from localeval.backends.llama_judge import LlamaJudge
from localeval.config import load_models_config
from localeval.data.samples import Sample
from localeval.engine import evaluate
from localeval.metrics import Tools
from localeval.prompts import rag

pytestmark = pytest.mark.real_models

FILLER = [
    "The old town square is paved with grey cobblestones that were laid in the nineteenth "
    "century. On market days, farmers from the surrounding villages sell cheese, honey and "
    "vegetables there, and a small orchestra sometimes plays near the fountain in summer.",
    "The municipal swimming pool reopened after a long renovation. It now has a heated "
    "outdoor basin, a separate pool for small children and a sauna. Opening hours are "
    "longer during the school holidays, and swimming lessons are offered for all ages.",
    "Local bakeries are known for a dark rye bread flavoured with caraway seeds. The recipe "
    "is said to be several hundred years old, and a competition for the best loaf is held "
    "every autumn in the town hall, judged by a panel of retired bakers.",
    "The botanical garden covers about four hectares on the northern slope of the hill. Its "
    "greenhouses shelter tropical plants, including several rare orchids, and volunteers "
    "guide visitors along the paths on Sunday mornings from April to October.",
    "The regional football club plays its home matches in a stadium built in the 1960s. "
    "The club has spent most of its history in the second division, although it reached "
    "the national cup semi-final once, an evening many residents still talk about.",
    "A cycling path follows the river for thirty kilometres to the next town. It is flat "
    "and mostly paved, which makes it popular with families, and several cafes along the "
    "way rent out bicycles and sell cold drinks during the warmer months of the year.",
    "The town library holds a collection of old maps donated by a local surveyor. Some of "
    "the maps show the coastline before the land reclamation works, and copies can be "
    "ordered at the front desk for a small fee covering the cost of printing.",
    "Every December the main street is decorated with lights, and a winter fair sells "
    "handmade toys, candles and hot spiced wine. The fair attracts visitors from the whole "
    "region and the town's hotels are usually fully booked on its opening weekend.",
]
FACT = (
    "The Harbour Line tram started running in March 1927. It linked the docks with the old "
    "town and was operated by the municipal transport company until 1968."
)
QUESTION = "When did the Harbour Line tram start running?"
SUPPORTED = "The Harbour Line tram started running in March 1927."
INVENTED = "The tram was designed by a famous Italian architect."


@pytest.fixture(scope="module")
def small_window_judge() -> LlamaJudge:
    config = load_models_config().judge()
    # not a multiple of 256: llama.cpp pads the context, llama-cpp-python's buffer is not
    judge = LlamaJudge(config.name, dataclasses.replace(config.settings, n_ctx=300))
    assert judge.n_ctx == 300
    return judge


def test_contexts_longer_than_the_window_are_scored_by_windows(
    small_window_judge: LlamaJudge,
) -> None:
    contexts = [*FILLER[:6], FACT, *FILLER[6:]]
    sample = Sample(
        "long",
        QUESTION,
        contexts,
        answer=f"{SUPPORTED} {INVENTED}",
        reference_answer="It started running in March 1927.",
    )
    tools = Tools(judge=small_window_judge)
    assert not small_window_judge.fits(rag.context_says(contexts, SUPPORTED), 1)
    run = evaluate([sample], ["faithfulness", "context_recall"], tools)
    results = run.samples[0].results
    faithfulness = results["faithfulness"]
    assert faithfulness.score is not None
    windows = faithfulness.details["long_context"]["windows"]
    assert len(windows) >= 2 and windows[0][0] == 1 and windows[-1][1] == len(contexts)
    supported, invented = faithfulness.details["support"]
    assert supported >= 0.5 > invented, faithfulness.details
    recall = results["context_recall"]
    assert recall.score is not None and recall.score >= 0.5, recall.details


def test_a_chunk_longer_than_the_window_is_cut_into_pieces(
    small_window_judge: LlamaJudge,
) -> None:
    document = " ".join([*FILLER[:5], FACT, *FILLER[5:]] * 2)  # one chunk of ~850 tokens
    sample = Sample("huge", QUESTION, [document], answer=SUPPORTED)
    run = evaluate([sample], ["faithfulness"], Tools(judge=small_window_judge))
    faithfulness = run.samples[0].results["faithfulness"]
    assert faithfulness.score is not None and faithfulness.score >= 0.5, faithfulness.details
    assert faithfulness.details["long_context"]["chunks_cut_into_pieces"] == [1]
